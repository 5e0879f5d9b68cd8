"""minimize_qubo / pareto_sweep: callback contract, maxiter, and workers= (issues 14, 18).

Results must not depend on how the work is split: read ``r`` of the annealer draws from
stream ``r`` of the counter-based generator, and weight ``i`` of a sweep from the ``i``-th
generator spawned from ``rng``; serial, a process pool and a dask cluster agree exactly.
"""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from solvers import minimize_qubo
from solvers._lib.namespace import array_namespace
from solvers._lib.results import Status
from solvers.qubo import pareto_sweep
from tests.conftest import to_numpy

RNG = np.random.default_rng(77)
Q12 = RNG.normal(size=(12, 12))
C12 = RNG.normal(size=12)


def energy(Q, c, X):
    X = np.asarray(X, dtype=float)
    return np.einsum("...i,ij,...j->...", X, Q, X) + X @ c


def test_callback_stop_is_status_99_with_arrays_of_the_input_namespace(xp):
    seen = []

    def callback(res):
        seen.append(res)
        if len(seen) == 3:
            raise StopIteration

    Q = xp.asarray(Q12)
    res = minimize_qubo(Q, xp.asarray(C12), n_reads=4, maxiter=50, rng=0, callback=callback)
    assert len(seen) == 3 and [s.nit for s in seen] == [1, 2, 3]
    assert res.success is False and res.status == Status.CALLBACK == 99
    assert res.nit == 3 and res.nfev == 4 * 3 * 12
    for s in seen:
        assert array_namespace(s.x) is array_namespace(Q)
        # fun comes from the incremental fields: it equals the energy of x
        assert s.fun == pytest.approx(float(energy(Q12, C12, to_numpy(s.x))), abs=1e-9)
        assert s.fun == pytest.approx(float(np.min(to_numpy(s.energies))), abs=1e-12)
    # stopped runs are not polished: the samples are the sweep-3 states
    np.testing.assert_allclose(to_numpy(res.energies),
                               energy(Q12, C12, to_numpy(res.samples)), atol=1e-9)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_callback_that_never_stops_changes_nothing(backend):
    calls = []
    kw = dict(n_reads=5, maxiter=40, rng=3, backend=backend)
    a = minimize_qubo(Q12, C12, **kw)
    b = minimize_qubo(Q12, C12, callback=lambda r: calls.append(r.nit), **kw)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert calls == list(range(1, 41))
    assert a.success and b.success and a.status == b.status == Status.MAXITER
    assert a.nit == 40


def test_spin_callback_reports_spins():
    seen = []
    minimize_qubo(Q12, C12, vartype="spin", n_reads=2, maxiter=3, rng=0,
                  callback=lambda r: seen.append(r.x))
    assert all(set(np.unique(x)) <= {-1, 1} for x in seen)


def test_maxiter_is_n_sweeps():
    a = minimize_qubo(Q12, n_reads=3, maxiter=30, rng=1)
    b = minimize_qubo(Q12, n_reads=3, n_sweeps=30, rng=1)
    c = minimize_qubo(Q12, n_reads=3, maxiter=30, n_sweeps=30, rng=1)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.samples, c.samples)
    assert a.nit == 30
    assert minimize_qubo(Q12, n_reads=2, rng=1).nit == 1000  # default
    with pytest.raises(ValueError, match="maxiter and n_sweeps"):
        minimize_qubo(Q12, maxiter=30, n_sweeps=31)
    with pytest.raises(ValueError, match="maxiter"):
        minimize_qubo(Q12, maxiter=0)
    with pytest.raises(TypeError, match="maxiter"):
        minimize_qubo(Q12, maxiter=2.5)


def test_router_passes_maxiter_and_callback():
    import solvers

    seen = []
    res = solvers.minimize((Q12, C12), method="anneal", maxiter=5, n_reads=2, rng=0,
                           callback=lambda r: seen.append(r.nit))
    assert seen == [1, 2, 3, 4, 5] and res.nit == 5


