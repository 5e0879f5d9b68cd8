"""workers= for COSMO restarts and the bootstrap: serial, process pool and dask agree."""
import numpy as np
import pytest

from solvers.dag import learn_dag, simulate_data, auroc
from solvers.dag.bootstrap import bootstrap
from solvers._lib.parallel import parallel_map

X6 = simulate_data(d=6, n=200, k=1, rng=2).X
OPTS = dict(maxiter=200, noise_variance="equal")


def test_restarts_do_not_depend_on_workers():
    a = learn_dag(X6, rng=1, restarts=3, **OPTS)
    b = learn_dag(X6, rng=1, restarts=3, workers=2, **OPTS)
    np.testing.assert_array_equal(a.W, b.W)
    assert a.restart_bics == b.restart_bics and a.nit == 600
    # restart 0 is the single fit with the same rng: the best is no worse
    single = learn_dag(X6, rng=1, **OPTS)
    assert min(a.restart_bics) <= min(single.bic.values()) + 1e-12
    assert a.restart_bics[0] == pytest.approx(min(single.bic.values()), rel=1e-12)


def test_bootstrap_serial_equals_process_pool_and_is_reproducible():
    a = bootstrap(X6, n_bootstrap=4, rng=5, **OPTS)
    b = bootstrap(X6, n_bootstrap=4, rng=5, workers=2, **OPTS)
    c = bootstrap(X6, n_bootstrap=4, rng=np.random.default_rng(5), **OPTS)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    np.testing.assert_array_equal(a.frequencies, c.frequencies)
    assert a.frequencies.shape == (6, 6) and set(np.unique(a.frequencies * 4)) <= set(range(5))
    G = a.to_networkx(threshold=0.5)
    assert G.number_of_edges() == int((a.frequencies >= 0.5).sum())


@pytest.mark.slow
def test_bootstrap_on_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    ref = bootstrap(X6, n_bootstrap=4, rng=5, **OPTS)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = bootstrap(X6, n_bootstrap=4, rng=5, workers=client.map, **OPTS)
    np.testing.assert_array_equal(ref.frequencies, got.frequencies)


def test_bootstrap_frequencies_rank_true_edges():
    X, W, B = simulate_data(d=6, n=300, k=1, rng=9, standardize=True)
    res = bootstrap(X, n_bootstrap=6, rng=0, maxiter=300)
    # skeleton frequencies separate true adjacencies from non-adjacencies
    S = res.frequencies + res.frequencies.T
    assert auroc(B | B.T, S) > 0.9


def test_workers_validation():
    with pytest.raises(ValueError, match="workers"):
        parallel_map(abs, [1, 2], workers=0)
    with pytest.raises(TypeError, match="workers"):
        parallel_map(abs, [1, 2], workers="two")
    assert parallel_map(abs, [-1, -2], workers=lambda f, xs: map(f, xs)) == [1, 2]
    with pytest.raises(TypeError, match="rng"):
        bootstrap(X6, n_bootstrap=2, rng=0, **dict(OPTS, rng=1))
