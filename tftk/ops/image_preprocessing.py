"""Image preprocessing of TF1 input pipelines: JPEG/any-format decoding, crops and pads, random
flips/crops/brightness/contrast, per-image standardization.

Geometry ops work on [h, w, c] (and [batch, h, w, c] where TF allows it) with sizes checked when
the op runs, so images of unknown static size (freshly decoded) work. Random ops follow TF1's
seeding (graph seed + op seed: same values in every fresh session). JPEG, GIF and BMP decoding
use Pillow (optional: `pip install 'tftk[images]'`); PNG uses tftk's own decoder.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, control_flow_ops, logging_ops, math_ops, reduction_ops, slicing_ops
from tftk.ops.image_ops import _convert_channels, convert_image_dtype, png_array
from tftk.ops.op_builder import make_op
from tftk.ops.random_ops import random_uniform
from tftk.ops.tile_pad_ops import reverse

__all__ = ["decode_jpeg", "decode_image", "crop_to_bounding_box", "pad_to_bounding_box",
           "resize_image_with_crop_or_pad", "central_crop", "random_crop", "random_flip_left_right",
           "random_flip_up_down", "adjust_brightness", "adjust_contrast", "random_brightness",
           "random_contrast", "per_image_standardization"]


# ---- decoding ----------------------------------------------------------------------------------------

def _require_pillow(what: str) -> None:
    if importlib.util.find_spec("PIL") is None:
        raise ImportError(f"{what} needs Pillow to decode JPEG/GIF/BMP: pip install 'tftk[images]' "
                          "(or pip install pillow)")


def _pillow_frames(data: bytes, op: Any) -> list[np.ndarray]:
    from PIL import Image, ImageSequence
    import io
    try:
        image = Image.open(io.BytesIO(data))
        return [np.asarray(frame.convert("RGBA" if frame.mode in ("RGBA", "LA", "PA") or "transparency"
                                         in frame.info else "RGB") if frame.mode not in ("L", "RGB", "RGBA")
                           else frame) for frame in ImageSequence.Iterator(image)]
    except Exception as exc:  # Pillow's many error types: one clear TF error
        raise errors.InvalidArgumentError(None, op, f"{op.name}: could not decode the image: {exc}") from None


def _as_hwc(image: np.ndarray) -> np.ndarray:
    return image[:, :, None] if image.ndim == 2 else image


def _bind_decode(op: Any, ctx: Any):
    channels, kind = op.get_attr("channels"), op.get_attr("kind")

    def kernel(contents: np.ndarray) -> np.ndarray:
        data = bytes(np.asarray(contents, dtype=object).item())
        fmt = _sniff(data)
        if kind == "jpeg" and fmt not in ("jpeg", "png", "gif", "bmp"):
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Unknown image file format. One of "
                                              "JPEG, PNG, GIF, BMP required.")
        if fmt == "png":
            image = png_array(data)
        elif fmt in ("jpeg", "gif", "bmp"):
            frames = _pillow_frames(data, op)
            if fmt == "gif" and kind == "image":  # decode_image returns GIFs as [frames, h, w, 3]
                return np.stack([_convert_channels(_as_hwc(f), 3) for f in frames]).astype(np.uint8)
            image = _as_hwc(frames[0])
        else:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Unknown image file format. One of "
                                              "JPEG, PNG, GIF, BMP required.")
        image = _convert_channels(image, channels)
        return image.astype(np.uint8) if image.dtype != np.uint8 and image.max(initial=0) <= 255 else image

    return kernel


def _sniff(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"GIF8"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    return "unknown"


registry.register_op("DecodeJpeg", _bind_decode, fresh=True)
registry.register_op("DecodeImage", _bind_decode, fresh=True)
registry.not_differentiable("DecodeJpeg", "DecodeImage")


def _contents(contents: Any, what: str) -> Tensor:
    c = convert_to_tensor(contents, dtype=dtypes.string)
    if c.shape.ndims not in (None, 0):
        raise ValueError(f"{what}: contents must be a string scalar, got shape {c.shape}")
    return c


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1,
                dct_method: str = "", name: str | None = None) -> Tensor:
    """Decode a JPEG string scalar to uint8 [height, width, channels] (channels=0: as stored)."""
    _require_pillow("decode_jpeg")
    if channels not in (0, 1, 3):
        raise ValueError(f"decode_jpeg: channels must be 0, 1 or 3, got {channels}")
    if ratio != 1:
        raise ValueError("decode_jpeg: only ratio=1 is supported by tftk")
    return make_op("DecodeJpeg", [_contents(contents, "decode_jpeg")], dtypes.uint8,
                   [None, None, channels or None], name, {"channels": int(channels), "kind": "jpeg"})


def decode_image(contents: Any, channels: int | None = None, dtype: Any = dtypes.uint8,
                 name: str | None = None, expand_animations: bool = True) -> Tensor:
    """Decode PNG, JPEG, GIF or BMP by its leading bytes; GIFs give [frames, h, w, 3]."""
    if channels not in (None, 0, 1, 3, 4):
        raise ValueError(f"decode_image: channels must be 0, 1, 3 or 4, got {channels}")
    out = make_op("DecodeImage", [_contents(contents, "decode_image")], dtypes.uint8, TensorShape(None),
                  name, {"channels": int(channels or 0), "kind": "image"})
    return out if dtypes.as_dtype(dtype) is dtypes.uint8 else convert_image_dtype(out, dtype)


# ---- crops and pads --------------------------------------------------------------------------------

def _image(image: Any, what: str) -> tuple[Tensor, int]:
    x = convert_to_tensor(image)
    rank = x.shape.ndims
    if rank is not None and rank not in (3, 4):
        raise ValueError(f"{what}: 'image' must have either 3 or 4 dimensions, got shape {x.shape}")
    return x, rank or 3


def _bind_box(op: Any, ctx: Any):
    mode = op.get_attr("mode")

    def kernel(image: np.ndarray, *args: np.ndarray) -> np.ndarray:
        h, w = image.shape[-3:-1]
        oh, ow, th, tw = (int(a) for a in args)
        if mode == "crop":
            if oh < 0 or ow < 0 or th <= 0 or tw <= 0 or oh + th > h or ow + tw > w:
                raise errors.InvalidArgumentError(
                    None, op, f"{op.name}: crop box (offset {oh},{ow}, size {th}x{tw}) does not fit in the "
                    f"{h}x{w} image")
            return image[..., oh:oh + th, ow:ow + tw, :]
        if oh < 0 or ow < 0 or oh + h > th or ow + w > tw:
            raise errors.InvalidArgumentError(
                None, op, f"{op.name}: a {h}x{w} image at offset {oh},{ow} does not fit in {th}x{tw}")
        pads = [(0, 0)] * (image.ndim - 3) + [(oh, th - oh - h), (ow, tw - ow - w), (0, 0)]
        return np.pad(image, pads)

    return kernel


registry.register_op("ImageBox", _bind_box)
registry.not_differentiable("ImageBox")


def _box(mode: str, image: Any, offset_height: Any, offset_width: Any, target_height: Any,
         target_width: Any, what: str) -> Tensor:
    x, rank = _image(image, what)
    args = [convert_to_tensor(v, dtype=dtypes.int32) for v in (offset_height, offset_width, target_height,
                                                                target_width)]
    from tftk.ops.constant_value import constant_value
    th, tw = (constant_value(a) for a in args[2:])
    dims = x.shape.as_list() if x.shape.ndims else [None] * rank
    shape = dims[:-3] + [None if th is None else int(th), None if tw is None else int(tw), dims[-1]]
    return make_op("ImageBox", [x] + args, x.dtype, shape, what, {"mode": mode})


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                         target_width: Any) -> Tensor:
    """The target_height x target_width window whose top-left corner is at the offsets."""
    return _box("crop", image, offset_height, offset_width, target_height, target_width, "crop_to_bounding_box")


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                        target_width: Any) -> Tensor:
    """Zero-pad to target_height x target_width with the image's top-left corner at the offsets."""
    return _box("pad", image, offset_height, offset_width, target_height, target_width, "pad_to_bounding_box")


