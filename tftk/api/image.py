"""The `tf.image` namespace."""

from tftk.ops.image_ops import (ResizeMethod, adjust_gamma, convert_image_dtype, decode_png,
                                encode_png, flip_left_right, flip_up_down, hsv_to_rgb, resize_area,
                                resize_bicubic, resize_bilinear, resize_images,
                                resize_nearest_neighbor, rgb_to_hsv, rot90)
from tftk.ops.image_box_ops import (crop_and_resize, non_max_suppression, non_max_suppression_overlaps,
                                    non_max_suppression_padded, non_max_suppression_with_scores,
                                    resize_image_with_pad)
from tftk.ops.image_color_ops import (adjust_hue, adjust_saturation, grayscale_to_rgb, image_gradients, psnr,
                                      random_hue, random_saturation, rgb_to_grayscale, rgb_to_yiq, rgb_to_yuv,
                                      sobel_edges, ssim, ssim_multiscale, total_variation, transpose,
                                      transpose_image, yiq_to_rgb, yuv_to_rgb)
from tftk.ops.space_ops import extract_image_patches, extract_patches

__all__ = ["ResizeMethod", "adjust_gamma", "convert_image_dtype", "decode_png", "encode_png",
           "flip_left_right", "flip_up_down", "hsv_to_rgb", "resize_area", "resize_bicubic",
           "resize_bilinear", "resize_images", "resize_nearest_neighbor", "rgb_to_hsv", "rot90", "extract_image_patches", "extract_patches",
           "crop_and_resize", "non_max_suppression", "non_max_suppression_overlaps", "non_max_suppression_padded",
           "non_max_suppression_with_scores", "resize_image_with_pad", "adjust_hue", "adjust_saturation",
           "grayscale_to_rgb", "image_gradients", "psnr", "random_hue", "random_saturation", "rgb_to_grayscale",
           "rgb_to_yiq", "rgb_to_yuv", "sobel_edges", "ssim", "ssim_multiscale", "total_variation", "transpose",
           "transpose_image", "yiq_to_rgb", "yuv_to_rgb", "resize", "resize_with_crop_or_pad",
           "adjust_brightness", "adjust_contrast", "central_crop", "crop_to_bounding_box", "decode_image",
           "decode_jpeg", "pad_to_bounding_box", "per_image_standardization", "random_brightness",
           "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down",
           "resize_image_with_crop_or_pad"]


resize = resize_images  # TF1's tf.image.resize is resize_images


def __getattr__(name: str):
    """The preprocessing ops (tftk.ops.image_preprocessing) load on first use: `import tftk` stays fast."""
    from tftk.ops import image_preprocessing
    if name in image_preprocessing.__all__ or name == "resize_with_crop_or_pad":
        value = getattr(image_preprocessing, "resize_image_with_crop_or_pad" if name == "resize_with_crop_or_pad"
                        else name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tf.image' has no attribute {name!r}")
