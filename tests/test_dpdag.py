"""DP-DAG model: acyclicity of every sample, exact probabilities by enumeration,
chi-square goodness of fit of the samplers, hand-written ELBO gradients vs finite
differences, and VI-DP-DAG on small problems."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from solvers.dag.dpdag import DPDAG
from solvers.dag._dpdag_vi import _elbo_grad, _bernoulli_kl, _draw_noise
from solvers.dag._dpdag_learn import _order_score
from solvers._lib.rng import Draws
from tests.conftest import to_numpy
from naive import plackett_luce_prob

LEVEL = 1e-3  # significance level of every chi-square test below (fixed seeds)


def kahn_acyclic(A):
    """Batched Kahn peeling, independent of the sampler: True per graph if acyclic."""
    A = np.asarray(A, dtype=bool)
    B, d, _ = A.shape
    indeg = A.sum(axis=1).astype(np.int64)
    removed = np.zeros((B, d), dtype=bool)
    ok = np.ones(B, dtype=bool)
    rows = np.arange(B)
    for _ in range(d):
        ready = (indeg == 0) & ~removed
        has = ready.any(axis=1)
        ok &= has
        v = np.argmax(ready, axis=1)
        v_rows = rows[has]
        removed[v_rows, v[has]] = True
        indeg[has] -= A[v_rows, v[has], :]
        indeg[removed] = -1
    return ok & removed.all(axis=1)


def all_dags(d):
    """Every DAG on d labelled nodes (brute force over 2^(d(d-1)) graphs)."""
    pairs = [(i, j) for i in range(d) for j in range(d) if i != j]
    out = []
    for bits in itertools.product([0, 1], repeat=len(pairs)):
        A = np.zeros((d, d), dtype=bool)
        for b, (i, j) in zip(bits, pairs):
            A[i, j] = b
        if kahn_acyclic(A[None])[0]:
            out.append(A)
    return np.array(out)


def chi2_pvalue(counts, probs, min_expected=5.0):
    """Pearson chi-square p-value, pooling cells with expected count < min_expected."""
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(probs) * counts.sum()
    small = expected < min_expected
    if small.any():
        counts = np.append(counts[~small], counts[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    return stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue


def test_kahn_helper_detects_cycles():
    cyc = np.zeros((1, 3, 3), dtype=bool)
    cyc[0, 0, 1] = cyc[0, 1, 2] = cyc[0, 2, 0] = True
    assert not kahn_acyclic(cyc)[0]
    assert len(all_dags(3)) == 25 and len(all_dags(2)) == 3  # OEIS A003024


@pytest.mark.parametrize("d", [5, 50])
@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_every_sample_is_a_dag(d, backend):
    rng = np.random.default_rng(d)
    model = DPDAG(rng.normal(size=d), rng.normal(scale=2.0, size=(d, d)))
    A, orders = model.sample_dags(10_000, rng=1, backend=backend, return_orders=True)
    assert A.shape == (10_000, d, d) and A.dtype == bool
    assert kahn_acyclic(A).all()
    assert not A[:, np.arange(d), np.arange(d)].any()
    # the orders are permutations and every edge goes forward in its order
    assert (np.sort(orders, axis=1) == np.arange(d)).all()
    pos = np.argsort(orders, axis=1)
    assert not (A & (pos[:, :, None] > pos[:, None, :])).any()


@pytest.mark.slow
def test_every_sample_is_a_dag_d200():
    d = 200
    rng = np.random.default_rng(200)
    model = DPDAG(rng.normal(size=d), rng.normal(scale=2.0, size=(d, d)))
    bad = 0
    for chunk in range(10):  # 10^4 samples in chunks of 10^3 (40 MB each)
        A = model.sample_dags(1000, rng=chunk)
        bad += int((~kahn_acyclic(A)).sum())
    assert bad == 0


def test_log_prob_order_is_plackett_luce_and_normalised(xp):
    theta = np.array([0.5, -1.0, 2.0, 0.0])
    model = DPDAG(xp.asarray(theta), xp.zeros((4, 4), dtype=xp.float64))
    perms = np.array(list(itertools.permutations(range(4))))
    lp = to_numpy(model.log_prob_order(xp.asarray(perms)))
    ref = np.array([plackett_luce_prob(theta, p) for p in perms])
    np.testing.assert_allclose(np.exp(lp), ref, rtol=1e-12)
    assert abs(ref.sum() - 1) < 1e-12


@pytest.mark.parametrize("d", [2, 3, 4])
def test_log_prob_dag_sums_to_one_and_matches_brute_force(d):
    rng = np.random.default_rng(10 + d)
    theta, phi = rng.normal(size=d), rng.normal(size=(d, d))
    model = DPDAG(theta, phi)
    dags = all_dags(d)
    p = np.exp(model.log_prob_dag(dags))
    assert abs(p.sum() - 1) < 1e-12
    # brute force over orders and all d^2 edge indicators for two graphs
    q = 1 / (1 + np.exp(-phi))
    for A in dags[[0, -1]]:
        tot = 0.0
        for order in itertools.permutations(range(d)):
            pos = np.argsort(order)
            M = pos[:, None] < pos[None, :]
            if (A & ~M).any():
                continue
            lik = np.prod(np.where(M, np.where(A, q, 1 - q), 1.0))
            tot += plackett_luce_prob(theta, order) * lik
        np.testing.assert_allclose(np.exp(model.log_prob_dag(A)), tot, rtol=1e-12)
    # a cyclic graph has probability zero
    cyc = np.zeros((d, d), dtype=bool)
    cyc[0, 1] = cyc[1, 0] = True
    assert model.log_prob_dag(cyc) == -np.inf


def test_edge_marginals_closed_form_matches_enumeration():
    rng = np.random.default_rng(3)
    model = DPDAG(rng.normal(size=4), rng.normal(size=(4, 4)))
    dags = all_dags(4)
    p = np.exp(model.log_prob_dag(dags))
    np.testing.assert_allclose(np.tensordot(p, dags, axes=1), model.edge_marginals(),
                               atol=1e-12)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("d", [3, 4])
def test_sampled_orders_and_dags_match_exact_probabilities(backend, d):
    """Pearson chi-square at level LEVEL (cells with expected count < 5 pooled)."""
    rng = np.random.default_rng(100 + d)
    model = DPDAG(rng.normal(size=d), rng.normal(size=(d, d)))
    n = 40_000
    A, orders = model.sample_dags(n, rng=7, backend=backend, return_orders=True)
    perms = np.array(list(itertools.permutations(range(d))))
    keys = {tuple(p): k for k, p in enumerate(perms)}
    counts = np.bincount([keys[tuple(o)] for o in orders], minlength=len(perms))
    assert chi2_pvalue(counts, np.exp(model.log_prob_order(perms))) > LEVEL
    dags = all_dags(d)
    code = 1 << np.arange(d * d)
    index = {int(c): k for k, c in enumerate(dags.reshape(len(dags), -1) @ code)}
    idx = np.array([index[int(c)] for c in A.reshape(n, -1).astype(np.int64) @ code])
    counts = np.bincount(idx, minlength=len(dags))
    assert chi2_pvalue(counts, np.exp(model.log_prob_dag(dags))) > LEVEL


def test_chi_square_detects_a_wrong_model():
    """Power check: samples of one model are rejected against another's probabilities."""
    rng = np.random.default_rng(5)
    theta, phi = rng.normal(size=3), rng.normal(size=(3, 3))
    A = DPDAG(theta, phi).sample_dags(40_000, rng=1)
    wrong = DPDAG(theta, phi + 0.2)
    dags = all_dags(3)
    code = 1 << np.arange(9)
    index = {int(c): k for k, c in enumerate(dags.reshape(len(dags), -1) @ code)}
    idx = np.array([index[int(c)] for c in A.reshape(len(A), -1).astype(np.int64) @ code])
    assert chi2_pvalue(np.bincount(idx, minlength=25),
                       np.exp(wrong.log_prob_dag(dags))) < LEVEL


