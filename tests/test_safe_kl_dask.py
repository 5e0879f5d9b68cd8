"""Safe-KL on partitioned (dask) data: minibatches read partition by partition (issue 18).

What is guaranteed (see ``solvers/lse/_minibatch.py``): one partition gives exactly the
in-memory run with the same ``rng``; any partitioning gives a result independent of the
scheduler and of the number of workers; every row is used at most once per epoch.
"""
import subprocess
import sys

import numpy as np
import pytest

from solvers import minimize_logsumexp
from solvers.lse import dro_dataset, kl_dro

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _problem(n=1500, seed=7):
    a = np.random.default_rng(seed).normal(1.0, 1.0, size=n)

    def phi(x, batch):
        return -x[0] * batch + x[0] ** 2 / 2, (x[0] - batch)[:, None]

    return a, phi


KW = dict(rho=0.01, batch_size=32, epochs=3, lr=0.05, rng=5)


def _same(r1, r2):
    """Identical iterates and history; ``fun`` equal to rounding (the partitioned path's
    end-of-run pass merges (max, sum) partials chunk by chunk instead of one reduction)."""
    np.testing.assert_array_equal(r1.x, r2.x)
    np.testing.assert_array_equal(r1.x_last, r2.x_last)
    assert r1.s == r2.s and r1.nit == r2.nit and r1.history == r2.history
    assert r1.fun == pytest.approx(r2.fun, rel=1e-12, abs=1e-14)


def test_one_partition_is_the_in_memory_run_exactly():
    a, phi = _problem()
    ref = minimize_logsumexp(phi, np.zeros(1), a, **KW)
    got = minimize_logsumexp(phi, np.zeros(1), da.from_array(a, chunks=-1), **KW)
    _same(got, ref)
    for key in ("lme", "kappa", "rho_kappa"):
        assert got.diagnostics[key] == pytest.approx(ref.diagnostics[key], rel=1e-12)
    assert got.diagnostics["n_terms"] == ref.diagnostics["n_terms"] == a.size
    # streaming: no value per term is kept, so no surrogate / gap / capped mass
    assert got.diagnostics["gap"] is None and ref.diagnostics["gap"] >= 0


