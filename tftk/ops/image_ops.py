"""Image ops: PNG encode/decode (zlib, no Pillow), resize, flips, rot90, HSV, gamma, dtype conversion."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.tile_pad_ops import reverse_v2
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op

__all__ = ["encode_png", "decode_png", "ResizeMethod", "resize_images", "resize_bilinear",
           "resize_nearest_neighbor", "rot90", "flip_left_right", "flip_up_down", "rgb_to_hsv",
           "hsv_to_rgb", "adjust_gamma", "convert_image_dtype"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type
_CHANNELS = {v: k for k, v in _COLOR_TYPES.items()}


# ---- PNG ------------------------------------------------------------------------------------------

def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(image: np.ndarray, compression: int = -1) -> bytes:
    """A PNG file (filter 0 on every row) for a uint8/uint16 [height, width, channels] array."""
    if image.ndim != 3 or image.shape[2] not in _COLOR_TYPES:
        raise ValueError(f"image must be [height, width, channels] with 1-4 channels, got shape {image.shape}")
    depth = 16 if image.dtype == np.uint16 else 8
    h, w, c = image.shape
    rows = image.astype(">u2" if depth == 16 else np.uint8).reshape(h, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()
    header = struct.pack(">IIBBBBB", w, h, depth, _COLOR_TYPES[c], 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, compression))
            + _chunk(b"IEND", b""))


def _unfilter(data: bytes, h: int, stride: int, bpp: int) -> np.ndarray:
    """Undo PNG's per-row filters (None, Sub, Up, Average, Paeth)."""
    buf = np.frombuffer(data, np.uint8)
    if buf.size != h * (stride + 1):
        raise InvalidArgumentError(None, None, f"PNG image data has {buf.size} bytes, expected {h * (stride + 1)}")
    rows = buf.reshape(h, stride + 1)
    out = np.zeros((h, stride), np.uint8)
    prior = np.zeros(stride, np.int32)
    for y in np.arange(h):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:
            cur = np.cumsum(line.reshape(-1, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:
            cur = (line + prior) % 256
        elif kind in (3, 4):
            cur = line.copy()
            for x in np.arange(stride):
                left = cur[x - bpp] if x >= bpp else 0
                up = prior[x]
                if kind == 3:
                    pred = (left + up) // 2
                else:
                    ul = prior[x - bpp] if x >= bpp else 0
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
                cur[x] = (cur[x] + pred) % 256
        else:
            raise InvalidArgumentError(None, None, f"PNG row {y} has unknown filter type {kind}")
        out[y] = cur
        prior = cur
    return out


def png_array(data: bytes) -> np.ndarray:
    """Decode a non-interlaced 8/16-bit grey, grey+alpha, RGB, RGBA or palette PNG to [h, w, c]."""
    if not data.startswith(_PNG_SIGNATURE):
        raise InvalidArgumentError(None, None, "Expected image (JPEG, PNG, or GIF), got unknown format starting "
                                               f"with {data[:8]!r}")
    pos, header, idat, palette = 8, None, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4 or struct.unpack(">I", crc)[0] != zlib.crc32(kind + body) & 0xFFFFFFFF:
            raise InvalidArgumentError(None, None, f"Invalid PNG data: chunk {kind!r} is truncated or has a bad CRC")
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None or not idat:
        raise InvalidArgumentError(None, None, "Invalid PNG data: missing IHDR or IDAT chunk")
    w, h, depth, color, _, _, interlace = header
    if interlace or depth not in (8, 16) or color not in (0, 2, 3, 4, 6) or color == 3 and depth != 8:
        raise InvalidArgumentError(None, None, f"Unsupported PNG: bit depth {depth}, colour type {color}, "
                                               f"interlace {interlace} (8/16-bit, non-interlaced only)")
    channels = 1 if color == 3 else _CHANNELS[color]
    bpp = channels * depth // 8
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise InvalidArgumentError(None, None, f"Invalid PNG data: {exc}") from None
    pixels = _unfilter(raw, h, w * bpp, bpp)
    if depth == 16:
        image = pixels.view(">u2").astype(np.uint16).reshape(h, w, channels)
    else:
        image = pixels.reshape(h, w, channels)
    if color == 3:
        if palette is None:
            raise InvalidArgumentError(None, None, "Invalid PNG data: palette image without PLTE chunk")
        image = palette[image[..., 0]]
    return image


def _convert_channels(image: np.ndarray, channels: int) -> np.ndarray:
    """Grey <-> RGB and adding/dropping alpha (opaque alpha added); grey uses ITU-R 601 weights."""
    have = image.shape[2]
    if channels in (0, have):
        return image
    colour = image[..., :have - 1] if have in (2, 4) else image
    alpha = image[..., have - 1:] if have in (2, 4) else np.full(image.shape[:2] + (1,), np.iinfo(image.dtype).max,
                                                                  image.dtype)
    if channels in (1, 2) and colour.shape[2] == 3:
        grey = np.rint(colour.astype(np.float64) @ np.array([0.299, 0.587, 0.114]))[..., None]
        colour = grey.astype(image.dtype)
    elif channels in (3, 4) and colour.shape[2] == 1:
        colour = np.repeat(colour, 3, axis=2)
    return np.concatenate([colour, alpha], axis=2) if channels in (2, 4) else colour


def _bind_encode_png(op, ctx):
    level = op.get_attr("compression")
    return lambda image: np.asarray(png_bytes(image, level), dtype=object)


def _bind_decode_png(op, ctx):
    channels, npd = op.get_attr("channels"), op.outputs[0].dtype.as_numpy_dtype

    def kernel(contents):
        image = _convert_channels(png_array(bytes(contents.item())), channels)
        if image.dtype != npd:  # 8-bit file read as uint16 (or the reverse): rescale as TF does
            image = (image.astype(np.uint32) * 257).astype(npd) if npd == np.uint16 else (image // 257).astype(npd)
        return image
    return kernel


registry.register_op("EncodePng", _bind_encode_png)
registry.register_op("DecodePng", _bind_decode_png)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """PNG-encode a uint8/uint16 [height, width, channels] image (1-4 channels) to a string scalar."""
    x = convert_to_tensor(image)
    if x.dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"EncodePng: image must be uint8 or uint16, got {x.dtype.name}")
    dims = x.shape.as_tuple()
    if dims is not None and (len(dims) != 3 or dims[2] is not None and dims[2] not in _COLOR_TYPES):
        raise ValueError(f"EncodePng '{name or 'EncodePng'}': image must be [height, width, channels] with "
                         f"1-4 channels, got shape {x.shape}")
    if not -1 <= compression <= 9:
        raise ValueError(f"EncodePng: compression must be in [-1, 9], got {compression}")
    return make_op("EncodePng", [x], dtypes.string, [], name, {"compression": int(compression)})


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: str | None = None) -> Tensor:
    """Decode a PNG string scalar to [height, width, channels] (channels=0: as stored)."""
    c = convert_to_tensor(contents, dtype=dtypes.string) if not isinstance(contents, Tensor) else contents
    if c.dtype is not dtypes.string or c.shape.ndims not in (None, 0):
        raise ValueError(f"DecodePng: contents must be a string scalar, got {c.dtype.name} {c.shape}")
    if channels not in (0, 1, 2, 3, 4):
        raise ValueError(f"DecodePng: channels must be 0, 1, 2, 3 or 4, got {channels}")
    out = dtypes.as_dtype(dtype)
    if out not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"DecodePng: dtype must be uint8 or uint16, got {out.name}")
    return make_op("DecodePng", [c], out, [None, None, channels or None], name, {"channels": int(channels)})


