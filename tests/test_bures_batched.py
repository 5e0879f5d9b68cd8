"""Batched Bures–Wasserstein kernels: pairwise distances, Monge maps, Gibbs-weighted map
averages and Álvarez-Esteban barycenters, checked against loops of the pairwise formula,
closed forms and POT."""
import numpy as np
import pytest

from solvers.transport import (bures_wasserstein_cdist, bures_wasserstein_distance,
                               bures_wasserstein_barycenter, monge_map, weighted_monge_map,
                               sqrtm_psd)
from conftest import to_numpy


def spd(rng, n, d, lo=0.3):
    A = rng.normal(size=(n, d, d)) / np.sqrt(d)
    return A @ A.transpose(0, 2, 1) + lo * np.eye(d)


def problem(seed=0, Q=3, N=5, d=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(Q, d)), spd(rng, Q, d), rng.normal(size=(N, d)), spd(rng, N, d)


def loop_cdist(qm, qS, m, S):
    return np.array([[float(bures_wasserstein_distance(qm[q], qS[q], m[i], S[i],
                                                       squared=True))
                      for i in range(len(m))] for q in range(len(qm))])


@pytest.mark.parametrize("d", [1, 3, 8, 20])
def test_distance_equals_pot(d):
    """The distance, not its square, as ``ot.gaussian.bures_wasserstein_distance`` (whose
    arguments come as means, means, covariances, covariances); ``squared=True`` gives the
    square."""
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(d)
    m1, m2 = rng.normal(size=d), rng.normal(size=d) + 1.0
    S1, S2 = spd(rng, 1, d)[0], spd(rng, 1, d, lo=0.1)[0]
    want = float(ot.gaussian.bures_wasserstein_distance(m1, m2, S1, S2))
    got = float(bures_wasserstein_distance(m1, S1, m2, S2))
    assert abs(got - want) <= 1e-10 * max(1.0, want)
    sq = float(bures_wasserstein_distance(m1, S1, m2, S2, squared=True))
    assert abs(sq - want ** 2) <= 1e-10 * max(1.0, want ** 2)
    # stacks: the pairs along the batch shape are POT's paired=True, all pairs its default
    M1, M2 = rng.normal(size=(4, d)), rng.normal(size=(4, d))
    C1, C2 = spd(rng, 4, d), spd(rng, 4, d)
    np.testing.assert_allclose(bures_wasserstein_distance(M1, C1, M2, C2),
                               ot.gaussian.bures_wasserstein_distance(M1, M2, C1, C2,
                                                                      paired=True),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(bures_wasserstein_cdist(M1, C1, M2[:3], C2[:3], squared=False),
                               ot.gaussian.bures_wasserstein_distance(M1, M2[:3], C1, C2[:3]),
                               rtol=1e-10, atol=1e-10)


def test_cdist_matches_pairwise_loop(xp, dtype_name):
    qm, qS, m, S = problem()
    dt = getattr(xp, dtype_name)
    args = [xp.asarray(a, dtype=dt) for a in (qm, qS, m, S)]
    D = bures_wasserstein_cdist(*args)
    assert D.dtype == dt
    rtol = 1e-11 if dtype_name == "float64" else 2e-4
    np.testing.assert_allclose(to_numpy(D), loop_cdist(qm, qS, m, S), rtol=rtol, atol=rtol)


def test_cdist_backends_agree(backend):
    qm, qS, m, S = problem(1, Q=4, N=9, d=5)
    ref = bures_wasserstein_cdist(qm, qS, m, S, backend="numpy")
    got = bures_wasserstein_cdist(qm, qS, m, S, backend=backend)
    np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12, atol=1e-12)
    w = bures_wasserstein_cdist(qm, qS, m, S, backend=backend, squared=False)
    np.testing.assert_allclose(to_numpy(w) ** 2, ref, rtol=1e-12, atol=1e-12)


def test_cdist_diagonal_equals_full_on_diagonal_input(xp):
    rng = np.random.default_rng(2)
    qv, v = rng.uniform(0.2, 3, (3, 4)), rng.uniform(0.2, 3, (6, 4))
    qm, m = rng.normal(size=(3, 4)), rng.normal(size=(6, 4))
    full = bures_wasserstein_cdist(*(xp.asarray(a) for a in (qm, qv[:, :, None] * np.eye(4),
                                                             m, v[:, :, None] * np.eye(4))))
    diag = bures_wasserstein_cdist(*(xp.asarray(a) for a in (qm, qv, m, v)), diagonal=True)
    np.testing.assert_allclose(to_numpy(diag), to_numpy(full), rtol=1e-12, atol=1e-12)


def test_sqrtm_never_nan_on_rounding_negative_eigenvalue():
    u = np.array([1.0, 1.0]) / np.sqrt(2)
    S = np.outer(u, u) - 1e-16 * np.eye(2)   # PSD up to rounding: eigenvalues 1 and -1e-16
    R = sqrtm_psd(S)
    assert np.all(np.isfinite(R))
    np.testing.assert_allclose(R @ R, np.outer(u, u), atol=1e-12)


