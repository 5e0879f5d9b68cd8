"""Safe-KL kernels and their generic twins against the slow obvious references of
``tests/naive.py`` (NaN, +-inf, empty, single, float32), the semi-dual OT on every
namespace, and the callback / status contract of its solvers."""
import math
import warnings

import numpy as np
import pytest

from conftest import to_numpy
from naive import safe_kl_shift, safe_kl_step_loop, safe_kl_terms_loop, scatter_add_loop
from solvers._lib.backend import resolve_backend
from solvers._lib.results import Status
from solvers.lse._safe_kl_kernels import KERNELS
from solvers.lse import semidual_ot, semidual_ot_objective
from solvers.lse._safe_kl_solver import solve_rows_generic, step_terms_generic, terms_generic
from solvers.lse._semidual_ot import _scatter_xp

NUMBA = resolve_backend("numba", np)
GENERIC = resolve_backend("numpy", np)

SPECIAL = {
    "finite": np.array([0.3, -2.0, 5.0, 1e4, -1e4, 0.0]),
    "nan": np.array([0.3, np.nan, 5.0, 1.0]),
    "posinf": np.array([0.3, np.inf, 5.0, 1.0]),
    "neginf": np.array([0.3, -np.inf, 5.0, 1.0]),
    "all_neginf": np.array([-np.inf, -np.inf]),
    "single": np.array([2.5]),
    "empty": np.zeros(0),
}


def _close(a, b, dtype):
    rtol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64),
                               np.asarray(b, dtype=np.float64), rtol=rtol, atol=rtol,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_step_terms_kernel_and_generic_match_the_reference(case, dtype):
    values = SPECIAL[case].astype(dtype)
    jac = np.random.default_rng(1).normal(size=(values.size, 3)).astype(dtype)
    kernel = KERNELS.get("step_terms", NUMBA)
    s, rho = np.asarray(1.5, dtype=dtype), 0.05
    ref = safe_kl_step_loop(values, jac, s, rho)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = kernel(values, jac, s, rho)
        twin = step_terms_generic(values, jac, s, rho)
    for g, t, r in zip(got, twin, ref):
        _close(g, r, dtype)
        _close(t, r, dtype)
    assert np.asarray(got[0]).dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_terms_generic_matches_the_reference(case, dtype):
    values = SPECIAL[case].astype(dtype)
    with np.errstate(all="ignore"):
        got = terms_generic(values, dtype(1.5), 0.05)
    for g, r in zip(got, safe_kl_terms_loop(values, 1.5, 0.05)):
        _close(g, r, dtype)
        assert g.dtype == dtype


def _solve_rows_cases():
    rng = np.random.default_rng(2)
    rows = [SPECIAL["finite"], SPECIAL["finite"][::-1] * 0.5, SPECIAL["neginf"],
            SPECIAL["single"], np.array([-np.inf, 0.0]), np.array([1.0, -np.inf]),
            rng.normal(size=6) * 30, np.full(6, 7.0)]
    return [np.stack([r, r[::-1] - 1.0]) for r in rows]


