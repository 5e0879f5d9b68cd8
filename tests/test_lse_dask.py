"""Log-sum-exp on dask arrays (issue 18): lazy results, equal to numpy to 1e-12, on a
LocalCluster as well as the local scheduler. Skipped when dask is missing."""
import numpy as np
import pytest
from scipy.special import logsumexp as scipy_lse

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

from solvers import logsumexp, softmax, log_softmax, logsumexp_matmul  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _data(rng, shape, special=False):
    a = rng.normal(scale=20, size=shape)
    if special:
        a[1, 3] = np.nan
        a[2, :] = -np.inf
        a[4, 5] = np.inf
    return a


class _NoCompute:
    """Fail if anything is computed while the library builds the graph."""

    def __call__(self, dsk, keys, **kwargs):
        raise AssertionError("the library computed a dask graph")


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("weights", [False, True])
def test_logsumexp_is_lazy_and_matches_numpy(axis, weights):
    rng = np.random.default_rng(21)
    a = _data(rng, (60, 45), special=True)
    b = rng.normal(size=a.shape) if weights else None
    if weights:
        b[rng.random(a.shape) < 0.1] = 0.0
    A = da.from_array(a, chunks=(13, 10))
    B = None if b is None else da.from_array(b, chunks=(7, 45))
    with dask.config.set(scheduler=_NoCompute()):
        got, sgn = logsumexp(A, axis=axis, b=B, return_sign=True)
    assert isinstance(got, da.Array) and isinstance(sgn, da.Array)
    with np.errstate(all="ignore"):
        want, want_sgn = scipy_lse(a, axis=axis, b=b, return_sign=True)
    got, sgn = dask.compute(got, sgn, scheduler="sync")
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(sgn, want_sgn)


def test_local_cluster_matches_serial(client):
    rng = np.random.default_rng(22)
    a = _data(rng, (400, 300))
    A = da.from_array(a, chunks=(50, 70))
    for axis in (0, 1, None):
        got = logsumexp(A, axis=axis).compute()          # the client's cluster
        serial = logsumexp(a, axis=axis)
        np.testing.assert_allclose(got, serial, rtol=1e-12)
    np.testing.assert_allclose(softmax(A, axis=1).compute(), softmax(a, axis=1),
                               rtol=1e-12, atol=1e-300)
    # log_softmax near 0 carries an absolute error of eps * |x| in both paths
    np.testing.assert_allclose(log_softmax(A, axis=1).compute(), log_softmax(a, axis=1),
                               rtol=1e-12, atol=1e-15 * np.abs(a).max())


@pytest.mark.parametrize("log_b", [False, True])
def test_logsumexp_matmul_on_cluster(client, log_b):
    rng = np.random.default_rng(23)
    a, b = rng.normal(size=(5000, 8)) / 2, rng.normal(size=(8, 300)) / 2
    lb = rng.normal(size=300) if log_b else None
    A = da.from_array(a, chunks=(700, 8))
    with dask.config.set(scheduler=_NoCompute()):
        out = logsumexp_matmul(A, da.from_array(b, chunks=(8, 100)),
                               log_b=None if lb is None else da.from_array(lb), block_size=64)
    assert isinstance(out, da.Array) and out.chunks[0][0] == 700
    want = scipy_lse(a @ b + (0 if lb is None else lb), axis=1)
    np.testing.assert_allclose(out.compute(), want, rtol=1e-12)
    np.testing.assert_allclose(logsumexp_matmul(A, b).compute(), logsumexp_matmul(a, b),
                               rtol=1e-12)


def test_dask_not_imported_for_numpy_input():
    import subprocess
    import sys

    code = ("import sys, numpy as np, solvers; solvers.logsumexp(np.ones(3)); "
            "solvers.logsumexp_matmul(np.ones((2, 2)), np.ones((2, 2))); "
            "print('dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
