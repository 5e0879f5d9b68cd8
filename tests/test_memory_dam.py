"""Gaussian and vector dense associative memories: retrieval, energy descent, fixed points
(self-consistent barycenters, checked with POT), fast paths against the full path, and
bad input."""
import numpy as np
import pytest

from solvers import GaussianMemory, VectorMemory
from solvers.memory import synthetic_patterns, perturb, retrieval_rate
from solvers.transport import (bures_wasserstein_distance, bures_wasserstein_barycenter,
                               sqrtm_psd)
from conftest import to_numpy


def separated(N=12, d=3, seed=0, commuting=False, scale=3.0):
    m, S = synthetic_patterns(N, d, commuting=commuting, eig_range=(0.3, 2.0), rng=seed)
    return m * scale, S


def brute_energy(qm, qS, m, S, beta):
    d2 = np.array([float(bures_wasserstein_distance(qm, qS, m[i], S[i], squared=True))
                   for i in range(len(m))])
    a = -beta * d2
    return -(a.max() + np.log(np.exp(a - a.max()).sum())) / beta, d2


def test_energy_weights_distances_match_brute_force(xp):
    m, S = separated(seed=1)
    qm, qS = perturb(m[:3], S[:3], 0.7, rng=2)
    mem = GaussianMemory(xp.asarray(m), xp.asarray(S), beta=0.7)
    E = to_numpy(mem.energy(xp.asarray(qm), xp.asarray(qS)))
    W = to_numpy(mem.weights(xp.asarray(qm), xp.asarray(qS)))
    D = to_numpy(mem.distances(xp.asarray(qm), xp.asarray(qS)))
    for q in range(3):
        e, d2 = brute_energy(qm[q], qS[q], m, S, 0.7)
        np.testing.assert_allclose(E[q], e, rtol=1e-11)
        np.testing.assert_allclose(D[q], d2, rtol=1e-10, atol=1e-12)
        p = np.exp(-0.7 * (d2 - d2.min()))
        np.testing.assert_allclose(W[q], p / p.sum(), rtol=1e-10, atol=1e-15)
    assert to_numpy(mem.nearest(xp.asarray(qm), xp.asarray(qS))).tolist() == [0, 1, 2]


@pytest.mark.parametrize("beta", [0.3, 1.0, 5.0])
@pytest.mark.parametrize("commuting", [False, True])
def test_energy_never_increases_along_retrieval(beta, commuting):
    m, S = separated(N=15, d=3, seed=3, commuting=commuting, scale=1.5)
    qm, qS = perturb(m[:6], S[:6], 1.0, commuting=commuting, rng=4)
    for path in ("auto", "full"):
        res = GaussianMemory(m, S, beta=beta, path=path).retrieve(qm, qS, maxiter=60)
        E = res.energy
        assert E.shape[1] == 6 and E.shape[0] >= 2
        scale = 1e-12 * (1 + np.abs(E).max())
        assert np.all(np.diff(E, axis=0) <= scale), np.diff(E, axis=0).max()
        # the trace ends at the energy of the returned state
        np.testing.assert_allclose(E[-1], GaussianMemory(m, S, beta=beta).energy(
            res.means, res.covs), rtol=1e-10, atol=1e-12)


