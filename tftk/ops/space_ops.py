"""Moving blocks between spatial, depth and batch dimensions: space_to_depth / depth_to_space,
space_to_batch(_nd) / batch_to_space(_nd), required_space_to_batch_paddings, and
extract_image_patches (every sliding window laid out along depth).

Each pair is the other's gradient; extract_image_patches' gradient adds the patches back where
they came from. NHWC layout, as TF1's CPU kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.constant_value import constant_value

__all__ = ["space_to_depth", "depth_to_space", "space_to_batch_nd", "batch_to_space_nd", "space_to_batch",
           "batch_to_space", "required_space_to_batch_paddings", "extract_image_patches", "extract_patches"]


# ---- space_to_depth / depth_to_space -----------------------------------------------------------

def _space_to_depth(x: np.ndarray, block_size: int) -> np.ndarray:
    b, h, w, c = x.shape
    if h % block_size or w % block_size:
        raise ValueError(f"space_to_depth: height {h} and width {w} must be divisible by block_size {block_size}")
    y = x.reshape(b, h // block_size, block_size, w // block_size, block_size, c)
    return y.transpose(0, 1, 3, 2, 4, 5).reshape(b, h // block_size, w // block_size, block_size * block_size * c)


def _depth_to_space(x: np.ndarray, block_size: int) -> np.ndarray:
    b, h, w, c = x.shape
    if c % (block_size * block_size):
        raise ValueError(f"depth_to_space: depth {c} must be divisible by block_size^2 = {block_size ** 2}")
    y = x.reshape(b, h, w, block_size, block_size, c // block_size ** 2)
    return y.transpose(0, 1, 3, 2, 4, 5).reshape(b, h * block_size, w * block_size, c // block_size ** 2)


register_array_op("SpaceToDepth", _space_to_depth, differentiable=True)
register_array_op("DepthToSpace", _depth_to_space, differentiable=True)


def _block_move(op_type: str, input: Any, block_size: int, name: str | None, data_format: str) -> Tensor:  # noqa: A002
    if data_format != "NHWC":
        raise ValueError(f"{op_type}: only data_format='NHWC' is supported on CPU, got {data_format!r}")
    x = convert_to_tensor(input, name="input")
    block = int(block_size)
    if block < 2:
        raise ValueError(f"{op_type}: block_size must be at least 2, got {block}")
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 4
    if len(dims) != 4:
        raise ValueError(f"{op_type}: input must be 4-D (NHWC), got shape {x.shape}")
    b, h, w, c = dims
    div = lambda v, k: None if v is None else v // k  # noqa: E731
    mul = lambda v, k: None if v is None else v * k  # noqa: E731
    if op_type == "SpaceToDepth":
        shape = [b, div(h, block), div(w, block), mul(c, block * block)]
    else:
        shape = [b, mul(h, block), mul(w, block), div(c, block * block)]
    return array_op(op_type, [x], [(x.dtype, shape)], name, {"block_size": block})


def space_to_depth(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """Each block_size x block_size block of pixels becomes one pixel with block_size^2 times the depth."""
    return _block_move("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """The inverse of space_to_depth: depth is spread over block_size x block_size pixel blocks."""
    return _block_move("DepthToSpace", input, block_size, name, data_format)


@registry.register_gradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    return [depth_to_space(grad, op.get_attr("block_size"))]


@registry.register_gradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    return [space_to_depth(grad, op.get_attr("block_size"))]


# ---- space_to_batch_nd / batch_to_space_nd -----------------------------------------------------

def _space_to_batch(x: np.ndarray, block: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    m = block.size
    block, paddings = block.astype(np.int64).tolist(), paddings.astype(np.int64).reshape(m, 2)
    if (paddings < 0).any() or min(block, default=1) < 1:
        raise ValueError(f"space_to_batch: block_shape {block} must be positive and paddings non-negative")
    padded = np.pad(x, [(0, 0)] + [tuple(p) for p in paddings.tolist()] + [(0, 0)] * (x.ndim - 1 - m))
    spatial = padded.shape[1:1 + m]
    if any(s % k for s, k in zip(spatial, block)):
        raise ValueError(f"space_to_batch: padded spatial shape {list(spatial)} must be divisible by "
                         f"block_shape {block}")
    shape = [x.shape[0]]
    for s, k in zip(spatial, block):
        shape += [s // k, k]
    y = padded.reshape(shape + list(padded.shape[1 + m:]))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, y.ndim))
    y = y.transpose(perm)
    return y.reshape([x.shape[0] * int(np.prod(block))] + [s // k for s, k in zip(spatial, block)]
                     + list(padded.shape[1 + m:]))


def _batch_to_space(x: np.ndarray, block: np.ndarray, crops: np.ndarray) -> np.ndarray:
    m = block.size
    block, crops = block.astype(np.int64).tolist(), crops.astype(np.int64).reshape(m, 2)
    total = int(np.prod(block))
    if x.shape[0] % total:
        raise ValueError(f"batch_to_space: batch {x.shape[0]} must be divisible by prod(block_shape) = {total}")
    batch = x.shape[0] // total
    y = x.reshape(block + [batch] + list(x.shape[1:]))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    spatial = [s * k for s, k in zip(x.shape[1:1 + m], block)]
    y = y.reshape([batch] + spatial + list(x.shape[1 + m:]))
    if (crops < 0).any() or any(lo + hi > s for (lo, hi), s in zip(crops.tolist(), spatial)):
        raise ValueError(f"batch_to_space: crops {crops.tolist()} must be non-negative and fit {spatial}")
    key = (slice(None),) + tuple(slice(lo, s - hi) for (lo, hi), s in zip(crops.tolist(), spatial))
    return y[key]


register_array_op("SpaceToBatchND", _space_to_batch, differentiable=True)
register_array_op("BatchToSpaceND", _batch_to_space, differentiable=True)


def _nd_shape(x: Tensor, block: Tensor, pads: Tensor, to_batch: bool) -> TensorShape:
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    k, p = constant_value(block), constant_value(pads)
    if dims is None or k is None:
        return TensorShape(None if dims is None else [None] * len(dims))
    m = k.size
    out = list(dims)
    prod = int(np.prod(k))
    out[0] = None if dims[0] is None else (dims[0] * prod if to_batch else dims[0] // prod)
    for i in range(m):
        s = dims[1 + i]
        if s is None or p is None:
            out[1 + i] = None
        elif to_batch:
            out[1 + i] = (s + int(p[i][0]) + int(p[i][1])) // int(k[i])
        else:
            out[1 + i] = s * int(k[i]) - int(p[i][0]) - int(p[i][1])
    return TensorShape(out)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Pads the spatial dims, then moves each block_shape block of positions into the batch dimension."""
    x = convert_to_tensor(input, name="input")
    with name_scope(name, "SpaceToBatchND", [x, block_shape, paddings]) as scope:
        k = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        p = convert_to_tensor(paddings, dtype=dtypes.int32, name="paddings")
        return array_op("SpaceToBatchND", [x, k, p], [(x.dtype, _nd_shape(x, k, p, True))], scope)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of space_to_batch_nd: batch entries back into spatial blocks, then cropped."""
    x = convert_to_tensor(input, name="input")
    with name_scope(name, "BatchToSpaceND", [x, block_shape, crops]) as scope:
        k = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        c = convert_to_tensor(crops, dtype=dtypes.int32, name="crops")
        return array_op("BatchToSpaceND", [x, k, c], [(x.dtype, _nd_shape(x, k, c, False))], scope)


@registry.register_gradient("SpaceToBatchND")
def _space_to_batch_grad(op, grad):
    return [batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@registry.register_gradient("BatchToSpaceND")
def _batch_to_space_grad(op, grad):
    return [space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


def space_to_batch(input: Any, paddings: Any, block_size: Any = None, name: str | None = None,  # noqa: A002
                   block_shape: Any = None) -> Tensor:
    """TF1's 4-D space_to_batch: a square block_size over height and width."""
    if block_size is None:
        block_size = block_shape
    return space_to_batch_nd(input, [int(block_size)] * 2, paddings, name)


