"""Image preprocessing against real TensorFlow: deterministic ops equal to TF's values, random
ops checked for their laws (and reproducible with seeds), JPEG decoding of TF's own file."""

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import both_succeeded, run_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "data"
rng = np.random.RandomState(3)
INPUTS = {"img": rng.rand(5, 7, 3).astype(np.float32), "u8": rng.randint(0, 256, (6, 5, 2)).astype(np.uint8),
          "batch": rng.rand(2, 6, 4, 3).astype(np.float32)}

OPS = {
    "bicubic_up": "tf.image.resize_images(x, [9, 11], tf.image.ResizeMethod.BICUBIC)",
    "bicubic_down": "tf.image.resize_images(b, [4, 3], tf.image.ResizeMethod.BICUBIC)",
    "bicubic_align": "tf.image.resize_images(x, [8, 4], tf.image.ResizeMethod.BICUBIC, align_corners=True)",
    "bicubic_uint8": "tf.image.resize_bicubic(tf.expand_dims(u, 0), [7, 9])",
    "area_down": "tf.image.resize_images(b, [4, 3], tf.image.ResizeMethod.AREA)",
    "area_up": "tf.image.resize_images(x, [12, 10], tf.image.ResizeMethod.AREA)",
    "area_odd": "tf.image.resize_area(tf.expand_dims(x, 0), [3, 5])",
    "area_align": "tf.image.resize_area(tf.expand_dims(x, 0), [3, 4], align_corners=True)",
    "crop_box": "tf.image.crop_to_bounding_box(x, 1, 2, 3, 4)",
    "crop_box_batch": "tf.image.crop_to_bounding_box(b, 2, 0, 3, 4)",
    "pad_box": "tf.image.pad_to_bounding_box(u, 1, 2, 9, 8)",
    "crop_or_pad_crop": "tf.image.resize_image_with_crop_or_pad(x, 3, 4)",
    "crop_or_pad_pad": "tf.image.resize_image_with_crop_or_pad(u, 9, 8)",
    "crop_or_pad_mixed": "tf.image.resize_image_with_crop_or_pad(b, 3, 7)",
    "central_crop_half": "tf.image.central_crop(x, 0.5)",
    "central_crop_odd": "tf.image.central_crop(u, 0.33)",
    "brightness_float": "tf.image.adjust_brightness(x, 0.3)",
    "brightness_uint8": "tf.image.adjust_brightness(u, -0.2)",
    "contrast_float": "tf.image.adjust_contrast(x, 1.7)",
    "contrast_batch": "tf.image.adjust_contrast(b, 0.4)",
    "contrast_uint8": "tf.image.adjust_contrast(u, 2.0)",
    "standardize_float": "tf.image.per_image_standardization(x)",
    "standardize_uint8": "tf.image.per_image_standardization(u)",
    "standardize_constant": "tf.image.per_image_standardization(tf.ones([3, 3, 1]))",
    "standardize_batch": "tf.image.per_image_standardization(b)",
}
TEMPLATE = ("x, u, b = tf.constant(inputs['img']), tf.constant(inputs['u8']), tf.constant(inputs['batch'])\n"
            "y = %s\nwith tf.Session() as s:\n    outputs = {'y': s.run(y), 'shape': np.array(str(y.shape))}\n")
