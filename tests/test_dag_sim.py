"""Simulators: edge counts, weight ranges, SEM moments against the closed form."""
import networkx as nx
import numpy as np
import pytest

from solvers.dag import (simulate_dag, simulate_weights, simulate_linear_sem, simulate_data,
                         is_dag, to_networkx, topological_order)


@pytest.mark.parametrize("graph_type", ["ER", "SF"])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("d", [1, 2, 10, 40])
def test_random_dags_are_acyclic(graph_type, k, d):
    for seed in range(3):
        B = simulate_dag(d, k=k, graph_type=graph_type, rng=seed)
        assert B.shape == (d, d) and B.dtype == bool
        assert not np.any(np.diag(B))
        assert nx.is_directed_acyclic_graph(to_networkx(B))
        assert is_dag(B)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_er_edge_count(k):
    d = 30
    B = simulate_dag(d, k=k, graph_type="ER", rng=0)
    assert B.sum() == k * d
    # capped at the complete DAG
    assert simulate_dag(5, k=10, rng=0).sum() == 10


def test_sf_degree_structure():
    d, k = 60, 2
    B = simulate_dag(d, k=k, graph_type="SF", rng=1)
    # every node after the first k+1 of the hidden order adds exactly k edges
    assert B.sum() == sum(min(k, i) for i in range(d))
    deg = (B | B.T).sum(axis=0)
    # scale-free: the largest hub is far above the mean degree
    assert deg.max() > 3 * deg.mean()


def test_nodes_are_permuted():
    B = simulate_dag(30, k=2, rng=0)
    assert not np.all(B == np.tril(B)) and not np.all(B == np.triu(B))


def test_weights_ranges():
    B = simulate_dag(50, k=4, rng=2)
    W = simulate_weights(B, rng=2)
    vals = W[B]
    assert np.all((np.abs(vals) >= 0.5) & (np.abs(vals) <= 2.0))
    assert np.all(W[~B] == 0)
    # both signs, roughly balanced: binomial(200, 1/2) within 5 sd
    n_pos = int((vals > 0).sum())
    assert abs(n_pos - vals.size / 2) < 5 * np.sqrt(vals.size / 4)


def test_gauss_sem_covariance_closed_form():
    rng = np.random.default_rng(0)
    B = simulate_dag(5, k=1.5, rng=rng)
    W = simulate_weights(B, rng=rng)
    scale = np.array([1.0, 0.5, 2.0, 1.0, 1.5])
    n = 200_000
    X = simulate_linear_sem(W, n, noise_scale=scale, rng=3)
    inv = np.linalg.inv(np.eye(5) - W)
    cov = inv.T @ np.diag(scale ** 2) @ inv
    emp = np.cov(X, rowvar=False)
    # sd of a sample covariance entry <= sqrt((s_ii s_jj + s_ij^2) / n)
    sd = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / n)
    assert np.all(np.abs(emp - cov) < 5 * sd)


@pytest.mark.parametrize("noise_type,mean,var", [("gauss", 0.0, 1.0), ("exp", 1.0, 1.0),
                                                   ("gumbel", np.euler_gamma, np.pi ** 2 / 6)])
def test_noise_moments(noise_type, mean, var):
    n = 100_000
    X = simulate_linear_sem(np.zeros((2, 2)), n, noise_type=noise_type, rng=4)
    assert np.all(np.abs(X.mean(axis=0) - mean) < 5 * np.sqrt(var / n))
    assert np.all(np.abs(X.var(axis=0) - var) < 0.05 * var)


def test_standardize_and_varsortability():
    X, W, B = simulate_data(d=20, n=2000, k=2, rng=5)
    # raw data: roots have the noise variance 1, other nodes more ("varsortability")
    v = X.var(axis=0)
    roots = ~B.any(axis=0)
    assert np.all(np.abs(v[roots] - 1.0) < 5 * np.sqrt(2 / 2000))
    assert v[~roots].mean() > 1.5
    assert topological_order(B) is not None
    Xs, Ws, Bs = simulate_data(d=20, n=2000, k=2, standardize=True, rng=5)
    assert np.array_equal(B, Bs) and np.array_equal(W, Ws)
    np.testing.assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Xs.std(axis=0), 1.0, rtol=1e-12)


def test_reproducible():
    a = simulate_data(d=8, n=50, rng=7)
    b = simulate_data(d=8, n=50, rng=7)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_bad_arguments():
    with pytest.raises(ValueError):
        simulate_dag(0)
    with pytest.raises(ValueError):
        simulate_dag(5, graph_type="BA")
    with pytest.raises(ValueError, match="cycle"):
        simulate_linear_sem(np.array([[0.0, 1.0], [1.0, 0.0]]), 10)
    with pytest.raises(ValueError):
        simulate_linear_sem(np.zeros((2, 2)), 10, noise_type="cauchy")
    with pytest.raises(ValueError):
        simulate_weights(np.ones((2, 3)))


def test_simulator_input_errors():
    B = np.triu(np.ones((3, 3)), 1)
    for bad in (0.0, -1.0, np.nan, [1.0, 0.0, 1.0]):
        with pytest.raises(ValueError, match="noise_scale must be finite and > 0"):
            simulate_linear_sem(B, 5, noise_scale=bad, rng=0)
    with pytest.raises(ValueError, match=r"noise_scale must be a scalar or have shape \(3,\)"):
        simulate_linear_sem(B, 5, noise_scale=[1.0, 2.0], rng=0)
    with pytest.raises(TypeError, match="noise_scale"):
        simulate_data(3, 5, noise_scale="1", rng=0)
    X = simulate_linear_sem(B, 4000, noise_scale=[1.0, 2.0, 3.0], rng=0)
    assert abs(X[:, 0].std() - 1.0) < 0.05  # a root keeps its own scale
    with pytest.raises(ValueError, match="B must be the adjacency of a DAG"):
        simulate_weights(B + B.T, rng=0)
    with pytest.raises(ValueError, match="B must be a 0/1"):
        simulate_weights(2 * B, rng=0)
