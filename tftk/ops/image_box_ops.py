"""tf.image functions on bounding boxes: non_max_suppression (and its _with_scores, _overlaps and
_padded forms), crop_and_resize, and resize_image_with_pad.

Boxes are [y1, x1, y2, x2] (any corner order, as TF accepts). Suppression is TF's greedy rule:
take the highest remaining score, drop the boxes overlapping it by more than the threshold.
crop_and_resize samples bilinearly (or nearest) at TF's coordinates and gets TF's gradient with
respect to the image (the boxes' gradient is not computed here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.image_ops import ResizeMethod, resize_images

__all__ = ["non_max_suppression", "non_max_suppression_with_scores", "non_max_suppression_overlaps",
           "non_max_suppression_padded", "crop_and_resize", "resize_image_with_pad"]


def _iou_matrix(boxes: np.ndarray) -> np.ndarray:
    y1, y2 = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    x1, x2 = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    h = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    w = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    inter = h * w
    union = area[:, None] + area[None] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _greedy(overlaps: np.ndarray, scores: np.ndarray, max_output_size: np.ndarray, threshold: np.ndarray,
            score_threshold: np.ndarray, pad: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    limit = int(max_output_size)
    if limit < 0:
        raise ValueError(f"max_output_size must be non-negative, got {limit}")
    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] > float(score_threshold)]
    selected: list[int] = []
    for i in order:
        if len(selected) >= limit:
            break
        if all(overlaps[i, j] <= float(threshold) for j in selected):
            selected.append(i)
    valid = len(selected)
    index = np.array(selected + ([0] * (limit - valid) if pad else []), np.int64)
    chosen = scores[index] if valid else np.zeros(len(index), scores.dtype)
    if pad:
        chosen = np.where(np.arange(len(index)) < valid, chosen, 0)
    return index, chosen, np.array(valid)


register_array_op("NonMaxSuppression",
                  lambda boxes, scores, n, iou, score, pad: _greedy(_iou_matrix(boxes), scores, n, iou, score, pad))
register_array_op("NonMaxSuppressionWithOverlaps",
                  lambda overlaps, scores, n, thr, score, pad: _greedy(overlaps, scores, n, thr, score, pad))


def _suppress(op_type: str, first: Any, scores: Any, max_output_size: Any, threshold: Any, score_threshold: Any,
              pad: bool, name: str | None, default: str) -> list[Tensor]:
    with name_scope(name, default, [first, scores]) as scope:
        a = convert_to_tensor(first, name="boxes")
        s = convert_to_tensor(scores, dtype=a.dtype, name="scores")
        if a.shape.ndims not in (None, 2) or s.shape.ndims not in (None, 1):
            raise ValueError(f"{default}: boxes must be 2-D and scores 1-D, got {a.shape} and {s.shape}")
        n = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
        t = convert_to_tensor(threshold, dtype=dtypes.float32, name="iou_threshold")
        st = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
        limit = constant_value(n)
        size = int(limit) if pad and limit is not None else None
        return array_op(op_type, [a, s, n, t, st], [(dtypes.int32, [size]), (s.dtype, [size]), (dtypes.int32, [])],
                        scope, {"pad": pad})


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                        score_threshold: float = float("-inf"), name: str | None = None) -> Tensor:
    """Indices of at most max_output_size boxes, by score, none overlapping a kept one by > iou_threshold."""
    return _suppress("NonMaxSuppression", boxes, scores, max_output_size, iou_threshold, score_threshold, False,
                     name, "non_max_suppression")[0]


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                                    score_threshold: float = float("-inf"), soft_nms_sigma: float = 0.0,
                                    name: str | None = None) -> tuple[Tensor, Tensor]:
    """(selected indices, their scores); soft-NMS (sigma > 0) is not implemented here."""
    if soft_nms_sigma != 0.0:
        raise ValueError("non_max_suppression_with_scores: only soft_nms_sigma=0 (hard suppression) is supported")
    index, chosen, _ = _suppress("NonMaxSuppression", boxes, scores, max_output_size, iou_threshold,
                                 score_threshold, False, name, "non_max_suppression_with_scores")
    return index, chosen


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: float = 0.5,
                                 score_threshold: float = float("-inf"), name: str | None = None) -> Tensor:
    """non_max_suppression with a given [n, n] overlap matrix instead of boxes."""
    return _suppress("NonMaxSuppressionWithOverlaps", overlaps, scores, max_output_size, overlap_threshold,
                     score_threshold, False, name, "non_max_suppression_overlaps")[0]


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                               score_threshold: float = float("-inf"), pad_to_max_output_size: bool = False,
                               name: str | None = None, sorted_input: bool = False,
                               canonicalized_coordinates: bool = False, tile_size: int = 512) -> tuple[Tensor, Tensor]:
    """(indices, number valid): with pad_to_max_output_size the indices are padded with zeros."""
    x = convert_to_tensor(boxes)
    if x.shape.ndims not in (None, 2):
        raise ValueError("non_max_suppression_padded: only unbatched [n, 4] boxes are supported here")
    index, _, valid = _suppress("NonMaxSuppression", x, scores, max_output_size, iou_threshold, score_threshold,
                                pad_to_max_output_size, name, "non_max_suppression_padded")
    return index, valid


# ---- crop_and_resize ---------------------------------------------------------------------------------

def _sample_points(boxes: np.ndarray, size: int, extent: int, low: int) -> np.ndarray:
    """[n_boxes, size] source coordinates along one axis, as TF places them."""
    a, b = boxes[:, low], boxes[:, low + 2]
    if size > 1:
        return (a * (extent - 1))[:, None] + np.arange(size)[None, :] * ((b - a) * (extent - 1) / (size - 1))[:, None]
    return (0.5 * (a + b) * (extent - 1))[:, None]


def _crop_weights(image_shape, boxes, box_ind, crop_size, method):
    """Per crop pixel: the (up to 4) source pixels, their weights, and whether it is outside the image."""
    _, h, w, _ = image_shape
    ch, cw = [int(v) for v in crop_size]
    ys, xs = _sample_points(boxes, ch, h, 0), _sample_points(boxes, cw, w, 1)
    outside = (ys[:, :, None] < 0) | (ys[:, :, None] > h - 1) | (xs[:, None, :] < 0) | (xs[:, None, :] > w - 1)
    if method == "nearest":
        yi = np.clip(np.floor(ys + 0.5), 0, h - 1).astype(np.int64)  # C's roundf: halves away from zero
        xi = np.clip(np.floor(xs + 0.5), 0, w - 1).astype(np.int64)
        taps = [(yi[:, :, None], xi[:, None, :], np.ones((len(boxes), ch, cw)))]
    else:
        y0, x0 = np.floor(ys), np.floor(xs)
        dy, dx = ys - y0, xs - x0
        y0i, x0i = np.clip(y0, 0, h - 1).astype(np.int64), np.clip(x0, 0, w - 1).astype(np.int64)
        y1i, x1i = np.clip(y0 + 1, 0, h - 1).astype(np.int64), np.clip(x0 + 1, 0, w - 1).astype(np.int64)
        taps = [(y0i[:, :, None], x0i[:, None, :], (1 - dy)[:, :, None] * (1 - dx)[:, None, :]),
                (y0i[:, :, None], x1i[:, None, :], (1 - dy)[:, :, None] * dx[:, None, :]),
                (y1i[:, :, None], x0i[:, None, :], dy[:, :, None] * (1 - dx)[:, None, :]),
                (y1i[:, :, None], x1i[:, None, :], dy[:, :, None] * dx[:, None, :])]
    b = box_ind.astype(np.int64)[:, None, None]
    return b, taps, outside


def _crop_and_resize(image, boxes, box_ind, crop_size, method, extrapolation_value):
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= image.shape[0]):
        raise ValueError(f"box_index has values outside [0, {image.shape[0]})")
    b, taps, outside = _crop_weights(image.shape, boxes.astype(np.float64), box_ind, crop_size, method)
    out = sum(weight[..., None] * image[b, y, x].astype(np.float64) for y, x, weight in taps)
    return np.where(outside[..., None], float(extrapolation_value), out).astype(np.float32)


def _crop_and_resize_grad(image, boxes, box_ind, crop_size, grad, method, extrapolation_value):
    """The image gradient, accumulated in float32 as TF's kernel does (the crops are float32)."""
    b, taps, outside = _crop_weights(image.shape, boxes.astype(np.float64), box_ind, crop_size, method)
    out = np.zeros(image.shape, np.float32)
    g = np.where(outside[..., None], 0.0, grad).astype(np.float32)
    for y, x, weight in taps:
        np.add.at(out, (np.broadcast_to(b, weight.shape), np.broadcast_to(y, weight.shape),
                        np.broadcast_to(x, weight.shape)), weight.astype(np.float32)[..., None] * g)
    return out


