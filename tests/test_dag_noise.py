"""Noise models (equal / non-equal / auto) and equivalence classes (CPDAG)."""
import itertools

import networkx as nx
import numpy as np
import pytest

from solvers.dag import learn_dag, simulate_data, count_accuracy, is_dag
from solvers.dag.cpdag import CPDAG, dag_to_cpdag, cpdag_accuracy
from solvers.dag.refine import model_bic, refine_order, order_score, _gram


def _all_dags(d):
    pairs = [(i, j) for i in range(d) for j in range(d) if i != j]
    for bits in itertools.product((0, 1), repeat=len(pairs)):
        B = np.zeros((d, d), dtype=bool)
        for b, (i, j) in zip(bits, pairs):
            B[i, j] = b
        if not np.any(B & B.T) and is_dag(B):
            yield B


def _vstructs(B):
    adj = B | B.T
    d = B.shape[0]
    return {(min(a, b), max(a, b), c) for c in range(d) for a in range(d) for b in range(d)
            if a != b and B[a, c] and B[b, c] and not adj[a, b]}


def test_cpdag_matches_brute_force_equivalence_classes():
    dags = list(_all_dags(4))
    keys = [((B | B.T).tobytes(), frozenset(_vstructs(B))) for B in dags]
    classes = {}
    for B, k in zip(dags, keys):
        classes.setdefault(k, []).append(B)
    assert len(dags) == 543 and len(classes) == 185     # OEIS A003024, A007984
    for members in classes.values():
        M = dag_to_cpdag(members[0])
        # every member has the same CPDAG
        for B in members[1:]:
            np.testing.assert_array_equal(dag_to_cpdag(B), M)
        # an edge is directed in the CPDAG exactly when all members agree on it
        stack = np.stack(members)
        agree = stack.all(axis=0)
        directed = (M == 1) & (M.T == 0)
        np.testing.assert_array_equal(directed, agree)


def test_cpdag_object_and_accuracy():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    c = CPDAG(dag_to_cpdag(chain))
    G = c.to_networkx()
    assert G.number_of_edges() == 4 and not any(nx.get_edge_attributes(G, "directed").values())
    assert cpdag_accuracy(chain, chain.T)["shd"] == 0
    assert count_accuracy(chain, chain.T)["shd"] == 2
    assert count_accuracy(chain, chain.T, cpdag=True)["shd"] == 0
    collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    m = count_accuracy(collider, chain, cpdag=True)
    # skeletons: {01, 12} vs {02, 12}; 12 is compelled in one, undirected in the other
    assert (m["extra"], m["missing"], m["misoriented"], m["shd"]) == (1, 1, 1, 3)
    with pytest.raises(ValueError, match="cycle"):
        dag_to_cpdag(np.array([[0, 1], [1, 0]]))


def test_nonequal_bic_is_score_equivalent_and_scale_free():
    X, W, B = simulate_data(d=5, n=500, k=1, rng=3)
    # Markov-equivalent DAGs fitted by least squares have the same non-equal BIC
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)
    Xc = simulate_data(d=3, n=400, k=1, rng=1).X
    C3, n3 = _gram(Xc)

    def ls(Bm):
        Wm = np.zeros((3, 3))
        for j in range(3):
            P = np.flatnonzero(Bm[:, j])
            if P.size:
                Wm[P, j] = np.linalg.solve(C3[np.ix_(P, P)], C3[P, j])
        return Wm

    a, b = model_bic(C3, n3, ls(chain), "nonequal"), model_bic(C3, n3, ls(chain.T), "nonequal")
    assert a == pytest.approx(b, rel=1e-12, abs=1e-12)
    # the equal-variance BIC is not score equivalent (it reads scales)
    assert model_bic(C3, n3, ls(chain), "equal") != pytest.approx(
        model_bic(C3, n3, ls(chain.T), "equal"), rel=1e-6)
    # rescaling columns shifts the non-equal score by the same constant for every order
    s = np.array([0.1, 3.0, 17.0, 0.5, 2.0])
    for order in ([0, 1, 2, 3, 4], [4, 2, 0, 3, 1]):
        d0 = order_score(X, order, noise_variance="nonequal")
        d1 = order_score(X * s, order, noise_variance="nonequal")
        assert d1 - d0 == pytest.approx(np.log(s).sum(), rel=1e-9)