@pytest.mark.parametrize("sparse", [False, True])
def test_reads_split_any_way_give_the_same_samples(sparse):
    """One piece per read through a plain map, or k pieces: identical to one run."""
    import scipy.sparse as sps

    from solvers.qubo import anneal

    Q = Q12 * (np.abs(Q12) > 1.2) if sparse else Q12
    Qin = sps.csr_matrix(Q) if sparse else Q
    kw = dict(n_reads=27, maxiter=60, rng=11)
    ref = minimize_qubo(Qin, C12, **kw)
    by_read = minimize_qubo(Qin, C12, workers=map, **kw)
    np.testing.assert_array_equal(ref.samples, by_read.samples)
    np.testing.assert_array_equal(ref.energies, by_read.energies)
    assert ref.fun == by_read.fun and by_read.status == Status.MAXITER and by_read.success
    for k in (2, 3):  # the int-workers split, run through a plain map
        orig = anneal._n_pieces
        try:
            anneal._n_pieces = lambda workers, n_reads, k=k: k
            got = minimize_qubo(Qin, C12, workers=map, **kw)
        finally:
            anneal._n_pieces = orig
        np.testing.assert_array_equal(ref.samples, got.samples)


@pytest.mark.parametrize("form", ["numba", "numba-csr", "generic", "strict"])
def test_empty_and_single_variable_problems(form):
    """n = 0 and n = 1 on every chains implementation (the kernels' edge cases)."""
    import array_api_strict
    import scipy.sparse as sps

    for Q, want_x, want_fun in ((np.zeros((0, 0)), [], 0.0), (np.array([[2.0]]), [0], 0.0),
                                (np.array([[-1.0]]), [1], -1.0)):
        kw = dict(n_reads=3, maxiter=5, rng=0)
        if form == "numba-csr":
            res = minimize_qubo(sps.csr_matrix(Q), backend="numba", **kw)
        elif form == "strict":
            res = minimize_qubo(array_api_strict.asarray(Q), **kw)
        else:
            res = minimize_qubo(Q, backend="numba" if form == "numba" else "numpy", **kw)
        assert to_numpy(res.x).tolist() == want_x and res.fun == want_fun
        assert tuple(res.samples.shape) == (3, Q.shape[0]) and res.success


def test_bad_callback_schedule_and_weights_name_the_argument():
    with pytest.raises(TypeError, match="callback"):
        minimize_qubo(Q12, maxiter=2, callback=3)
    with pytest.raises(TypeError, match="beta_schedule"):
        minimize_qubo(Q12, beta_schedule=["hot", "cold"])
    objectives = [np.eye(3), -np.eye(3)]
    with pytest.raises(ValueError, match="weights must be >= 0"):
        pareto_sweep(objectives, weights=[[-1.0, 2.0]], maxiter=2)
    with pytest.raises(TypeError, match="weights"):
        pareto_sweep(objectives, weights=[[1j, 1.0]], maxiter=2)
    with pytest.raises((TypeError, ValueError), match="penalty_scale"):
        pareto_sweep(objectives, weights=3, penalty=np.eye(3), penalty_scale=np.inf)
    from solvers.qubo import scalarize

    with pytest.raises(TypeError, match="weights"):
        scalarize(objectives, [1j, 1.0])


def test_number_of_pieces():
    import os

    from solvers.qubo.anneal import _n_pieces

    # pieces are whole groups of 8 reads
    assert _n_pieces(3, 40) == 3 and _n_pieces(8, 17) == 3 and _n_pieces(2, 1) == 1
    assert _n_pieces(-1, 10_000) == (os.cpu_count() or 1)
    assert _n_pieces(map, 20) == 3  # a map-like callable gets one piece per group