register_array_op("CropAndResize", _crop_and_resize, differentiable=True)
register_array_op("CropAndResizeGradImage", _crop_and_resize_grad)


@registry.register_gradient("CropAndResize")
def _crop_and_resize_gradient(op, grad):
    image = op.inputs[0]
    attrs = dict(op.attrs)
    return [array_op("CropAndResizeGradImage", list(op.inputs) + [grad], [(image.dtype, image.shape)], attrs=attrs),
            None, None, None]


def crop_and_resize(image: Any, boxes: Any, box_ind: Any = None, crop_size: Any = None, method: str = "bilinear",
                    extrapolation_value: float = 0.0, name: str | None = None, box_indices: Any = None) -> Tensor:
    """float32 crops [n_boxes, crop_h, crop_w, depth] of `image` [batch, h, w, depth] at normalised boxes."""
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got {method!r}")
    with name_scope(name, "CropAndResize", [image, boxes]) as scope:
        x = convert_to_tensor(image, name="image")
        b = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        index = convert_to_tensor(box_ind if box_indices is None else box_indices, dtype=dtypes.int32, name="box_ind")
        size = convert_to_tensor(crop_size, dtype=dtypes.int32, name="crop_size")
        known = constant_value(size)
        if known is None:
            raise ValueError("crop_and_resize: crop_size must be known when the graph is built")
        dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 4
        if len(dims) != 4:
            raise ValueError(f"crop_and_resize: image must be 4-D, got shape {x.shape}")
        n = b.shape.as_list()[0] if b.shape.ndims == 2 else None
        return array_op("CropAndResize", [x, b, index, size],
                        [(dtypes.float32, [n, int(known[0]), int(known[1]), dims[3]])], scope,
                        {"method": method, "extrapolation_value": float(extrapolation_value)})


