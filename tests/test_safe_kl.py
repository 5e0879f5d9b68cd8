"""Safe-KL stochastic LogSumExp: the surrogate, its bounds, unbiasedness, the solver."""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import solvers
from solvers import logsumexp, safe_logsumexp, minimize_logsumexp
from solvers.lse.safe_kl import safe_kl_terms
from solvers.lse._safe_kl_solver import estimator_step
from solvers._lib.backend import resolve_backend
from conftest import to_numpy
from naive import logsumexp_loop, safe_kl_shift


# --- slow obvious reference (tests/naive.py) ----------------------------------------------

def safe_lme_reference(a, rho, mu=None):
    """``(F_rho, F)``: the Safe-KL surrogate of the log-mean-exp (bisection on the shift,
    ``math.fsum``) and the exact log-mean-exp, under the normalised weights ``mu``."""
    mu = np.full(len(a), 1.0 / len(a)) if mu is None else np.asarray(mu) / np.sum(mu)
    return safe_kl_shift(a, rho, mu)[1], logsumexp_loop(a, mu)[0]


def kappa_of(a, mu=None):
    """E e^{2a} / (E e^a)^2 under mu."""
    b = None if mu is None else mu
    n = 1.0 if mu is not None else len(a)
    return math.exp(float(logsumexp(2 * a, b=b)) - math.log(n)
                    - 2 * (float(logsumexp(a, b=b)) - math.log(n)))


def random_instance(rng, n):
    scale = rng.uniform(0.1, 2.0)
    return rng.normal(size=n) * scale + rng.normal() * 10


# --- the surrogate ---------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_matches_reference_and_bias_bound(backend):
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(30):
        n = int(rng.integers(1, 60))
        a = random_instance(rng, n)
        weighted = rng.random() < 0.5
        mu = rng.uniform(0.1, 1.0, size=n) if weighted else None
        mu_n = None if mu is None else mu / mu.sum()
        for rho in (0.5, 0.1, 0.01, 1e-4):
            got = float(safe_logsumexp(a, rho, b=mu, backend=backend))
            log_total = math.log(mu.sum()) if weighted else math.log(n)
            ref, F = safe_lme_reference(a, rho, mu_n)
            F_rho = got - log_total
            assert F_rho == pytest.approx(ref, abs=1e-9 * (1 + abs(ref)))
            # upper bound F_rho <= F, and the lower bound whenever rho * kappa < 1
            assert F_rho <= F + 1e-12 * (1 + abs(F))
            kap = kappa_of(a, mu_n)
            if rho * kap < 1:
                assert F + rho / 2 + math.log1p(-rho * kap) <= F_rho + 1e-12 * (1 + abs(F))
                checked += 1
    assert checked > 50


def test_converges_to_logsumexp_as_rho_vanishes():
    rng = np.random.default_rng(1)
    a = rng.normal(size=500) * 1.5
    F = float(logsumexp(a))
    kap = kappa_of(a)
    errors = []
    for rho in (1e-1, 1e-2, 1e-3, 1e-4, 1e-6):
        err = F - float(safe_logsumexp(a, rho))
        assert 0 <= err <= -(rho / 2 + math.log1p(-rho * kap)) + 1e-12
        errors.append(err)
    assert all(e1 > e2 for e1, e2 in zip(errors, errors[1:]))
    # first order in rho: the error ratio over a decade is about 10
    assert 5 < errors[2] / errors[3] < 20
    assert errors[-1] < 1e-5


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_convex_midpoint(backend):
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        a1, a2 = random_instance(rng, n), random_instance(rng, n)
        rho = float(rng.choice([0.5, 0.1, 0.01]))
        mid = float(safe_logsumexp((a1 + a2) / 2, rho, backend=backend))
        ends = (float(safe_logsumexp(a1, rho, backend=backend))
                + float(safe_logsumexp(a2, rho, backend=backend))) / 2
        assert mid <= ends + 1e-10 * (1 + abs(ends))


def test_axes_weights_and_namespaces(xp):
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 5, 7)) * 2
    Bw = rng.uniform(0.0, 1.0, size=(3, 5, 7))
    Bw[0, 0, :] = 0.0
    expected = np.empty((3, 7))
    for i in range(3):
        for k in range(7):
            expected[i, k] = float(safe_logsumexp(A[i, :, k], 0.05, b=Bw[i, :, k],
                                                  backend="numpy"))
    got = safe_logsumexp(xp.asarray(A), 0.05, axis=1, b=xp.asarray(Bw))
    np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-12)
    kept = safe_logsumexp(xp.asarray(A), 0.05, axis=(0, 2), keepdims=True)
    assert tuple(kept.shape) == (1, 5, 1)
    full = safe_logsumexp(xp.asarray(A), 1e-9)
    assert float(full) == pytest.approx(float(logsumexp(A)), abs=1e-7)


