"""Memory retrieval over dask chunks of queries (issue 18): lazy, and the same result as
the serial batched retrieval on a LocalCluster(n_workers=2, threads_per_worker=1)."""
import numpy as np
import pytest

from solvers import GaussianMemory, VectorMemory
from solvers.memory import synthetic_patterns, perturb

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _problem(commuting, N=20, d=3, Q=23, seed=0):
    m, S = synthetic_patterns(N, d, commuting=commuting, eig_range=(0.3, 2.0), rng=seed)
    m = 3.0 * m
    idx = np.random.default_rng(seed).integers(0, N, Q)
    qm, qS = perturb(m[idx], S[idx], 0.8, rng=seed + 1)
    return m, S, qm, qS


FIELDS = ("means", "covs", "nit", "converged", "index", "fun")


@pytest.mark.slow  # a 2-process cluster: ~10 s of worker start-up and imports
@pytest.mark.parametrize("commuting", [False, True])
def test_gaussian_retrieval_on_a_cluster_equals_serial(client, commuting):
    m, S, qm, qS = _problem(commuting)
    mem = GaussianMemory(m, S, beta=1.0)
    serial = mem.retrieve(qm, qS, maxiter=30)
    lazy = mem.retrieve(da.from_array(qm, chunks=(7, -1)), da.from_array(qS, chunks=(5, 2, 3)),
                        maxiter=30)
    assert all(isinstance(lazy[k], da.Array) for k in FIELDS)  # nothing computed yet
    got = dict(zip(FIELDS + ("status",), client.compute([lazy[k] for k in FIELDS]
                                                        + [lazy.status], sync=True)))
    for k in FIELDS:
        ref = np.asarray(serial[k])
        assert got[k].shape == ref.shape and got[k].dtype == ref.dtype
        if ref.dtype.kind == "f":
            np.testing.assert_allclose(got[k], ref, rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_array_equal(got[k], ref)
    assert int(got["status"]) == serial.status


@pytest.mark.slow
def test_vector_retrieval_on_a_cluster_equals_serial(client):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5)) * 3.0
    q = X[rng.integers(0, 30, 40)] + 0.5 * rng.normal(size=(40, 5))
    mem = VectorMemory(X, beta=1.0)
    serial = mem.retrieve(q)
    lazy = mem.retrieve(da.from_array(q, chunks=(9, 5)))
    x, index, success = client.compute([lazy.x, lazy.index, lazy.success], sync=True)
    np.testing.assert_allclose(x, serial.x, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(index, serial.index)
    assert bool(success) == serial.success


def test_dask_queries_without_a_cluster_and_with_numpy_covs():
    m, S, qm, qS = _problem(False, Q=9)
    mem = GaussianMemory(m, S, beta=1.0)
    lazy = mem.retrieve(da.from_array(qm, chunks=4), qS, maxiter=20)  # covs stay numpy
    np.testing.assert_allclose(lazy.means.compute(), mem.retrieve(qm, qS, maxiter=20).means,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="callback"):
        mem.retrieve(da.from_array(qm, chunks=4), qS, callback=lambda r: None)