def resize_image_with_pad(image: Any, target_height: int, target_width: int,
                          method: int = ResizeMethod.BILINEAR, align_corners: bool = False) -> Tensor:
    """Resize keeping the aspect ratio so the image fits, then pad with zeros to the target size."""
    with name_scope(None, "resize_image_with_pad", [image]):
        x = convert_to_tensor(image, name="image")
        batched = x.shape.ndims == 4
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"'image' must have either 3 or 4 dimensions, got shape {x.shape}")
        h, w = x.shape.as_list()[-3:-1]
        if h is None or w is None:
            raise ValueError("resize_image_with_pad: the image's height and width must be known")
        ratio = max(w / target_width, h / target_height)
        new_h, new_w = int(np.floor(h / ratio)), int(np.floor(w / ratio))
        # the padding is measured from the unrounded resized size, as TF does
        pad_h = max(int(np.floor((target_height - h / ratio) / 2)), 0)
        pad_w = max(int(np.floor((target_width - w / ratio) / 2)), 0)
        from tftk.ops.image_preprocessing import pad_to_bounding_box  # loaded on use, as tf.image loads it
        four = x if batched else array_ops.expand_dims(x, 0)
        resized = resize_images(four, [new_h, new_w], method, align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return padded if batched else array_ops.squeeze(padded, [0])

