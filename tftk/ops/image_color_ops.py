"""tf.image colour and image-quality functions: grayscale/YIQ/YUV conversions, adjust_hue,
adjust_saturation (and their random forms), transpose, image_gradients, sobel_edges,
total_variation, psnr and ssim / ssim_multiscale.

Linear colour conversions are a tensordot with TF's matrices (differentiable); hue and saturation
go through HSV as TF's CPU kernels do (not differentiable, as in TF). The quality measures follow
TF's definitions: an 11x11 Gaussian window (sigma 1.5) and k1 = 0.01, k2 = 0.03 for SSIM.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.einsum_ops import tensordot
from tftk.ops.image_ops import _hsv_to_rgb, _rgb_to_hsv, convert_image_dtype
from tftk.ops.nn_conv_ops import depthwise_conv2d
from tftk.ops.nn_ops import avg_pool
from tftk.ops.random_ops import random_uniform
from tftk.ops.tile_pad_ops import pad, tile

__all__ = ["rgb_to_grayscale", "grayscale_to_rgb", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb",
           "adjust_hue", "adjust_saturation", "random_hue", "random_saturation", "transpose", "transpose_image",
           "image_gradients", "sobel_edges", "total_variation", "psnr", "ssim", "ssim_multiscale"]

_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_INVERSE = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_INVERSE = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _as_float(image: Tensor) -> Tensor:
    """float32 as TF's image functions compute (a float64 image is cast down, then back)."""
    return image if image.dtype is dtypes.float32 else convert_image_dtype(image, dtypes.float32)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """Luma 0.2989 R + 0.5870 G + 0.1140 B, keeping a last dimension of 1 and the input's dtype."""
    with name_scope(name, "rgb_to_grayscale", [images]):
        x = convert_to_tensor(images, name="images")
        flt = _as_float(x)
        weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=flt.dtype)
        gray = array_ops.expand_dims(reduction_ops.reduce_sum(flt * weights, axis=-1), -1)
        return gray if flt is x else convert_image_dtype(gray, x.dtype)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """The single channel repeated three times."""
    with name_scope(name, "grayscale_to_rgb", [images]):
        x = convert_to_tensor(images, name="images")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and (len(dims) < 2 or dims[-1] not in (None, 1)):
            raise ValueError(f"grayscale_to_rgb: the last dimension must be 1, got shape {x.shape}")
        return array_ops.concat([x, x, x], -1)


def _linear_colour(matrix: list, images: Any, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [images]):
        x = convert_to_tensor(images, name="images")
        if not x.dtype.is_floating:
            raise TypeError(f"{default}: images must be float, got {x.dtype.name}")
        kernel = convert_to_tensor(matrix, dtype=x.dtype, name="kernel")
        out = tensordot(x, kernel, axes=[[x.shape.ndims - 1], [0]]) if x.shape.ndims else None
        out.set_shape(x.shape)
        return out


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB to YIQ (NTSC) colour space."""
    return _linear_colour(_YIQ, images, None, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ to RGB."""
    return _linear_colour(_YIQ_INVERSE, images, None, "yiq_to_rgb")


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB to YUV colour space."""
    return _linear_colour(_YUV, images, None, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV to RGB."""
    return _linear_colour(_YUV_INVERSE, images, None, "yuv_to_rgb")


def _rgb(rgb: np.ndarray) -> None:
    if rgb.ndim < 1 or rgb.shape[-1] != 3:
        raise ValueError(f"input must have 3 channels (RGB), got shape {list(rgb.shape)}")


def _hue(rgb: np.ndarray, delta: np.ndarray) -> np.ndarray:
    _rgb(rgb)
    hsv = _rgb_to_hsv(rgb.astype(np.float64))
    hsv[..., 0] = (hsv[..., 0] + float(delta)) % 1.0
    return _hsv_to_rgb(hsv)


def _saturation(rgb: np.ndarray, factor: np.ndarray) -> np.ndarray:
    _rgb(rgb)
    hsv = _rgb_to_hsv(rgb.astype(np.float64))
    hsv[..., 1] = np.clip(hsv[..., 1] * float(factor), 0.0, 1.0)
    return _hsv_to_rgb(hsv)


register_array_op("AdjustHue", _hue)
register_array_op("AdjustSaturation", _saturation)