def batch_to_space(input: Any, crops: Any, block_size: Any, name: str | None = None,  # noqa: A002
                   block_shape: Any = None) -> Tensor:
    """TF1's 4-D batch_to_space: a square block_size over height and width."""
    return batch_to_space_nd(input, [int(block_size)] * 2, crops, name)


def _required_paddings(shape: np.ndarray, block: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    base = base.reshape(-1, 2)
    padded = shape + base[:, 0] + base[:, 1]
    extra = (block - padded % block) % block
    return np.stack([base[:, 0], base[:, 1] + extra], 1), np.stack([np.zeros_like(extra), extra], 1)


register_array_op("RequiredSpaceToBatchPaddings", _required_paddings)


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any, base_paddings: Any = None,
                                     name: str | None = None) -> tuple[Tensor, Tensor]:
    """(paddings, crops): the least padding past base_paddings making input_shape divisible by block_shape."""
    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        s = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        k = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        m = k.shape.as_list()[0] if k.shape.ndims == 1 else None
        base = convert_to_tensor([[0, 0]] * m if base_paddings is None else base_paddings, dtype=dtypes.int32,
                                 name="base_paddings")
        paddings, crops = array_op("RequiredSpaceToBatchPaddings", [s, k, base],
                                   [(dtypes.int32, [m, 2]), (dtypes.int32, [m, 2])])
        return paddings, crops


