"""Permutation operators: forward values against brute force, backward passes against
central finite differences (float64), on numpy and array_api_strict."""
import itertools

import numpy as np
import pytest

from solvers.dag.permutations import (
    permutation_matrix, soft_sort, soft_sort_vjp, gumbel_top_k, sinkhorn, sinkhorn_vjp,
    hungarian, gumbel_sinkhorn)
from tests.conftest import to_numpy


def _fd_grad(f, x, h=1e-6):
    """Central differences of a scalar function of a numpy array."""
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_permutation_matrix_roundtrip():
    order = np.array([[2, 0, 1, 3], [3, 2, 1, 0]])
    P = permutation_matrix(order)
    assert P.shape == (2, 4, 4)
    for b in range(2):
        np.testing.assert_array_equal(P[b] @ np.arange(4.0), order[b])


@pytest.mark.parametrize("tau", [0.3, 1.0, 3.0])
def test_soft_sort_forward_closed_form(xp, tau):
    s_np = np.array([0.7, -1.2, 2.5, 0.1, 1.3])
    P = to_numpy(soft_sort(xp.asarray(s_np), tau))
    srt = np.sort(s_np)[::-1]
    z = -np.abs(srt[:, None] - s_np[None, :]) / tau
    ref = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, ref, rtol=1e-12)
    hard = to_numpy(soft_sort(xp.asarray(s_np), tau, hard=True))
    np.testing.assert_array_equal(hard.argmax(axis=1), np.argsort(-s_np))


@pytest.mark.parametrize("k", [None, 2])
def test_soft_sort_vjp_matches_finite_differences(xp, k):
    rng = np.random.default_rng(0)
    s0 = rng.normal(size=(3, 5))  # a batch of 3
    G = rng.normal(size=(3, 5 if k is None else k, 5))

    def f(s):
        return float(np.sum(G * to_numpy(soft_sort(xp.asarray(s), 0.7, k=k))))

    _, vjp = soft_sort_vjp(xp.asarray(s0), 0.7, k=k)
    got = to_numpy(vjp(xp.asarray(G)))
    np.testing.assert_allclose(got, _fd_grad(f, s0), rtol=1e-6, atol=1e-8)
    # straight-through: the hard forward uses the same backward
    P_h, vjp_h = soft_sort_vjp(xp.asarray(s0), 0.7, hard=True, k=k)
    np.testing.assert_allclose(to_numpy(vjp_h(xp.asarray(G))), got, rtol=1e-12)
    assert set(np.unique(to_numpy(P_h))) <= {0.0, 1.0}


def test_gumbel_top_k_vjp_matches_finite_differences(xp):
    rng = np.random.default_rng(1)
    theta0 = rng.normal(size=4)
    G = rng.normal(size=(6, 4, 4))

    def f(theta):  # same seed -> same Gumbel noise: a smooth function of theta
        P = gumbel_top_k(xp.asarray(theta), n=6, tau=0.5, rng=3, hard=False)
        return float(np.sum(G * to_numpy(P)))

    P, vjp = gumbel_top_k(xp.asarray(theta0), n=6, tau=0.5, rng=3, hard=False,
                          return_vjp=True)
    np.testing.assert_allclose(to_numpy(vjp(xp.asarray(G))), _fd_grad(f, theta0),
                               rtol=1e-6, atol=1e-8)


def test_gumbel_top_k_orders_match_hard_matrix():
    P, orders = gumbel_top_k(np.array([0.0, 1.0, -1.0, 2.0]), n=50, rng=2,
                             return_orders=True)
    np.testing.assert_array_equal(P.argmax(axis=2), orders)


@pytest.mark.parametrize("log", [False, True])
def test_sinkhorn_vjp_matches_finite_differences(xp, log):
    rng = np.random.default_rng(4)
    X0 = rng.normal(size=(2, 4, 4))
    G = rng.normal(size=(2, 4, 4))

    def f(X):
        return float(np.sum(G * to_numpy(sinkhorn(xp.asarray(X), n_iter=7, tau=0.8,
                                                  log=log))))

    _, vjp = sinkhorn_vjp(xp.asarray(X0), n_iter=7, tau=0.8, log=log)
    np.testing.assert_allclose(to_numpy(vjp(xp.asarray(G))), _fd_grad(f, X0),
                               rtol=1e-6, atol=1e-8)


def test_sinkhorn_is_doubly_stochastic_and_stable(xp):
    X = np.random.default_rng(5).normal(size=(6, 6))
    P = to_numpy(sinkhorn(xp.asarray(X), n_iter=200, tau=1.0))
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-10)
    # scores of order 1e3 would overflow exp(X / tau) without the log domain
    P = to_numpy(sinkhorn(xp.asarray(X * 1000.0), n_iter=20, tau=1.0))
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-12)


def test_hungarian_matches_brute_force(xp):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(20, 4, 4))
    P = to_numpy(hungarian(xp.asarray(X)))
    perms = list(itertools.permutations(range(4)))
    for b in range(20):
        best = max(perms, key=lambda p: sum(X[b, k, p[k]] for k in range(4)))
        np.testing.assert_array_equal(P[b].argmax(axis=1), best)


def test_gumbel_sinkhorn_hard_is_matching_of_perturbed_scores():
    """The rounding of the Sinkhorn output equals brute-force argmax over all d! matchings
    of the same Gumbel-perturbed scores (normalisations only add row/column constants)."""
    rng = np.random.default_rng(7)
    la = rng.normal(size=(4, 4))
    P = gumbel_sinkhorn(la, n=200, tau=0.3, n_iter=20, rng=11)
    X = la[None] + np.random.default_rng(11).gumbel(size=(200, 4, 4))
    perms = np.array(list(itertools.permutations(range(4))))
    scores = X[:, np.arange(4)[None, :], perms].sum(axis=2)  # (200, 24)
    np.testing.assert_array_equal(P.argmax(axis=2), perms[scores.argmax(axis=1)])


def test_gumbel_sinkhorn_vjp_is_sinkhorn_vjp():
    la = np.random.default_rng(8).normal(size=(3, 3))
    G = np.random.default_rng(9).normal(size=(5, 3, 3))
    _, vjp = gumbel_sinkhorn(la, n=5, rng=1, tau=0.5, n_iter=10, return_vjp=True)
    X = la[None] + np.random.default_rng(1).gumbel(size=(5, 3, 3))
    _, vjp_ref = sinkhorn_vjp(X, n_iter=10, tau=0.5)
    np.testing.assert_allclose(vjp(G), vjp_ref(G).sum(axis=0), rtol=1e-12)


def test_float32_stays_float32():
    s = np.array([0.1, 0.5, -0.3], dtype=np.float32)
    assert soft_sort(s).dtype == np.float32
    assert gumbel_top_k(s, n=2, rng=0).dtype == np.float32
    assert sinkhorn(np.eye(3, dtype=np.float32)).dtype == np.float32


def test_bad_input():
    with pytest.raises(ValueError, match="tau"):
        soft_sort(np.zeros(3), tau=0.0)
    with pytest.raises(ValueError, match="finite"):
        soft_sort(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="square"):
        sinkhorn(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="k must be"):
        soft_sort(np.zeros(3), k=4)
