"""Consensus-based optimization: Laplace limits, backends draw for draw, bad input, rates."""
import math

import numpy as np
import pytest

import solvers
from solvers import minimize_cbo
from solvers.optimize.cbo import consensus
from conftest import to_numpy


# --- test functions (vectorized: x of shape (d,) or (d, S)) -----------------------------

def sphere(x):
    return np.sum(x * x, axis=0)


def rastrigin(x, shift=None):
    z = x if shift is None else (x - shift[:, None] if x.ndim == 2 else x - shift)
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def ackley(x, shift=None):
    z = x if shift is None else (x - shift[:, None] if x.ndim == 2 else x - shift)
    d = z.shape[0]
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.sum(z * z, axis=0) / d))
            - np.exp(np.sum(np.cos(2 * np.pi * z), axis=0) / d) + 20.0 + math.e)


def cbo1(*args, **kwargs):
    """One start of the dynamics: no restarts, no polish (the pre-restart behaviour)."""
    kwargs.setdefault("restarts", False)
    kwargs.setdefault("polish", False)
    kwargs.setdefault("noise", "anisotropic")
    return minimize_cbo(*args, **kwargs)


def _reflect(x, lb, ub):
    w = ub - lb
    y = np.mod(x - lb, 2 * w)
    return np.clip(lb + np.where(y > w, 2 * w - y, y), lb, ub)


def naive_cbo(f, lb, ub, n_particles, n_runs, steps, seed, *, alpha=30.0, growth=1.05,
              alpha_max=1e5, sigma=10.5, lam=0.4, dt=0.01, aniso=True, batch=None):
    """The dynamics written as plain loops (the slow obvious reference)."""
    rng = np.random.default_rng(seed)
    M, N, d = n_runs, n_particles, lb.shape[0]
    X = lb + (ub - lb) * rng.uniform(0.0, 1.0, (M, N, d))
    best = np.full(M, np.inf)
    C = np.zeros((M, d))
    for _ in range(steps):
        F = np.array([[f(X[m, i]) for i in range(N)] for m in range(M)])
        F = np.where(np.isfinite(F), F, np.inf)
        best = np.minimum(best, F.min(axis=1))
        mask = np.ones((M, N), dtype=bool)
        if batch is not None:
            u = rng.uniform(0.0, 1.0, (M, N))
            mask = u <= np.sort(u, axis=1)[:, batch - 1:batch]
        xi = rng.standard_normal((M, N, d))
        Xn = np.empty_like(X)
        for m in range(M):
            fmin = min(F[m, i] for i in range(N) if mask[m, i])
            num, den = np.zeros(d), 0.0
            for i in range(N):
                if mask[m, i] and math.isfinite(F[m, i]):
                    w = math.exp(-alpha * (F[m, i] - fmin))
                    num += w * X[m, i]
                    den += w
            C[m] = num / den
            for i in range(N):
                diff = X[m, i] - C[m]
                scale = diff if aniso else np.linalg.norm(diff)
                Xn[m, i] = X[m, i] - lam * dt * diff + sigma * math.sqrt(dt) * scale * xi[m, i]
        X = _reflect(Xn, lb, ub)
        alpha = min(alpha * growth, alpha_max)
    return C, best


# --- Laplace principle on the consensus ---------------------------------------------------

@pytest.fixture
def cloud():
    rng = np.random.default_rng(3)
    return rng.normal(size=(3, 7, 4)), rng.uniform(-2, 5, size=(3, 7))


