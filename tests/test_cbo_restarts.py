"""CBO restarts, covariance noise, bounds, polish, kernels on special values, workers."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from solvers import minimize_cbo
from solvers._lib.backend import resolve_backend
from solvers._lib.rng import Draws
from solvers.optimize import cbo
from solvers.optimize import _cbo_numba
from solvers.optimize import _cbo_generic as generic
from solvers.optimize import _cbo_solver
from solvers.optimize._cbo_bounds import reflect
from solvers.optimize._cbo_config import OPTIONS, Problem, configure


def sphere(x):
    return np.sum(x * x, axis=0)


def rosen(x):  # vectorized Rosenbrock, x of shape (d,) or (d, S)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2, axis=0)


# --- covariance noise: affine invariance -------------------------------------------------

def _config(fun, **kw):
    return configure(OPTIONS.validate(fun=fun, **kw), 3)


def _trajectory(f, X0, steps, seed, backend="numpy", noise="covariance"):
    """Positions after each step of one swarm started at ``X0``."""
    be = resolve_backend(backend, np)
    d = X0.shape[-1]
    problem = Problem(be, np.float64, None, np.zeros(d), np.ones(d), None)
    solver = _cbo_solver.CBOSolver(_config(f, vectorized=True, restarts=False, polish=False),
                                   problem, Draws(seed, np))
    cov = noise == "covariance"
    dynamics = _cbo_solver.COV_DEFAULTS if cov else _cbo_solver.DIAG_DEFAULTS
    s = _cbo_solver.Swarm(X0.copy(), noise, 30.0, dynamics, _cbo_solver.COV_ESS if cov
                          else 0.5, 1e300, np)
    solver.BX = X0[:, 0, :].copy()
    out = []
    with __import__("solvers")._lib.results.Progress(1) as solver.bar:
        for _ in range(steps):
            solver._step(s)
            out.append(s.X.copy())
    return out


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_covariance_noise_is_affine_invariant(backend):
    rng = np.random.default_rng(0)
    d, N = 3, 12
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag([10.0, 0.5, 3.0])  # rotation and rescaling
    b = np.array([1.0, -2.0, 0.5])
    # x = A y + b; g(y) = f(A y + b): the mapped problem
    f = rosen
    g = lambda y: rosen(A @ y + b[:, None])
    Y0 = rng.normal(size=(1, N, d))
    X0 = Y0 @ A.T + b
    xs = _trajectory(f, X0, 10, 7, backend)
    ys = _trajectory(g, Y0, 10, 7, backend)
    for X, Y in zip(xs, ys):  # same draws, same trajectory up to the map
        np.testing.assert_allclose(Y @ A.T + b, X, rtol=1e-7, atol=1e-7)
    # the diagonal noise is not affine invariant: the same check fails
    xa = _trajectory(f, X0, 3, 7, backend, "anisotropic")[-1]
    ya = _trajectory(g, Y0, 3, 7, backend, "anisotropic")[-1]
    assert not np.allclose(ya @ A.T + b, xa, rtol=1e-3, atol=1e-3)


def test_covariance_noise_has_the_weighted_covariance():
    rng = np.random.default_rng(1)
    M, N, d = 1, 6, 3
    P = rng.normal(size=(M, N, d))
    W = rng.dirichlet(np.ones(N))[None, :]
    C = np.einsum("mn,mnd->md", W, P)
    Z = rng.normal(size=(M, 200_000, N))
    eta = _cbo_solver.covariance_noise(P, C, W, Z, np)[0]
    D = P[0] - C[0]
    cov = (D * W[0][:, None]).T @ D
    np.testing.assert_allclose(np.cov(eta.T), cov, atol=0.02 * np.abs(cov).max())


# --- restarts and budget -----------------------------------------------------------------

@pytest.mark.parametrize("maxfev", [15_000, 17_777])
@pytest.mark.parametrize("polish", [False, True])
def test_restarts_never_exceed_maxfev_and_count_every_evaluation(maxfev, polish):
    calls = {"n": 0}

    def fun(x):
        calls["n"] += x.shape[1]
        return np.sum(np.abs(x - 0.3), axis=0)

    res = minimize_cbo(fun, bounds=[(-3, 3)] * 4, vectorized=True, maxfev=maxfev,
                       polish=polish, spend_budget=True, rng=0)
    assert res.nfev == calls["n"] <= maxfev
    # spending the whole budget ends at maxfev: a cap, so not a success
    assert res.n_restarts >= 1 and not res.success and res.status == 2
    assert f"{res.nfev} evaluations" in res.message
    if not polish:  # the loop stops only when the next step of the last start won't fit
        assert maxfev - res.nfev < 20 * 2 ** res.n_restarts


@pytest.mark.parametrize("noise", ["mixed", "covariance", "anisotropic"])
def test_restarts_grow_the_population_and_keep_the_best(noise):
    seen = []
    res = minimize_cbo(lambda x: np.sum(np.abs(x), axis=0), bounds=[(-2, 2)] * 3,
                       vectorized=True, maxfev=30_000, polish=False, rng=1, noise=noise,
                       xtol=1e-2, spend_budget=True,
                       callback=lambda r: seen.append((r.n_restarts, r.population.shape[0],
                                                       r.fun)))
    sizes = {}
    for k, n, _ in seen:
        sizes.setdefault(k, n)
    assert res.n_restarts >= 2
    # IPOP: each noise type doubles its own population at its next start
    per_type = 2 if noise == "mixed" else 1
    assert [sizes[k] for k in sorted(sizes)] == [20 * 2 ** (k // per_type)
                                                 for k in sorted(sizes)]
    funs = [f for _, _, f in seen]
    assert all(b <= a for a, b in zip(funs, funs[1:])) and res.fun == funs[-1]


def test_no_restarts_is_one_start():
    res = minimize_cbo(sphere, bounds=[(-3, 3)] * 2, vectorized=True, restarts=False,
                       polish=False, maxiter=50, rng=0)
    # the covariance start (the first of noise="mixed") collapses before maxiter
    assert res.n_restarts == 0 and res.nit < 50 and res.nfev == 20 * res.nit
    assert res.status == 0 and "xtol" in res.message


# --- polish --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_polish_reaches_1e_12_on_sphere_10(seed):
    res = minimize_cbo(lambda x: np.sum((x - 0.7) ** 2, axis=0), bounds=[(-5, 5)] * 10,
                       vectorized=True, maxfev=20_000, rng=seed)
    assert res.fun < 1e-12 and res.nfev <= 20_000


def test_polish_is_reserved_and_helps():
    f = lambda x: np.sum((x - 0.7) ** 2, axis=0)
    off = minimize_cbo(f, bounds=[(-5, 5)] * 10, vectorized=True, maxfev=5_000,
                       polish=False, rng=0)
    on = minimize_cbo(f, bounds=[(-5, 5)] * 10, vectorized=True, maxfev=5_000, rng=0)
    assert on.fun < 1e-12 < off.fun


@pytest.mark.parametrize("n_runs", [1, 10])
def test_polish_reserve_is_a_share_of_one_run(n_runs):
    # the final polish refines one point: n_runs batched runs reserve share * maxfev /
    # n_runs, so the steps get (1 - 0.1 / n_runs) of maxfev, in steps of 20 n_runs points
    maxfev = n_runs * 2000
    res = minimize_cbo(sphere, bounds=[(-5, 5)] * 3, vectorized=True, restarts=False,
                       noise="anisotropic", xtol=0.0, n_runs=n_runs, maxfev=maxfev, rng=0)
    assert res.nit == int((1 - 0.1 / n_runs) * maxfev) // (20 * n_runs)
    assert res.nfev <= maxfev


@pytest.mark.parametrize("method", ["Powell", "Nelder-Mead"])
def test_derivative_free_polish_for_nonsmooth_fun(method):
    f = lambda x: float(np.sum(np.abs(x - 0.3)))
    res = minimize_cbo(f, bounds=[(-2, 2)] * 3, maxfev=4_000, polish=method, rng=0)
    assert res.fun < 1e-6 and res.nfev <= 4_000


# --- bounds --------------------------------------------------------------------------------

@pytest.mark.parametrize("noise", ["anisotropic", "isotropic", "covariance", "mixed"])
def test_every_evaluated_point_is_in_the_bounds(noise):
    lb, ub = np.array([-1.0, 0.5, 2.0]), np.array([0.0, 4.0, 2.5])
    pts = []

    def fun(x):  # optimum outside the box: particles keep pushing at the faces
        pts.append(np.array(x, copy=True).reshape(3, -1).T)
        return np.sum((x.reshape(3, -1) - 10.0) ** 2, axis=0).reshape(x.shape[1:])

    res = minimize_cbo(fun, bounds=list(zip(lb, ub)), vectorized=True, maxfev=6_000,
                       noise=noise, rng=0)
    P = np.concatenate(pts)
    assert P.shape[0] == res.nfev
    assert np.all(P >= lb) and np.all(P <= ub)
    np.testing.assert_allclose(res.x, [0.0, 4.0, 2.5], atol=1e-6)  # a corner


def test_scalar_bounds_broadcast_and_x0_checks():
    from scipy.optimize import Bounds

    res = minimize_cbo(sphere, x0=np.full(4, 0.5), bounds=Bounds(-1.0, 1.0), vectorized=True,
                       maxfev=2_000, rng=0)
    assert res.x.shape == (4,) and np.all(np.abs(res.population) <= 1.0)
    with pytest.raises(ValueError, match="within bounds"):
        minimize_cbo(sphere, x0=np.full(4, 2.0), bounds=Bounds(-1.0, 1.0), vectorized=True)
    res = minimize_cbo(sphere, x0=np.full(2, 0.5), bounds=Bounds([0.0, -np.inf], np.inf,
                                                                 keep_feasible=True),
                       vectorized=True, maxfev=2_000, rng=0)
    assert res.x[0] >= 0.0 and res.fun < 1e-10


def test_reflection_formula():
    x = np.array([[-1.5, 0.2, 2.5, 7.0]])
    lb, ub = np.zeros(4), np.ones(4)
    np.testing.assert_allclose(reflect(x, lb, ub, np), [[0.5, 0.2, 0.5, 1.0]])
    one_sided = reflect(np.array([-3.0, 5.0]), np.array([0.0, -np.inf]),
                            np.array([np.inf, 1.0]), np)
    np.testing.assert_allclose(one_sided, [3.0, -3.0])


# --- kernels against their generic twins, special values --------------------------------

SPECIAL = [np.nan, np.inf, -np.inf]


def _energies(M, N, dtype, rng):
    E = rng.uniform(0.0, 3.0, size=(M, N)).astype(dtype)
    if M * N >= 4:
        E.flat[1], E.flat[2] = np.inf, np.inf  # cleaned NaN / -inf / +inf
    return E


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ess", [None, 0.5])
@pytest.mark.parametrize("use_mask", [False, True])
@pytest.mark.parametrize("shape", [(2, 7), (1, 1), (3, 0), (2, 3)])
def test_gibbs_weights_kernel_matches_generic(dtype, ess, use_mask, shape):
    rng = np.random.default_rng(5)
    E = _energies(*shape, dtype, rng)
    if shape == (2, 3):
        E[1, :] = np.inf  # a run without a finite energy: uniform weights
    mask = rng.uniform(size=shape) < 0.7 if use_mask else None
    if mask is not None and shape[1]:
        mask[:, 0] = True
    a, alpha_a = generic.gibbs_weights(E, mask, 2.0, ess, 1e5, np)
    b, alpha_b = _cbo_numba.gibbs_weights(E, mask, 2.0, ess, 1e5, np)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(alpha_b), np.asarray(alpha_a),
                               rtol=1e-6 if dtype == np.float32 else 1e-9)
    if shape[1] > 1 and ess is not None and not use_mask and shape != (2, 3):
        for m in range(shape[0]):  # ESS counted over the finite energies only
            w = a[m]
            n_fin = np.sum(np.isfinite(E[m]))
            assert 1.0 / np.sum(w.astype(np.float64) ** 2) == pytest.approx(ess * n_fin,
                                                                             rel=1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ess_weights_of_huge_gaps_do_not_overflow(dtype):
    # ties at the best value push the ESS bisection's alpha to its cap (1e300) while other
    # gaps reach 1e8: alpha * g overflows unless capped; the weights are the kernel's
    E = np.array([[0.0, 0.0, 0.0, 1e8, 2e8, 3.0e7]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        W, alpha = generic.gibbs_weights(E, None, 1.0, 0.3, 1e300, np)
    Wn, alpha_n = _cbo_numba.gibbs_weights(E, None, 1.0, 0.3, 1e300, np)
    assert alpha[0] == alpha_n[0] == pytest.approx(1e300)  # three ties: ESS 3 >= 0.3 * 6
    np.testing.assert_allclose(W, Wn, rtol=1e-12)
    np.testing.assert_allclose(W[0], [1 / 3] * 3 + [0.0] * 3, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("aniso", [True, False])
@pytest.mark.parametrize("special", [None] + SPECIAL)
@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 1, 1), (2, 0, 3)])
def test_move_kernel_matches_generic(dtype, aniso, special, shape):
    rng = np.random.default_rng(2)
    X = rng.normal(size=shape).astype(dtype)
    C = rng.normal(size=(shape[0], shape[2])).astype(dtype)
    xi = rng.normal(size=shape).astype(dtype)
    if special is not None and X.size:
        X.flat[0] = special
    with np.errstate(invalid="ignore", over="ignore"):
        a, sa = generic.move(X, C, xi, 0.1, 0.7, aniso, np)
        b, sb = _cbo_numba.move(X, C, xi, 0.1, 0.7, aniso, np)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_allclose(sb, sa, rtol=tol, equal_nan=True)
    assert b.dtype == a.dtype == dtype


@pytest.mark.parametrize("special", SPECIAL)
def test_consensus_kernel_matches_generic_with_special_energies(special):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2, 6, 3))
    E = rng.uniform(size=(2, 6))
    E[0, 2] = special
    E[1, :] = special  # no finite energy: plain mean
    np.testing.assert_allclose(_cbo_numba.consensus(X, E, 3.0, np),
                               generic.consensus(X, E, 3.0, np), rtol=1e-12)


@pytest.mark.parametrize("noise", ["anisotropic", "covariance"])
@pytest.mark.parametrize("ess", [None, 0.5])
def test_backends_agree_with_nan_and_inf_objective_values(noise, ess):
    def fun(x):  # NaN and +-inf in parts of the box
        v = rosen(x)
        v = np.where(x[0] > 1.5, np.nan, v)
        v = np.where(x[1] < -1.5, np.inf, v)
        return np.where(x[2] > 1.8, -np.inf, v)

    kw = dict(bounds=[(-2, 2)] * 4, vectorized=True, n_particles=12, n_runs=2, maxiter=10,
              restarts=False, polish=False, noise=noise, ess=ess, rng=3, xtol=0.0)
    a = minimize_cbo(fun, backend="numpy", **kw)
    b = minimize_cbo(fun, backend="numba", **kw)
    assert a.n_nonfinite == b.n_nonfinite > 0
    np.testing.assert_allclose(b.population, a.population, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.asarray(b.alpha), np.asarray(a.alpha), rtol=1e-8)


# --- workers ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_workers_without_main_guard_finish(tmp_path):
    script = tmp_path / "noguard.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        from solvers import minimize_cbo
        res = minimize_cbo(np.linalg.norm, bounds=[(-1, 1)] * 2, maxfev=400, workers=2,
                           polish=False, rng=0)
        print("done", res.nfev)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path),
                         env={**__import__("os").environ,
                              "PYTHONPATH": str(__import__("pathlib").Path(
                                  cbo.__file__).parents[2])})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "done 400" in out.stdout


def shifted_abs(x):  # top level: picklable for process pools and dask
    return float(np.sum(np.abs(x - 0.25)) + 0.1 * np.sum(np.cos(5 * x)))


RUNS_KW = dict(bounds=[(-2, 2)] * 3, n_runs=3, independent_runs=True, maxfev=3_000, rng=12)


def test_mapped_runs_match_serial_map_and_spawned_seeds():
    serial = minimize_cbo(shifted_abs, workers=map, **RUNS_KW)
    assert serial.x_runs.shape == (3, 3) and serial.nfev <= 3_000
    # each piece is the single run with the spawned generator and its share of maxfev
    child = np.random.default_rng(12).spawn(3)[1]
    one = minimize_cbo(shifted_abs, bounds=[(-2, 2)] * 3, maxfev=1_000, rng=child)
    np.testing.assert_array_equal(serial.x_runs[1], one.x)
    assert serial.fun == serial.fun_runs.min()
    with pytest.raises(ValueError, match="callback"):
        minimize_cbo(shifted_abs, workers=map, callback=lambda r: None, **RUNS_KW)


@pytest.mark.slow
def test_mapped_runs_identical_on_a_process_pool():
    serial = minimize_cbo(shifted_abs, workers=map, **RUNS_KW)
    pooled = minimize_cbo(shifted_abs, workers=2, **RUNS_KW)
    np.testing.assert_array_equal(pooled.x_runs, serial.x_runs)
    np.testing.assert_array_equal(pooled.fun_runs, serial.fun_runs)
    assert pooled.nfev == serial.nfev


@pytest.mark.slow
def test_mapped_runs_identical_on_a_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    serial = minimize_cbo(shifted_abs, workers=map, **RUNS_KW)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dist = minimize_cbo(shifted_abs, workers=client.map, **RUNS_KW)
    np.testing.assert_array_equal(dist.x_runs, serial.x_runs)
    np.testing.assert_array_equal(dist.fun_runs, serial.fun_runs)
    assert dist.nfev == serial.nfev


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 1, 3), (2, 0, 3)])
def test_reflect_kernel_matches_generic(dtype, shape):
    rng = np.random.default_rng(4)
    X = (10 * rng.normal(size=shape)).astype(dtype)
    lb = np.array([-1.0, 0.0, -np.inf], dtype=dtype)
    ub = np.array([1.0, np.inf, 2.0], dtype=dtype)
    a = reflect(X, lb, ub, np)
    b = _cbo_numba.reflect(X, lb, ub, np)
    np.testing.assert_allclose(b, a, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    assert np.all(b >= lb) and np.all(b <= ub) and b.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(2, 6, 3), (1, 1, 2), (2, 0, 3)])
def test_track_best_kernel_matches_generic(dtype, shape):
    rng = np.random.default_rng(6)
    X = rng.normal(size=shape).astype(dtype)
    F = rng.uniform(size=shape[:2]).astype(dtype)
    if F.size >= 4:
        F.flat[0], F.flat[1], F.flat[3] = np.nan, -np.inf, np.inf
    M, d = shape[0], shape[2]
    BF = np.array([0.5] + [np.inf] * (M - 1), dtype=dtype)
    BX = np.zeros((M, d), dtype=dtype)
    a = generic.track_best(X, F.copy(), BF, BX, np)
    b = _cbo_numba.track_best(X, F.copy(), BF, BX, np)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(np.asarray(v), np.asarray(u))


def test_stopping_tests_read_the_device_every_k_steps(monkeypatch):
    # cupy reads device scalars every SYNC_EVERY["cupy"] steps; emulate it on numpy
    monkeypatch.setattr(_cbo_solver, "SYNC_EVERY", {"generic": 5})
    res = minimize_cbo(sphere, bounds=[(-3, 3)] * 2, vectorized=True, f_target=1e-2,
                       backend="numpy", polish=False, rng=0)
    assert res.status == 3 and res.nit % 5 == 0
    ref = minimize_cbo(sphere, bounds=[(-3, 3)] * 2, vectorized=True, f_target=1e-2,
                       backend="numpy", polish=False, rng=0, maxiter=res.nit)
    np.testing.assert_array_equal(ref.x, res.x)  # the same steps, only checked later


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(2, 7, 3), (1, 1, 2), (2, 0, 3)])
def test_gibbs_consensus_kernel_matches_generic(dtype, shape):
    rng = np.random.default_rng(8)
    P = rng.normal(size=shape).astype(dtype)
    E = _energies(shape[0], shape[1], dtype, rng)
    a = generic.gibbs_consensus(P, E, None, 2.0, 0.5, 1e5, np)
    b = _cbo_numba.gibbs_consensus(P, E, None, 2.0, 0.5, 1e5, np)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ess, use_mask", [(None, False), (0.5, False), (None, True)])
@pytest.mark.parametrize("bounded", [True, False])
@pytest.mark.parametrize("shape", [(2, 7, 3), (1, 1, 3), (2, 0, 3)])
def test_consensus_move_kernel_is_the_three_kernels_in_one(dtype, ess, use_mask, bounded,
                                                           shape):
    # the fused Numba step against its generic twin, and against the three Numba kernels
    # it replaces called one after another (to a few ulps: compiled together, the
    # contractions of the fast-math flags may differ in the last bit)
    rng = np.random.default_rng(9)
    P = rng.normal(size=shape).astype(dtype)
    X = (3 * rng.normal(size=shape)).astype(dtype)  # some points leave the box
    xi = rng.normal(size=shape).astype(dtype)
    E = _energies(shape[0], shape[1], dtype, rng)
    mask = rng.uniform(size=shape[:2]) < 0.7 if use_mask else None
    if mask is not None and shape[1]:
        mask[:, 0] = True
    box = (np.array([-1.0, 0.0, -np.inf], dtype=dtype),
           np.array([1.0, np.inf, 2.0], dtype=dtype)) if bounded else None
    step = (P, E, mask, 2.0, ess, 1e5, X, xi, 0.1, 0.7, True, box, np)
    fused = _cbo_numba.consensus_move(*step)
    W, C, alpha = _cbo_numba.gibbs_consensus(P, E, mask, 2.0, ess, 1e5, np)
    X_new, spread = _cbo_numba.move(X, C, xi, 0.1, 0.7, True, np)
    if bounded:
        X_new = _cbo_numba.reflect(X_new, *box, np)
    ulps = 8 * np.finfo(dtype).eps
    for u, v in zip((W, C, alpha, X_new, spread), fused):
        np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=ulps, atol=ulps)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for u, v in zip(generic.consensus_move(*step), fused):
        np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=tol, atol=tol)
    assert fused[3].dtype == dtype
    if bounded:
        assert np.all(fused[3] >= box[0]) and np.all(fused[3] <= box[1])


def test_covariance_noise_on_every_namespace(xp):
    from conftest import to_numpy

    bounds = xp.asarray([[-2.0, 2.0]] * 4)
    kw = dict(vectorized=True, noise="covariance", restarts=False, polish=False, maxiter=12,
              n_runs=2, rng=3, xtol=0.0)
    got = minimize_cbo(lambda x: xp.sum((x - 0.5) ** 2, axis=0), bounds=bounds, **kw)
    ref = minimize_cbo(lambda x: np.sum((x - 0.5) ** 2, axis=0), bounds=[(-2.0, 2.0)] * 4,
                       backend="numpy", **kw)
    np.testing.assert_allclose(to_numpy(got.population), ref.population, rtol=1e-9,
                               atol=1e-12)
    assert np.all(np.abs(to_numpy(got.population)) <= 2.0)


def test_polish_of_an_objective_gone_nan_warns_nothing():
    """NaN values reach the local methods as a huge finite value, not inf: Nelder-Mead's
    convergence test subtracts values, and inf - inf made NumPy warn in the user's run
    once the objective returned NaN everywhere (here: after 3000 evaluations)."""
    import warnings

    calls = [0]

    def goes_nan(x):
        calls[0] += x.shape[1]
        v = np.sum((x - 0.3) ** 2, axis=0)
        return v if calls[0] <= 3000 else np.full_like(v, np.nan)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("Nelder-Mead", True):
            calls[0] = 0
            res = minimize_cbo(goes_nan, bounds=[(-2, 2)] * 3, vectorized=True,
                               maxfev=6000, rng=0, polish=method)
            assert np.isfinite(res.fun) and res.fun < 1e-2


def test_an_answer_left_on_a_bound_step_is_finished(monkeypatch):
    # a paused refinement whose point lies on a bound goes on with the bound step
    # (L-BFGS-B) and cannot be resumed; when the starts then agree on it, it is refined
    # again to full precision. Forced here: every point counts as on a bound and the
    # bound step moves nothing. Rosenbrock with an offset of 300, where the first pause
    # (1e-4 of 1 + |f|) stops 1e-7 to 1e-2 above the minimum: without the final
    # refinement every one of these runs ends there with status 0
    from solvers.optimize import _cbo_refine
    monkeypatch.setattr(_cbo_refine, "scipy_polish", lambda p, x, fx, lb, ub, n, m: (x, fx, 0))
    monkeypatch.setattr(_cbo_refine.Refiner, "_on_bounds", lambda self, x: True)
    d, offset = 5, 300.0
    for seed in range(4):
        o = np.random.default_rng(seed).uniform(-3, 3, d)

        def f(X):
            return rosen(np.asarray(X) - o[:, None] + 1.0) + offset
        res = minimize_cbo(f, bounds=[(-5, 5)] * d, vectorized=True, rng=seed)
        assert res.status == 0 and res.fun - offset < 1e-9