def test_backends_agree(backend):
    A = np.random.default_rng(4).normal(size=(40, 300)) * 3
    ref = safe_logsumexp(A, 0.02, axis=1, backend="numpy")
    np.testing.assert_allclose(safe_logsumexp(A, 0.02, axis=1, backend=backend), ref,
                               rtol=1e-12)


def test_shift_gives_capped_weights_summing_to_one():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=50) * 3, rng.uniform(0.5, 2.0, size=50)
    rho = 0.2
    value, shift = safe_logsumexp(a, rho, b=b, return_shift=True)
    p = b / (rho * b.sum() + np.exp(shift - a))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(p <= b / b.sum() / rho)
    assert value <= logsumexp(a, b=b)


def test_special_values():
    nan, inf = math.nan, math.inf
    A = np.array([[0.0, 1.0, -inf], [inf, 1.0, 0.0], [nan, 1.0, 0.0], [-inf, -inf, -inf]])
    for backend in ("numpy", "numba"):
        got = safe_logsumexp(A, 0.1, axis=1, backend=backend)
        assert np.isfinite(got[0])
        # a -inf term keeps its share 1/n of the reference measure (unlike b == 0)
        ref = safe_lme_reference([0.0, 1.0, -60.0], 0.1)[0] + math.log(3)
        assert got[0] == pytest.approx(ref, rel=1e-9)
        assert got[0] < float(logsumexp([0.0, 1.0]))
        assert got[1] == inf and np.isnan(got[2]) and got[3] == -inf
    # b == 0 drops a term even where a is +inf
    assert float(safe_logsumexp([inf, 0.0, 1.0], 0.1, b=[0.0, 1.0, 1.0])) == \
        pytest.approx(float(safe_logsumexp([0.0, 1.0], 0.1)))
    assert safe_logsumexp(np.zeros((2, 0)), 0.1, axis=1).tolist() == [-inf, -inf]


def test_no_overflow_float64_up_to_1e4():
    a = np.array([1e4, 9990.0, 0.0, -1e4])
    for rho in (0.5, 1e-3, 1e-12):
        got = float(safe_logsumexp(a, rho))
        assert np.isfinite(got)
        assert got <= float(logsumexp(a)) + 1e-9
    assert float(safe_logsumexp(a, 1e-12)) == pytest.approx(float(logsumexp(a)), abs=1e-8)
    w, h = safe_kl_terms(a, 0.0, 0.01)
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(h)) and w.max() <= 100.0


def test_float32_limit():
    """float32: e^x overflows at x > 88.7, Safe-KL never forms it; the value stays within
    the rounding of the input, eps32 * max|a|."""
    a64 = np.array([1e4, 9995.0, 9990.5, 0.0, -1e4])
    a32 = a64.astype(np.float32)
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float32(100.0)))  # the naive weight would overflow
    for backend in ("numpy", "numba"):
        got = safe_logsumexp(a32, 0.01, backend=backend)
        assert got.dtype == np.float32 and np.isfinite(got)
        ref = float(safe_logsumexp(a32.astype(np.float64), 0.01))
        assert abs(float(got) - ref) <= 4 * np.finfo(np.float32).eps * 1e4
    w, h = safe_kl_terms(a32, np.float32(0.0), 0.01)
    assert w.dtype == np.float32 and np.all(np.isfinite(w)) and np.all(np.isfinite(h))