# ---- extract_image_patches ----------------------------------------------------------------------

def _window(size: int, k: int, stride: int, rate: int, padding: str) -> tuple[int, int]:
    """(output size, padding before) of one spatial dimension."""
    effective = (k - 1) * rate + 1
    if padding == "VALID":
        return max((size - effective) // stride + 1, 0), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def _patch_index(h: int, w: int, ksizes, strides, rates, padding) -> np.ndarray:
    """Flat input position (or -1 for padding) of every (out_row, out_col, k_row, k_col)."""
    axes = []
    for size, k, s, r in ((h, ksizes[1], strides[1], rates[1]), (w, ksizes[2], strides[2], rates[2])):
        out, before = _window(size, k, s, r, padding)
        pos = np.arange(out)[:, None] * s + np.arange(k)[None, :] * r - before
        axes.append(np.where((pos >= 0) & (pos < size), pos, -1))
    rows, cols = axes
    r = rows[:, None, :, None]
    c = cols[None, :, None, :]
    return np.where((r >= 0) & (c >= 0), r * w + c, -1)


def _extract(x: np.ndarray, ksizes, strides, rates, padding) -> np.ndarray:
    b, h, w, c = x.shape
    index = _patch_index(h, w, ksizes, strides, rates, padding)
    flat = np.concatenate([x.reshape(b, h * w, c), np.zeros((b, 1, c), x.dtype)], 1)
    patches = flat[:, index]  # [b, oh, ow, kh, kw, c]; -1 picks the zero row
    return patches.reshape(b, index.shape[0], index.shape[1], -1)


def _extract_grad(x: np.ndarray, grad: np.ndarray, ksizes, strides, rates, padding) -> np.ndarray:
    b, h, w, c = x.shape
    index = _patch_index(h, w, ksizes, strides, rates, padding)
    g = grad.reshape(b, -1, c)
    out = np.zeros((b, h * w + 1, c), grad.dtype)
    for k, pos in enumerate(index.reshape(-1).tolist()):
        out[:, pos] += g[:, k]
    return out[:, :h * w].reshape(x.shape)


register_array_op("ExtractImagePatches", _extract, differentiable=True)
register_array_op("ExtractImagePatchesGrad", _extract_grad)


@registry.register_gradient("ExtractImagePatches")
def _extract_image_patches_grad(op, grad):
    x = op.inputs[0]
    return [array_op("ExtractImagePatchesGrad", [x, grad], [(grad.dtype, x.shape)], attrs=dict(op.attrs))]


def extract_image_patches(images: Any, ksizes: Any = None, strides: Any = None, rates: Any = None,
                          padding: str | None = None, name: str | None = None, sizes: Any = None) -> Tensor:
    """Every ksizes window of `images` (NHWC), dilated by rates, flattened along depth:
    [batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]."""
    ksizes = sizes if ksizes is None else ksizes
    x = convert_to_tensor(images, name="images")
    attrs = {"ksizes": [int(v) for v in ksizes], "strides": [int(v) for v in strides],
             "rates": [int(v) for v in rates], "padding": padding}
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"extract_image_patches: padding must be 'SAME' or 'VALID', got {padding!r}")
    for key in ("ksizes", "strides", "rates"):
        if len(attrs[key]) != 4 or attrs[key][0] != 1 or attrs[key][3] != 1:
            raise ValueError(f"extract_image_patches: {key} must be [1, rows, cols, 1], got {attrs[key]}")
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 4
    if len(dims) != 4:
        raise ValueError(f"extract_image_patches: images must be 4-D, got shape {x.shape}")
    out = [dims[0]]
    for i in (1, 2):
        out.append(None if dims[i] is None else
                   _window(dims[i], attrs["ksizes"][i], attrs["strides"][i], attrs["rates"][i], padding)[0])
    out.append(None if dims[3] is None else dims[3] * attrs["ksizes"][1] * attrs["ksizes"][2])
    return array_op("ExtractImagePatches", [x], [(x.dtype, out)], name, attrs)


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str,
                    name: str | None = None) -> Tensor:
    """TF 2's spelling of extract_image_patches."""
    return extract_image_patches(images, sizes, strides, rates, padding, name)