def test_fixed_points_are_self_consistent_barycenters():
    import ot

    m, S = separated(N=8, d=3, seed=5, scale=1.0)   # close patterns: metastable mixtures
    mem = GaussianMemory(m, S, beta=0.5)
    res = mem.retrieve(m[:3] + 0.3, S[:3], maxiter=500, tol=1e-12)
    assert np.all(res.converged)
    for q in range(3):
        p = mem.weights(res.means[q], res.covs[q])
        assert p.max() < 0.99          # a genuine mixture, not a single pattern
        mb, Sb = bures_wasserstein_barycenter(m, S, p, tol=1e-14)
        np.testing.assert_allclose(res.means[q], mb, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(res.covs[q], Sb, rtol=1e-8, atol=1e-10)
        _, Sp = ot.gaussian.bures_wasserstein_barycenter(m, S, p, num_iter=5000, eps=1e-13)
        assert np.linalg.norm(res.covs[q] - Sp) / np.linalg.norm(Sp) < 1e-6


def test_step_is_one_alvarez_esteban_step():
    m, S = separated(N=6, d=3, seed=6, scale=1.0)
    mem = GaussianMemory(m, S, beta=0.8)
    qm, qS = m[0] + 0.2, S[1]
    p = mem.weights(qm, qS)
    m1, S1 = mem.step(qm, qS)
    np.testing.assert_allclose(m1, p @ m, rtol=1e-13)
    _, S_ae, info = bures_wasserstein_barycenter(m, S, p, cov_init=qS, maxiter=1,
                                                 return_info=True)
    np.testing.assert_allclose(S1, S_ae, rtol=1e-11, atol=1e-13)
    # explicit formula with A = sum_i p_i A_i
    R = sqrtm_psd(qS)
    Ri = np.linalg.inv(R)
    A = sum(p[i] * Ri @ sqrtm_psd(R @ S[i] @ R) @ Ri for i in range(6))
    np.testing.assert_allclose(S1, A @ qS @ A, rtol=1e-10, atol=1e-12)


def test_backends_and_namespaces_agree(xp):
    m, S = separated(N=10, d=3, seed=7)
    qm, qS = perturb(m[:4], S[:4], 0.8, rng=8)
    ref = GaussianMemory(m, S, beta=1.0, backend="numpy").retrieve(qm, qS)
    got = GaussianMemory(xp.asarray(m), xp.asarray(S), beta=1.0).retrieve(
        xp.asarray(qm), xp.asarray(qS))
    assert np.abs(to_numpy(got.nit) - ref.nit).max() <= 1
    # the paths round differently, so they stop within tol = 1e-9 of each other
    np.testing.assert_allclose(to_numpy(got.covs), ref.covs, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(to_numpy(got.energy)[-1], ref.energy[-1], rtol=1e-10,
                               atol=1e-12)
    assert to_numpy(got.index).tolist() == [0, 1, 2, 3]


def test_numba_matches_generic_full_path(backend):
    m, S = separated(N=25, d=4, seed=9, scale=1.5)
    qm, qS = perturb(m[:5], S[:5], 1.0, rng=10)
    ref = GaussianMemory(m, S, beta=1.0, backend="numpy").retrieve(qm, qS)
    got = GaussianMemory(m, S, beta=1.0, backend=backend).retrieve(qm, qS)
    np.testing.assert_allclose(to_numpy(got.means), ref.means, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(got.covs), ref.covs, rtol=1e-9, atol=1e-10)
    assert to_numpy(got.index).tolist() == ref.index.tolist()


def test_diagonal_fast_path_equals_full_path():
    rng = np.random.default_rng(11)
    m, v = rng.normal(size=(20, 4)) * 2, rng.uniform(0.3, 2, (20, 4))
    qm, qv = perturb(m[:5], v[:5], 0.8, rng=12)
    full = GaussianMemory(m, v[:, :, None] * np.eye(4), beta=1.0, path="full")
    auto = GaussianMemory(m, v[:, :, None] * np.eye(4), beta=1.0)
    store = GaussianMemory(m, v, beta=1.0)
    assert (full.path, auto.path, store.path) == ("full", "diagonal", "diagonal")
    QS = qv[:, :, None] * np.eye(4)
    r_full, r_auto, r_store = (full.retrieve(qm, QS), auto.retrieve(qm, QS),
                               store.retrieve(qm, qv))
    assert r_auto.path == "diagonal" and r_full.path == "full"
    for r in (r_auto,):
        np.testing.assert_allclose(r.means, r_full.means, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(r.covs, r_full.covs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r_store.covs, np.diagonal(r_full.covs, axis1=1, axis2=2),
                               rtol=1e-10)
    np.testing.assert_allclose(r_store.energy[-1], r_full.energy[-1], rtol=1e-10)
    assert r_store.index.tolist() == r_full.index.tolist()


def test_commuting_fast_path_equals_full_path():
    m, S = separated(N=20, d=4, seed=13, commuting=True, scale=1.5)
    qm, qS = perturb(m[:5], S[:5], 1.0, commuting=True, rng=14)
    fast, full = GaussianMemory(m, S, beta=1.0), GaussianMemory(m, S, beta=1.0, path="full")
    assert fast.path == "commuting"
    rf, rs = fast.retrieve(qm, qS), full.retrieve(qm, qS)
    assert rf.path == "commuting"
    np.testing.assert_allclose(rf.covs, rs.covs, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(rf.energy[-1], rs.energy[-1], rtol=1e-10)
    # a non-commuting query falls back to the full path under "auto"
    qS2 = perturb(m[:2], S[:2], 0.5, rng=15)[1]
    assert fast.retrieve(qm[:2], qS2).path == "full"
    with pytest.raises(ValueError, match="eigenbasis"):
        GaussianMemory(m, S, beta=1.0, path="commuting").retrieve(qm[:2], qS2)


def test_stored_patterns_are_fixed_points_at_large_beta():
    m, S = separated(N=10, d=3, seed=16, scale=3.0)
    res = GaussianMemory(m, S, beta=20.0).retrieve(m, S)
    assert res.success and res.index.tolist() == list(range(10))
    np.testing.assert_allclose(res.covs, S, atol=1e-9)
    assert res.nit.max() <= 2


def test_small_beta_collapses_to_one_global_average():
    m, S = synthetic_patterns(200, 5, commuting=False, rng=17)
    qm, qS = perturb(m[:8], S[:8], 0.5, rng=18)
    mem = GaussianMemory(m, S, beta=0.01)
    res = mem.retrieve(qm, qS, maxiter=200, tol=1e-11)
    assert res.success
    np.testing.assert_allclose(res.means, res.means[:1].repeat(8, 0), atol=1e-8)
    np.testing.assert_allclose(res.covs, res.covs[:1].repeat(8, 0), atol=1e-8)
    p = mem.weights(res.means[0], res.covs[0])
    assert p.max() < 2.0 / 200          # near-uniform Gibbs weights
    mb, Sb = bures_wasserstein_barycenter(m, S, p)
    np.testing.assert_allclose(res.covs[0], Sb, atol=1e-8)


def test_single_query_result_shapes_and_callback():
    m, S = separated(N=5, d=2, seed=19)
    mem = GaussianMemory(m, S, beta=10.0)
    res = mem.retrieve(m[2] + 0.1, S[2])
    assert isinstance(res.nit, int) and isinstance(res.index, int) and res.index == 2
    assert res.means.shape == (2,) and res.covs.shape == (2, 2) and res.energy.ndim == 1
    seen = []

    def cb(state):
        seen.append(state.nit)
        if state.nit == 2:
            raise StopIteration

    res = mem.retrieve(m[:2] + 1.0, S[:2], callback=cb, tol=0.0)
    assert seen == [1, 2] and res.status == 99 and not res.success
    assert res.energy.shape == (4, 2) or res.energy.shape[0] >= 3


def test_float32_retrieval_stays_float32():
    m, S = separated(N=6, d=3, seed=20)
    m32, S32 = m.astype(np.float32), S.astype(np.float32)
    res = GaussianMemory(m32, S32, beta=1.0).retrieve(m32[:2] + 0.1, S32[:2], tol=1e-5)
    assert res.covs.dtype == np.float32 and res.index.tolist() == [0, 1]


def test_vector_memory_retrieval_and_energy(xp):
    rng = np.random.default_rng(21)
    X = rng.normal(size=(30, 8)) * 2
    mem = VectorMemory(xp.asarray(X), beta=1.0)
    q = X[:5] + 0.3 * rng.normal(size=(5, 8))
    res = mem.retrieve(xp.asarray(q))
    assert to_numpy(res.index).tolist() == list(range(5))
    E = to_numpy(res.energy)
    assert np.all(np.diff(E, axis=0) <= 1e-12 * (1 + np.abs(E).max()))
    d2 = ((q[0] - X) ** 2).sum(1)
    ref = -(np.log(np.exp(-(d2 - d2.min())).sum()) - d2.min())
    np.testing.assert_allclose(to_numpy(mem.energy(xp.asarray(q)))[0], ref, rtol=1e-12)
    # the vector DAM is the Gaussian DAM on z = (m, sqrt(var)) with diagonal covariances
    v = np.exp(rng.normal(size=(30, 4)) * 0.3)
    gm = GaussianMemory(X[:, :4], v, beta=1.0)
    vm = VectorMemory(np.concatenate([X[:, :4], np.sqrt(v)], 1), beta=1.0)
    qm, qv = X[:3, :4] + 0.2, v[:3] * 1.2
    rg = gm.retrieve(qm, qv, tol=1e-10)
    rv = vm.retrieve(np.concatenate([qm, np.sqrt(qv)], 1), tol=1e-10)
    np.testing.assert_allclose(rg.means, rv.x[:, :4], rtol=1e-12)
    np.testing.assert_allclose(rg.energy, rv.energy, rtol=1e-12)


def test_vector_memory_dot_similarity_descends():
    rng = np.random.default_rng(22)
    X = rng.choice([-1.0, 1.0], size=(20, 64))
    mem = VectorMemory(X, beta=0.5, similarity="dot")
    q = X[:4] * np.where(rng.random((4, 64)) < 0.15, -1, 1)
    res = mem.retrieve(q)
    assert res.index.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(res.x, X[:4], atol=1e-8)
    assert np.all(np.diff(res.energy, axis=0) <= 1e-10)


@pytest.mark.parametrize("make, match", [
    (lambda m, S: GaussianMemory(m, S, beta=0.0), "beta"),
    (lambda m, S: GaussianMemory(m, S, beta=-1.0), "beta"),
    (lambda m, S: GaussianMemory(m, S + np.triu(np.ones_like(S), 1)), "symmetric"),
    (lambda m, S: GaussianMemory(m, S - 5 * np.eye(3)), "positive definite"),
    (lambda m, S: GaussianMemory(m[:, :2], S), "shape"),
    (lambda m, S: GaussianMemory(m, S[:3]), "shape"),
    (lambda m, S: GaussianMemory(m, S).retrieve(m[:, :2], S[:, :2, :2]), "dimension"),
    (lambda m, S: GaussianMemory(m, S).retrieve(m[:2], S[:3]), "shape"),
    (lambda m, S: GaussianMemory(m, S).retrieve(m[:1], -S[:1]), "positive definite"),
    (lambda m, S: GaussianMemory(m, S, path="diagonal"), "diagonal"),
    (lambda m, S: GaussianMemory(m * np.nan, S), "finite"),
    (lambda m, S: VectorMemory(m, beta=0), "beta"),
    (lambda m, S: VectorMemory(m).retrieve(m[:, :2]), "dimension"),
])
def test_bad_input_raises(make, match):
    m, S = separated(N=5, d=3, seed=23)
    with pytest.raises(ValueError, match=match):
        make(m, S)


@pytest.mark.slow
def test_protocol_commuting_n5000_d25_beta1_retrieves_all():
    N, d = 5000, 25
    m, S = synthetic_patterns(N, d, commuting=True, rng=0)
    idx = np.random.default_rng(1).choice(N, 200, replace=False)
    qm, qS = perturb(m[idx], S[idx], 1.0, commuting=True, rng=2)
    mem = GaussianMemory(m, S, beta=1.0)
    res = mem.retrieve(qm, qS)
    assert res.path == "commuting" and res.success
    rate, w2 = retrieval_rate(mem, res, idx, atol=1e-3)
    assert rate == 1.0


@pytest.mark.slow
def test_protocol_commuting_beta01_collapses():
    N, d = 5000, 25
    m, S = synthetic_patterns(N, d, commuting=True, rng=0)
    idx = np.arange(20)
    qm, qS = perturb(m[idx], S[idx], 1.0, commuting=True, rng=2)
    res = GaussianMemory(m, S, beta=0.1).retrieve(qm, qS)
    assert res.success
    spread = np.abs(res.means - res.means[0]).max()
    assert spread < 1e-6 and len(set(res.index.tolist())) == 1
    # near the global average: |m| ~ 0 for means spread uniformly on a sphere of radius 5
    assert np.linalg.norm(res.means[0] - m.mean(0)) < 0.1


@pytest.mark.slow
def test_protocol_noncommuting_retrieves():
    N, d = 1000, 10
    m, S = synthetic_patterns(N, d, commuting=False, rng=0)
    idx = np.random.default_rng(1).choice(N, 8, replace=False)
    qm, qS = perturb(m[idx], S[idx], 1.0 / np.sqrt(N), rng=2)
    mem = GaussianMemory(m, S, beta=1.0)
    res = mem.retrieve(qm, qS, maxiter=30)
    assert retrieval_rate(mem, res, idx)[0] == 1.0


@pytest.mark.parametrize("beta_gap, expect_split", [(1.0, False), (3.0, True)])
def test_two_pattern_pitchfork_at_beta_gap_two(beta_gap, expect_split):
    # Two patterns at squared W2 distance gap = 4 a^2 (same covariance): on the line
    # through them retrieval is x -> a tanh(2 beta a x), so the pattern is (near) a fixed
    # point iff beta * gap > 2; below, every query lands on the midpoint mixture.
    a, beta = 1.0, beta_gap / 4.0
    rng = np.random.default_rng(40)
    G = rng.standard_normal((3, 3))
    Sig = G @ G.T + np.eye(3)
    m = np.array([[a, 0.0, 0.0], [-a, 0.0, 0.0]])
    mem = GaussianMemory(m, np.stack([Sig, Sig]), beta=beta)
    res = mem.retrieve(m[:1], Sig[None], maxiter=500, tol=1e-12)
    assert res.success
    np.testing.assert_allclose(res.covs[0], Sig, atol=1e-9)
    x = res.means[0, 0]
    if expect_split:
        u = 1.0                       # solve u = tanh(beta gap u / 2) by fixed point
        for _ in range(200):
            u = np.tanh(beta_gap / 2 * u)
        assert res.index[0] == 0 and abs(x - a * u) < 1e-8
    else:
        assert abs(x) < 1e-8


def test_separated_patterns_are_fixed_points():
    beta = 1.0
    m, S = synthetic_patterns(40, 6, commuting=False, min_separation=4.0 / beta, rng=41)
    mem = GaussianMemory(m, S, beta=beta)
    D = mem.distances(m, S)
    assert D[~np.eye(40, dtype=bool)].min() >= 4.0 / beta
    res = mem.retrieve(m, S, maxiter=200)
    assert res.success and res.index.tolist() == list(range(40))
    # each stored pattern attracts: the fixed point stays within the e^{-beta gap} leakage
    assert retrieval_rate(mem, res, np.arange(40), atol=0.2)[0] == 1.0


def test_authors_protocol_generator_and_perturbation():
    N, d, r = 30, 5, 0.3
    m, S = synthetic_patterns(N, d, commuting=False, on_sphere=True, rng=42)
    np.testing.assert_allclose((m ** 2).sum(1) + np.trace(S, axis1=1, axis2=2), 2 * d)
    qm, qS = perturb(m, S, r, method="authors", rng=43)
    np.testing.assert_allclose(np.linalg.norm(qm - m, axis=1), r / np.sqrt(2))
    w2 = bures_wasserstein_distance(qm, qS, m, S, squared=False)
    lam_min = np.linalg.eigvalsh(S)[:, 0]
    assert np.all(w2 >= r / np.sqrt(2) - 1e-12)
    # covariance part bounded by 0.025 r^2 / sqrt(lambda_min) (see perturb's docstring)
    assert np.all(w2 ** 2 <= r ** 2 / 2 + (0.025 * r ** 2 / np.sqrt(lam_min)) ** 2 + 1e-12)
    for diag in (True, False):   # the fast-path variants stay diagonal / commuting
        m2, S2 = synthetic_patterns(N, d, diagonal=diag, on_sphere=True, rng=44)
        _, qS2 = perturb(m2, S2, r, commuting=True, method="authors", rng=45)
        assert GaussianMemory(m2, S2).retrieve(m2[:2], qS2[:2], maxiter=1).path in (
            "diagonal", "commuting")
    with pytest.raises(ValueError, match="method"):
        perturb(m, S, r, method="nope")
    with pytest.raises(RuntimeError, match="placed only"):
        synthetic_patterns(50, 2, min_separation=50.0, rng=0)


@pytest.mark.parametrize("make", [
    lambda xp: GaussianMemory(xp.zeros((0, 2)), xp.zeros((0, 2, 2))),
    lambda xp: GaussianMemory(xp.zeros((0, 2)), xp.zeros((0, 2))),
    lambda xp: VectorMemory(xp.zeros((0, 2))),
], ids=["gaussian-full", "gaussian-variances", "vector"])
def test_zero_patterns_is_a_clear_error(xp, make):
    """Issue 17 item 8: no numpy 'zero-size array to reduction' from deep inside."""
    with pytest.raises(ValueError, match="at least one stored pattern"):
        make(xp)


@pytest.mark.parametrize("kind", ["full", "commuting", "variances"])
def test_zero_queries_give_empty_results_of_the_right_shape(xp, kind):
    """Issue 17 item 8: zero queries are answered with empty arrays (Q = 0), not an error."""
    m, S = separated(N=5, d=2, seed=3, commuting=kind != "full")
    if kind == "variances":
        S = np.stack([np.diag(s) for s in S])
    mem = GaussianMemory(xp.asarray(m), xp.asarray(S), beta=1.0)
    qm = xp.zeros((0, 2))
    qS = xp.zeros((0, 2)) if kind == "variances" else xp.zeros((0, 2, 2))
    res = mem.retrieve(qm, qS)
    assert res.success and tuple(res.means.shape) == (0, 2)
    assert tuple(res.covs.shape) == tuple(qS.shape)
    assert tuple(res.energy.shape) == (1, 0) and tuple(res.index.shape) == (0,)
    assert tuple(mem.energy(qm, qS).shape) == (0,)
    assert tuple(mem.weights(qm, qS).shape) == (0, 5)
    assert tuple(mem.distances(qm, qS).shape) == (0, 5)
    assert tuple(mem.nearest(qm, qS).shape) == (0,)
    vm = VectorMemory(xp.asarray(m), beta=1.0)
    vres = vm.retrieve(qm)
    assert vres.success and tuple(vres.x.shape) == (0, 2)
    assert tuple(vm.weights(qm).shape) == (0, 5) and tuple(vm.energy(qm).shape) == (0,)


def test_non_finite_state_has_the_shared_status():
    """Overflowing distances end the retrieval with status 4 (non-finite), success=False."""
    X = np.array([[1e200, 0.0], [-1e200, 0.0]])
    with np.errstate(all="ignore"):
        res = VectorMemory(X, beta=1.0).retrieve(np.array([[0.0, 1.0]]))
    assert res.status == 4 and res.success is False and "non-finite" in res.message
