"""The `tf.image` namespace."""

from tftk.ops.image_ops import (ResizeMethod, adjust_gamma, convert_image_dtype, decode_png,
                                encode_png, flip_left_right, flip_up_down, hsv_to_rgb, resize_area,
                                resize_bicubic, resize_bilinear, resize_images,
                                resize_nearest_neighbor, rgb_to_hsv, rot90)
from tftk.ops.space_ops import extract_image_patches, extract_patches

__all__ = ["ResizeMethod", "adjust_gamma", "convert_image_dtype", "decode_png", "encode_png",
           "flip_left_right", "flip_up_down", "hsv_to_rgb", "resize_area", "resize_bicubic",
           "resize_bilinear", "resize_images", "resize_nearest_neighbor", "rgb_to_hsv", "rot90", "extract_image_patches", "extract_patches",
           "adjust_brightness", "adjust_contrast", "central_crop", "crop_to_bounding_box", "decode_image",
           "decode_jpeg", "pad_to_bounding_box", "per_image_standardization", "random_brightness",
           "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down",
           "resize_image_with_crop_or_pad"]


def __getattr__(name: str):
    """The preprocessing ops (tftk.ops.image_preprocessing) load on first use: `import tftk` stays fast."""
    from tftk.ops import image_preprocessing
    if name in image_preprocessing.__all__:
        value = getattr(image_preprocessing, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tf.image' has no attribute {name!r}")