def test_generic_sampler_on_strict_namespace(xp):
    theta = xp.asarray([1.0, 0.0, -1.0])
    model = DPDAG(theta, xp.zeros((3, 3), dtype=xp.float64))
    A = model.sample_dags(2000, rng=0, backend="auto")
    A = to_numpy(A)
    assert kahn_acyclic(A).all()
    # edge frequencies vs closed-form marginals, 5 standard errors
    p = to_numpy(model.edge_marginals())
    se = np.sqrt(p * (1 - p) / 2000) + 1e-12
    assert np.all(np.abs(A.mean(axis=0) - p) < 5 * se + 1e-9)


def test_sinkhorn_order_model():
    rng = np.random.default_rng(6)
    d = 4
    model = DPDAG(rng.normal(size=(d, d)), rng.normal(size=(d, d)), order="sinkhorn")
    for backend in ("numba", "numpy"):
        A, orders = model.sample_dags(3000, rng=2, backend=backend, return_orders=True)
        assert kahn_acyclic(A).all()
        pos = np.argsort(orders, axis=1)
        M = pos[:, :, None] < pos[:, None, :]
        assert not (A & ~M).any()
        # given the order, edges are Bernoulli(q): pooled z-test per pair, 5 sigma
        q = 1 / (1 + np.exp(-model.edge_logits))
        m = M.sum(axis=0)
        freq = (A.sum(axis=0) / np.maximum(m, 1))
        se = np.sqrt(q * (1 - q) / np.maximum(m, 1))
        ok = m > 50
        assert np.all(np.abs(freq - q)[ok] < 5 * se[ok])
    # orders: same distribution as brute-force Gumbel matching (two-sample chi-square)
    orders = model.sample_orders(20_000, rng=3)
    perms = np.array(list(itertools.permutations(range(d))))
    X = model.edge_logits[None] * 0 + model.order_logits[None] + \
        np.random.default_rng(4).gumbel(size=(20_000, d, d))
    ref = perms[X[:, np.arange(d)[None, :], perms].sum(axis=2).argmax(axis=1)]
    keys = {tuple(p): k for k, p in enumerate(perms)}
    c1 = np.bincount([keys[tuple(o)] for o in orders], minlength=24)
    c2 = np.bincount([keys[tuple(o)] for o in ref], minlength=24)
    keep = (c1 + c2) > 10
    assert stats.chi2_contingency(np.stack([c1[keep], c2[keep]])).pvalue > LEVEL
    with pytest.raises(NotImplementedError):
        model.log_prob_dag(np.zeros((d, d)))


