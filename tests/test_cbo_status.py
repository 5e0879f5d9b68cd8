"""CBO's status table (each end reached on purpose, for every ``restarts`` setting), its
stopping rules, identical results whatever ``workers`` says, and the output checks."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from solvers import minimize_cbo
from solvers._lib.results import Status


def sphere(x):
    return np.sum((x - 0.3) ** 2, axis=0)


def rastrigin(x):
    return 10.0 * x.shape[0] + np.sum(x * x - 10.0 * np.cos(2 * np.pi * x), axis=0)


def point_objective(x):  # top level: picklable for process pools and dask
    return float(np.sum(np.abs(x - 0.25)) + 0.1 * np.sum(np.cos(5 * x)))


def _check(res, status, success):
    assert res.status == int(status) and res.success is success, res.message
    assert f"{res.nfev} evaluations" in res.message


# --- the status table: each end on purpose ---------------------------------------------

@pytest.mark.parametrize("restarts", ["ipop", False])
def test_converged_ends_with_success(restarts):
    res = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, vectorized=True, restarts=restarts,
                       rng=0)
    _check(res, Status.CONVERGED, True)
    assert res.fun < 1e-12 and res.nfev < 20 * max(4000, 600) / 4  # far below the cap
    if restarts:
        assert "two starts" in res.message and res.n_restarts >= 1
    else:
        assert res.n_restarts == 0


@pytest.mark.parametrize("restarts", ["ipop", False])
def test_target_ends_with_success(restarts):
    res = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, vectorized=True, f_target=1e-3,
                       restarts=restarts, polish=False, rng=0)
    _check(res, Status.TARGET, True)
    assert res.fun <= 1e-3


@pytest.mark.parametrize("restarts", ["ipop", False])
def test_maxfev_ends_without_success(restarts):
    # Rastrigin-8: no stopping rule fires within 3000 evaluations
    res = minimize_cbo(rastrigin, bounds=[(-5, 5)] * 8, vectorized=True, maxfev=3000,
                       restarts=restarts, rng=0)
    _check(res, Status.MAXFEV, False)
    assert res.nfev <= 3000 and "maxfev" in res.message


@pytest.mark.parametrize("restarts", ["ipop", False])
def test_maxiter_ends_without_success(restarts):
    res = minimize_cbo(rastrigin, bounds=[(-5, 5)] * 8, vectorized=True, maxiter=10,
                       restarts=restarts, rng=0)
    _check(res, Status.MAXITER, False)
    assert res.nit == 10


@pytest.mark.parametrize("restarts", ["ipop", False])
def test_callback_ends_without_success(restarts):
    def stop(r):
        if r.nit == 4:
            raise StopIteration

    res = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, vectorized=True, callback=stop,
                       restarts=restarts, rng=0)
    _check(res, Status.CALLBACK, False)
    assert res.nit == 4


@pytest.mark.parametrize("restarts", ["ipop", False])
def test_nonfinite_ends_without_success(restarts):
    res = minimize_cbo(lambda x: np.full(x.shape[1], np.nan), bounds=[(-1, 1)] * 2,
                       vectorized=True, maxfev=400, restarts=restarts, rng=0)
    _check(res, Status.NONFINITE, False)
    assert "no finite" in res.message


def test_spend_budget_runs_to_maxfev():
    res = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, vectorized=True, maxfev=20_000,
                       spend_budget=True, rng=0)
    _check(res, Status.MAXFEV, False)
    assert res.nfev > 18_000 and res.fun < 1e-12 and res.n_restarts > 3


def test_symmetric_local_minima_do_not_confirm_each_other():
    # Rastrigin's local minima come in symmetric sets of equal value: two starts that
    # end in different ones must not count as the same answer
    res = minimize_cbo(rastrigin, bounds=[(-5, 5)] * 4, vectorized=True, maxfev=60_000,
                       rng=3)
    assert res.fun < 1e-10 or res.status == Status.MAXFEV


def test_unimodal_run_stops_far_below_the_cap():
    # a rotated ellipsoid (condition 1e4, d = 8): converged, 1e-10, and a small share of
    # the default cap of 80 000 evaluations
    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(8, 8)))
    scale = 1e4 ** (np.arange(8) / 7)

    def ellipsoid(x):
        z = Q @ (x - 0.5)
        return np.sum(scale[:, None] * z * z, axis=0)

    for seed in range(3):
        res = minimize_cbo(ellipsoid, bounds=[(-5, 5)] * 8, vectorized=True, rng=seed)
        _check(res, Status.CONVERGED, True)
        assert res.fun < 1e-10 and res.nfev < 20_000


def test_progress_total_is_the_budget_with_the_refinement(capsys):
    res = minimize_cbo(sphere, bounds=[(-2, 2)] * 3, vectorized=True, maxfev=6000,
                       spend_budget=True, progress=True, rng=0)
    err = capsys.readouterr().err
    assert f"{res.nfev}/6000" in err  # every evaluation counted, the polish's included


# --- workers never change the result -----------------------------------------------------

def _same(a, b):
    assert set(a) == set(b)
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            assert a[k] == b[k], k


RUNS = dict(bounds=[(-2, 2)] * 3, n_runs=2, maxfev=3_000, rng=12)


@pytest.mark.parametrize("independent", [False, True])
def test_workers_give_identical_results(independent):
    serial = minimize_cbo(point_objective, independent_runs=independent, **RUNS)
    assert serial.n_restarts >= 1
    with ThreadPoolExecutor(2) as ex:
        threaded = minimize_cbo(point_objective, independent_runs=independent,
                                workers=ex.map, **RUNS)
    pooled = minimize_cbo(point_objective, independent_runs=independent, workers=2, **RUNS)
    _same(threaded, serial)
    _same(pooled, serial)


@pytest.mark.slow  # starting a process cluster costs seconds on a loaded 2-core machine
def test_dask_local_cluster_gives_identical_results():
    distributed = pytest.importorskip("distributed")
    serial = [minimize_cbo(point_objective, independent_runs=ind, **RUNS)
              for ind in (False, True)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dist = [minimize_cbo(point_objective, independent_runs=ind, workers=client.map,
                             **RUNS) for ind in (False, True)]
    for a, b in zip(dist, serial):
        _same(a, b)


# --- output and option checks -------------------------------------------------------------

@pytest.mark.parametrize("bad", ["1.0", 1 + 2j, None, [1.0, 2.0], np.array([1.0, 2.0])])
def test_fun_must_return_a_real_scalar(bad):
    with pytest.raises(TypeError, match="real scalar"):
        minimize_cbo(lambda x: bad, bounds=[(0, 1)] * 2, maxiter=2, rng=0)


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.array([1j, 2j])])
def test_vectorized_fun_must_return_reals(bad):
    with pytest.raises(TypeError, match="real numbers"):
        minimize_cbo(lambda x: bad[:x.shape[1]], bounds=[(0, 1)] * 2, vectorized=True,
                     n_particles=2, maxiter=2, rng=0)


def test_real_scalars_of_every_kind_are_accepted():
    for ret in (lambda x: np.float32(np.sum(x)), lambda x: np.array([np.sum(x)]),
                lambda x: int(x[0] > 0.5), lambda x: np.sum(x) > 1):
        res = minimize_cbo(ret, bounds=[(0, 1)] * 2, maxiter=3, rng=0)
        assert np.isfinite(res.fun)


@pytest.mark.parametrize("target", [np.nan, np.inf, -np.inf])
def test_f_target_must_be_finite(target):
    with pytest.raises(ValueError, match="f_target"):
        minimize_cbo(sphere, bounds=[(0, 1)] * 2, vectorized=True, f_target=target)


def test_f_target_must_be_a_number():
    with pytest.raises(TypeError, match="f_target"):
        minimize_cbo(sphere, bounds=[(0, 1)] * 2, vectorized=True, f_target="0")


def test_independent_runs_reject_a_callback():
    with pytest.raises(ValueError, match="callback"):
        minimize_cbo(point_objective, bounds=[(0, 1)] * 2, n_runs=2, independent_runs=True,
                     callback=lambda r: None)
