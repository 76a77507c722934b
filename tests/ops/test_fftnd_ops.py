"""tf.signal.fftnd / ifftnd / rfftnd / irfftnd against numpy.fft's n-D transforms.

TF 2.21's CPU build has no kernel for FFTND/IFFTND/RFFTND/IRFFTND (running one raises NotFoundError),
so numpy.fft (whose semantics TF's documentation gives) is the reference here, not real TensorFlow.
"""

import numpy as np
import pytest

import tftk as tf

RNG = np.random.default_rng(53)


def real(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


def cplx(*shape, dtype=np.complex128):
    return (real(*shape) + 1j * real(*shape)).astype(dtype)


# (name, tftk function, numpy function, input, keyword arguments shared by both)
CASES = [
    ("fftnd_all_axes", tf.signal.fftnd, np.fft.fftn, cplx(2, 3, 4), {}),
    ("fftnd_axes", tf.signal.fftnd, np.fft.fftn, cplx(2, 3, 4), {"axes": [0, 2]}),
    ("fftnd_pad_and_crop", tf.signal.fftnd, np.fft.fftn, cplx(2, 3, 4), {"fft_length": [6, 2], "axes": [-2, -1]}),
    ("fftnd_forward_c64", tf.signal.fftnd, np.fft.fftn, cplx(3, 5, dtype=np.complex64), {"norm": "forward"}),
    ("fftnd_ortho", tf.signal.fftnd, np.fft.fftn, cplx(4, 4, 2), {"axes": [0, 1], "norm": "ortho"}),
    ("ifftnd_all_axes", tf.signal.ifftnd, np.fft.ifftn, cplx(3, 4), {}),
    ("ifftnd_forward", tf.signal.ifftnd, np.fft.ifftn, cplx(2, 3, 4), {"axes": [1, 2], "norm": "forward"}),
    ("ifftnd_ortho_padded", tf.signal.ifftnd, np.fft.ifftn, cplx(2, 6), {"fft_length": [3, 8], "norm": "ortho"}),
    ("rfftnd_all_axes", tf.signal.rfftnd, np.fft.rfftn, real(4, 6), {}),
    ("rfftnd_f32_axes", tf.signal.rfftnd, np.fft.rfftn, real(2, 3, 5, dtype=np.float32),
     {"fft_length": [3, 8], "axes": [1, 2]}),
    ("rfftnd_ortho_odd", tf.signal.rfftnd, np.fft.rfftn, real(3, 7), {"norm": "ortho"}),
    ("rfftnd_forward_cropped", tf.signal.rfftnd, np.fft.rfftn, real(5, 5), {"fft_length": [4, 3], "norm": "forward"}),
    ("irfftnd_all_axes", tf.signal.irfftnd, np.fft.irfftn, cplx(4, 5), {}),
    ("irfftnd_odd_length", tf.signal.irfftnd, np.fft.irfftn, cplx(2, 4, 4), {"fft_length": [4, 7], "axes": [-2, -1]}),
    ("irfftnd_ortho", tf.signal.irfftnd, np.fft.irfftn, cplx(3, 4), {"fft_length": [3, 6], "norm": "ortho"}),
    ("irfftnd_forward_c64", tf.signal.irfftnd, np.fft.irfftn, cplx(3, 4, dtype=np.complex64),
     {"axes": [0, 1], "norm": "forward"}),
]


def _numpy_kwargs(kwargs, ndim):
    out = {"s" if k == "fft_length" else k: v for k, v in kwargs.items()}
    out.setdefault("axes", list(range(ndim)))
    return out


@pytest.mark.parametrize("name,fn,reference,x,kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fn, reference, x, kwargs):
    with tf.Graph().as_default():
        y = fn(tf.constant(x), **kwargs)
        with tf.Session() as sess:
            got = sess.run(y)
    want = reference(x, **_numpy_kwargs(kwargs, x.ndim))
    out_dtype = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
                 np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}[x.dtype]
    if reference is np.fft.irfftn:
        out_dtype = np.float32 if x.dtype == np.complex64 else np.float64
    assert got.dtype == out_dtype
    assert y.shape.as_list() == list(want.shape)
    tol = 1e-5 if got.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_round_trip_over_chosen_axes():
    x = cplx(3, 2, 5)
    with tf.Graph().as_default(), tf.Session() as sess:
        back = sess.run(tf.signal.ifftnd(tf.signal.fftnd(tf.constant(x), axes=[0, 2]), axes=[0, 2]))
        real_back = sess.run(tf.signal.irfftnd(tf.signal.rfftnd(tf.constant(x.real)), fft_length=[3, 2, 5]))
    np.testing.assert_allclose(back, x, atol=1e-12)
    np.testing.assert_allclose(real_back, x.real, atol=1e-12)


BAD = [
    ("norm", lambda: tf.signal.fftnd(cplx(2, 2), norm="sideways"), ValueError, "norm must be one of"),
    ("axes_out_of_range", lambda: tf.signal.fftnd(cplx(2, 2), axes=[2]), ValueError, "do not fit"),
    ("lengths_per_axis", lambda: tf.signal.fftnd(cplx(2, 2), fft_length=[2, 2], axes=[0]), ValueError,
     "one length >= 0 for each of axes"),
    ("rfftnd_complex_input", lambda: tf.signal.rfftnd(cplx(2, 2)), ValueError, "float32 or float64"),
    ("irfftnd_real_input", lambda: tf.signal.irfftnd(real(2, 2)), ValueError, "complex64 or complex128"),
    ("unknown_lengths", lambda: tf.signal.fftnd(tf.placeholder(tf.complex64, [None, 3])), ValueError,
     "give fft_length"),
    ("dynamic_fft_length", lambda: tf.signal.fftnd(cplx(2, 2), fft_length=tf.placeholder(tf.int32, [2])),
     ValueError, "known when the graph is built"),
]


@pytest.mark.parametrize("name,build,error,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused(name, build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()


def test_declared_not_differentiable():
    with tf.Graph().as_default():
        x = tf.constant(cplx(2, 2))
        assert tf.gradients(tf.reduce_sum(tf.abs(tf.signal.fftnd(x))), [x]) == [None]


def test_real_input_to_complex_transform_is_refused():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="complex64 or complex128"):
        tf.signal.fftnd(real(2, 2))
