"""Safe-KL applications: the KL-DRO bar and semi-dual entropic OT against POT."""
import numpy as np
import pytest
from scipy.optimize import check_grad

from solvers.lse import (dro_dataset, kl_dro, kl_dro_objective, kl_dro_losses,
                                      semidual_ot, semidual_ot_objective)


@pytest.fixture(scope="module")
def dro_problem():
    X, y = dro_dataset(20000, 10, "logistic", rng=0)
    exact = kl_dro(X, y, lam=0.3, loss="logistic", method="lbfgs")
    return X, y, exact


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_kl_dro_objective_gradient(loss):
    X, y = dro_dataset(300, 3, loss, rng=1)
    for lam in (0.5, 5.0):
        f = lambda t: kl_dro_objective(t, X, y, lam=lam, loss=loss, l2=0.1)[0]
        g = lambda t: kl_dro_objective(t, X, y, lam=lam, loss=loss, l2=0.1)[1]
        t0 = np.random.default_rng(2).normal(size=4) * 0.3
        assert check_grad(f, g, t0) < 1e-5 * (1 + np.linalg.norm(g(t0)))
    # lam -> inf is the empirical risk, lam -> 0 the worst-case loss
    t0 = np.full(4, 0.2)
    losses, _ = kl_dro_losses(t0, X, y, loss)
    assert kl_dro_objective(t0, X, y, lam=1e6, loss=loss)[0] == pytest.approx(losses.mean(),
                                                                              rel=1e-4)
    assert kl_dro_objective(t0, X, y, lam=1e-3, loss=loss)[0] == pytest.approx(losses.max(),
                                                                               rel=1e-2)


def test_lbfgs_reaches_the_exact_optimum(dro_problem):
    X, y, exact = dro_problem
    _, grad = kl_dro_objective(exact.x, X, y, lam=0.3, loss="logistic")
    assert exact.success and np.linalg.norm(grad) < 1e-6


def test_kl_dro_bar_safe_kl_within_one_percent_naive_biased(dro_problem):
    """>= 20k terms, 5 epochs: Safe-KL within 1% of the exact optimum, naive is not."""
    X, y, exact = dro_problem
    common = dict(lam=0.3, loss="logistic", epochs=5, batch_size=32, lr=0.05, rng=0)
    safe = kl_dro(X, y, method="safe-kl", rho=0.005, **common)
    naive = kl_dro(X, y, method="naive", **common)
    gap_safe = (safe.fun - exact.fun) / exact.fun
    gap_naive = (naive.fun - exact.fun) / exact.fun
    assert safe.nfev <= 5 * X.shape[0]
    assert 0 <= gap_safe < 0.01
    assert gap_naive > 0.01 and gap_naive > 3 * gap_safe


@pytest.mark.slow
def test_naive_stalls_with_more_epochs(dro_problem):
    """Its bias, not its variance: three times the budget leaves the naive gap above 1%."""
    X, y, exact = dro_problem
    naive = kl_dro(X, y, lam=0.3, loss="logistic", method="naive", epochs=15, batch_size=32,
                   lr=0.05, rng=1)
    assert (naive.fun - exact.fun) / exact.fun > 0.01


def test_kl_dro_errors():
    X, y = dro_dataset(100, 2, rng=0)
    with pytest.raises(ValueError, match="lam"):
        kl_dro(X, y, lam=0.0)
    with pytest.raises(ValueError, match="method"):
        kl_dro(X, y, lam=1.0, method="sgd")
    with pytest.raises(ValueError, match="finite"):
        kl_dro(np.where(X > 2, np.nan, X), y, lam=1.0)
    with pytest.raises(ValueError, match="shape"):
        kl_dro(X, y[:-1], lam=1.0)


# --- semi-dual OT vs POT ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def ot_problem():
    import ot

    rng = np.random.default_rng(0)
    n, m, eps = 200, 100, 0.5
    X, Y = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)) + 1.0
    a = rng.uniform(0.5, 1.5, size=n)
    a /= a.sum()
    b = rng.uniform(0.5, 1.5, size=m)
    b /= b.sum()
    M = ot.dist(X, Y)
    G, log = ot.sinkhorn(a, b, M, eps, method="sinkhorn_log", log=True, stopThr=1e-13,
                         numItermax=100000)
    g = eps * log["log_v"] - eps * np.log(b)  # POT's g, in our convention
    return X, Y, a, b, eps, M, G, g - np.average(g, weights=b)


