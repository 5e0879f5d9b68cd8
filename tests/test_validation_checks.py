"""The shared checks of ``solvers._lib.validation`` (issue 17) and the entry points using them."""
import numpy as np
import pytest
import scipy.special

from solvers import logsumexp, logsumexp_merge, logsumexp_partial, minimize, safe_logsumexp
from solvers._lib.validation import check_axis, check_callback, promote_float16
from solvers.optimize import register_method


def test_check_axis_normalizes():
    assert check_axis(None, 3) == (0, 1, 2)
    assert check_axis(-1, 3) == (2,)
    assert check_axis(np.int64(1), 3) == (1,)
    assert check_axis((2, 0), 3) == (0, 2)


@pytest.mark.parametrize("axis, exc", [(0.5, TypeError), (True, TypeError), ("0", TypeError),
                                       ((0, 1.0), TypeError), (3, ValueError),
                                       ((0, -3), ValueError)])
def test_check_axis_rejects(axis, exc):
    with pytest.raises(exc, match="axis"):
        check_axis(axis, 3)


def test_check_axis_int_only():
    with pytest.raises(TypeError, match="axis must be None or an int"):
        check_axis((0,), 2, allow_tuple=False)


def test_check_callback():
    assert check_callback(None) is None
    assert check_callback(print) is print
    with pytest.raises(TypeError, match="callback must be callable or None, got float"):
        check_callback(3.0)


def test_promote_float16():
    x = np.ones(3, dtype=np.float16)
    assert promote_float16(x).dtype == np.float32
    assert promote_float16(np.ones(2)).dtype == np.float64
    assert promote_float16([1.0]) == [1.0]


def test_logsumexp_float16_matches_scipy():
    a = np.linspace(-3, 3, 7).astype(np.float16)
    out = logsumexp(a)
    assert out.dtype == np.float16
    assert out == scipy.special.logsumexp(a)


def test_merge_of_no_chunk_is_the_empty_sum():
    m, s = logsumexp_merge(np.zeros((0, 3)), np.zeros((0, 3)), axis=0)
    assert np.all(np.isneginf(m)) and np.all(s == 0) and m.shape == (3,)


def test_merge_checks_shapes_and_dtypes():
    with pytest.raises(ValueError, match="maxes"):
        logsumexp_merge(np.zeros((2, 3)), np.ones((3, 3)))
    with pytest.raises(TypeError, match="maxes"):
        logsumexp_merge(np.array([True, False]), np.ones(2))


def test_partials_merge_exactly_over_a_tuple_axis():
    a = np.random.default_rng(0).standard_normal((4, 5, 2))
    m, s = logsumexp_partial(a, axis=(0, 1))
    assert np.allclose(np.log(s) + m, scipy.special.logsumexp(a, axis=(0, 1)))


def test_safe_logsumexp_infinite_weight_and_tol():
    b = np.ones((2, 3))
    b[0, 1] = np.inf
    out = safe_logsumexp(np.zeros((2, 3)), 0.1, b=b, axis=1)
    assert np.isposinf(out[0]) and np.isfinite(out[1])
    for tol, exc in ((-1.0, ValueError), (np.nan, ValueError), ("1e-8", TypeError)):
        with pytest.raises(exc, match="tol"):
            safe_logsumexp(np.zeros(3), 0.1, tol=tol)


def test_minimize_logsumexp_checks_phi_output():
    data = np.random.default_rng(0).standard_normal((16, 2))

    def phi_none(x, batch):
        return None

    def phi_complex(x, batch):
        d = x - batch
        return 0.5 * np.sum(d ** 2, axis=1) + 0j, d

    for phi, what in ((phi_none, "a pair"), (phi_complex, "real values")):
        with pytest.raises(TypeError, match=f"phi must return {what}"):
            minimize(phi, np.zeros(2), method="safe-kl", data=data, rho=0.1, batch_size=4,
                     maxiter=3, rng=0)


def test_register_method_checks():
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        register_method(3, lambda fun, x0: None)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        register_method("", lambda fun, x0: None)
    with pytest.raises(TypeError, match="func must be callable"):
        register_method("not-a-function", 3.0)
