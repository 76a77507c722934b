"""tf.image's colour conversions, hue/saturation, gradients and edges, quality measures (psnr, ssim),
box suppression, crop_and_resize and resize_image_with_pad against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1304)
IMG = RNG.uniform(0, 1, (2, 5, 6, 3))
IMG_U8 = (IMG * 255).astype(np.uint8)
GREY = np.repeat(RNG.uniform(0, 1, (4, 5, 1)), 3, axis=-1)
BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                  [0, 100, 1, 101]], np.float32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)

OPS = [
    ("rgb_to_grayscale", "tf.image.rgb_to_grayscale(x)", {"x": IMG}, True),
    ("rgb_to_grayscale_uint8", "tf.image.rgb_to_grayscale(x)", {"x": IMG_U8}, False),
    ("grayscale_to_rgb", "tf.image.grayscale_to_rgb(x)", {"x": IMG[..., :1]}, True),
    ("rgb_to_yiq", "tf.image.rgb_to_yiq(x)", {"x": IMG}, True),
    ("yiq_to_rgb", "tf.image.yiq_to_rgb(x)", {"x": IMG}, True),
    ("rgb_to_yuv", "tf.image.rgb_to_yuv(x)", {"x": IMG[0]}, True),
    ("yuv_to_rgb", "tf.image.yuv_to_rgb(x)", {"x": IMG[0]}, True),
    ("adjust_hue", "tf.image.adjust_hue(x, 0.3)", {"x": IMG.astype(np.float32)}, False),
    ("adjust_hue_negative", "tf.image.adjust_hue(x, -0.45)", {"x": IMG[0].astype(np.float32)}, False),
    ("adjust_hue_uint8", "tf.image.adjust_hue(x, 0.2)", {"x": IMG_U8}, False),
    ("adjust_saturation", "tf.image.adjust_saturation(x, 1.7)", {"x": IMG.astype(np.float32)}, False),
    ("adjust_saturation_down", "tf.image.adjust_saturation(x, 0.3)", {"x": IMG[1].astype(np.float32)}, False),
    ("random_hue_grey", "tf.image.random_hue(x, 0.4, seed=3)", {"x": GREY.astype(np.float32)}, False),
    ("random_saturation_grey", "tf.image.random_saturation(x, 0.2, 1.8, seed=3)", {"x": GREY.astype(np.float32)}, False),
    ("transpose_batch", "tf.image.transpose(x)", {"x": IMG}, True),
    ("transpose_image", "tf.image.transpose_image(x)", {"x": IMG[0]}, True),
    ("image_gradients_dy", "tf.image.image_gradients(x)[0]", {"x": IMG}, True),
    ("image_gradients_dx", "tf.image.image_gradients(x)[1]", {"x": IMG}, True),
    ("sobel_edges", "tf.image.sobel_edges(x)", {"x": IMG}, True),
    ("total_variation_batch", "tf.image.total_variation(x)", {"x": IMG}, True),
    ("total_variation_single", "tf.image.total_variation(x)", {"x": IMG[0]}, True),
    ("psnr", "tf.image.psnr(x, y, 1.0)", {"x": IMG.astype(np.float32), "y": np.clip(IMG + 0.05, 0, 1).astype(np.float32)}, True),
    ("psnr_uint8", "tf.image.psnr(x, y, 255)", {"x": IMG_U8, "y": IMG_U8 // 2}, False),
    ("ssim", "tf.image.ssim(x, y, 1.0, filter_size=3)", {"x": IMG.astype(np.float32),
                                                           "y": np.clip(IMG * 0.8 + 0.1, 0, 1).astype(np.float32)}, True),
    ("ssim_default_window", "tf.image.ssim(x, y, 1.0)", {"x": RNG.uniform(0, 1, (1, 12, 13, 2)).astype(np.float32),
                                                           "y": RNG.uniform(0, 1, (1, 12, 13, 2)).astype(np.float32)}, False),
    ("ssim_multiscale", "tf.image.ssim_multiscale(x, y, 1.0, power_factors=(0.3, 0.7), filter_size=3)",
     {"x": RNG.uniform(0, 1, (2, 9, 11, 1)).astype(np.float32), "y": RNG.uniform(0, 1, (2, 9, 11, 1)).astype(np.float32)},
     False),
    ("non_max_suppression", "tf.image.non_max_suppression(x, y, 3, 0.5)", {"x": BOXES, "y": SCORES}, False),
    ("non_max_suppression_score_threshold", "tf.image.non_max_suppression(x, y, 6, 0.4, score_threshold=0.55)",
     {"x": BOXES, "y": SCORES}, False),
    ("non_max_suppression_with_scores", "tf.image.non_max_suppression_with_scores(x, y, 4, 0.5)[1]",
     {"x": BOXES, "y": SCORES}, False),
    ("non_max_suppression_overlaps", "tf.image.non_max_suppression_overlaps(x, y, 2, 0.5)",
     {"x": np.array([[1.0, 0.7, 0.2], [0.7, 1.0, 0.0], [0.2, 0.0, 1.0]], np.float32),
      "y": np.array([0.1, 0.8, 0.3], np.float32)}, False),
    ("non_max_suppression_padded", "tf.image.non_max_suppression_padded(x, y, 5, 0.5, pad_to_max_output_size=True)[0]",
     {"x": BOXES, "y": SCORES}, False),
    ("crop_and_resize", "tf.image.crop_and_resize(x, [[0.1, 0.2, 0.8, 0.9], [0.5, 0.0, 1.0, 0.5], [-0.2, 0.3, 0.6, 1.3]],"
     " [0, 1, 1], [3, 4])", {"x": IMG.astype(np.float32)}, True),
    ("crop_and_resize_nearest", "tf.image.crop_and_resize(x, [[0.0, 0.0, 1.0, 1.0], [0.9, 0.1, 0.2, 0.7]], [1, 0], [4, 3],"
     " method='nearest', extrapolation_value=-1.0)", {"x": IMG.astype(np.float32)}, False),
    ("crop_and_resize_single_pixel", "tf.image.crop_and_resize(x, [[0.2, 0.2, 0.6, 0.8]], [0], [1, 1])", {"x": IMG.astype(np.float32)},
     True),
    # float64 images: the crops are float32 either way and the image gradient is summed in float32,
    # so only the forward values are compared at float64's tolerance
    ("crop_and_resize_float64", "tf.image.crop_and_resize(x, [[0.1, 0.2, 0.8, 0.9]], [1], [2, 3])", {"x": IMG}, False),
    ("resize_image_with_pad", "tf.image.resize_image_with_pad(x, 8, 8)", {"x": IMG.astype(np.float32)}, False),
    ("resize_image_with_pad_single", "tf.image.resize_image_with_pad(x, 4, 9, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
     {"x": IMG[0].astype(np.float32)}, False),
    ("resize_alias", "tf.image.resize(x, [3, 4])", {"x": IMG.astype(np.float32)}, False),
    ("resize_with_crop_or_pad", "tf.image.resize_with_crop_or_pad(x, 4, 8)", {"x": IMG}, False),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("non_max_suppression_padded_count",
        "fetch = {'n': tf.image.non_max_suppression_padded(tf.constant(inputs['b']), tf.constant(inputs['s']), 5, 0.5,"
        " pad_to_max_output_size=True)[1]}\n", {"b": BOXES, "s": SCORES}),
    Row("grayscale_to_rgb_bad", "fetch = {'y': tf.image.grayscale_to_rgb(tf.zeros([2, 2, 3]))}\n"),
    Row("adjust_hue_bad_channels", "fetch = {'y': tf.image.adjust_hue(tf.zeros([2, 2, 4]), 0.1)}\n"),
    Row("image_gradients_bad_rank", "fetch = {'y': tf.image.image_gradients(tf.zeros([2, 2, 3]))[0]}\n"),
    Row("random_hue_bad_delta", "fetch = {'y': tf.image.random_hue(tf.zeros([2, 2, 3]), 0.7)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("image_more", ROWS)
