"""The Numba log-sum-exp kernels against the generic path and against independent references.

- ``fast_exp`` (the vectorised exp other areas import) against ``np.exp`` and a long-double
  reference over the whole double range, subnormals, overflow and underflow included;
- the single-pass chunked kernels (rows and column blocks, several chunks so the online
  rescaling runs) against the generic ``xp`` code with NaN / +-inf / -inf lanes / zero
  weights / empty / single-element / float32 / float16 inputs;
- ``softmax`` / ``log_softmax`` Numba path against SciPy;
- issue 17: ``logsumexp_matmul`` special values as the dense SciPy computation.
"""
import numpy as np
import pytest
from scipy.special import logsumexp as scipy_lse, softmax as scipy_softmax
from scipy.special import log_softmax as scipy_log_softmax

from solvers import logsumexp, softmax, log_softmax, logsumexp_matmul
from solvers.lse import _lse_numba


def _ulps(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.abs(got - want) / np.spacing(np.abs(want))


def _fast_exp(x):
    out = np.empty_like(x)
    _lse_numba.exp_into(x, out)
    return out


def test_fast_exp_is_within_one_ulp_over_the_double_range():
    rng = np.random.default_rng(11)
    x = np.concatenate([
        rng.uniform(-745.2, 709.78, 400_000),       # whole range
        rng.uniform(-1.0, 1.0, 100_000),             # near 1
        rng.uniform(-745.13, -708.4, 100_000),       # subnormal results
        rng.uniform(700.0, 709.78, 50_000),          # near overflow
        np.linspace(-0.35, 0.35, 10_001),            # reduction boundary, r = 0 exactly
        np.arange(-1074, 1024) * np.log(2.0),        # exact powers of two (ish)
    ])
    want = np.exp(x)
    got = _fast_exp(x)
    normal = want >= np.finfo(np.float64).tiny
    assert _ulps(got[normal], want[normal]).max() <= 1.0
    # subnormal results: absolute error at most one subnormal spacing
    sub = ~normal
    assert np.abs(got[sub] - want[sub]).max() <= 5e-324
    # against long double (80-bit on x86): < 1 ulp of the true value
    if np.finfo(np.longdouble).nmant > 52:
        ref = np.exp(x[normal].astype(np.longdouble))
        err = np.abs(got[normal].astype(np.longdouble) - ref) / np.spacing(want[normal])
        assert float(err.max()) < 1.0


def test_fast_exp_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 709.78, 709.79, 1e300, -1e300,
                  -745.13, -745.14, -746.0, 5e-324, -5e-324])
    with np.errstate(over="ignore"):
        want = np.exp(x)
    got = _fast_exp(x)
    np.testing.assert_array_equal(got, want)
    assert _fast_exp(np.array([0.0]))[0] == 1.0   # ties stay exact in the kernels


# --- the reduction kernels against the generic code --------------------------------------

def _both(a, **kw):
    with np.errstate(all="ignore"):
        want = logsumexp(a, backend="numpy", **kw)
        got = logsumexp(a, backend="numba", **kw)
    return got, want


def _assert_same(got, want, rtol=1e-13):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        inf = np.isinf(w)
        np.testing.assert_array_equal(g[inf], w[inf])
        ok = np.isfinite(w)
        np.testing.assert_allclose(g[ok], w[ok], rtol=rtol, atol=0)