def _bind_crop_or_pad(op: Any, ctx: Any):
    def kernel(image: np.ndarray, target_h: np.ndarray, target_w: np.ndarray) -> np.ndarray:
        th, tw = int(target_h), int(target_w)
        if th <= 0 or tw <= 0:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: target size must be positive, got {th}x{tw}")
        h, w = image.shape[-3:-1]
        crop_h, crop_w = max((h - th) // 2, 0), max((w - tw) // 2, 0)
        pad_h, pad_w = max((th - h) // 2, 0), max((tw - w) // 2, 0)
        cropped = image[..., crop_h:crop_h + min(th, h), crop_w:crop_w + min(tw, w), :]
        ch, cw = cropped.shape[-3:-1]
        pads = [(0, 0)] * (image.ndim - 3) + [(pad_h, th - pad_h - ch), (pad_w, tw - pad_w - cw), (0, 0)]
        return np.pad(cropped, pads)

    return kernel


registry.register_op("ResizeImageWithCropOrPad", _bind_crop_or_pad)
registry.not_differentiable("ResizeImageWithCropOrPad")


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """Centre-crop and/or zero-pad to target_height x target_width (TF1's offsets: floor of half)."""
    x, rank = _image(image, "resize_image_with_crop_or_pad")
    args = [convert_to_tensor(v, dtype=dtypes.int32) for v in (target_height, target_width)]
    from tftk.ops.constant_value import constant_value
    th, tw = (constant_value(a) for a in args)
    dims = x.shape.as_list() if x.shape.ndims else [None] * rank
    shape = dims[:-3] + [None if th is None else int(th), None if tw is None else int(tw), dims[-1]]
    return make_op("ResizeImageWithCropOrPad", [x] + args, x.dtype, shape, "resize_image_with_crop_or_pad")


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central `central_fraction` of the image's height and width."""
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    x, _ = _image(image, "central_crop")
    if central_fraction == 1.0:
        return x
    return make_op("CentralCrop", [x], x.dtype, _central_shape(x, central_fraction), "central_crop",
                   {"fraction": float(central_fraction)})


def _central_box(h: int, w: int, fraction: float) -> tuple[int, int, int, int]:
    start_h = int((h - h * fraction) / 2)  # TF computes in float64 and truncates
    start_w = int((w - w * fraction) / 2)
    return start_h, start_w, h - 2 * start_h, w - 2 * start_w


def _central_shape(x: Tensor, fraction: float) -> TensorShape:
    dims = x.shape.as_list() if x.shape.ndims else None
    if dims is None:
        return TensorShape(None)
    h, w = dims[-3:-1]
    if h is None or w is None:
        return TensorShape(dims[:-3] + [None, None, dims[-1]])
    _, _, bh, bw = _central_box(h, w, fraction)
    return TensorShape(dims[:-3] + [bh, bw, dims[-1]])


def _bind_central_crop(op: Any, ctx: Any):
    fraction = op.get_attr("fraction")

    def kernel(image: np.ndarray) -> np.ndarray:
        sh, sw, bh, bw = _central_box(image.shape[-3], image.shape[-2], fraction)
        return image[..., sh:sh + bh, sw:sw + bw, :]

    return kernel


registry.register_op("CentralCrop", _bind_central_crop)
registry.not_differentiable("CentralCrop")


# ---- random geometry ---------------------------------------------------------------------------------

def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A uniformly placed window of shape `size` (same rank as `value`).

    Built as TF builds it, so the same seeds give TF's windows: one RandomUniformInt draw in
    [0, 2**31 - 1) per axis, modulo the number of places the window fits there.
    """
    with name_scope(name, "random_crop", [value, size]) as scope:
        x = convert_to_tensor(value, name="value")
        size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(x)
        check = logging_ops.Assert(reduction_ops.reduce_all(math_ops.greater_equal(shape, size_t)),
                                   ["Need value.shape >= size, got ", shape, size_t], summarize=1000)
        shape = control_flow_ops.with_dependencies([check], shape)
        limit = math_ops.add(math_ops.subtract(shape, size_t), 1)
        draws = random_uniform(array_ops.shape(shape), dtype=dtypes.int32, maxval=dtypes.int32.max, seed=seed)
        return slicing_ops.slice(x, math_ops.floormod(draws, limit), size_t, name=scope.rstrip("/"))


def _random_flip(image: Any, axis: int, seed: int | None, what: str) -> Tensor:
    """TF's _random_flip: one uniform draw for an image (flipped below 0.5), one per image of a batch
    (flipped where it rounds to 1, mixed in as flips * flipped + (1 - flips) * image)."""
    with name_scope(None, what, [image]) as scope:
        x = convert_to_tensor(image, name="image")
        rank = x.shape.ndims
        if rank is not None and rank not in (3, 4):
            raise ValueError(f"{what}: 'image' (shape {x.shape}) must have either 3 or 4 dimensions.")

        def single() -> Tensor:
            coin = random_uniform([], 0, 1.0, seed=seed)
            return control_flow_ops.cond(math_ops.less(coin, 0.5), lambda: reverse(x, [axis]), lambda: x,
                                         name=scope.rstrip("/"))

        def batch() -> Tensor:
            batch_size = array_ops.shape(x)[0]
            coins = random_uniform(array_ops.stack([batch_size]), 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(coins, array_ops.stack([batch_size, 1, 1, 1]))),
                                  x.dtype)
            return math_ops.add(math_ops.multiply(flips, reverse(x, [axis + 1])),
                                math_ops.multiply(math_ops.subtract(1, flips), x))

        if rank is None:
            return control_flow_ops.cond(math_ops.equal(array_ops.rank(x), 3), single, batch)
        return single() if rank == 3 else batch()


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """Mirror the width axis with probability 1/2 (each image of a batch on its own), TF's draws."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """Mirror the height axis with probability 1/2 (each image of a batch on its own), TF's draws."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


# ---- colour ----------------------------------------------------------------------------------------

def _as_float(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating else convert_image_dtype(x, dtypes.float32)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """image + delta (integer images are converted to float in [0, 1] and back, as TF does)."""
    with name_scope(None, "adjust_brightness", [image, delta]):
        x = convert_to_tensor(image)
        flt = _as_float(x)
        out = math_ops.add(flt, math_ops.cast(convert_to_tensor(delta), flt.dtype))
        return out if x.dtype.is_floating else convert_image_dtype(out, x.dtype, saturate=True)


def _bind_adjust_contrast(op: Any, ctx: Any):
    def kernel(images: np.ndarray, factor: np.ndarray) -> np.ndarray:
        mean = images.mean(axis=(-3, -2), keepdims=True, dtype=np.float32).astype(images.dtype)
        return ((images - mean) * factor.astype(images.dtype) + mean).astype(images.dtype)

    return kernel


registry.register_op("AdjustContrastv2", _bind_adjust_contrast, fresh=True)
registry.not_differentiable("AdjustContrastv2")


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """(x - mean) * contrast_factor + mean, the mean per channel over height and width."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]):
        x = convert_to_tensor(images)
        flt = _as_float(x)
        out = make_op("AdjustContrastv2", [flt, convert_to_tensor(contrast_factor, dtype=dtypes.float32)],
                      flt.dtype, flt.shape, "AdjustContrastv2")
        return out if x.dtype.is_floating else convert_image_dtype(out, x.dtype, saturate=True)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


def _bind_standardize(op: Any, ctx: Any):
    def kernel(image: np.ndarray) -> np.ndarray:
        image = image.astype(np.float32)
        axes = (-3, -2, -1)
        n = np.prod(image.shape[-3:])
        mean = image.mean(axis=axes, keepdims=True)
        std = np.sqrt(np.square(image - mean).mean(axis=axes, keepdims=True))
        return ((image - mean) / np.maximum(std, np.float32(1.0 / np.sqrt(n)))).astype(np.float32)

    return kernel


registry.register_op("PerImageStandardization", _bind_standardize, fresh=True)
registry.not_differentiable("PerImageStandardization")


def per_image_standardization(image: Any) -> Tensor:
    """(x - mean) / max(stddev, 1/sqrt(num_elements)) per image, in float32."""
    x, _ = _image(image, "per_image_standardization")
    return make_op("PerImageStandardization", [x], dtypes.float32, x.shape, "per_image_standardization")