def test_refine_nonequal_invariant_to_column_scales():
    X, W, B = simulate_data(d=8, n=800, k=2, rng=5)
    rng = np.random.default_rng(0)
    s = np.exp(rng.uniform(-3, 3, size=8))
    start = rng.permutation(8)
    o1, W1, _ = refine_order(X, start, noise_variance="nonequal", threshold=0.0)
    o2, W2, _ = refine_order(X * s, start, noise_variance="nonequal", threshold=0.0)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(W1 != 0, W2 != 0)
    # weights transform as W_ij * s_j / s_i
    np.testing.assert_allclose(W2, W1 * s[None, :] / s[:, None], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("method", ["cosmo", "dpdag"])
def test_learn_dag_nonequal_invariant_to_power_of_two_scales(method):
    # powers of two rescale exactly in floating point, so the whole pipeline (gradient
    # training included, which is chaotic in the last bits) must give the same graph
    X, W, B = simulate_data(d=6, n=500, k=1, rng=8)
    s = 2.0 ** np.array([-5, 3, 0, 7, -2, 4])
    kw = dict(rng=0, noise_variance="nonequal", maxiter=300) if method == "cosmo" else \
        dict(rng=0, noise_variance="nonequal", maxiter=200)
    r1 = learn_dag(X, method=method, **kw)
    r2 = learn_dag(X * s, method=method, **kw)
    np.testing.assert_array_equal(r1.adjacency, r2.adjacency)
    assert r1.noise_variance == r2.noise_variance == "nonequal" and not r1.identified


def test_auto_picks_equal_on_raw_and_nonequal_on_standardized():
    raw = simulate_data(d=10, n=1000, k=2, rng=21)
    std = simulate_data(d=10, n=1000, k=2, rng=21, standardize=True)
    r_raw = learn_dag(raw.X, rng=0)
    r_std = learn_dag(std.X, rng=0)
    assert r_raw.noise_variance == "equal" and r_raw.identified
    assert r_std.noise_variance == "nonequal" and not r_std.identified
    # raw: both models were fitted; the non-equal search's own best graph scores worse
    r_ne = learn_dag(raw.X, rng=0, noise_variance="nonequal", mechanism="linear")
    assert r_raw.bic["equal"] < r_ne.bic["nonequal"]
    assert r_ne.bic["nonequal"] == pytest.approx(r_raw.bic["nonequal"], rel=1e-12)
    assert r_std.bic["nonequal"] < r_std.bic["equal"]
    # standardized data: far better than the empty graph (10 * 2 = 20 edges)
    assert count_accuracy(std.B, r_std.adjacency)["shd"] <= 6
    assert count_accuracy(std.B, r_std.cpdag, cpdag=True)["shd"] <= 6
    for r in (r_raw, r_std):
        assert r.is_dag() and isinstance(r.cpdag, CPDAG)


def test_noise_variance_rejects_unknown():
    X = simulate_data(d=3, n=50, k=1, rng=0).X
    with pytest.raises(ValueError, match="noise_variance"):
        learn_dag(X, noise_variance="gauss")
    with pytest.raises(ValueError, match="noise_variance"):
        learn_dag(X, method="dpdag", noise_variance="gauss")
    with pytest.raises(ValueError, match="noise_variance"):
        order_score(X, [0, 1, 2], noise_variance="x")


def test_dpdag_small_n_and_duplicated_column_work():
    # issue 17 item 6: n < d and a duplicated column gave a LinAlgError deep inside
    X = simulate_data(d=6, n=50, k=1, rng=0).X
    for Xb in (X[:3], np.c_[X, X[:, 0]]):
        for nv in ("auto", "equal", "nonequal"):
            r = learn_dag(Xb, method="dpdag", rng=0, maxiter=30, noise_variance=nv)
            assert r.is_dag() and np.all(np.isfinite(r.W))


def test_dpdag_deprecated_iteration_names():
    X = simulate_data(d=4, n=100, k=1, rng=0).X
    with pytest.warns(DeprecationWarning, match="maxiter"):
        a = learn_dag(X, method="dpdag", rng=0, max_iter=20)
    b = learn_dag(X, method="dpdag", rng=0, maxiter=20)
    assert a.nit == b.nit == 20
    np.testing.assert_array_equal(a.adjacency, b.adjacency)
    with pytest.warns(DeprecationWarning, match="sinkhorn_iter"):
        learn_dag(X, method="dpdag", rng=0, maxiter=5, order="sinkhorn", n_iter=5)