def _special_matrix(shape, rng, dtype=np.float64):
    """A matrix with NaN, +inf, -inf and whole -inf lanes at fixed places, and a max that
    grows along each lane (so the online rescaling runs across chunks)."""
    a = rng.normal(scale=30, size=shape)
    a += np.linspace(0, 50, shape[1])[None, :] + np.linspace(0, 50, shape[0])[:, None]
    a[3, 5] = np.nan
    a[7, :] = -np.inf
    a[:, 9] = -np.inf
    a[11, 2000 % shape[1]] = np.inf
    a[13, 17] = -np.inf
    a[15, -1] = np.nan
    return a.astype(dtype)


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("return_sign", [False, True])
def test_kernels_match_generic_with_special_values(axis, return_sign):
    rng = np.random.default_rng(12)
    a = _special_matrix((40, 2600), rng)        # rows: 3 chunks of 1024; cols: 6 blocks
    got, want = _both(a, axis=axis, return_sign=return_sign)
    _assert_same(got, want)
    got, want = _both(a.T.copy(), axis=None if axis is None else
                      (1 - axis if isinstance(axis, int) else axis), return_sign=return_sign)
    _assert_same(got, want)


@pytest.mark.parametrize("axis", [0, 1])
def test_kernels_match_generic_with_weights(axis):
    rng = np.random.default_rng(13)
    a = _special_matrix((40, 2600), rng)
    b = rng.normal(size=a.shape)
    b[rng.random(a.shape) < 0.1] = 0.0
    b[11, :] = 0.0                              # lane with an inf, all hidden -> NaN
    b[20, 5:] = 0.0
    a[20, 3] = np.inf
    b[20, 3] = 0.0                              # inf hidden by a zero weight
    for return_sign in (False, True):
        got, want = _both(a, axis=axis, b=b, return_sign=return_sign)
        _assert_same(got, want, rtol=1e-11)
    # against SciPy on the finite part of the problem
    fin = np.where(np.isfinite(a), a, 0.0)
    with np.errstate(all="ignore"):
        want = scipy_lse(fin, axis=axis, b=np.abs(b), return_sign=True)
    got = logsumexp(fin, axis=axis, b=np.abs(b), return_sign=True, backend="numba")
    _assert_same(got, want, rtol=1e-12)


def test_online_rescaling_keeps_ties_and_relative_accuracy():
    # the max appears in chunk 1 and again in chunk 3; one term of 1e-20 relative size
    a = np.full(3000, -1e4)
    a[10] = 5.0
    a[2500] = 5.0
    a[2900] = 5.0 - 46.0517018598809136
    want = 5.0 + np.log(2.0) + np.log1p(0.5e-20)
    for backend in ("numpy", "numba"):
        assert logsumexp(a, backend=backend) == pytest.approx(want, rel=1e-15)
    # column kernel: the same lane laid out along axis 0
    col = np.tile(a[:, None], (1, 70))
    np.testing.assert_allclose(logsumexp(col, axis=0, backend="numba"), want, rtol=1e-15)


@pytest.mark.parametrize("shape, axis", [((0,), None), ((3, 0), 1), ((0, 4), 0), ((1,), 0),
                                         ((1, 1), None), ((5, 1), 1), ((1, 7), 0)])
def test_kernels_empty_and_single_element(shape, axis):
    a = np.arange(int(np.prod(shape)), dtype=float).reshape(shape) - 2.0
    got, want = _both(a, axis=axis, return_sign=True)
    _assert_same(got, want)
    np.testing.assert_array_equal(np.shape(got[0]), np.shape(scipy_lse(a, axis=axis)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_low_precision_dtypes_keep_their_dtype(dtype):
    """float32 stays float32; float16 is computed in float32 and returned as float16, as
    SciPy does (issue 17 item 7: Numba used to raise NotImplementedError on float16)."""
    rng = np.random.default_rng(14)
    a = rng.normal(size=(30, 1500)).astype(dtype)
    for axis in (0, 1, None):
        want = scipy_lse(a, axis=axis)
        for backend in ("numpy", "numba"):
            got = logsumexp(a, axis=axis, backend=backend)
            assert np.asarray(got).dtype == want.dtype == dtype
            np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64),
                                       rtol=2 * np.finfo(dtype).eps)
    for fn, ref in ((softmax, scipy_softmax), (log_softmax, scipy_log_softmax)):
        got = fn(a, axis=1)
        assert got.dtype == ref(a, axis=1).dtype == dtype
    x16 = np.array([1.0, 2.0], dtype=np.float16)
    assert logsumexp(x16).dtype == np.float16