@pytest.mark.parametrize("A", _solve_rows_cases())
@pytest.mark.parametrize("weighted", [False, True])
def test_solve_rows_kernel_and_generic_match_the_reference(A, weighted):
    """The shift solve sees finite or -inf rows only (safe_logsumexp masks the rest)."""
    rho = 0.05
    mu = None
    if weighted:
        mu = np.random.default_rng(3).uniform(0.2, 1.0, size=A.shape)
        mu /= mu.sum(axis=1, keepdims=True)
    ref = [safe_kl_shift(A[r], rho, None if mu is None else mu[r]) for r in range(2)]
    s_ref, v_ref = (np.array(col) for col in zip(*ref))
    kernel = KERNELS.get("solve_rows", NUMBA)
    for solve in (kernel, lambda *args: solve_rows_generic(*args, be=GENERIC)):
        s, v = solve(A, mu, rho, 1e-10, 100)
        np.testing.assert_allclose(s, s_ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(v, v_ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("idx", [[0, 3, 3, 1], [2], []])
def test_scatter_kernel_and_generic_match_the_reference(idx, dtype):
    v = np.arange(5, dtype=dtype)
    idx = np.asarray(idx, dtype=np.int64)
    vals = np.linspace(-1, 2, idx.size).astype(dtype)
    if idx.size:
        vals[0] = np.inf
    ref = scatter_add_loop(v, idx, vals)
    np.testing.assert_array_equal(_scatter_xp(v.copy(), idx, vals), ref)
    got = KERNELS.get("scatter_add", NUMBA)(v.copy(), idx, vals)
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == dtype


def test_terms_generic_special_values():
    w, h = terms_generic(np.array([np.inf, -np.inf, np.nan, 0.0]), 0.0, 0.1)
    assert w[0] == pytest.approx(10.0) and w[1] == 0 and h[1] == 0 and math.isinf(h[0])
    assert np.isnan(w[2]) and np.isnan(h[2])


# --- semi-dual OT on every namespace ----------------------------------------------------------

def _ot(n=60, m=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)), rng.normal(size=(m, 2)) + 1.0


@pytest.mark.parametrize("method", ["safe-kl", "sgd", "lbfgs"])
def test_semidual_keeps_the_namespace_and_matches_numpy(xp, method):
    X, Y = _ot()
    kw = dict(epsilon=0.5, method=method, rng=0,
              maxiter=None if method == "lbfgs" else 300)
    ref = semidual_ot(X, Y, **kw)
    got = semidual_ot(xp.asarray(X), xp.asarray(Y), **kw)
    assert type(got.x) is type(xp.asarray(X)) and type(got.u) is type(xp.asarray(X))
    tol = 1e-6 if method == "lbfgs" else 1e-10
    np.testing.assert_allclose(to_numpy(got.x), ref.x, rtol=tol, atol=tol)
    assert got.fun == pytest.approx(ref.fun, rel=tol)
    value, grad = semidual_ot_objective(xp.asarray(ref.x), xp.asarray(X), xp.asarray(Y),
                                        epsilon=0.5)
    assert type(grad) is type(xp.asarray(X)) and value == pytest.approx(ref.fun, rel=1e-12)


def test_semidual_generic_scatter_gives_the_numpy_path():
    X, Y = _ot()
    kw = dict(epsilon=0.5, maxiter=200, rng=3)
    fast = semidual_ot(X, Y, **kw)
    generic = semidual_ot(X, Y, backend="numpy", **kw)
    np.testing.assert_allclose(generic.x, fast.x, rtol=1e-11, atol=1e-11)


def test_semidual_eps_alias_is_deprecated():
    X, Y = _ot()
    with pytest.warns(DeprecationWarning, match="epsilon"):
        old = semidual_ot(X, Y, eps=0.5, maxiter=20, rng=0)
    new = semidual_ot(X, Y, epsilon=0.5, maxiter=20, rng=0)
    np.testing.assert_array_equal(old.x, new.x)
    with pytest.raises(TypeError, match="epsilon"):
        semidual_ot(X, Y, epsilon=0.5, eps=0.5)
    with pytest.raises(TypeError, match="epsilon"):
        semidual_ot(X, Y)


@pytest.mark.parametrize("method", ["safe-kl", "sgd", "lbfgs"])
def test_semidual_callback_stop_and_budget(method):
    X, Y = _ot()
    seen = []

    def cb(r):
        seen.append(r.x)
        if len(seen) == 2:
            raise StopIteration

    res = semidual_ot(X, Y, epsilon=0.5, method=method, maxiter=50, rng=0, callback=cb)
    assert res.status == Status.CALLBACK and res.success is False and len(seen) == 2
    assert all(isinstance(x, np.ndarray) and x.shape == (40,) for x in seen)
    done = semidual_ot(X, Y, epsilon=0.5, method=method, maxiter=30, rng=0)
    if method != "lbfgs":
        assert done.success and done.status == Status.MAXITER and done.nit == 30


def test_semidual_nonfinite_is_reported():
    X, Y = _ot()
    res = semidual_ot(X, Y, epsilon=0.5, method="sgd", maxiter=40, rng=0, lr=1e308)
    assert res.status == Status.NONFINITE and not res.success
    assert np.isfinite(res.x).all()


# --- CuPy (run by gpu/check.py and on any machine with a usable GPU) ------------------------

def _cupy():
    import os

    from solvers._lib.backend import gpu_available

    if not (os.environ.get("SOLVERS_TEST_CUPY") == "1" or gpu_available()):
        pytest.skip("no usable GPU")
    import cupy

    return cupy


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_cupy_kernels_match_generic(case, dtype):
    cp = _cupy()
    be = resolve_backend("cupy", cp)
    values = cp.asarray(SPECIAL[case].astype(dtype))
    jac = cp.asarray(np.random.default_rng(1).normal(size=(values.size, 3)).astype(dtype))
    s, rho = cp.asarray(1.5, dtype=dtype), 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = KERNELS.get("step_terms", be)(values, jac, s, rho)
        ref = safe_kl_step_loop(SPECIAL[case].astype(dtype), cp.asnumpy(jac), 1.5, rho)
        for g, r in zip(got, ref):
            _close(cp.asnumpy(g), r, dtype)
        ref = safe_kl_terms_loop(SPECIAL[case].astype(dtype), 1.5, rho)
        for g, r in zip(KERNELS.get("terms", be)(values, s, rho), ref):
            _close(cp.asnumpy(g), r, dtype)
    idx = cp.asarray(np.array([0, 2, 2], dtype=np.int64))
    vals = cp.asarray(np.array([1.0, np.inf, -2.0], dtype=dtype))
    v = cp.arange(4, dtype=dtype)
    np.testing.assert_array_equal(cp.asnumpy(KERNELS.get("scatter_add", be)(v.copy(), idx, vals)),
                                  scatter_add_loop(cp.asnumpy(v), cp.asnumpy(idx),
                                                   cp.asnumpy(vals)))


@pytest.mark.gpu
def test_cupy_loop_never_synchronises():
    """Steps after the first (which sets the shift) run with device syncs forbidden."""
    cp = _cupy()
    import cupyx

    from solvers.lse import _safe_kl_solver as solver
    from solvers.lse.safe_kl import MINIMIZE_OPTIONS, _configure

    data = cp.asarray(np.random.default_rng(0).normal(size=(4096, 8)))
    cfg = MINIMIZE_OPTIONS.validate(phi=lambda x, b: (b @ x, b), batch_size=256,
                                    maxiter=100, rng=0, diagnose=False)
    cfg, plan, x, s, source = _configure(cfg, cp.zeros(8), data)
    st = solver.State(x, s, plan)
    solver.step(st, 0, cfg, plan, source)
    with cupyx.allow_synchronize(False):
        for k in range(1, 15):
            _, rho_k = solver.step(st, k, cfg, plan, source)
            solver.record(st, cfg, plan, rho_k)
    assert solver.check(st, plan) and st.nit == 15