# ---- resize ------------------------------------------------------------------------------------------

class ResizeMethod:
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _source_coords(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    """TF1's legacy mapping (no half-pixel centres): out index * scale."""
    if align_corners and out_size > 1:
        scale = (in_size - 1) / (out_size - 1)
    else:
        scale = in_size / out_size
    return np.arange(out_size) * scale


def _bilinear_matrix(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    src = _source_coords(in_size, out_size, align_corners)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = src - lo
    m = np.zeros((out_size, in_size))
    np.add.at(m, (np.arange(out_size), lo), 1 - frac)
    np.add.at(m, (np.arange(out_size), hi), frac)
    return m


def _nearest_index(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    src = _source_coords(in_size, out_size, align_corners)
    picked = np.round(src) if align_corners else np.floor(src)
    return np.minimum(picked.astype(np.int64), in_size - 1)


def _resize_matrices(op_type: str, in_hw: tuple, out_hw: tuple, align: bool) -> tuple[np.ndarray, np.ndarray]:
    if op_type == "ResizeBilinear":
        return tuple(_bilinear_matrix(i, o, align) for i, o in zip(in_hw, out_hw))
    return tuple(np.eye(i)[_nearest_index(i, o, align)] for i, o in zip(in_hw, out_hw))


def _bind_resize(op, ctx):
    size, align, op_type = op.get_attr("size"), op.get_attr("align_corners"), op.type
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(images):
        if op_type == "ResizeNearestNeighbor":
            rows = _nearest_index(images.shape[1], size[0], align)
            cols = _nearest_index(images.shape[2], size[1], align)
            return images[:, rows][:, :, cols]
        wy, wx = _resize_matrices(op_type, images.shape[1:3], size, align)
        return np.einsum("oh,bhwc,pw->bopc", wy, images, wx, optimize=True).astype(npd)
    return kernel


def _bind_resize_grad(op, ctx):
    align, forward = op.get_attr("align_corners"), op.get_attr("forward")

    def kernel(grad, images):
        wy, wx = _resize_matrices(forward, images.shape[1:3], grad.shape[1:3], align)
        return np.einsum("oh,bopc,pw->bhwc", wy, grad, wx, optimize=True).astype(images.dtype)
    return kernel


registry.register_op("ResizeBilinear", _bind_resize)
registry.register_op("ResizeNearestNeighbor", _bind_resize)
registry.register_op("ResizeGrad", _bind_resize_grad)
registry.not_differentiable("ResizeGrad")


def _resize_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return [None]
    return [make_op("ResizeGrad", [grad, images], images.dtype, images.shape,
                    attrs={"align_corners": op.get_attr("align_corners"), "forward": op.type})]


registry.register_gradient("ResizeBilinear")(_resize_grad)
registry.register_gradient("ResizeNearestNeighbor")(_resize_grad)


def _resize(op_type: str, images: Any, size: Any, align_corners: bool, name: str | None) -> Tensor:
    x = convert_to_tensor(images)
    dims = x.shape.as_tuple()
    if dims is not None and len(dims) not in (3, 4):
        raise ValueError(f"{op_type}: images must be 3-D [h, w, c] or 4-D [batch, h, w, c], got shape {x.shape}")
    static = constant_value(size) if isinstance(size, Tensor) else np.asarray(size)
    if static is None or static.shape != (2,) or np.any(static <= 0):
        raise ValueError(f"{op_type}: size must be two positive ints known at build time, got {size!r}")
    hw = tuple(int(v) for v in static.tolist())
    batched = x if dims is None or len(dims) == 4 else array_ops.expand_dims(x, 0)
    bd = batched.shape.as_tuple()
    out_dtype = dtypes.float32 if op_type == "ResizeBilinear" and x.dtype is not dtypes.float64 else x.dtype
    shape = TensorShape(None) if bd is None else TensorShape([bd[0], hw[0], hw[1], bd[3]])
    out = make_op(op_type, [batched], out_dtype, shape, name, {"size": hw, "align_corners": bool(align_corners)})
    return out if dims is None or len(dims) == 4 else array_ops.squeeze(out, [0])


def resize_bilinear(images: Any, size: Any, align_corners: bool = False, name: str | None = None) -> Tensor:
    """Bilinear resize with TF1's coordinate mapping; float32 output (float64 stays float64)."""
    return _resize("ResizeBilinear", images, size, align_corners, name)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False, name: str | None = None) -> Tensor:
    """Nearest-neighbour resize with TF1's coordinate mapping; keeps the dtype."""
    return _resize("ResizeNearestNeighbor", images, size, align_corners, name)


def resize_images(images: Any, size: Any, method: int = ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False) -> Tensor:
    """Resize [h, w, c] or [batch, h, w, c] images to `size` = [new_height, new_width]."""
    if preserve_aspect_ratio:
        raise ValueError("resize_images: preserve_aspect_ratio is not supported")
    if method == ResizeMethod.BILINEAR:
        return resize_bilinear(images, size, align_corners)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        return resize_nearest_neighbor(images, size, align_corners)
    raise ValueError(f"resize_images: method {method} is not supported (use ResizeMethod.BILINEAR or "
                     f"ResizeMethod.NEAREST_NEIGHBOR)")


# ---- flips and rotations -------------------------------------------------------------------------------

def _image_axes(x: Tensor, what: str) -> int:
    """Offset of the height axis: 0 for [h, w, c], 1 for [batch, h, w, c]."""
    rank = x.shape.ndims
    if rank not in (3, 4):
        raise ValueError(f"{what}: image must be 3-D or 4-D with a known rank, got shape {x.shape}")
    return rank - 3


def flip_left_right(image: Any) -> Tensor:
    """Mirror the width axis."""
    x = convert_to_tensor(image)
    return reverse_v2(x, [_image_axes(x, "flip_left_right") + 1])


def flip_up_down(image: Any) -> Tensor:
    """Mirror the height axis."""
    x = convert_to_tensor(image)
    return reverse_v2(x, [_image_axes(x, "flip_up_down")])


def rot90(image: Any, k: int = 1, name: str | None = None) -> Tensor:
    """Rotate by k * 90 degrees counter-clockwise (as np.rot90 on the height/width axes)."""
    with name_scope(name, "rot90", [image]):
        x = convert_to_tensor(image)
        h = _image_axes(x, "rot90")
        k = int(constant_value(k)) % 4 if isinstance(k, Tensor) else int(k) % 4
        swap = list(np.arange(x.shape.ndims))
        swap[h], swap[h + 1] = swap[h + 1], swap[h]
        if k == 0:
            return array_ops.identity(x)
        if k == 1:
            return array_ops.transpose(reverse_v2(x, [h + 1]), swap)
        if k == 2:
            return reverse_v2(x, [h, h + 1])
        return reverse_v2(array_ops.transpose(x, swap), [h + 1])


# ---- colour spaces, gamma, dtype conversion --------------------------------------------------------

def _rgb_to_hsv(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = rgb.max(axis=-1)
    chroma = v - rgb.min(axis=-1)
    safe_c = np.where(chroma > 0, chroma, 1)
    s = np.where(v > 0, chroma / np.where(v > 0, v, 1), 0)
    h = np.where(v == r, (g - b) / safe_c, np.where(v == g, 2 + (b - r) / safe_c, 4 + (r - g) / safe_c))
    h = np.where(chroma > 0, (h / 6.0) % 1.0, 0)
    return np.stack([h, s, v], axis=-1).astype(rgb.dtype)


def _hsv_to_rgb(hsv):
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    c = s * v
    m = v - c
    dh = (h % 1.0) * 6.0
    x = c * (1 - np.abs(dh % 2 - 1))
    sector = np.floor(dh).astype(np.int64) % 6
    zeros = np.zeros_like(c)
    table = [(c, x, zeros), (x, c, zeros), (zeros, c, x), (zeros, x, c), (x, zeros, c), (c, zeros, x)]
    rgb = [np.choose(sector, [row[i] for row in table]) for i in np.arange(3)]
    return (np.stack(rgb, axis=-1) + m[..., None]).astype(hsv.dtype)


registry.register_op("RGBToHSV", lambda op, ctx: _rgb_to_hsv)
registry.register_op("HSVToRGB", lambda op, ctx: _hsv_to_rgb)
registry.not_differentiable("RGBToHSV", "HSVToRGB", "EncodePng", "DecodePng")  # TF1 defines no gradients


def _colour_op(op_type: str, images: Any, name: str | None) -> Tensor:
    x = convert_to_tensor(images)
    if not x.dtype.is_floating:
        raise TypeError(f"{op_type}: images must be float (values in [0, 1]), got {x.dtype.name}")
    dims = x.shape.as_tuple()
    if dims is not None and (not dims or dims[-1] not in (None, 3)):
        raise ValueError(f"{op_type} '{name or op_type}': the last dimension must be 3, got shape {x.shape}")
    return make_op(op_type, [x], x.dtype, x.shape, name)


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB in [0, 1] to HSV with hue in [0, 1)."""
    return _colour_op("RGBToHSV", images, name)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """HSV (hue in [0, 1)) to RGB in [0, 1]."""
    return _colour_op("HSVToRGB", images, name)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: str | None = None) -> Tensor:
    """Convert between image dtypes, rescaling: ints span [0, MAX], floats span [0, 1]."""
    with name_scope(name, "convert_image", [image]):
        x = convert_to_tensor(image)
        target = dtypes.as_dtype(dtype)
        if not (x.dtype.is_integer or x.dtype.is_floating) or not (target.is_integer or target.is_floating):
            raise TypeError(f"convert_image_dtype: only integer and float images, got {x.dtype.name} -> {target.name}")
        if target is x.dtype:
            return array_ops.identity(x)
        if x.dtype.is_integer and target.is_integer:
            in_max, out_max = int(x.dtype.max), int(target.max)
            if in_max > out_max:
                scale = (in_max + 1) // (out_max + 1)
                return math_ops.cast(math_ops.floordiv(x, convert_to_tensor(scale, dtype=x.dtype)), target)
            scale = (out_max + 1) // (in_max + 1)
            return math_ops.multiply(math_ops.cast(x, target), convert_to_tensor(scale, dtype=target))
        if x.dtype.is_floating and target.is_floating:
            return math_ops.cast(x, target)
        if x.dtype.is_integer:
            return math_ops.multiply(math_ops.cast(x, target), 1.0 / float(x.dtype.max))
        scaled = math_ops.multiply(x, float(target.max) + 0.5)
        if saturate:
            scaled = math_ops.maximum(math_ops.minimum(scaled, float(target.max)), float(target.min))
        return math_ops.cast(scaled, target)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """gain * image ** gamma on [0, 1] floats (integer images are converted there and back)."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        x = convert_to_tensor(image)
        g = constant_value(gamma)
        if g is not None and np.any(g < 0):
            raise ValueError(f"adjust_gamma: gamma should be a non-negative real number, got {g}")
        flt = x if x.dtype in (dtypes.float16, dtypes.float32, dtypes.float64) else convert_image_dtype(x, dtypes.float32)
        gamma_t = math_ops.cast(convert_to_tensor(gamma), flt.dtype) if isinstance(gamma, Tensor) else gamma
        adjusted = math_ops.multiply(gain, math_ops.pow(flt, gamma_t)) if not isinstance(gain, Tensor) \
            else math_ops.multiply(math_ops.cast(gain, flt.dtype), math_ops.pow(flt, gamma_t))
        return adjusted if flt is x else convert_image_dtype(adjusted, x.dtype, saturate=True)
