"""String ops and image ops: exact values, round trips and the errors users see."""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tftk.ops import image_ops as im, string_ops as so


def run(t, feed=None):
    with tf.Session(graph=t.graph) as sess:
        return sess.run(t, feed)


# ---- strings ------------------------------------------------------------------------------------------

WORDS = np.array([["hello", "world", "!"], ["a", "bc", ""]], dtype=object)


@pytest.mark.parametrize("axis,keep", [(None, False), (0, False), (1, False), (1, True), ([0, 1], True), (-1, False)])
def test_reduce_join_matches_python_join(axis, keep):
    x = WORDS.astype(bytes).astype(object)
    axes = tuple(range(2)) if axis is None else tuple(a % 2 for a in np.atleast_1d(axis))
    moved = np.transpose(x, [i for i in range(2) if i not in axes] + list(axes))
    lead = moved.shape[:2 - len(axes)]
    expected = np.array([b"-".join(r) for r in moved.reshape(lead + (-1,)).reshape(-1, int(np.prod(
        [x.shape[a] for a in axes])))], dtype=object).reshape(lead)
    if keep:
        expected = expected.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
    out = so.reduce_join(WORDS, axis, keep_dims=keep, separator="-")
    assert out.shape.as_list() == list(expected.shape)
    assert np.asarray(run(out)).tolist() == expected.tolist()


def test_hash_buckets_are_stable_in_range_and_keyed():
    x = tf.constant(["a", "b", "hello", "a"])
    fast = run(so.string_to_hash_bucket_fast(x, 7))
    assert fast.dtype == np.int64 and fast.min() >= 0 and fast.max() < 7 and fast[0] == fast[3]
    assert run(so.string_to_hash_bucket_fast(x, 7)).tolist() == fast.tolist()
    assert so.string_to_hash_bucket(x, 7).op.type == "StringToHashBucket"  # TF: the deprecated Hash64 op
    strong_a = run(so.string_to_hash_bucket_strong(x, 1000, [1, 2]))
    strong_b = run(so.string_to_hash_bucket_strong(x, 1000, [3, 4]))
    assert strong_a[0] == strong_a[3] and strong_a.tolist() != strong_b.tolist()
    with pytest.raises(ValueError, match="key"):
        so.string_to_hash_bucket_strong(x, 10, [1])


def test_substr_and_its_range_error():
    x = tf.constant(["hello", "ab"])
    assert run(so.substr(x, 1, 3)).tolist() == [b"ell", b"b"]
    assert run(so.substr(x, [0, 1], [2, 1])).tolist() == [b"he", b"b"]
    with pytest.raises(InvalidArgumentError, match="pos 3 out of range for string b'ab'"):
        run(so.substr(x, 3, 1))


@pytest.mark.parametrize("raw", [b"", b"f", b"fo", b"foo", b"\xff\xfe\xfd?>", bytes(range(256))])
def test_base64_is_web_safe_and_round_trips(raw):
    enc = run(so.encode_base64(tf.constant([raw], dtype=tf.string)))[0]
    assert enc == base64.urlsafe_b64encode(raw).rstrip(b"=")
    padded = run(so.encode_base64(tf.constant([raw], dtype=tf.string), pad=True))[0]
    assert padded == base64.urlsafe_b64encode(raw)
    assert run(so.decode_base64(tf.constant([enc], dtype=tf.string)))[0] == raw
    assert run(so.decode_base64(tf.constant([padded], dtype=tf.string)))[0] == raw


def test_decode_base64_rejects_the_standard_alphabet():
    with pytest.raises(InvalidArgumentError, match="base64"):
        run(so.decode_base64(tf.constant(["ab+/"])))


def test_string_join_and_as_string():
    assert run(so.string_join([tf.constant(["a", "b"]), "x", tf.constant(["1", "2"])], "_")).tolist() == \
        [b"a_x_1", b"b_x_2"]
    assert run(so.as_string([3.5, -1.25])).tolist() == [b"%f" % 3.5, b"%f" % -1.25]
    assert run(so.as_string([3.14159], precision=2)).tolist() == [b"3.14"]
    assert run(so.as_string([1234.5], scientific=True)).tolist() == [b"%e" % 1234.5]
    assert run(so.as_string([7, 42], width=3, fill="0")).tolist() == [b"007", b"042"]
    assert run(so.as_string([True, False])).tolist() == [b"true", b"false"]
    with pytest.raises(TypeError, match="StringJoin"):
        so.string_join([tf.constant([1])])