def test_monge_map_pushes_forward_and_matches_pot(xp):
    import ot

    rng = np.random.default_rng(3)
    S0, S1 = spd(rng, 4, 3), spd(rng, 4, 3)
    A = to_numpy(monge_map(xp.asarray(S0), xp.asarray(S1)))
    np.testing.assert_allclose(A @ S0 @ A, S1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A, A.transpose(0, 2, 1), atol=1e-13)
    assert np.all(np.linalg.eigvalsh(A) > 0)
    A_pot, _ = ot.gaussian.bures_wasserstein_mapping(np.zeros(3), np.zeros(3), S0[0], S1[0])
    np.testing.assert_allclose(A[0], A_pot, rtol=1e-8, atol=1e-10)
    v0, v1 = rng.uniform(0.5, 2, 3), rng.uniform(0.5, 2, 3)
    a = to_numpy(monge_map(xp.asarray(v0), xp.asarray(v1), diagonal=True))
    np.testing.assert_allclose(a, np.diag(monge_map(np.diag(v0), np.diag(v1))), rtol=1e-12)


def test_weighted_monge_map_is_average_of_maps(backend):
    qm, qS, m, S = problem(4, Q=3, N=6, d=4)
    W = np.random.default_rng(5).random((3, 6))
    W[0, 2] = W[1, :3] = 0.0   # zero weights are skipped by the Numba kernel
    got = weighted_monge_map(qS, S, W, backend=backend)
    ref = sum(W[:, i, None, None] * monge_map(qS, S[i]) for i in range(6))
    np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-11, atol=1e-12)


def test_weighted_monge_map_strict(xp):
    qm, qS, m, S = problem(6, Q=2, N=3, d=3)
    W = np.full((2, 3), 1 / 3)
    got = weighted_monge_map(xp.asarray(qS), xp.asarray(S), xp.asarray(W))
    ref = weighted_monge_map(qS, S, W, backend="numpy")
    np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("d", [2, 5, 12])
def test_barycenter_matches_pot(d, backend):
    import ot

    rng = np.random.default_rng(d)
    N = 7
    m, S = rng.normal(size=(N, d)), spd(rng, N, d, lo=0.2)
    w = rng.random(N)
    w /= w.sum()
    mb, Sb, info = bures_wasserstein_barycenter(m, S, w, return_info=True, backend=backend)
    assert info["converged"] and info["nit"] < 30
    mb_pot, Sb_pot = ot.gaussian.bures_wasserstein_barycenter(m, S, w, num_iter=5000,
                                                              eps=1e-13)
    rel = np.linalg.norm(to_numpy(Sb) - Sb_pot) / np.linalg.norm(Sb_pot)
    assert rel < 1e-6
    np.testing.assert_allclose(to_numpy(mb), mb_pot, rtol=1e-12, atol=1e-12)
    # the defining fixed point equation S = sum_i w_i (S^1/2 S_i S^1/2)^1/2
    Sb = to_numpy(Sb)
    R = sqrtm_psd(Sb)
    rhs = sum(w[i] * sqrtm_psd(R @ S[i] @ R) for i in range(N))
    np.testing.assert_allclose(rhs, Sb, rtol=1e-9, atol=1e-11)