def test_float32_weights_and_integer_promotion():
    a32 = np.linspace(-3, 3, 12, dtype=np.float32)
    b_int = np.arange(12)
    got = logsumexp(a32, b=b_int)
    want = scipy_lse(a32, b=b_int)
    assert got.dtype == want.dtype   # numpy promotes float32 with int64 to float64
    assert got == pytest.approx(float(want), rel=1e-12)
    got32 = logsumexp(a32, b=b_int.astype(np.float32))
    assert got32.dtype == np.float32
    assert logsumexp(np.arange(5)).dtype == np.float64


# --- softmax / log_softmax ----------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
def test_softmax_numba_matches_scipy(axis):
    rng = np.random.default_rng(15)
    x = rng.normal(scale=100, size=(37, 1300))
    x[4, :] = -np.inf                            # all -inf lane: NaN (SciPy)
    x[6, 10] = np.inf                            # +inf lane
    x[8, 3] = np.nan
    with np.errstate(all="ignore"):
        for fn, ref in ((softmax, scipy_softmax), (log_softmax, scipy_log_softmax)):
            want = ref(x, axis=axis)
            for backend in ("numba", "numpy"):
                got = fn(x, axis=axis, backend=backend)
                assert got.shape == want.shape and got.dtype == want.dtype
                if fn is log_softmax:   # near 0 the error is absolute: eps * |x|
                    fin = np.isfinite(want)
                    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12,
                                               atol=1e-15 * np.abs(x[np.isfinite(x)]).max())
                    got = np.where(fin, want, got)
                _assert_same(got, want, rtol=1e-12)


# --- issue 17 item 1: logsumexp_matmul special values --------------------------------------

def _dense(A, B, log_b=None):
    with np.errstate(all="ignore"):
        C = A @ B if log_b is None else A @ B + log_b
        return scipy_lse(C, axis=1)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("case", ["nan_in_A", "inf_in_B", "log_b_inf", "log_b_minus_inf",
                                  "minus_inf_row", "neg_inf_B"])
def test_logsumexp_matmul_special_values_match_dense(backend, case):
    A = np.array([[np.nan, 1.0], [0.5, -0.25], [2.0, 1.0]])
    B = np.ones((2, 3))
    log_b = None
    if case == "nan_in_A":
        pass
    elif case == "inf_in_B":
        A = np.abs(A[1:])
        B[0, 1] = np.inf
    elif case == "log_b_inf":
        A = A[1:]
        log_b = np.array([0.0, np.inf, 0.0])
    elif case == "log_b_minus_inf":
        A = A[1:]
        log_b = np.array([-np.inf, -np.inf, -np.inf])
    elif case == "minus_inf_row":
        A = A[1:]
        B[:, 0] = -np.inf
        log_b = np.array([0.0, -np.inf, -np.inf])
    elif case == "neg_inf_B":
        A = np.array([[1.0, 1.0], [-1.0, 0.0]])
        B[0, :] = -np.inf
    want = _dense(A, B, log_b)
    with np.errstate(all="ignore"):
        got = logsumexp_matmul(A, B, log_b=log_b, block_size=2, backend=backend)
    _assert_same(got, want)


def test_nan_in_an_all_minus_inf_chunk_survives_the_rescale():
    # chunk 1 holds only -inf and a NaN; chunk 2 raises the max: the NaN must stay
    a = np.full(3000, -np.inf)
    a[5] = np.nan
    a[2000:] = 1.0
    assert np.isnan(logsumexp(a, backend="numba"))
    assert np.isnan(logsumexp(np.tile(a[:, None], (1, 70)), axis=0, backend="numba")).all()
    b = np.ones_like(a)
    b[5] = 0.0                                  # ...unless its weight hides it
    assert logsumexp(a, b=b, backend="numba") == pytest.approx(1.0 + np.log(1000.0))