def _through_hsv(op_type: str, image: Any, amount: Any, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [image]):
        x = convert_to_tensor(image, name="image")
        flt = _as_float(x)
        adjusted = array_op(op_type, [flt, convert_to_tensor(amount, dtype=dtypes.float32)], [(flt.dtype, flt.shape)])
        return adjusted if flt is x else convert_image_dtype(adjusted, x.dtype)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """Rotate the hue by `delta` (in [-1, 1], a fraction of the colour circle)."""
    return _through_hsv("AdjustHue", image, delta, name, "adjust_hue")


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """Multiply the saturation by `saturation_factor` (clipped to [0, 1])."""
    return _through_hsv("AdjustSaturation", image, saturation_factor, name, "adjust_saturation")


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta] (max_delta in [0, 0.5])."""
    if not 0 <= max_delta <= 0.5:
        raise ValueError("max_delta must be in the interval [0, 0.5].")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


def transpose(image: Any, name: str | None = None) -> Tensor:
    """Swap height and width of an image [h, w, c] or a batch [n, h, w, c]."""
    with name_scope(name, "transpose", [image]):
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims == 3:
            return array_ops.transpose(x, [1, 0, 2], name="transpose")
        if x.shape.ndims == 4:
            return array_ops.transpose(x, [0, 2, 1, 3], name="transpose")
        raise ValueError(f"'image' must be either 3 or 4 dimensional, got shape {x.shape}")


transpose_image = transpose


def _batch4(images: Any, what: str) -> Tensor:
    x = convert_to_tensor(images, name="images")
    if x.shape.ndims != 4:
        raise ValueError(f"{what} expects a 4D tensor [batch_size, h, w, d], not {x.shape}.")
    return x


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """(dy, dx): forward differences along height and width, zero in the last row / column."""
    x = _batch4(image, "image_gradients")
    dy = x[:, 1:, :, :] - x[:, :-1, :, :]
    dx = x[:, :, 1:, :] - x[:, :, :-1, :]
    dy = pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    dy.set_shape(x.shape)
    dx.set_shape(x.shape)
    return dy, dx


def sobel_edges(image: Any) -> Tensor:
    """Sobel responses [batch, h, w, d, 2] (dy then dx), the image padded by reflection."""
    x = _batch4(image, "sobel_edges")
    flt = x if x.dtype.is_floating else math_ops.cast(x, dtypes.float32)
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], np.float64)
    channels = flt.shape.as_list()[-1]
    if channels is None:
        raise ValueError(f"sobel_edges: the depth of the images must be known, got shape {x.shape}")
    weights = np.tile(kernels.transpose(1, 2, 0)[:, :, None, :], [1, 1, channels, 1])
    padded = pad(flt, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    edges = depthwise_conv2d(padded, convert_to_tensor(weights, dtype=flt.dtype), [1, 1, 1, 1], "VALID")
    shape = array_ops.concat([array_ops.shape(flt), [2]], 0)
    out = array_ops.reshape(edges, shape)
    out.set_shape(flt.shape.concatenate([2]))
    return out


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """Sum of absolute differences of neighbouring pixels: a scalar for one image, a vector for a batch."""
    with name_scope(name, "total_variation", [images]):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims == 3:
            dh, dw, axes = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :], None
        elif x.shape.ndims == 4:
            dh, dw, axes = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :], [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (reduction_ops.reduce_sum(math_ops.abs(dh), axis=axes)
                + reduction_ops.reduce_sum(math_ops.abs(dw), axis=axes))


def _paired(a: Any, b: Any, max_val: Any) -> tuple[Tensor, Tensor, Tensor]:
    """Both images and max_val as float32 in [0, 1]-scaled units, as TF converts them (floats are cast)."""
    x, y = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
    if x.dtype is not y.dtype:
        raise TypeError(f"images a and b must have the same dtype, got {x.dtype.name} and {y.dtype.name}")
    m = convert_image_dtype(math_ops.cast(convert_to_tensor(max_val), x.dtype), dtypes.float32)
    return convert_image_dtype(x, dtypes.float32), convert_image_dtype(y, dtypes.float32), m


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio per image: 20 log10(max_val) - 10 log10(mean squared error)."""
    with name_scope(name, "PSNR", [a, b]):
        x, y, m = _paired(a, b, max_val)
        mse = reduction_ops.reduce_mean(math_ops.squared_difference(x, y), [-3, -2, -1])
        ln10 = np.log(10.0)
        return math_ops.subtract(20 * math_ops.log(m) / ln10, 10 / ln10 * math_ops.log(mse), name="psnr")


