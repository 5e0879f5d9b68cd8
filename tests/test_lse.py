"""The log-sum-exp core: SciPy semantics on every namespace and backend."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from hypothesis.extra import numpy as hnp
from scipy.special import logsumexp as scipy_lse, softmax as scipy_softmax

import solvers
from solvers import logsumexp, softmax, log_softmax, logsumexp_matmul
from solvers import logsumexp_partial, logsumexp_merge
from conftest import to_numpy, tol
from naive import logsumexp_loop, logsumexp_matmul_dense


def assert_rel_close(actual, desired, rtol):
    """Relative closeness with NaN == NaN and exact matches for infinities."""
    actual, desired = np.asarray(actual, dtype=np.float64), np.asarray(desired, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(desired))
    finite = np.isfinite(desired)
    np.testing.assert_array_equal(actual[~finite & ~np.isnan(desired)],
                                  desired[~finite & ~np.isnan(desired)])
    np.testing.assert_allclose(actual[finite], desired[finite], rtol=rtol, atol=0)


# --- property tests against SciPy ---------------------------------------------------------

finite_floats = st.floats(min_value=-700, max_value=700, allow_nan=False, allow_infinity=False)
special_floats = st.sampled_from([np.inf, -np.inf, np.nan, 0.0, 1e300, -1e300])
values = st.one_of(finite_floats, finite_floats, finite_floats, special_floats)
weights = st.one_of(st.floats(-3, 3, allow_nan=False), st.just(0.0))


@st.composite
def lse_problem(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    a = draw(hnp.arrays(np.float64, shape, elements=values))
    axis_choice = draw(st.sampled_from(["none", "one", "tuple"]))
    if axis_choice == "none":
        axis = None
    elif axis_choice == "one":
        axis = draw(st.integers(-len(shape), len(shape) - 1))
    else:
        axis = tuple(sorted(set(draw(st.lists(st.integers(0, len(shape) - 1),
                                              min_size=1, max_size=len(shape))))))
    b = draw(st.one_of(st.none(), hnp.arrays(np.float64, shape, elements=weights)))
    return a, axis, b, draw(st.booleans()), draw(st.booleans())


def _relevant_rtol(expected):
    # Values near zero: relative error is ill-conditioned; compare with 1e-12 relative
    # to the scale of the inputs' magnitude (|a_max|), as the log1p form guarantees.
    return 1e-12


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=lse_problem())
def test_matches_scipy_property(problem, backend):
    a, axis, b, keepdims, return_sign = problem
    with np.errstate(all="ignore"):
        expected = scipy_lse(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    got = logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                    backend=backend)
    if return_sign:
        assert_rel_close(got[0], expected[0], 1e-12)
        assert_rel_close(got[1], expected[1], 0)
        assert np.shape(got[0]) == np.shape(expected[0])
    else:
        assert_rel_close(got, expected, 1e-12)
        assert np.shape(got) == np.shape(expected)


@settings(max_examples=100, deadline=None)
@given(problem=lse_problem())
def test_strict_namespace_matches_scipy_property(problem):
    import array_api_strict as xs

    a, axis, b, keepdims, return_sign = problem
    with np.errstate(all="ignore"):
        expected = scipy_lse(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    got = logsumexp(xs.asarray(a), axis=axis, b=None if b is None else xs.asarray(b),
                    keepdims=keepdims, return_sign=return_sign)
    if return_sign:
        assert type(got[0]) is type(got[1]) is type(xs.asarray(0.0))
        assert_rel_close(to_numpy(got[0]), expected[0], 1e-12)
    else:
        assert type(got) is type(xs.asarray(0.0))
        assert_rel_close(to_numpy(got), expected, 1e-12)


# --- independent reference: exact Python sums ----------------------------------------------

@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_matches_exact_loop(backend):
    rng = np.random.default_rng(1)
    for _ in range(50):
        a = rng.normal(scale=rng.choice([1e-3, 1, 100, 1e4]), size=rng.integers(1, 40))
        b = rng.normal(size=a.shape)
        want, want_sign = logsumexp_loop(a, b)
        got, sign = logsumexp(a, b=b, return_sign=True, backend=backend)
        assert sign == want_sign
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-14 * np.max(np.abs(a)))


def test_sum_near_one_keeps_relative_accuracy():
    # log(1 + 1e-20): naive log(sum) returns exactly 0; the log1p form keeps it
    a = np.array([0.0, -46.0517018598809136])  # exp(-46.05) = 1e-20
    want = np.log1p(1e-20)
    for backend in ("numpy", "numba"):
        assert math.isclose(logsumexp(a, backend=backend), want, rel_tol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("a, b, want, want_sign", [
    ([np.inf, 1.0], None, np.inf, 1.0),
    ([-np.inf, -np.inf], None, -np.inf, 0.0),
    ([np.nan, 1.0], None, np.nan, np.nan),
    ([np.inf, 1.0], [0.0, 1.0], 1.0, 1.0),        # b == 0 hides an infinite term
    ([np.inf], [0.0], np.nan, np.nan),            # ...but an all-hidden slice is NaN (SciPy)
    ([1.0, 1.0], [1.0, -1.0], -np.inf, 0.0),      # exact cancellation
    ([1e308, 1e308], None, 1e308 + np.log(2), 1.0),  # no overflow
])
def test_special_values(backend, a, b, want, want_sign):
    got, sign = logsumexp(np.array(a), b=None if b is None else np.array(b), return_sign=True,
                          backend=backend)
    assert_rel_close(got, want, 1e-15)
    assert_rel_close(sign, want_sign, 0)


def test_negative_sum_without_sign_is_nan():
    assert np.isnan(logsumexp([1.0, 2.0], b=[1.0, -1.0]))
    assert np.isnan(logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), backend="numba"))


def test_all_namespaces_and_dtypes(xp, dtype_name):
    rng = np.random.default_rng(2)
    a_np = rng.normal(scale=50, size=(7, 9, 5)).astype(dtype_name)
    a = xp.asarray(a_np)
    for axis in (None, 0, 1, 2, (0, 2)):
        got = logsumexp(a, axis=axis)
        assert got.dtype == a.dtype
        want = scipy_lse(a_np.astype(np.float64), axis=axis)
        np.testing.assert_allclose(to_numpy(got), want, rtol=tol(dtype_name))


def test_numba_float32_stays_float32_and_large_parallel_paths():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(300, 400)).astype(np.float32)   # above the parallel threshold
    for axis in (0, 1, None):
        got = logsumexp(a, axis=axis, backend="numba")
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, scipy_lse(a.astype(np.float64), axis=axis), rtol=1e-6)
    a64 = rng.normal(size=(200, 300))
    a64[5, 7] = np.nan
    a64[:, 11] = -np.inf
    a64[17, 19] = np.inf
    for axis in (0, 1):
        with np.errstate(all="ignore"):
            want = scipy_lse(a64, axis=axis)
        assert_rel_close(logsumexp(a64, axis=axis, backend="numba"), want, 1e-12)


def test_empty_reduction_is_minus_inf():
    assert logsumexp(np.zeros((0,))) == -np.inf
    assert logsumexp(np.zeros((3, 0)), axis=1).tolist() == [-np.inf] * 3


def test_bad_input_errors():
    with pytest.raises(ValueError, match="out of bounds"):
        logsumexp(np.zeros(3), axis=1)
    with pytest.raises(ValueError, match="broadcast"):
        logsumexp(np.zeros(3), b=np.zeros(4))
    with pytest.raises(TypeError, match="complex"):
        logsumexp(np.zeros(3, dtype=complex))
    with pytest.raises(ValueError, match="backend"):
        logsumexp(np.zeros(3), backend="torch")


def test_cupy_without_gpu_is_a_clear_error():
    from solvers._lib.backend import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="no usable CUDA GPU"):
        logsumexp(np.zeros(3), backend="cupy")


def test_strict_array_never_reaches_numpy_kernel(monkeypatch):
    """The generic path runs on array_api_strict; the Numba kernel would reject it."""
    import array_api_strict as xs
    import solvers.lse._lse_numba as kernels

    def forbidden(*args, **kwargs):
        raise AssertionError("numba kernel called with a non-numpy array")

    monkeypatch.setattr(kernels, "lse_reduce", forbidden)
    out = logsumexp(xs.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    assert type(out) is type(xs.asarray(0.0))
    with pytest.raises(ValueError, match="numba"):
        logsumexp(xs.asarray([1.0, 2.0]), backend="numba")


# --- softmax -------------------------------------------------------------------------------

def test_softmax_matches_scipy_and_is_stable(xp):
    rng = np.random.default_rng(4)
    x_np = rng.normal(scale=1e3, size=(6, 8))
    for axis in (None, 0, 1):
        got = to_numpy(softmax(xp.asarray(x_np), axis=axis))
        np.testing.assert_allclose(got, scipy_softmax(x_np, axis=axis), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-12)
    big = xp.asarray([1e300, 1e300, 0.0])
    np.testing.assert_allclose(to_numpy(softmax(big)), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(to_numpy(log_softmax(xp.asarray([0.0, 0.0]))), np.log([0.5, 0.5]))


# --- blocked matmul and partial merges -----------------------------------------------------

@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("block_size", [2, 7, 64, 4096])
def test_logsumexp_matmul_matches_dense(backend, block_size):
    rng = np.random.default_rng(5)
    A, B = rng.normal(scale=3, size=(37, 6)), rng.normal(scale=3, size=(6, 53))
    want = logsumexp_matmul_dense(A, B)
    got = logsumexp_matmul(A, B, block_size=block_size, backend=backend)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    log_b = rng.normal(size=53)
    log_b[3] = -np.inf
    got_b = logsumexp_matmul(A, B, log_b=log_b, block_size=block_size, backend=backend)
    np.testing.assert_allclose(got_b, scipy_lse(A @ B + log_b, axis=1), rtol=1e-12)


def test_logsumexp_matmul_strict_and_float32(xp, dtype_name):
    rng = np.random.default_rng(6)
    A = rng.normal(size=(20, 4)).astype(dtype_name)
    B = rng.normal(size=(4, 30)).astype(dtype_name)
    got = logsumexp_matmul(xp.asarray(A), xp.asarray(B), block_size=8)
    assert got.dtype == xp.asarray(A).dtype
    np.testing.assert_allclose(to_numpy(got),
                               logsumexp_matmul_dense(A.astype(float), B.astype(float)),
                               rtol=tol(dtype_name, 1e-12, 1e-5))


def test_logsumexp_matmul_shape_error():
    with pytest.raises(ValueError, match="A.shape"):
        logsumexp_matmul(np.zeros((3, 2)), np.zeros((3, 2)))


def test_partial_merge_is_exact_over_any_split():
    rng = np.random.default_rng(7)
    a = rng.normal(scale=100, size=1000)
    a[:10] = -np.inf
    cuts = np.sort(rng.choice(np.arange(1, 1000), size=9, replace=False))
    chunks = np.split(a, cuts) + [np.full(4, -np.inf)]
    parts = [logsumexp_partial(c) for c in chunks]
    m, s = logsumexp_merge(np.array([p[0] for p in parts]), np.array([p[1] for p in parts]))
    assert math.isclose(np.log(s) + m, scipy_lse(a), rel_tol=1e-13)


def test_top_level_exports():
    for name in ("logsumexp", "softmax", "log_softmax", "logsumexp_matmul",
                 "logsumexp_partial", "logsumexp_merge", "minimize"):
        assert callable(getattr(solvers, name))
    with pytest.raises(AttributeError):
        solvers.not_a_thing