CASES = {name: (TEMPLATE % op, INPUTS) for name, op in OPS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_image_op_matches_tensorflow(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    assert got.outputs["y"].dtype == expected.outputs["y"].dtype
    assert str(got.outputs["shape"]) == str(expected.outputs["shape"])
    if expected.outputs["y"].dtype == np.uint8:
        np.testing.assert_array_equal(got.outputs["y"], expected.outputs["y"])
    else:
        np.testing.assert_allclose(got.outputs["y"], expected.outputs["y"], rtol=1e-5, atol=1e-5)


def _run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed)


def test_decode_jpeg_written_by_tensorflow():
    pytest.importorskip("PIL", reason="decode_jpeg needs Pillow (pip install 'tftk[images]')")
    data = (FIXTURES / "photo.jpg").read_bytes()
    with tf.Graph().as_default():
        contents = tf.placeholder(tf.string, [])
        rgb = tf.image.decode_jpeg(contents, channels=3)
        gray = tf.image.decode_jpeg(contents, channels=1)
        any_format = tf.image.decode_image(contents)
        got = _run([rgb, gray, any_format], {contents: data})
    # TF decodes with libjpeg's fast integer IDCT (JDCT_IFAST), Pillow with the accurate one:
    # pixels may differ by a few levels, never more
    diff = np.abs(got[0].astype(int) - np.load(FIXTURES / "photo_decoded.npy"))
    assert got[0].shape == (12, 10, 3) and diff.max() <= 3 and diff.mean() < 1.5
    assert got[1].shape == (12, 10, 1)
    assert np.abs(got[1].astype(int) - np.load(FIXTURES / "photo_gray.npy")).max() <= 3
    np.testing.assert_array_equal(got[2], got[0])


def test_decode_image_reads_png_and_rejects_garbage():
    img = (np.arange(24).reshape(2, 4, 3) * 10).astype(np.uint8)
    with tf.Graph().as_default():
        png = tf.image.encode_png(img)
        np.testing.assert_array_equal(_run(tf.image.decode_image(png)), img)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
            _run(tf.image.decode_image(tf.constant(b"not an image")))


def test_bad_crop_box_is_named():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not fit in the 5x7 image"):
            _run(tf.image.crop_to_bounding_box(np.zeros((5, 7, 3)), 3, 0, 4, 2))


@pytest.mark.parametrize("seed", [1, 2])
def test_random_crop_is_a_window_and_seeded(seed):
    value = np.arange(6 * 8 * 3).reshape(6, 8, 3)
    windows = []
    for _ in range(2):
        with tf.Graph().as_default():
            crop = tf.random_crop(value, [3, 4, 3], seed=seed)
            assert crop.shape.as_list() == [3, 4, 3]
            with tf.Session() as s:
                windows.append([s.run(crop) for _ in range(10)])
    assert all(np.array_equal(a, b) for a, b in zip(*windows))  # fresh sessions replay
    for w in windows[0]:
        top, left = np.argwhere(value[..., 0] == w[0, 0, 0])[0]
        np.testing.assert_array_equal(w, value[top:top + 3, left:left + 4])
    assert len({w[0, 0, 0] for w in windows[0]}) > 1


def test_random_flips_flip_half_the_time():
    img = np.arange(2 * 3 * 1).reshape(2, 3, 1)
    with tf.Graph().as_default():
        lr = tf.image.random_flip_left_right(img, seed=5)
        ud = tf.image.random_flip_up_down(np.stack([img] * 64), seed=5)
        with tf.Session() as s:
            outs = [s.run(lr) for _ in range(200)]
            batch = s.run(ud)
    flipped = sum(np.array_equal(o, img[:, ::-1]) for o in outs)
    assert all(np.array_equal(o, img) or np.array_equal(o, img[:, ::-1]) for o in outs)
    assert 60 < flipped < 140
    per_image = [np.array_equal(b, img[::-1]) for b in batch]
    assert 10 < sum(per_image) < 54 and all(np.array_equal(b, img) or f for b, f in zip(batch, per_image))


def test_random_brightness_and_contrast_stay_in_their_ranges():
    img = np.random.RandomState(0).rand(4, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        bright = tf.image.random_brightness(img, 0.2, seed=3)
        contrast = tf.image.random_contrast(img, 0.5, 1.5, seed=3)
        with tf.Session() as s:
            deltas = [float((s.run(bright) - img).mean()) for _ in range(50)]
            contrasts = [s.run(contrast) for _ in range(20)]
    assert all(-0.2 <= d <= 0.2 for d in deltas) and np.std(deltas) > 0.05
    mean = img.mean(axis=(0, 1))
    for c in contrasts:
        factor = (c - mean) / (img - mean)
        assert np.allclose(factor, factor.flat[0], atol=1e-3) and 0.5 <= factor.flat[0] < 1.5