def test_mode():
    model = DPDAG(np.array([0.0, 2.0, 1.0]), np.array([[0, 1, -1], [1, 0, 1], [1, 1, 0.]]))
    np.testing.assert_array_equal(model.mode_order(), [1, 2, 0])
    expected = np.array([[0, 0, 0], [1, 0, 1], [1, 0, 0]], dtype=bool)
    np.testing.assert_array_equal(model.mode_dag(), expected)


def test_sampling_is_reproducible():
    model = DPDAG(np.zeros(5), np.zeros((5, 5)))
    for backend in ("numba", "numpy"):
        a = model.sample_dags(50, rng=3, backend=backend)
        b = model.sample_dags(50, rng=3, backend=backend)
        np.testing.assert_array_equal(a, b)


def test_bad_input():
    with pytest.raises(ValueError, match="order_logits"):
        DPDAG(np.zeros(3), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="order"):
        DPDAG(np.zeros(3), np.zeros((3, 3)), order="bogus")
    with pytest.raises(ValueError, match="finite"):
        DPDAG(np.array([0.0, np.nan]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="n must be"):
        DPDAG(np.zeros(2), np.zeros((2, 2))).sample_dags(0)


# ------------------------------------------------------------------ VI gradients
def _fd(f, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("order", ["softsort", "sinkhorn"])
def test_elbo_gradient_matches_finite_differences(order, xp):
    """The relaxed forward (hard=False) has exact gradients: check every parameter.
    The straight-through estimator uses the same backward formulas on the hard forward."""
    from solvers._lib.namespace import array_namespace

    xp = array_namespace(xp.asarray([0.0]))  # the compat namespace the learner uses
    d, S = 4, 3
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, d))
    C = X.T @ X
    theta = rng.normal(size=(d,) if order == "softsort" else (d, d))
    phi, W = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    sigma2 = np.array([1.3, 0.7, 1.0, 2.0])
    cfg = {"order": order, "tau": 0.7, "tau_edges": 0.6, "n_iter": 8,
           "prior_logit": math.log(0.2 / 0.8), "w_l2": 0.1}
    noise = _draw_noise(Draws(5, xp), S, d, order, xp.float64)
    a = lambda v: xp.asarray(v)  # noqa: E731

    def loss(th, ph, w):
        return float(_elbo_grad(a(th), a(ph), a(w), a(C), a(sigma2), noise, cfg, xp,
                                hard=False)[0])

    _, grads, _ = _elbo_grad(a(theta), a(phi), a(W), a(C), a(sigma2), noise, cfg, xp,
                             hard=False)
    gt, gp, gw = (to_numpy(g) for g in grads)
    np.testing.assert_allclose(gt, _fd(lambda t: loss(t, phi, W), theta), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(gp, _fd(lambda p: loss(theta, p, W), phi), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(gw, _fd(lambda w: loss(theta, phi, w), W), rtol=1e-5,
                               atol=1e-6)


def test_bernoulli_kl_closed_form():
    phi = np.array([[0.0, 2.0], [-3.0, 0.0]])
    mask = 1 - np.eye(2)
    p0 = 0.1
    kl, g = _bernoulli_kl(phi, math.log(p0 / (1 - p0)), mask, np)
    q = 1 / (1 + np.exp(-phi))
    ref = sum(q[i, j] * np.log(q[i, j] / p0) + (1 - q[i, j]) * np.log((1 - q[i, j]) / (1 - p0))
              for i, j in [(0, 1), (1, 0)])
    assert abs(kl - ref) < 1e-12
    num = _fd(lambda x: float(_bernoulli_kl(x, math.log(p0 / (1 - p0)), mask, np)[0]), phi)
    np.testing.assert_allclose(g, num, atol=1e-8)
    # the KL is zero at the prior and positive elsewhere (the released code's term is not)
    at_prior = np.full((2, 2), math.log(p0 / (1 - p0)))
    assert abs(float(_bernoulli_kl(at_prior, math.log(p0 / (1 - p0)), mask, np)[0])) < 1e-12


def test_order_score_is_minimal_at_true_order():
    from solvers.dag import simulate_data

    X, W, B = simulate_data(d=6, n=20_000, k=2, rng=0)
    Xc = X - X.mean(0)
    C = Xc.T @ Xc
    from solvers.dag.graph import topological_order

    true = topological_order(B)
    best = min(itertools.permutations(range(6)), key=lambda o: _order_score(C, list(o)))
    pos = np.argsort(best)
    assert not (B & (pos[:, None] > pos[None, :])).any()  # best order is consistent
    assert _order_score(C, list(best)) <= _order_score(C, list(true)) + 1e-9


def test_plackett_luce_score_gradient(xp):
    from solvers.dag._dpdag_vi import _pl_logprob_grad
    from solvers.dag.permutations import permutation_matrix
    from solvers._lib.namespace import array_namespace

    xpc = array_namespace(xp.asarray([0.0]))
    theta = np.array([0.3, -1.0, 2.0, 0.5])
    orders = np.array([[2, 0, 3, 1], [1, 3, 0, 2]])
    P = xpc.asarray(permutation_matrix(orders))
    logq, g = _pl_logprob_grad(xpc.asarray(theta), P, xpc)
    model = DPDAG(theta, np.zeros((4, 4)))
    np.testing.assert_allclose(to_numpy(logq), model.log_prob_order(orders), rtol=1e-12)
    for b in range(2):
        num = _fd(lambda t: float(DPDAG(t, np.zeros((4, 4))).log_prob_order(orders[b])),
                  theta)
        np.testing.assert_allclose(to_numpy(g)[b], num, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ VI-DP-DAG
def test_learn_dpdag_small_graph():
    from solvers.dag import learn_dag, simulate_data, shd, is_dag

    X, W, B = simulate_data(d=5, n=1000, k=1, rng=0)
    res = learn_dag(X, method="dpdag", rng=0, maxiter=800)
    assert res.success and res.is_dag() and res.method == "dpdag"
    assert shd(B, res.adjacency) <= 1
    assert res.edge_probs.shape == (5, 5) and np.all(np.diag(res.edge_probs) == 0)
    A = res.sample_dags(100, rng=0)
    assert all(is_dag(a) for a in A)
    assert len(res.loss_history) == res.nit == 800


def test_learn_dpdag_callback_and_options():
    from solvers.dag import learn_dag, simulate_data

    X, _, _ = simulate_data(d=4, n=200, k=1, rng=0)
    seen = []

    def cb(r):
        seen.append(r.nit)
        if r.nit == 5:
            raise StopIteration

    res = learn_dag(X, method="dpdag", rng=0, callback=cb, maxiter=100)
    assert res.nit == 5 and seen == [1, 2, 3, 4, 5] and res.status == 99
    assert res.success is False and res.is_dag()
    for kw in ({"order": "sinkhorn"}, {"noise_variance": "nonequal"},
               {"order_objective": "elbo", "support": "edges"}, {"order_grad": "st"}):
        r = learn_dag(X, method="dpdag", rng=0, maxiter=20, **kw)
        assert r.is_dag()
    r = learn_dag(X.astype(np.float32), method="dpdag", rng=0, maxiter=20)
    assert r.W.dtype == np.float32 and r.is_dag()
    with pytest.raises(ValueError, match="prior_p"):
        learn_dag(X, method="dpdag", prior_p=1.5)
    with pytest.raises(TypeError, match="unknown option"):
        learn_dag(X, method="dpdag", bogus=1)
    # reproducible for a seed
    a = learn_dag(X, method="dpdag", rng=4, maxiter=30)
    b = learn_dag(X, method="dpdag", rng=4, maxiter=30)
    np.testing.assert_array_equal(a.W, b.W)


def test_learn_dpdag_array_api(xp):
    from solvers.dag import simulate_data
    from solvers.dag._dpdag_learn import _learn_dpdag

    X, _, _ = simulate_data(d=4, n=200, k=1, rng=1)
    res = _learn_dpdag(xp.asarray(X), rng=0, maxiter=30)
    assert res.is_dag()
    ref = _learn_dpdag(X, rng=0, maxiter=30, backend="numpy")
    np.testing.assert_allclose(to_numpy(res.W), ref.W, rtol=1e-8, atol=1e-10)
    # issue 17: every array field in the input namespace
    for key in ("W", "adjacency", "order", "loss_history", "W_vi", "edge_probs"):
        assert type(res[key]) is type(xp.asarray(X)), key
    np.testing.assert_array_equal(to_numpy(res.adjacency), ref.adjacency)


@pytest.mark.slow
def test_vi_edge_marginals_match_exact_posterior_d3():
    """d = 3: VI marginals vs the exact posterior of the same generative model (same
    likelihood with the VI's W and sigma2, same priors), by enumeration."""
    from solvers.dag import learn_dag, simulate_data
    from solvers.dag.dpdag import exact_edge_posterior

    gaps = []
    for seed in range(2):
        X, W, B = simulate_data(d=3, n=100, k=1, rng=seed)
        res = learn_dag(X, method="dpdag", rng=seed, maxiter=1500, prior_p=0.3,
                        order_objective="elbo")
        post = exact_edge_posterior(X, res.W_vi, res.sigma2, 0.3)
        gaps.append(np.abs(post - res.edge_probs).max())
    assert max(gaps) < 0.05, gaps


@pytest.mark.slow
def test_vi_dpdag_er2_d20():
    from solvers.dag import learn_dag, simulate_data, shd

    X, W, B = simulate_data(d=20, n=1000, k=2, rng=100)
    res = learn_dag(X, method="dpdag", rng=0, maxiter=1500)  # defaults: profile order
    assert res.is_dag() and shd(B, res.adjacency) <= 2
    res = learn_dag(X, method="dpdag", rng=0, maxiter=1500, order_objective="elbo",
                    refine=True)
    assert res.is_dag() and shd(B, res.adjacency) <= 2


def test_numba_serial_and_parallel_kernels_agree():
    from solvers.dag import _dpdag_numba as kern

    rng = np.random.default_rng(9)
    d, n = 12, 300
    model = DPDAG(rng.normal(size=d), rng.normal(size=(d, d)))
    th = np.floor(np.asarray(model.edge_probs) * 2.0**53).astype(np.uint64)
    outs = []
    for f in (kern.sample_dags_serial, kern.sample_dags_parallel):
        out, orders = np.zeros((n, d, d), np.uint8), np.empty((n, d), np.int64)
        f(np.asarray(model.order_logits), th, n, 12345, out, orders)
        outs.append((out, orders))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    o = outs[0][1]
    res = []
    for f in (kern.dags_from_orders_serial, kern.dags_from_orders_parallel):
        out = np.zeros((n, d, d), np.uint8)
        f(o, th, 7, out)
        res.append(out)
    np.testing.assert_array_equal(res[0], res[1])


def test_mlp_elbo_gradient_matches_finite_differences():
    """MLP mechanisms: every hand-written gradient (order, edges, U1, b1, V, c) on the
    relaxed forward pass against central differences."""
    from solvers._lib.namespace import array_namespace

    xp = array_namespace(np.zeros(1))
    d, S, h, m = 3, 2, 4, 7
    rng = np.random.default_rng(21)
    Xb = rng.normal(size=(m, d))
    theta, phi = rng.normal(size=d), rng.normal(size=(d, d))
    mech = [rng.normal(size=(d, d, h)), rng.normal(size=(d, h)), rng.normal(size=(d, h)),
            rng.normal(size=d)]
    sigma2 = np.array([1.2, 0.8, 1.5])
    cfg = {"order": "softsort", "tau": 0.7, "tau_edges": 0.6, "n_iter": 5,
           "prior_logit": math.log(0.2 / 0.8), "w_l2": 0.05, "mechanism": "mlp",
           "scale": 3.0}
    noise = _draw_noise(Draws(2, xp), S, d, "softsort", xp.float64)
    params = [theta, phi] + mech

    def loss(k, x):
        p = list(params)
        p[k] = x
        return float(_elbo_grad(p[0], p[1], tuple(p[2:]), Xb, sigma2, noise, cfg, xp,
                                hard=False)[0])

    _, grads, _ = _elbo_grad(theta, phi, tuple(mech), Xb, sigma2, noise, cfg, xp,
                             hard=False)
    flat = [grads[0], grads[1]] + list(grads[2])
    for k, g in enumerate(flat):
        np.testing.assert_allclose(g, _fd(lambda x: loss(k, x), params[k]), rtol=1e-5,
                                   atol=1e-6, err_msg=f"parameter {k}")


@pytest.mark.slow
def test_mlp_mechanisms_nonlinear_chain():
    """A nonlinear chain 0 -> 1 -> 2 (sin and tanh links) with equal noise."""
    from solvers.dag import learn_dag, shd

    rng = np.random.default_rng(0)
    n = 1000
    x0 = rng.normal(size=n)
    x1 = 2.0 * np.sin(1.5 * x0) + 0.5 * rng.normal(size=n)
    x2 = 2.0 * np.tanh(1.5 * x1) + 0.5 * rng.normal(size=n)
    X = np.stack([x0, x1, x2], axis=1)
    B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)
    res = learn_dag(X, method="dpdag", mechanism="mlp", rng=0, maxiter=600)
    assert res.is_dag() and shd(B, res.adjacency) <= 1
    with pytest.raises(ValueError, match="mlp"):
        learn_dag(X, method="dpdag", mechanism="mlp", order_objective="profile")


def test_compiled_order_sort_equals_numpy_argsort():
    from solvers.dag._dpdag_numba import _argsort

    rng = np.random.default_rng(8)
    for d in (1, 2, 3, 17, 256):
        keys = rng.gumbel(size=d)
        np.testing.assert_array_equal(_argsort(keys), np.argsort(keys))
    np.testing.assert_array_equal(_argsort(np.arange(6.0)[::-1].copy()), np.arange(6)[::-1])