def test_barycenter_batched_weights_and_namespaces(xp):
    rng = np.random.default_rng(7)
    m, S = rng.normal(size=(5, 3)), spd(rng, 5, 3)
    W = rng.random((4, 5))
    mb, Sb = bures_wasserstein_barycenter(xp.asarray(m), xp.asarray(S), xp.asarray(W))
    assert tuple(Sb.shape) == (4, 3, 3)
    for b in range(4):
        mb1, Sb1 = bures_wasserstein_barycenter(m, S, W[b])
        np.testing.assert_allclose(to_numpy(Sb)[b], Sb1, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(to_numpy(mb)[b], mb1, rtol=1e-12, atol=1e-12)


def test_barycenter_commuting_closed_form_and_diagonal():
    rng = np.random.default_rng(8)
    U, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    lam = rng.uniform(0.3, 3, (6, 4))
    S = (U * lam[:, None, :]) @ U.T
    w = rng.random(6)
    w /= w.sum()
    _, Sb = bures_wasserstein_barycenter(np.zeros((6, 4)), S, w)
    closed = (U * ((w @ np.sqrt(lam)) ** 2)) @ U.T
    np.testing.assert_allclose(Sb, closed, rtol=1e-10, atol=1e-12)
    _, vb = bures_wasserstein_barycenter(np.zeros((6, 4)), lam, w, diagonal=True)
    np.testing.assert_allclose(vb, (w @ np.sqrt(lam)) ** 2, rtol=1e-14)


def test_float32_stays_float32():
    qm, qS, m, S = (a.astype(np.float32) for a in problem(9))
    mb, Sb = bures_wasserstein_barycenter(m, S, tol=1e-6)
    assert Sb.dtype == np.float32
    ref = bures_wasserstein_barycenter(m.astype(float), S.astype(float))[1]
    np.testing.assert_allclose(Sb, ref, rtol=1e-4, atol=1e-5)
    assert weighted_monge_map(qS, S, np.ones((3, 5), np.float32) / 5).dtype == np.float32


def test_screened_kernel_is_exact_where_finite():
    from solvers.transport.bures import _cdist_full
    from solvers.transport._bures_numba import screened_cdist
    from solvers._lib.backend import resolve_backend

    rng = np.random.default_rng(10)
    qm, qS, m, S = rng.normal(size=(4, 3)) * 3, spd(rng, 4, 3), rng.normal(size=(40, 3)) * 3, \
        spd(rng, 40, 3)
    exact = _cdist_full(qm, qS, m, S, resolve_backend("numpy", np))
    lam, U = np.linalg.eigh(qS)
    R = (U * np.sqrt(lam)[:, None, :]) @ U.transpose(0, 2, 1)
    D = screened_cdist(qm, R, np.trace(qS, axis1=1, axis2=2), np.sqrt(lam), m, S,
                       np.trace(S, axis1=1, axis2=2), np.sqrt(np.linalg.eigvalsh(S)), 2.0)
    fin = np.isfinite(D)
    assert 0 < fin.sum() < D.size
    np.testing.assert_allclose(D[fin], exact[fin], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.min(axis=1), exact.min(axis=1), rtol=1e-12)
    assert np.all(exact[~fin] > exact.min(axis=1, keepdims=True).repeat(40, 1)[~fin] + 2.0)


@pytest.mark.parametrize("bad, match", [
    (lambda S: S + np.triu(np.ones_like(S), 1), "symmetric"),
    (lambda S: S - 10 * np.eye(S.shape[-1]), "positive definite"),
    (lambda S: S[:, :2, :2], "shape"),
])
def test_bad_covariances_raise(bad, match):
    qm, qS, m, S = problem(11)
    with pytest.raises(ValueError, match=match):
        bures_wasserstein_cdist(qm, qS, m, bad(S))
    with pytest.raises(ValueError, match=match):
        bures_wasserstein_barycenter(m, bad(S))


def test_bad_weights_and_shapes_raise():
    qm, qS, m, S = problem(12)
    with pytest.raises(ValueError, match="nonnegative"):
        bures_wasserstein_barycenter(m, S, -np.ones(5))
    with pytest.raises(ValueError, match="entries per row"):
        bures_wasserstein_barycenter(m, S, np.ones(4))
    with pytest.raises(ValueError, match="dimension"):
        bures_wasserstein_cdist(qm[:, :3], qS[:, :3, :3], m, S)
    with pytest.raises(ValueError, match="positive sum"):
        bures_wasserstein_barycenter(m, S, np.zeros(5))
    with pytest.raises(ValueError, match="finite"):
        bures_wasserstein_cdist(qm * np.nan, qS, m, S)


def test_cupy_module_logic_on_numpy_namespace():
    """The CuPy module's code (device-sized blocks, zero-weight patterns dropped) run with
    the numpy namespace standing in for cupy, so CPU CI covers it."""
    import array_api_compat.numpy as npx
    from solvers.transport import _bures_cupy

    qm, qS, m, S = problem(13, Q=3, N=6, d=3)
    R = sqrtm_psd(qS)
    W = np.zeros((3, 6))
    W[0, 1], W[1, 4], W[2, 1] = 0.3, 0.7, 1.0
    got = _bures_cupy.weighted_root_sum(R, S, W, xp=npx)
    ref = np.stack([sum(W[q, i] * sqrtm_psd(R[q] @ S[i] @ R[q]) for i in range(6))
                    for q in range(3)])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-13)
    D = _bures_cupy.cdist_full(qm, R, np.trace(qS, axis1=1, axis2=2), m, S,
                               np.trace(S, axis1=1, axis2=2), xp=npx)
    np.testing.assert_allclose(D, loop_cdist(qm, qS, m, S), rtol=1e-11, atol=1e-12)


def test_sqrtm_psd_takes_backend_and_keeps_the_namespace(xp):
    """Issue 14: backend= instead of xp=; the result stays in the input's namespace and a
    -1e-16 rounding eigenvalue gives 0, not NaN."""
    from solvers._lib.namespace import array_namespace

    S = xp.asarray(np.array([[[4.0, 0.0], [0.0, -1e-16]], [[9.0, 0.0], [0.0, 1.0]]]))
    R = sqrtm_psd(S, backend="auto")
    assert array_namespace(R) is array_namespace(S)
    np.testing.assert_allclose(to_numpy(R), [[[2.0, 0.0], [0.0, 0.0]],
                                               [[3.0, 0.0], [0.0, 1.0]]], atol=1e-12)
    Rinv = sqrtm_psd(S[1:, ...], inverse=True)
    np.testing.assert_allclose(to_numpy(Rinv)[0], np.diag([1 / 3, 1.0]), rtol=1e-12)
    with pytest.raises(ValueError, match="S must be a stack of square matrices"):
        sqrtm_psd(xp.ones((2, 3)))
    with pytest.raises(TypeError):
        sqrtm_psd(S, xp=np)  # the old keyword is gone