# ---- PNG --------------------------------------------------------------------------------------------

def filtered_png(image: np.ndarray, filters: list[int]) -> bytes:
    """An 8-bit PNG written from the spec with the given filter type on each row (encoder side)."""
    h, w, c = image.shape
    bpp, raw, prior = c, b"", np.zeros(w * c, np.int64)
    for y in range(h):
        row = image[y].reshape(-1).astype(np.int64)
        left = np.concatenate([np.zeros(bpp, np.int64), row[:-bpp]])
        ul = np.concatenate([np.zeros(bpp, np.int64), prior[:-bpp]])
        kind = filters[y % len(filters)]
        if kind == 0:
            pred = np.zeros_like(row)
        elif kind == 1:
            pred = left
        elif kind == 2:
            pred = prior
        elif kind == 3:
            pred = (left + prior) // 2
        else:
            p = left + prior - ul
            pa, pb, pc = np.abs(p - left), np.abs(p - prior), np.abs(p - ul)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, ul))
        raw += bytes([kind]) + ((row - pred) % 256).astype(np.uint8).tobytes()
        prior = row

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_png_round_trip(channels, dtype):
    image = np.random.default_rng(channels).integers(0, np.iinfo(dtype).max, (5, 6, channels)).astype(dtype)
    with tf.Graph().as_default():
        png = im.encode_png(image)
        decoded = im.decode_png(png, dtype=tf.as_dtype(dtype))
        with tf.Session() as sess:
            data, out = sess.run([png, decoded])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    np.testing.assert_array_equal(out, image)


@pytest.mark.parametrize("filters", [[1], [2], [3], [4], [0, 1, 2, 3, 4]])
def test_decode_png_undoes_every_filter(filters):
    image = np.random.default_rng(7).integers(0, 256, (6, 5, 3)).astype(np.uint8)
    out = run(im.decode_png(tf.constant(filtered_png(image, filters), dtype=tf.string)))
    np.testing.assert_array_equal(out, image)


def test_decode_png_channel_conversion_and_errors():
    rgb = np.array([[[255, 0, 0], [10, 20, 30]]], np.uint8)
    png = tf.constant(filtered_png(rgb, [0]), dtype=tf.string)
    rgba = run(im.decode_png(png, channels=4))
    np.testing.assert_array_equal(rgba[..., :3], rgb)
    assert (rgba[..., 3] == 255).all()
    grey = run(im.decode_png(png, channels=1))
    np.testing.assert_array_equal(grey[..., 0], np.rint(rgb @ np.array([0.299, 0.587, 0.114])))
    with pytest.raises(InvalidArgumentError, match="bad CRC"):
        data = bytearray(filtered_png(rgb, [0]))
        data[20] ^= 1
        run(im.decode_png(tf.constant(bytes(data), dtype=tf.string)))
    with pytest.raises(InvalidArgumentError, match="Expected image"):
        run(im.decode_png(tf.constant(b"GIF89a", dtype=tf.string)))
    with pytest.raises(ValueError, match="EncodePng"):
        im.encode_png(np.zeros((2, 2, 5), np.uint8))


# ---- resize, flips, rotations, colour -------------------------------------------------------------------

def bilinear_reference(img, out_h, out_w, align):
    """TF1's legacy bilinear resize written per output pixel."""
    b, h, w, c = img.shape
    sy = (h - 1) / (out_h - 1) if align and out_h > 1 else h / out_h
    sx = (w - 1) / (out_w - 1) if align and out_w > 1 else w / out_w
    out = np.zeros((b, out_h, out_w, c))
    for y in range(out_h):
        for x in range(out_w):
            fy, fx = y * sy, x * sx
            y0, x0 = int(np.floor(fy)), int(np.floor(fx))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = fy - y0, fx - x0
            top = img[:, y0, x0] * (1 - dx) + img[:, y0, x1] * dx
            bottom = img[:, y1, x0] * (1 - dx) + img[:, y1, x1] * dx
            out[:, y, x] = top * (1 - dy) + bottom * dy
    return out