def _gaussian_window(size: int, sigma: float, dtype: dtypes.DType) -> Tensor:
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = -0.5 * coords ** 2 / sigma ** 2
    g = g[:, None] + g[None, :]
    g = np.exp(g - g.max())
    g = g / g.sum()
    return convert_to_tensor(g[:, :, None, None], dtype=dtype)


def _ssim_parts(x: Tensor, y: Tensor, max_val: Tensor, filter_size: int, sigma: float, k1: float,
                k2: float) -> tuple[Tensor, Tensor]:
    """(luminance term, contrast-structure term) maps, averaged over spatial positions later."""
    channels = x.shape.as_list()[-1]
    window = tile(_gaussian_window(filter_size, sigma, x.dtype), [1, 1, channels, 1])
    blur = lambda t: depthwise_conv2d(t, window, [1, 1, 1, 1], "VALID")  # noqa: E731
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean_x, mean_y = blur(x), blur(y)
    luminance = (2.0 * mean_x * mean_y + c1) / (mean_x * mean_x + mean_y * mean_y + c1)
    cross = 2.0 * (blur(x * y) - mean_x * mean_y) + c2
    squares = blur(x * x + y * y) - (mean_x * mean_x + mean_y * mean_y) + c2
    return luminance, cross / squares


def _flatten_batch(t: Tensor) -> tuple[Tensor, Any]:
    """Images of any batch rank as [n, h, w, c], and how to reshape results back."""
    shape = array_ops.shape(t)
    flat = array_ops.reshape(t, array_ops.concat([[-1], shape[-3:]], 0))
    if t.shape.ndims is not None:
        flat.set_shape([None] + t.shape.as_list()[-3:])
    return flat, shape[:-3]


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
         k2: float = 0.03) -> Tensor:
    """Structural similarity per image (mean over positions and channels)."""
    with name_scope(None, "SSIM", [img1, img2]):
        x, y, m = _paired(img1, img2, max_val)
        flat_x, batch = _flatten_batch(x)
        flat_y, _ = _flatten_batch(y)
        luminance, cs = _ssim_parts(flat_x, flat_y, m, filter_size, filter_sigma, k1, k2)
        value = reduction_ops.reduce_mean(luminance * cs, [-3, -2, -1])
        return array_ops.reshape(value, batch)


_MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _even(t: Tensor) -> Tensor:
    h, w = t.shape.as_list()[1:3]
    if h is None or w is None:
        raise ValueError(f"ssim_multiscale needs images of known height and width, got shape {t.shape}")
    return pad(t, [[0, 0], [0, h % 2], [0, w % 2], [0, 0]], mode="SYMMETRIC")


def ssim_multiscale(img1: Any, img2: Any, max_val: Any, power_factors: Sequence[float] = _MS_SSIM_WEIGHTS,
                    filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """Multi-scale SSIM: contrast-structure at each of len(power_factors) scales (2x2 average
    pooling between them), luminance too at the coarsest, each raised to its power factor."""
    with name_scope(None, "MS-SSIM", [img1, img2]):
        x, y, m = _paired(img1, img2, max_val)
        x, batch = _flatten_batch(x)
        y, _ = _flatten_batch(y)
        terms = []
        for k, _ in enumerate(power_factors):
            if k:  # odd sizes: mirror the last row / column, then 2x2 averages
                x, y = (avg_pool(_even(t), [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for t in (x, y))
            luminance, cs = _ssim_parts(x, y, m, filter_size, filter_sigma, k1, k2)
            terms.append(reduction_ops.reduce_mean(cs, [1, 2]))  # per image and channel
        terms[-1] = reduction_ops.reduce_mean(luminance * cs, [1, 2])
        stacked = math_ops.maximum(array_ops.stack(terms, axis=-1), 0.0)
        weights = convert_to_tensor(list(power_factors), dtype=stacked.dtype)
        value = reduction_ops.reduce_prod(math_ops.pow(stacked, weights), [-1])
        return array_ops.reshape(reduction_ops.reduce_mean(value, [-1]), batch)