@pytest.mark.parametrize("cbackend", ["numpy", "numba"])
def test_consensus_alpha_zero_is_mean(cloud, cbackend):
    x, f = cloud
    np.testing.assert_allclose(consensus(x, f, 0.0, backend=cbackend), x.mean(axis=1),
                               rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("cbackend", ["numpy", "numba"])
def test_consensus_alpha_large_is_best(cloud, cbackend):
    x, f = cloud
    best = x[np.arange(3), np.argmin(f, axis=1)]
    # the gap between the two best energies is > 1e-3, so alpha = 1e7 leaves weight
    # exp(-1e4) on the others: the consensus equals the best particle to rounding
    gaps = np.sort(f, axis=1)[:, 1] - np.sort(f, axis=1)[:, 0]
    assert gaps.min() > 1e-3
    np.testing.assert_allclose(consensus(x, f, 1e7, backend=cbackend), best, rtol=1e-14)


@pytest.mark.parametrize("cbackend", ["numpy", "numba"])
@pytest.mark.parametrize("const", [1.0, -1e4, 1e8])
def test_consensus_invariant_to_constant(cloud, cbackend, const):
    x, f = cloud
    alpha = 2.0
    ref = consensus(x, f, alpha, backend=cbackend)
    # f + const is rounded at |const| * eps; the weights change by about alpha * that
    rtol = 10 * alpha * abs(const) * np.finfo(float).eps + 1e-14
    np.testing.assert_allclose(consensus(x, f + const, alpha, backend=cbackend), ref,
                               rtol=rtol, atol=rtol)


@pytest.mark.parametrize("cbackend", ["numpy", "numba"])
def test_consensus_spread_1e6_does_not_overflow(cbackend):
    x = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    f = np.array([1e6, 0.5, 0.0])  # alpha * f spreads over 1e6: exp(1e6) overflows
    c = consensus(x, f, 1.0, backend=cbackend)
    w = np.array([0.0, np.exp(-0.5), 1.0])
    np.testing.assert_allclose(c, w @ x / w.sum(), rtol=1e-14)
    # energies near the largest floats and alpha * f of order 1e6 around them
    f2 = np.array([1e300, 1e300 + 1e290, 1e300 - 1e290])
    c2 = consensus(x, f2, 1e-284, backend=cbackend)  # alpha * spread = 1e6
    assert np.all(np.isfinite(c2))
    np.testing.assert_allclose(c2, x[2], rtol=1e-14)


def test_consensus_on_every_namespace(xp, cloud):
    x, f = cloud
    got = consensus(xp.asarray(x), xp.asarray(f), 0.7)
    w = np.exp(-0.7 * (f - f.min(axis=1, keepdims=True)))
    want = np.einsum("mn,mnd->md", w / w.sum(axis=1, keepdims=True), x)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-13)


@pytest.mark.parametrize("cbackend", ["numpy", "numba"])
def test_consensus_nonfinite_energies_get_zero_weight(cbackend):
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    f = np.array([np.nan, 0.0, np.inf, -np.inf])
    np.testing.assert_allclose(consensus(x, f, 0.0, backend=cbackend), [1.0])
    all_bad = np.array([np.nan, np.nan, np.inf, -np.inf])
    np.testing.assert_allclose(consensus(x, all_bad, 5.0, backend=cbackend), [1.5])


# --- the dynamics against the slow obvious version ---------------------------------------

@pytest.mark.parametrize("aniso,batch", [(True, None), (False, None), (True, 4)])
@pytest.mark.parametrize("rbackend", ["numpy", "numba"])
def test_matches_naive_loops(aniso, batch, rbackend):
    d, N, M, steps = 3, 8, 2, 12
    lb, ub = -np.ones(d) * 2, np.ones(d) * 3
    f = lambda x: rastrigin(x, np.array([0.5, -0.3, 1.0]))
    C, best = naive_cbo(f, lb, ub, N, M, steps, 7, aniso=aniso, batch=batch)
    res = cbo1(f, bounds=list(zip(lb, ub)), n_particles=N, n_runs=M, maxiter=steps,
                       noise="anisotropic" if aniso else "isotropic", batch_size=batch,
                       rng=7, backend=rbackend, xtol=0.0)
    np.testing.assert_allclose(res.consensus, C, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.fun_runs, best, rtol=1e-12)
    assert res.nfev == steps * N * M and res.nit == steps


@pytest.mark.parametrize("options", [
    {}, {"noise": "isotropic"}, {"memory": True}, {"batch_size": 5}, {"ess": 0.5},
    {"memory": True, "batch_size": 3, "ess": 0.3, "n_runs": 3}])
