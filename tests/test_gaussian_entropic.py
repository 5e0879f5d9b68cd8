"""Closed-form entropic Gaussian plan (Janati et al. 2020) against independent checks."""
import numpy as np
import pytest

from solvers.transport import entropic_gaussian_plan
from tests.conftest import to_numpy


def _spd(rng, d, scale=1.0):
    M = rng.normal(size=(d, d))
    return scale * (M @ M.T / d + 0.3 * np.eye(d))


@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_plan_is_entropic_optimum(xp, eps):
    """The entropic plan is p0(x) p1(y) exp((f(x) + g(y) - |x-y|^2/2)/eps): its precision
    matrix's off-diagonal block is exactly -I/eps (marginals' precisions are block diagonal)."""
    rng = np.random.default_rng(0)
    d = 4
    a, b = rng.normal(size=d), rng.normal(size=d)
    A, B = _spd(rng, d), _spd(rng, d, 2.0)
    plan = entropic_gaussian_plan(xp.asarray(a), xp.asarray(A), xp.asarray(b), xp.asarray(B), eps)
    cov = to_numpy(plan.covariance)
    np.testing.assert_allclose(cov[:d, :d], A, rtol=1e-12)
    np.testing.assert_allclose(cov[d:, d:], B, rtol=1e-12)
    prec = np.linalg.inv(cov)
    np.testing.assert_allclose(prec[:d, d:], -np.eye(d) / eps, atol=1e-8 / eps)
    # conditional law: slope C^T A^-1 symmetric, covariance = Schur complement = eps S
    C = to_numpy(plan.cross_covariance)
    S = to_numpy(plan.slope)
    np.testing.assert_allclose(S, C.T @ np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_numpy(plan.conditional_covariance),
                               B - C.T @ np.linalg.inv(A) @ C, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(to_numpy(plan.intercept), b - S @ a, rtol=1e-12, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(S) > 0)


def test_diagonal_formula():
    a2, b2, eps = np.array([0.5, 1.0, 3.0]), np.array([2.0, 0.1, 1.0]), 0.7
    plan = entropic_gaussian_plan(np.zeros(3), np.diag(a2), np.ones(3), np.diag(b2), eps)
    want = (np.sqrt(4 * a2 * b2 + eps ** 2) - eps) / (2 * a2)
    np.testing.assert_allclose(np.diag(plan.slope), want, rtol=1e-12)
    np.testing.assert_allclose(plan.slope - np.diag(np.diag(plan.slope)), 0, atol=1e-14)


def test_small_eps_tends_to_monge_map():
    rng = np.random.default_rng(1)
    A, B = _spd(rng, 3), _spd(rng, 3)
    w, U = np.linalg.eigh(A)
    Ah, Amh = U @ np.diag(w ** .5) @ U.T, U @ np.diag(w ** -.5) @ U.T
    w2, U2 = np.linalg.eigh(Ah @ B @ Ah)
    T = Amh @ (U2 @ np.diag(w2 ** .5) @ U2.T) @ Amh
    plan = entropic_gaussian_plan(np.zeros(3), A, np.zeros(3), B, 1e-7)
    np.testing.assert_allclose(plan.slope, T, rtol=1e-5, atol=1e-6)


def test_bridge_marginal_endpoints_and_sampling():
    rng = np.random.default_rng(2)
    d, eps, t = 2, 0.5, 0.3
    a, b, A, B = rng.normal(size=d), rng.normal(size=d), _spd(rng, d), _spd(rng, d)
    plan = entropic_gaussian_plan(a, A, b, B, eps)
    m0, S0 = plan.bridge_marginal(0.0)
    m1, S1 = plan.bridge_marginal(1.0)
    np.testing.assert_allclose(S0, A, rtol=1e-12)
    np.testing.assert_allclose(S1, B, rtol=1e-12)
    # sample the Brownian bridge from plan samples and compare the mean (CLT tolerance)
    n = 200_000
    xy = rng.multivariate_normal(plan.mean, plan.covariance, size=n)
    xt = (1 - t) * xy[:, :d] + t * xy[:, d:] + np.sqrt(eps * t * (1 - t)) * rng.normal(size=(n, d))
    mt, St = plan.bridge_marginal(t)
    se = np.sqrt(np.diag(St) / n)
    assert np.all(np.abs(xt.mean(0) - mt) < 5 * se)
    np.testing.assert_allclose(np.cov(xt.T), St, atol=5 * np.sqrt(2 / n) * np.max(np.diag(St)))


def test_bad_input():
    I = np.eye(2)
    with pytest.raises(ValueError, match="epsilon"):
        entropic_gaussian_plan(np.zeros(2), I, np.zeros(2), I, 0.0)
    with pytest.raises(ValueError, match="B must have shape"):
        entropic_gaussian_plan(np.zeros(2), I, np.zeros(2), np.eye(3), 1.0)
    with pytest.raises(ValueError, match="positive definite"):
        entropic_gaussian_plan(np.zeros(2), -I, np.zeros(2), I, 1.0)
    with pytest.raises(ValueError, match="finite"):
        entropic_gaussian_plan(np.array([np.nan, 0.0]), I, np.zeros(2), I, 1.0)
    with pytest.raises(ValueError, match="bridge|t must"):
        entropic_gaussian_plan(np.zeros(2), I, np.zeros(2), I, 1.0).bridge_marginal(1.5)