@pytest.mark.parametrize("size", [(2, 3), (7, 5), (4, 4)])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_resize_bilinear_and_nearest(size, align, dtype):
    img = (np.arange(2 * 4 * 3 * 2).reshape(2, 4, 3, 2) * 5 % 251).astype(dtype)
    out = im.resize_images(img, size, align_corners=align)
    assert out.dtype == tf.float32 and out.shape.as_list() == [2, size[0], size[1], 2]
    np.testing.assert_allclose(run(out), bilinear_reference(img.astype(np.float64), *size, align), rtol=1e-5)
    near = run(im.resize_images(img, size, im.ResizeMethod.NEAREST_NEIGHBOR, align))
    sy, sx = [((i - 1) / (o - 1) if align and o > 1 else i / o) for i, o in zip((4, 3), size)]
    pick = (lambda v: np.round(v)) if align else np.floor
    rows = np.minimum(pick(np.arange(size[0]) * sy).astype(int), 3)
    cols = np.minimum(pick(np.arange(size[1]) * sx).astype(int), 2)
    assert near.dtype == dtype
    np.testing.assert_array_equal(near, img[:, rows][:, :, cols])


def test_resize_3d_and_bad_method():
    img = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    assert im.resize_images(img, [4, 4]).shape.as_list() == [4, 4, 3]
    with pytest.raises(ValueError, match="method"):
        im.resize_images(img, [4, 4], method=7)  # BICUBIC and AREA work now; an unknown method raises


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
def test_rot90_and_flips(k):
    img = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(im.rot90(img, k)), np.rot90(img, k, axes=(0, 1)))
    batch = np.stack([img, img + 1])
    np.testing.assert_array_equal(run(im.rot90(batch, k)), np.rot90(batch, k, axes=(1, 2)))
    np.testing.assert_array_equal(run(im.flip_left_right(img)), img[:, ::-1])
    np.testing.assert_array_equal(run(im.flip_up_down(img)), img[::-1])


def test_hsv_matches_colorsys_and_round_trips():
    import colorsys
    rgb = np.random.default_rng(3).uniform(0, 1, (20, 3))
    rgb[0] = [0.5, 0.5, 0.5]
    rgb[1] = [0.0, 0.0, 0.0]
    hsv = run(im.rgb_to_hsv(rgb))
    np.testing.assert_allclose(hsv, [colorsys.rgb_to_hsv(*p) for p in rgb], atol=1e-12)
    np.testing.assert_allclose(run(im.hsv_to_rgb(hsv)), rgb, atol=1e-12)
    with pytest.raises(ValueError, match="RGBToHSV"):
        im.rgb_to_hsv(np.zeros((2, 4)))


def test_adjust_gamma_and_convert_image_dtype():
    x = np.array([[0.0, 0.25, 1.0]], np.float32)
    np.testing.assert_allclose(run(im.adjust_gamma(x, 2.0, 0.5)), 0.5 * x ** 2)
    img = np.array([0, 128, 255], np.uint8)
    expected = np.clip((0.9 * (img / 255.0) ** 2.2) * 255.5, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(run(im.adjust_gamma(img, 2.2, 0.9)), expected)
    with pytest.raises(ValueError, match="non-negative"):
        im.adjust_gamma(x, -1.0)
    np.testing.assert_allclose(run(im.convert_image_dtype(img, tf.float32)), img / 255.0, rtol=1e-6)
    assert run(im.convert_image_dtype(np.array([0.0, 0.5, 1.0], np.float32), tf.uint8)).tolist() == [0, 127, 255]
    assert run(im.convert_image_dtype(np.array([1.5], np.float32), tf.uint8, saturate=True)).tolist() == [255]
    assert run(im.convert_image_dtype(np.array([65535, 256], np.uint16), tf.uint8)).tolist() == [255, 1]
    assert run(im.convert_image_dtype(np.array([255, 1], np.uint8), tf.uint16)).tolist() == [65280, 256]