def test_errors():
    with pytest.raises(ValueError, match="rho"):
        safe_logsumexp([1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="rho"):
        safe_logsumexp([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="non-negative"):
        safe_logsumexp([1.0, 2.0], 0.1, b=[1.0, -1.0])


# --- unbiasedness by enumeration -------------------------------------------------------------

def _toy_phi(theta, batch):
    """phi_i(theta) = theta . z_i - |theta|^2 / 2 * c_i; jac = z_i - c_i theta."""
    z, c = batch[:, :2], batch[:, 2]
    values = z @ theta - 0.5 * c * (theta @ theta)
    jac = z - c[:, None] * theta[None, :]
    return values, jac


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_minibatch_gradient_is_unbiased_by_enumeration(backend):
    rng = np.random.default_rng(6)
    data = np.c_[rng.normal(size=(7, 2)) * 2, rng.uniform(0.5, 1.5, size=7)]
    theta, s, rho = np.array([0.3, -0.7]), 0.4, 0.2
    be = resolve_backend(backend, np)

    def joint(theta_, s_):  # s - 1 + mean h(phi - s), the full objective
        values, _ = _toy_phi(theta_, data)
        return s_ - 1.0 + np.mean(safe_kl_terms(values, s_, rho)[1])

    # full gradient by central differences (independent of the weight formula)
    eps = 1e-6
    g_theta = np.array([(joint(theta + eps * e, s) - joint(theta - eps * e, s)) / (2 * eps)
                        for e in np.eye(2)])
    g_s = (joint(theta, s + eps) - joint(theta, s - eps)) / (2 * eps)
    for B in (1, 3):
        batches = list(itertools.combinations(range(7), B))
        gx_sum, gs_sum = np.zeros(2), 0.0
        for idx in batches:
            values, jac = _toy_phi(theta, data[list(idx)])
            gx, gs, _ = estimator_step(values, jac, np.asarray(s), rho, "safe-kl", be)
            gx_sum += gx
            gs_sum += float(gs)
        np.testing.assert_allclose(gx_sum / len(batches), g_theta, atol=1e-8)
        assert gs_sum / len(batches) == pytest.approx(g_s, abs=1e-8)


def test_naive_minibatch_gradient_is_biased_by_enumeration():
    rng = np.random.default_rng(6)
    data = np.c_[rng.normal(size=(7, 2)) * 2, rng.uniform(0.5, 1.5, size=7)]
    theta = np.array([0.3, -0.7])
    values, jac = _toy_phi(theta, data)
    full = solvers.softmax(values) @ jac  # gradient of the exact log-mean-exp
    be = resolve_backend("numpy", np)
    batches = list(itertools.combinations(range(7), 3))
    mean = sum(estimator_step(*_toy_phi(theta, data[list(i)]), None, 0.1, "naive", be)[0]
               for i in batches) / len(batches)
    assert np.linalg.norm(mean - full) > 0.05 * np.linalg.norm(full)


# --- the stochastic solver ------------------------------------------------------------------

def _quadratic_problem(xp, n=4000):
    # log E exp(-x A + x^2/2) with A ~ N(1, 1): x^2 - x, minimal at 0.5 (for the sample:
    # the minimizer of the exact log-mean-exp, computed below)
    a = np.random.default_rng(7).normal(1.0, 1.0, size=n)

    def phi(x, batch):
        return -x[0] * batch + x[0] ** 2 / 2, xp.reshape(x[0] - batch, (-1, 1))

    res = minimize_scalar(lambda t: float(logsumexp(-t * a + t * t / 2)), bounds=(-2, 2),
                          method="bounded", options={"xatol": 1e-10})
    return a, phi, res.x


def test_minimize_on_every_namespace(xp):
    a, phi, x_star = _quadratic_problem(xp)
    res = minimize_logsumexp(phi, xp.zeros(1, dtype=xp.float64), xp.asarray(a), rho=0.01,
                             batch_size=32, epochs=3, lr=0.05, rng=0)
    assert res.success and res.nit == 3 * (4000 // 32) and res.nfev == res.nit * 32
    assert abs(float(res.x[0]) - x_star) < 0.03
    # s tracks the log-mean-exp at x (minus O(rho))
    lme = float(logsumexp(-x_star * a + x_star ** 2 / 2)) - math.log(a.size)
    assert abs(res.s - lme) < 0.05
    assert len(res.history["nit"]) >= 50


def test_reproducible_and_backends_agree(backend):
    a, phi, _ = _quadratic_problem(np)
    kwargs = dict(rho=0.01, batch_size=16, maxiter=200, lr=0.05, rng=3)
    ref = minimize_logsumexp(phi, np.zeros(1), a, backend="numpy", **kwargs)
    got = minimize_logsumexp(phi, np.zeros(1), a, backend=backend, **kwargs)
    np.testing.assert_allclose(got.x, ref.x, rtol=1e-10)
    assert got.s == pytest.approx(ref.s, rel=1e-10)


def test_sampler_infinite_population_and_router():
    def sampler(rng, size):
        return rng.normal(1.0, 1.0, size=size)

    def phi(x, batch):
        return -x[0] * batch + x[0] ** 2 / 2, (x[0] - batch)[:, None]

    res = minimize_logsumexp(phi, np.zeros(1), sampler, rho=0.01, batch_size=32,
                             maxiter=600, lr=0.05, rng=1)
    assert abs(res.x[0] - 0.5) < 0.05  # the population optimum
    routed = solvers.minimize(phi, np.zeros(1), method="safe-kl", data=sampler, rho=0.01,
                              batch_size=32, maxiter=600, lr=0.05, rng=1)
    np.testing.assert_allclose(routed.x, res.x)


def test_shift_invariance_with_huge_exponents():
    """phi + 1e4 must give the same iterates (the shift absorbs it) and never overflow."""
    a, phi, _ = _quadratic_problem(np)

    def phi_big(x, batch):
        v, j = phi(x, batch)
        return v + 1e4, j

    kwargs = dict(rho=0.01, batch_size=32, maxiter=300, lr=0.05, rng=2, backend="numpy")
    r0 = minimize_logsumexp(phi, np.zeros(1), a, **kwargs)
    r1 = minimize_logsumexp(phi_big, np.zeros(1), a, **kwargs)
    assert r1.success and np.all(np.isfinite(r1.x))
    np.testing.assert_allclose(r1.x, r0.x, atol=1e-6)
    assert r1.s == pytest.approx(r0.s + 1e4, abs=1e-6)


def test_callback_stops_and_options_checked():
    a, phi, _ = _quadratic_problem(np)
    seen = []

    def cb(res):
        seen.append(res.nit)
        if res.nit == 5:
            raise StopIteration

    res = minimize_logsumexp(phi, np.zeros(1), a, maxiter=100, callback=cb, rng=0)
    assert res.nit == 5 and res.status == 99 and seen == [1, 2, 3, 4, 5]
    assert not res.success  # SciPy: a callback stop is not a success
    with pytest.raises(ValueError, match="batch_size"):
        minimize_logsumexp(phi, np.zeros(1), a[:10], batch_size=11, maxiter=1)
    with pytest.raises(ValueError, match="rho"):
        minimize_logsumexp(phi, np.zeros(1), a, rho=1.5, maxiter=1)
    with pytest.raises(ValueError, match="jac"):
        minimize_logsumexp(lambda x, b: (b, b), np.zeros(1), a, maxiter=1)
    with pytest.raises(ValueError, match="epochs or maxiter"):
        minimize_logsumexp(phi, np.zeros(1), a)
    with pytest.raises(TypeError, match="unknown option"):
        solvers.minimize(phi, np.zeros(1), method="safe-kl", data=a, maxiter=1, bounds=[(0, 1)])
    bad = minimize_logsumexp(lambda x, b: (b * np.nan, b[:, None]), np.zeros(1), a,
                             maxiter=3)
    assert not bad.success and "non-finite" in bad.message


def test_options_schedule_sgd_last_iterate_float32_progress(capsys):
    a, phi, x_star = _quadratic_problem(np)
    seen_rho = []
    res = minimize_logsumexp(phi, np.zeros(1), a, rho=lambda k: seen_rho.append(k) or
                             0.1 / math.sqrt(1 + k), batch_size=32, epochs=3, lr=0.05,
                             rng=0, average=None)
    assert seen_rho[:3] == [0, 1, 2] and res.rho == pytest.approx(0.1 / math.sqrt(res.nit))
    assert np.array_equal(res.x, res.x_last)
    sgd = minimize_logsumexp(phi, np.zeros(1), a, optimizer="sgd", lr=0.2, batch_size=32,
                             epochs=3, rng=0)
    assert abs(sgd.x[0] - x_star) < 0.05
    r32 = minimize_logsumexp(phi, np.zeros(1, dtype=np.float32), a.astype(np.float32),
                             batch_size=32, epochs=2, lr=0.05, rng=0, progress=True)
    assert r32.x.dtype == np.float32 and abs(float(r32.x[0]) - x_star) < 0.05
    assert "minimize_logsumexp" in capsys.readouterr().err


def test_kl_dro_on_every_namespace(xp):
    from solvers.lse import dro_dataset, kl_dro

    X, y = dro_dataset(2000, 3, "logistic", rng=0)
    ref = kl_dro(X, y, lam=1.0, loss="logistic", epochs=2, rng=0, backend="numpy")
    got = kl_dro(xp.asarray(X), xp.asarray(y), lam=1.0, loss="logistic", epochs=2, rng=0)
    np.testing.assert_allclose(to_numpy(got.x), ref.x, rtol=1e-10)
    assert got.fun == pytest.approx(ref.fun, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numba_step_kernel_matches_generic(dtype):
    from solvers.lse._safe_kl_numba import step_terms

    rng = np.random.default_rng(8)
    values = (rng.normal(size=50) * 30).astype(dtype)
    values[:4] = [np.inf, -np.inf, 1e4, -1e4]
    jac = rng.normal(size=(50, 3)).astype(dtype)
    s, rho = dtype(2.0), 0.05
    w, h = safe_kl_terms(values, s, rho)
    gx, mean_w, mean_h = step_terms(values, jac, s, rho)
    assert w[0] == pytest.approx(1 / rho) and w[1] == 0.0 and h[1] == 0.0
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(gx, (w @ jac) / 50, rtol=rtol, atol=rtol)
    assert gx.dtype == dtype
    assert mean_w == pytest.approx(float(np.mean(w, dtype=np.float64)), rel=rtol)
    # h is +inf for an infinite exponent in both
    assert np.isinf(h[0]) and np.isinf(mean_h)
    values[5] = np.nan
    gx, mean_w, _ = step_terms(values, jac, s, rho)
    assert np.isnan(mean_w) and np.all(np.isnan(gx))