def test_pareto_sweep_workers_and_spawned_seeds():
    from solvers.qubo import scalarize, scale_qubos

    f1 = (np.zeros((10, 10)), -np.arange(1.0, 11.0))
    f2 = RNG.normal(size=(10, 10))
    kw = dict(weights=6, n_reads=3, maxiter=40)
    a = pareto_sweep([f1, f2], rng=5, **kw)
    b = pareto_sweep([f1, f2], rng=5, workers=map, **kw)
    np.testing.assert_array_equal(a.solutions, b.solutions)
    assert a.hypervolume == b.hypervolume
    # weight i is solved with the i-th generator spawned from rng, whatever ran before it
    seeds = np.random.default_rng(5).spawn(6)
    scaled, _ = scale_qubos([f1, f2])
    for i in (0, 3, 5):
        Qw, cw, ow = scalarize(scaled, np.maximum(a.weights[i], 1e-3))
        x = minimize_qubo(Qw, cw, ow, rng=seeds[i], n_reads=3, maxiter=40).x
        np.testing.assert_array_equal(a.solutions[i], x)


@pytest.mark.parametrize("workers, kwargs, exc, match", [
    (0, {}, ValueError, "workers"),
    (-2, {}, ValueError, "workers"),
    ("2", {}, TypeError, "workers"),
    (2.0, {}, TypeError, "workers"),
    (True, {}, TypeError, "workers"),
    (map, {"callback": lambda r: None}, ValueError, "callback"),
    (map, {"backend": "numpy"}, ValueError, "Numba"),
])
def test_bad_workers(workers, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        minimize_qubo(Q12, maxiter=2, workers=workers, **kwargs)


def test_pareto_sweep_rejects_workers_in_solver_options():
    objectives = [np.eye(3), -np.eye(3)]
    with pytest.raises(TypeError, match="workers"):
        pareto_sweep(objectives, weights=3, n_reads=2, maxiter=5, callback=print)
    with pytest.raises(ValueError, match="workers"):
        pareto_sweep(objectives, weights=3, workers=0)


@pytest.mark.slow
def test_process_pool_matches_serial():
    kw = dict(n_reads=6, maxiter=80, rng=4)
    ref = minimize_qubo(Q12, C12, **kw)
    got = minimize_qubo(Q12, C12, workers=2, **kw)
    np.testing.assert_array_equal(ref.samples, got.samples)
    f = [(np.zeros((8, 8)), -np.arange(1.0, 9.0)), RNG.normal(size=(8, 8))]
    a = pareto_sweep(f, weights=4, n_reads=2, maxiter=30, rng=2)
    b = pareto_sweep(f, weights=4, n_reads=2, maxiter=30, rng=2, workers=2)
    np.testing.assert_array_equal(a.solutions, b.solutions)


@pytest.mark.slow
def test_dask_local_cluster_matches_serial():
    distributed = pytest.importorskip("dask.distributed")
    kw = dict(n_reads=6, maxiter=80, rng=4)
    ref = minimize_qubo(Q12, C12, **kw)
    f = [(np.zeros((8, 8)), -np.arange(1.0, 9.0)), RNG.normal(size=(8, 8))]
    a = pareto_sweep(f, weights=4, n_reads=2, maxiter=30, rng=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        got = minimize_qubo(Q12, C12, workers=client.map, **kw)
        b = pareto_sweep(f, weights=4, n_reads=2, maxiter=30, rng=2, workers=client.map)
    np.testing.assert_array_equal(ref.samples, got.samples)
    np.testing.assert_array_equal(a.solutions, b.solutions)


@pytest.mark.slow
def test_unguarded_script_fails_fast_with_a_clear_message(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        from solvers import minimize_qubo
        minimize_qubo(np.eye(4), n_reads=4, maxiter=5, rng=0, workers=2)
        print("finished")
    """))
    root = pathlib.Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=env)
    assert run.returncode != 0
    assert "__main__" in run.stderr and "RuntimeError" in run.stderr