def test_epochs_use_each_row_at_most_once_and_partitions_are_shuffled():
    n, B = 1000, 32
    rows = np.arange(n, dtype=np.float64)
    seen = []

    def phi(x, batch):
        seen.append(batch.copy())
        return 0.0 * batch + x[0], np.ones((batch.shape[0], 1))

    res = minimize_logsumexp(phi, np.zeros(1), da.from_array(rows, chunks=130), rng=2,
                             batch_size=B, epochs=3, diagnose=False)
    steps = n // B
    assert res.nit == 3 * steps and len(seen) == 3 * steps
    firsts = []
    for e in range(3):
        epoch = np.concatenate(seen[e * steps:(e + 1) * steps])
        assert epoch.size == steps * B and np.unique(epoch).size == epoch.size
        firsts.append(int(epoch[0]) // 130)
    assert len(set(firsts)) > 1 or firsts[0] != 0  # the partition order is drawn
    # rows of one partition are contiguous in the stream (read partition by partition)
    stream = np.concatenate(seen[:steps]).astype(int) // 130
    assert np.count_nonzero(np.diff(stream)) <= 130 and len(set(stream.tolist())) == 8


def test_scheduler_does_not_change_the_result():
    a, phi = _problem()
    data = da.from_array(a, chunks=200)
    with dask.config.set(scheduler="synchronous"):
        ref = minimize_logsumexp(phi, np.zeros(1), data, **KW)
    with dask.config.set(scheduler="threads"):
        got = minimize_logsumexp(phi, np.zeros(1), data, **KW)
    _same(got, ref)
    exact_lme = float(np.log(np.mean(np.exp(phi(ref.x, a)[0]))))
    assert ref.diagnostics["lme"] == pytest.approx(exact_lme, rel=1e-12)


@pytest.mark.slow
def test_local_cluster_gives_the_serial_result():
    distributed = pytest.importorskip("distributed")
    X, y = dro_dataset(2400, 4, "logistic", rng=3)
    Xd, yd = da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500)
    kw = dict(lam=0.5, loss="logistic", epochs=2, rng=1)
    with dask.config.set(scheduler="synchronous"):
        ref = kl_dro(Xd, yd, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        got = kl_dro(Xd, yd, **kw)
    _same(got, ref)
    exact = kl_dro(X, y, lam=0.5, loss="logistic", method="lbfgs")
    assert got.success and (got.fun - exact.fun) < 0.02 * exact.fun


def test_kl_dro_on_dask_matches_memory_with_one_partition_and_checks_lazily():
    X, y = dro_dataset(1200, 3, "logistic", rng=4)
    kw = dict(lam=0.5, loss="logistic", epochs=2, rng=1)
    ref = kl_dro(X, (y + 1) / 2, **kw)
    got = kl_dro(da.from_array(X, chunks=(-1, -1)), da.from_array((y + 1) / 2, chunks=-1),
                 **kw)
    _same(got, ref)
    assert got.fun == pytest.approx(ref.fun, rel=1e-12)
    bad = y.copy()
    bad[1100] = 2.0  # in the last partition only: found when that partition is read
    with pytest.raises(ValueError, match="^y must hold binary labels"):
        kl_dro(da.from_array(X, chunks=(300, -1)), da.from_array(bad, chunks=300), **kw)
    with pytest.raises(ValueError, match="diagnose"):
        kl_dro(da.from_array(X), da.from_array(y), lam=0.5, options={"diagnose": False})
    with pytest.raises(ValueError, match="lbfgs"):
        kl_dro(da.from_array(X), da.from_array(y), lam=0.5, method="lbfgs")
    with pytest.raises(ValueError, match="same partitions"):
        minimize_logsumexp(lambda x, b: b, np.zeros(3), (da.from_array(X, chunks=(300, -1)),
                                                          da.from_array(y, chunks=400)),
                           maxiter=2)
    with pytest.raises(TypeError, match="^X and y: give only dask"):
        kl_dro(da.from_array(X), y, lam=0.5)
    with pytest.raises(TypeError, match="only dask"):
        minimize_logsumexp(lambda x, b: b, np.zeros(3), (da.from_array(X), y), maxiter=2)


def test_dask_dataframe():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = dro_dataset(1000, 3, "squared", rng=6)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    kw = dict(lam=20.0, epochs=2, rng=2)
    ref = kl_dro(X, y, **kw)
    one = kl_dro(dd.from_pandas(frame, npartitions=1), dd.from_pandas(pd.Series(y),
                                                                      npartitions=1), **kw)
    _same(one, ref)
    many = kl_dro(dd.from_pandas(frame, npartitions=4),
                  dd.from_pandas(pd.Series(y), npartitions=4), **kw)
    assert many.success and abs(many.fun - ref.fun) < 0.02 * ref.fun


def test_dask_is_imported_only_when_dask_data_is_passed():
    code = ("import sys, numpy as np; from solvers import minimize_logsumexp; "
            "a = np.linspace(0, 1, 200); "
            "minimize_logsumexp(lambda x, b: (x[0] * b, b[:, None]), np.zeros(1), a, "
            "maxiter=5, batch_size=8, rng=0); "
            "print('dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_heavy_tailed_regime_is_flagged_on_partitions_too():
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(3000, 3)), np.ones(3000)]
    y = 100 * (X @ np.array([1.0, -2.0, 0.5, 1.0]) + rng.normal(size=3000))
    res = kl_dro(da.from_array(X, chunks=(700, -1)), da.from_array(y, chunks=700),
                 lam=0.01, epochs=2, rng=0)
    exact = kl_dro(X, y, lam=0.01, method="lbfgs")
    assert res.fun > 2 * exact.fun and not res.success
    assert "rho * kappa" in res.message and res.diagnostics["rho_kappa"] >= 1