def test_semidual_gradient(ot_problem):
    X, Y, a, b, eps, *_ = ot_problem
    v0 = np.random.default_rng(3).normal(size=Y.shape[0])
    f = lambda v: semidual_ot_objective(v, X, Y, epsilon=eps, a=a, b=b, block_size=64)[0]
    g = lambda v: semidual_ot_objective(v, X, Y, epsilon=eps, a=a, b=b, block_size=64)[1]
    assert check_grad(f, g, v0) < 1e-6


def test_lbfgs_potentials_and_plan_match_pot_sinkhorn(ot_problem):
    X, Y, a, b, eps, M, G, g_pot = ot_problem
    res = semidual_ot(X, Y, epsilon=eps, a=a, b=b, method="lbfgs")
    v = res.x - np.average(res.x, weights=b)
    np.testing.assert_allclose(v, g_pot, atol=1e-6 * np.ptp(g_pot))
    plan = a[:, None] * b[None, :] * np.exp((res.u[:, None] + res.x[None, :] - M) / eps)
    np.testing.assert_allclose(plan, G, rtol=1e-4, atol=1e-9)
    # the semi-dual maximum is the entropic cost <G, M> + eps KL(G | a x b)
    kl = np.sum(G * np.log(G / (a[:, None] * b[None, :])))
    assert res.fun == pytest.approx(np.sum(G * M) + eps * kl, rel=1e-8)


@pytest.mark.parametrize("method", ["safe-kl", "sgd"])
def test_stochastic_potentials_close_to_pot(ot_problem, method):
    X, Y, a, b, eps, M, G, g_pot = ot_problem
    exact_value = semidual_ot_objective(g_pot, X, Y, epsilon=eps, a=a, b=b)[0]
    res = semidual_ot(X, Y, epsilon=eps, a=a, b=b, method=method, rng=0)
    v = res.x - np.average(res.x, weights=b)
    rms = np.sqrt(np.average((v - g_pot) ** 2, weights=b))
    assert rms < 0.02 * np.ptp(g_pot)
    assert 0 <= exact_value - res.fun < 2e-3 * exact_value


def test_sgd_with_a_continuous_source():
    rng = np.random.default_rng(4)
    Y = rng.normal(size=(50, 2))

    def sampler(gen, size):
        return gen.normal(size=(size, 2))

    res = semidual_ot(sampler, Y, epsilon=1.0, method="sgd", maxiter=400, rng=0)
    ref = semidual_ot(sampler(np.random.default_rng(9), 8000), Y, epsilon=1.0, method="lbfgs")
    d = (res.x - res.x.mean()) - (ref.x - ref.x.mean())
    assert np.sqrt(np.mean(d ** 2)) < 0.05 * np.ptp(ref.x)
    with pytest.raises(ValueError, match="sampler"):
        semidual_ot(sampler, Y, epsilon=1.0, method="safe-kl")


def test_semidual_errors():
    Y = np.zeros((3, 2))
    with pytest.raises(ValueError, match="epsilon"):
        semidual_ot(np.zeros((4, 2)), Y, epsilon=0.0)
    with pytest.raises(ValueError, match="columns"):
        semidual_ot(np.zeros((4, 3)), Y, epsilon=1.0)
    with pytest.raises(ValueError, match="b must"):
        semidual_ot(np.zeros((4, 2)), Y, epsilon=1.0, b=[1.0, -1.0, 1.0])


def test_kl_dro_objective_rejects_non_positive_temperature():
    from solvers.lse import kl_dro_objective

    X, y = np.ones((4, 1)), np.zeros(4)
    with pytest.raises(ValueError, match="lam must be > 0"):
        kl_dro_objective(np.zeros(1), X, y, lam=0.0)
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        kl_dro_objective(np.zeros(1), X, y, lam=1.0, l2=-1.0)