def test_numba_and_generic_agree_draw_for_draw(options):
    shift = np.linspace(-1, 1, 6)
    # 12 steps: the dynamics are chaotic, round-off differences (1e-16) grow ~10x per step
    kw = dict(bounds=[(-3, 3)] * 6, vectorized=True, n_particles=10, maxiter=12, rng=11,
              xtol=0.0, **options)
    a = cbo1(rastrigin, args=(shift,), backend="numpy", **kw)
    b = cbo1(rastrigin, args=(shift,), backend="numba", **kw)
    np.testing.assert_allclose(b.population, a.population, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(b.consensus, a.consensus, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(b.x_runs, a.x_runs, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(b.fun_runs, a.fun_runs, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(b.alpha), np.asarray(a.alpha), rtol=1e-8)
    assert a.nfev == b.nfev and a.nit == b.nit


def test_generic_namespaces_agree_with_numpy(xp):
    d = 4
    bounds = xp.asarray([[-2.0, 2.0]] * d)

    def fun(x):  # vectorized, namespace-agnostic (x is (d, S) in the run's namespace)
        return x[0, :] ** 2 + 3.0 * x[1, :] ** 2 + xp.sum(xp.abs(x[2:, :]), axis=0)

    kw = dict(vectorized=True, n_particles=9, n_runs=2, maxiter=25, rng=5, xtol=0.0,
              memory=True, batch_size=6)
    got = cbo1(fun, bounds=bounds, **kw)
    import array_api_compat.numpy as cnp

    def fun_np(x):
        return x[0] ** 2 + 3.0 * x[1] ** 2 + np.sum(np.abs(x[2:]), axis=0)

    ref = cbo1(fun_np, bounds=[(-2.0, 2.0)] * d, backend="numpy", **kw)
    np.testing.assert_allclose(to_numpy(got.population), ref.population, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(to_numpy(got.x), ref.x, rtol=1e-10, atol=1e-12)
    assert got.fun == pytest.approx(ref.fun, rel=1e-10, abs=1e-14)
    del cnp


def test_f_plus_const_gives_same_run():
    shift = np.linspace(-1, 1, 5)
    kw = dict(bounds=[(-3, 3)] * 5, vectorized=True, maxiter=30, rng=2, xtol=0.0)
    a = cbo1(rastrigin, args=(shift,), **kw)
    b = cbo1(lambda x: rastrigin(x, shift) + 1e3, **kw)
    # the only difference is the rounding of f + 1e3 (1e-13 absolute) in the weights
    np.testing.assert_allclose(b.population, a.population, rtol=1e-7, atol=1e-7)
    assert b.fun - 1e3 == pytest.approx(a.fun, abs=1e-9)


def test_ess_schedule_hits_its_target():
    res = cbo1(sphere, bounds=[(-3, 3)] * 4, vectorized=True, n_particles=30,
                       n_runs=2, maxiter=5, ess=0.4, rng=0, xtol=0.0)
    for m in range(2):
        g = res.population_energies[m] - res.population_energies[m].min()
        w = np.exp(-res.alpha[m] * g)
        w /= w.sum()
        assert 1.0 / np.sum(w * w) == pytest.approx(0.4 * 30, rel=1e-6)


# --- results, stopping rules, options -----------------------------------------------------

def test_result_fields_and_shapes():
    res = cbo1(sphere, bounds=[(-1, 2)] * 3, vectorized=True, n_particles=6,
                       maxiter=10, rng=0, xtol=0.0)
    for key in ("x", "fun", "nfev", "nit", "success", "status", "message", "population",
                "population_energies", "consensus", "x_runs", "fun_runs", "n_nonfinite"):
        assert key in res
    assert res.x.shape == (3,) and res.population.shape == (6, 3)
    assert res.population_energies.shape == (6,) and res.consensus.shape == (3,)
    np.testing.assert_allclose(res.population_energies, sphere(res.population.T))
    assert res.fun == pytest.approx(sphere(res.x))
    # maxiter is a cap: reaching it is not a success
    assert res.nfev == 60 and res.nit == 10 and res.status == 1 and not res.success
    multi = cbo1(sphere, bounds=[(-1, 2)] * 3, vectorized=True, n_particles=6,
                         n_runs=4, maxiter=10, rng=0, xtol=0.0)
    assert multi.population.shape == (4, 6, 3) and multi.x_runs.shape == (4, 3)
    assert multi.fun == multi.fun_runs.min() and multi.nfev == 240


def test_same_seed_same_result_and_per_point_equals_vectorized():
    kw = dict(bounds=[(-2, 2)] * 3, n_particles=5, maxiter=15, rng=4, xtol=0.0)
    a = cbo1(sphere, vectorized=True, **kw)
    b = cbo1(sphere, vectorized=True, **kw)
    c = cbo1(lambda x: float(np.sum(x * x)), **kw)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_allclose(c.population, a.population, rtol=1e-12)


def test_xtol_convergence_on_sphere():
    # alpha must keep growing for the population to collapse: with alpha capped at 1e5
    # energy differences below 1e-5 are not resolved (see the guide)
    res = cbo1(sphere, bounds=[(-3, 3)] * 5, vectorized=True, rng=1, xtol=1e-3,
               alpha_max=1e15)
    assert res.status == 0 and res.success and res.nit < 4000 and "xtol" in res.message
    assert np.max(np.abs(res.population - res.consensus)) <= 1e-3
    assert np.max(np.abs(res.x)) < 1e-3


def test_maxfev_budget_and_f_target():
    res = cbo1(sphere, bounds=[(-3, 3)] * 2, vectorized=True, maxfev=1010, rng=0)
    assert res.nfev <= 1010 and res.nfev == 1000 and res.status == 2 and not res.success
    res = cbo1(sphere, bounds=[(-3, 3)] * 2, vectorized=True, f_target=1e-3, rng=0)
    assert res.status == 3 and res.success and res.fun <= 1e-3
    with pytest.raises(ValueError, match="maxfev"):
        cbo1(sphere, bounds=[(-3, 3)] * 2, vectorized=True, maxfev=5)


def test_ftol_stops_a_collapsed_population():
    # covariance noise concentrates the whole population: its values agree within ftol
    res = cbo1(sphere, bounds=[(-3, 3)] * 2, vectorized=True, ftol=1e-6, xtol=0.0,
               noise="covariance", rng=0)
    assert res.status == 0 and res.nit < 4000 and "ftol" in res.message
    F = res.population_energies
    assert F.max() - F.min() <= 1e-6 * (1 + abs(F.min()))


def test_callback_and_stop_iteration():
    seen = []

    def cb(r):
        seen.append((r.nit, r.fun, r.x.copy()))
        if r.nit == 7:
            raise StopIteration

    res = cbo1(sphere, bounds=[(-3, 3)] * 2, vectorized=True, callback=cb, rng=0)
    assert res.nit == 7 and res.status == 99 and not res.success
    assert [s[0] for s in seen] == list(range(1, 8))
    assert all(b[1] <= a[1] for a, b in zip(seen, seen[1:]))  # best-so-far never worsens


def test_x0_start_and_float32():
    x0 = np.array([2.0, -1.0, 0.5], dtype=np.float32)
    res = cbo1(sphere, x0=x0, vectorized=True, n_particles=10, maxiter=3, rng=0,
                       xtol=0.0)
    assert res.x.dtype == np.float32 and res.population.dtype == np.float32
    res0 = cbo1(sphere, x0=x0, vectorized=True, n_particles=10, maxiter=1, rng=0)
    np.testing.assert_array_equal(res0.population[0], x0)  # x0 is particle 0
    assert np.all(np.abs(res0.population - x0) <= 1.0 + 1e-6)  # default spread 1
    res1 = cbo1(sphere, x0=x0, vectorized=True, maxiter=300, rng=0)
    assert res1.fun < 1e-4


def test_polish_improves_and_counts_evaluations():
    a = cbo1(sphere, bounds=[(-3, 3)] * 3, vectorized=True, maxiter=20, rng=0)
    b = cbo1(sphere, bounds=[(-3, 3)] * 3, vectorized=True, maxiter=20, rng=0,
                     polish=True)
    assert b.fun < min(a.fun, 1e-10) and b.nfev > a.nfev


def test_nan_objective_values_are_worst_and_counted():
    calls = {"bad": 0}

    def fun(x):
        if x[0] > 1.0:
            calls["bad"] += 1
            return float("nan")
        if x[0] < -2.5:
            calls["bad"] += 1
            return float("inf")
        return float(np.sum((x - 0.3) ** 2))

    res = cbo1(fun, bounds=[(-3, 3)] * 2, n_particles=10, maxiter=150, rng=0)
    assert res.status == 1 and math.isfinite(res.fun)
    assert res.n_nonfinite == calls["bad"] > 0
    np.testing.assert_allclose(res.x, [0.3, 0.3], atol=1e-2)


@pytest.mark.parametrize("rbackend", ["numpy", "numba"])
def test_all_nan_objective_fails_cleanly(rbackend):
    res = cbo1(lambda x: np.full(x.shape[1], np.nan), bounds=[(-1, 1)] * 2,
                       vectorized=True, n_particles=4, maxiter=5, rng=0, backend=rbackend)
    assert not res.success and res.status == 4 and res.n_nonfinite == 20
    assert "no finite" in res.message


def test_diverging_particles_fail_cleanly():
    # |1 - lam dt + sigma sqrt(dt) xi| ~ 1e3 per step: positions overflow to inf
    with np.errstate(over="ignore", invalid="ignore"):
        res = cbo1(sphere, x0=np.zeros(1), vectorized=True, dt=1e3, rng=0)
    assert res.status == 4 and not res.success and "diverged" in res.message


@pytest.mark.parametrize("kwargs,exc,match", [
    ({}, ValueError, "bounds"),
    ({"bounds": [(1, 0)]}, ValueError, "low < high"),
    ({"bounds": [(0, np.nan)]}, ValueError, "NaN"),
    ({"bounds": [(0, np.inf)]}, ValueError, "finite"),
    ({"bounds": [(0, 1)], "x0": [2.0]}, ValueError, "within bounds"),
    ({"x0": [0.0], "polish": "bfgs"}, ValueError, "polish"),
    ({"x0": [0.0], "restarts": "bipop"}, ValueError, "restarts"),
    ({"bounds": [(0, 1, 2)]}, ValueError, "pairs"),
    ({"bounds": "abc"}, ValueError, "bounds"),
    ({"bounds": [(0, 1)], "x0": [0.0, 0.0]}, ValueError, "dimension"),
    ({"x0": [[0.0]]}, ValueError, "x0"),
    ({"x0": [np.nan]}, ValueError, "x0"),
    ({"x0": [0.0], "n_particles": 1}, ValueError, "n_particles"),
    ({"x0": [0.0], "n_particles": 2.5}, TypeError, "n_particles"),
    ({"x0": [0.0], "noise": "pink"}, ValueError, "noise"),
    ({"x0": [0.0], "batch_size": 50}, ValueError, "batch_size"),
    ({"x0": [0.0], "ess": 2.0}, ValueError, "ess"),
    ({"x0": [0.0], "dt": 0.0}, ValueError, "dt"),
    ({"x0": [0.0], "sigma": -1.0}, ValueError, "sigma"),
    ({"x0": [0.0], "workers": 0}, ValueError, "workers"),
    ({"x0": [0.0], "workers": 2, "vectorized": True}, ValueError, "vectorized"),
    ({"x0": [0.0], "x0_spread": -1.0}, ValueError, "x0_spread"),
    ({"x0": [0.0], "backend": "tpu"}, ValueError, "backend"),
    ({"x0": [0.0], "rng": "seed"}, TypeError, "rng"),
])
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        minimize_cbo(lambda x: float(np.sum(x * x)), **kwargs)


def test_bad_objective_outputs():
    with pytest.raises(TypeError, match="callable"):
        minimize_cbo(3.0, bounds=[(0, 1)])
    with pytest.raises(TypeError, match="scalar"):
        minimize_cbo(lambda x: x, bounds=[(0, 1)] * 2, maxiter=2)
    with pytest.raises(ValueError, match=r"shape \(S,\)"):
        minimize_cbo(lambda x: x, bounds=[(0, 1)] * 2, vectorized=True, maxiter=2)


def test_scipy_bounds_accepted():
    from scipy.optimize import Bounds

    a = cbo1(sphere, bounds=Bounds([-1, -2], [1, 2]), vectorized=True, maxiter=5,
                     rng=0)
    b = cbo1(sphere, bounds=[(-1, 1), (-2, 2)], vectorized=True, maxiter=5, rng=0)
    np.testing.assert_array_equal(a.population, b.population)


def test_router():
    kw = dict(n_particles=8, maxiter=20, vectorized=True, rng=3)
    a = solvers.minimize(sphere, None, method="cbo", bounds=[(-2, 2)] * 3, options=kw)
    b = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, **kw)
    np.testing.assert_array_equal(a.x, b.x)
    c = solvers.minimize(sphere, np.ones(3), method="cbo", vectorized=True, maxiter=5, rng=0)
    d = minimize_cbo(sphere, x0=np.ones(3), vectorized=True, maxiter=5, rng=0)
    np.testing.assert_array_equal(c.x, d.x)
    with pytest.raises(TypeError, match="n_partcles"):
        solvers.minimize(sphere, None, method="cbo", bounds=[(-1, 1)], n_partcles=3)
    assert "cbo" in solvers.optimize.available_methods()


# --- workers ------------------------------------------------------------------------------

def test_map_like_workers_match_serial():
    from concurrent.futures import ThreadPoolExecutor

    kw = dict(bounds=[(-2, 2)] * 3, n_particles=6, maxiter=8, rng=9, xtol=0.0)
    f = lambda x: float(np.sum(np.abs(x)))
    serial = cbo1(f, **kw)
    with ThreadPoolExecutor(2) as ex:
        threaded = cbo1(f, workers=ex.map, **kw)

    def futures_map(func, items):  # a map-like returning futures, as Client.map does
        with ThreadPoolExecutor(2) as ex:
            return [ex.submit(func, it) for it in items]

    futured = cbo1(f, workers=futures_map, **kw)
    np.testing.assert_array_equal(threaded.population, serial.population)
    np.testing.assert_array_equal(futured.population, serial.population)


@pytest.mark.slow  # starting spawn processes costs seconds on a loaded 2-core machine
def test_process_pool_workers_match_serial():
    kw = dict(bounds=[(-2, 2)] * 3, n_particles=6, maxiter=3, rng=9, xtol=0.0)
    serial = cbo1(np.linalg.norm, **kw)  # a picklable objective
    pooled = cbo1(np.linalg.norm, workers=2, **kw)
    np.testing.assert_array_equal(pooled.population, serial.population)
    assert pooled.fun == serial.fun


def test_dask_client_map_matches_serial():
    distributed = pytest.importorskip("distributed")
    kw = dict(bounds=[(-2, 2)] * 3, n_particles=6, maxiter=5, rng=9, xtol=0.0)
    f = lambda x: float(np.sum(x * x) + np.sin(3 * x[0]))
    serial = cbo1(f, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dist = cbo1(f, workers=client.map, **kw)
    np.testing.assert_array_equal(dist.population, serial.population)
    assert dist.x.tolist() == serial.x.tolist() and dist.nfev == serial.nfev


# --- success rates on known optima (the bar) -------------------------------------

D = 20
SHIFT = np.random.default_rng(2024).uniform(-2.0, 2.0, D)


def _success(res, shift):
    return int(np.sum(np.max(np.abs(res.x_runs - shift), axis=1) < 0.25))


def _binomial_floor(n, p, alpha=1e-3):
    """Smallest success count that a rate >= p reaches with probability >= 1 - alpha."""
    from scipy.stats import binom

    return int(binom.ppf(alpha, n, p))


@pytest.mark.slow
def test_defaults_solve_shifted_rastrigin_20():
    # 3 seeds x 20 batched runs. The measured rate is about 95 % (README); the bar is the
    # 0.1 % quantile of Binomial(60, 0.93) (49 of 60): a rate of 93 % or more passes it
    # except with probability < 1e-3 over the choice of seeds, and a regression to 80 %
    # fails it with probability 0.55 (one pinned seed at >= 19/20 failed a 95 % rate
    # 26 % of the time)
    ok, n = 0, 0
    for seed in (0, 1, 2):
        res = minimize_cbo(rastrigin, bounds=[(-3, 3)] * D, args=(SHIFT,), vectorized=True,
                           n_runs=20, rng=seed)
        assert res.nfev / 20 <= 80_000
        ok += _success(res, SHIFT)
        n += 20
    assert ok >= _binomial_floor(n, 0.93)


@pytest.mark.slow
def test_defaults_solve_shifted_ackley_20():
    res = minimize_cbo(ackley, bounds=[(-3, 3)] * D, args=(SHIFT,), vectorized=True,
                       n_runs=20, rng=1)
    assert res.nfev / 20 <= 80_000
    assert _success(res, SHIFT) == 20


def test_progress_only_when_asked(capsys):
    cbo1(sphere, bounds=[(-1, 1)] * 2, vectorized=True, maxiter=5, rng=0)
    quiet = capsys.readouterr()
    assert quiet.out == "" and quiet.err == ""
    cbo1(sphere, bounds=[(-1, 1)] * 2, vectorized=True, maxiter=5, rng=0,
                 progress=True)
    loud = capsys.readouterr()  # the bar counts evaluations: 5 steps of 20 particles
    assert loud.out == "" and "cbo" in loud.err and "100/100" in loud.err


def test_polish_respects_maxfev():
    res = minimize_cbo(sphere, bounds=[(-3, 3)] * 3, vectorized=True, maxiter=20, rng=0,
                       polish=True, maxfev=420)
    # L-BFGS-B may overshoot its maxfun by one gradient (d + 1 evaluations)
    assert res.nfev <= 420 + 4


def test_default_budget_grows_with_dimension():
    from solvers.optimize._cbo_config import configure, OPTION_NAMES
    import inspect

    defaults = {k: p.default for k, p in inspect.signature(minimize_cbo).parameters.items()
                if k in OPTION_NAMES}
    assert configure(defaults, 3).maxfev == 80_000
    assert configure(defaults, 25).maxfev == 100_000
    assert configure(dict(defaults, n_runs=3), 25).maxfev == 300_000
    assert configure(dict(defaults, maxiter=50), 25).maxfev is None
