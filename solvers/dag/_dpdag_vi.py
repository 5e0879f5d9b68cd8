"""DP-DAG's variational objective: the ELBO, its hand-written backward pass, the MLP
mechanisms and the noise draws (split from :mod:`solvers.dag.dpdag`; every gradient is
checked against finite differences in ``tests/test_dpdag.py``).
"""
import math

from ..lse import log_softmax, softmax
from .dpdag import _log_sigmoid, _offdiag, _sigmoid
from .permutations import (_onehot, _soft_sort_backward, _soft_sort_forward, hungarian,
                           sinkhorn_vjp)


def _bernoulli_kl(phi, prior_logit, mask, xp):
    """sum_{i != j} KL(Bern(q) || Bern(p0)) and its gradient wrt phi (q = sigmoid(phi))."""
    q = _sigmoid(phi, xp)
    lq, l1q = _log_sigmoid(phi, xp), _log_sigmoid(-phi, xp)
    lp, l1p = -math.log1p(math.exp(-prior_logit)), -math.log1p(math.exp(prior_logit))
    kl = xp.sum(mask * (q * (lq - lp) + (1 - q) * (l1q - l1p)))
    # d/dphi [q log q/p + (1-q) log (1-q)/(1-p)] = q (1 - q) (phi - logit p)
    return kl, mask * q * (1 - q) * (phi - prior_logit)


def _elbo_grad(theta, phi, W, C, sigma2, noise, cfg, xp, hard=True):
    """Negative ELBO (data + KL, sigma2 fixed) and gradients wrt (theta, phi, W).

    ``noise`` holds the draws: ``g`` (Gumbel for the order) and ``l`` (logistic for the
    edges). ``hard=False`` runs the relaxed forward (exact gradients, for tests); the
    default is the straight-through estimator (hard forward, relaxed backward).
    Returns (loss, grads, per-node residual sums v (S, d)).
    """
    S = noise["l"].shape[0]
    d = phi.shape[0]
    dtype = phi.dtype
    off = _offdiag(d, xp, dtype)
    U = xp.astype(xp.arange(d)[:, None] < xp.arange(d)[None, :], dtype)
    # order
    score = cfg["order"] == "softsort" and cfg.get("order_grad", "st") == "score" and hard
    if score:  # the relaxation is not needed: only the hard orders and their log q
        s = theta[None, :] + noise["g"]
        orders = xp.argsort(s, axis=-1, descending=True, stable=True)
        P_hard = _onehot(orders, d, xp, dtype)
        P = P_hard
        pos = xp.argsort(orders, axis=-1)
    elif cfg["order"] == "softsort":
        s = log_softmax(theta)[None, :] + noise["g"]
        P_soft, P_hard, diff = _soft_sort_forward(s, cfg["tau"], d, xp)
        P = P_hard if hard else P_soft
    else:
        X_ = theta[None, ...] + noise["g"]
        P_soft, vjp_sk = sinkhorn_vjp(X_, cfg["n_iter"], cfg["tau"])
        P = hungarian(X_) if hard else P_soft
    if score:  # P^T U P of a hard permutation is [pos_i < pos_j]: no matmul needed
        M = xp.astype(pos[:, :, None] < pos[:, None, :], dtype)
    else:
        M = xp.matmul(xp.matrix_transpose(P), xp.matmul(U, P)) * off
    # edges (Gumbel-sigmoid with logistic noise l)
    z = (phi[None, ...] + noise["l"]) / cfg["tau_edges"]
    E_soft = _sigmoid(z, xp)
    E = xp.astype(z > 0, dtype) if hard else E_soft
    E = E * off
    A = E * M
    kl, g_kl = _bernoulli_kl(phi, cfg["prior_logit"], off, xp)
    if cfg.get("mechanism", "linear") == "mlp":
        v, data, reg, gA, gW = _mlp_term(A, W, C, sigma2, cfg, xp)
        loss = data + kl + reg
    else:
        B = A * W
        R = xp.eye(d, dtype=dtype) - B
        CR = xp.matmul(C, R)
        v = xp.sum(R * CR, axis=-2)  # (S, d): residual sum of squares of each node
        data = 0.5 * xp.sum(v / sigma2) / S
        loss = data + kl + 0.5 * cfg["w_l2"] * xp.sum(W * W)
        # backward
        gB = -(CR / sigma2) / S  # d data / d B, columns scaled by 1 / sigma2_j
        gW = xp.sum(gB * A, axis=0) + cfg["w_l2"] * W
        gA = gB * W
    gE = gA * M
    gM = gA * E * off
    gphi = xp.sum(gE * E_soft * (1 - E_soft), axis=0) / cfg["tau_edges"] + g_kl
    if not score:
        gP = xp.matmul(U, xp.matmul(P, xp.matrix_transpose(gM))) + \
            xp.matmul(xp.matrix_transpose(U), xp.matmul(P, gM))
    if score:
        # score-function (REINFORCE) gradient of E_q[f(pi)] with a leave-one-out baseline;
        # f = data term (+ log q(pi) when the KL to the uniform order prior is on)
        if cfg.get("order_objective", "elbo") == "profile":
            # collapsed order term: every predecessor a parent with least-squares weights;
            # the residual sums are the squared Cholesky diagonal of the permuted Gram
            Cp = xp.matmul(P_hard, xp.matmul(C, xp.matrix_transpose(P_hard)))
            L = xp.linalg.cholesky(Cp)
            rss = xp.linalg.diagonal(L) ** 2  # (S, d) in sampled order
            s2o = xp.matmul(P_hard, sigma2[:, None])[..., 0]
            f = 0.5 * xp.sum(rss / s2o, axis=-1)
        else:
            f = 0.5 * xp.sum(v / sigma2, axis=-1)
        logq, glogq = _pl_logprob_grad(theta, P_hard, xp)
        if cfg.get("order_kl", True):
            f = f + logq
            loss = loss + xp.mean(logq) + math.lgamma(d + 1)
        base = (xp.sum(f) - f) / max(S - 1, 1) if S > 1 else xp.zeros_like(f)
        gtheta = xp.sum((f - base)[:, None] * glogq, axis=0) / S
    elif cfg["order"] == "softsort":
        gs = _soft_sort_backward(gP, P_soft, P_hard, diff, cfg["tau"], xp)
        gs = xp.sum(gs, axis=0)
        gtheta = gs - softmax(theta) * xp.sum(gs)
    else:
        gtheta = xp.sum(vjp_sk(gP), axis=0)
    return loss, (gtheta, gphi, gW), v


def _mlp_term(A, params, Xb, sigma2, cfg, xp):
    """Data term of MLP mechanisms and its backward pass.

    Node ``j`` is predicted from its sampled parents by one tanh hidden layer:
    ``y_j = sum_k V[j, k] tanh(sum_i x_i A[i, j] U1[j, i, k] + b1[j, k]) + c[j]``.
    ``Xb`` is a (centred) minibatch of ``m`` rows; residual sums are scaled by
    ``cfg["scale"] = n / m``. Returns (v (S, d), data, l2 penalty, d/dA, grads of
    (U1, b1, V, c)).
    """
    U1, b1, V, c = params
    S = A.shape[0]
    AT = xp.matrix_transpose(A)  # (S, child j, parent i)
    G = AT[..., None] * U1[None, ...]  # (S, d, d, h): masked first-layer weights
    Hpre = xp.matmul(Xb[None, None, ...], G) + b1[None, :, None, :]  # (S, d, m, h)
    H = xp.tanh(Hpre)
    Y = xp.sum(H * V[None, :, None, :], axis=-1) + c[None, :, None]  # (S, d, m)
    R = xp.matrix_transpose(Xb)[None, ...] - Y
    v = cfg["scale"] * xp.sum(R * R, axis=-1)  # (S, d)
    data = 0.5 * xp.sum(v / sigma2) / S
    lam = cfg["w_l2"]
    reg = 0.5 * lam * (xp.sum(U1 * U1) + xp.sum(V * V))
    dY = -(cfg["scale"] / S) * R / sigma2[None, :, None]
    gV = xp.sum(xp.sum(dY[..., None] * H, axis=2), axis=0) + lam * V
    gc = xp.sum(xp.sum(dY, axis=2), axis=0)
    dHpre = dY[..., None] * V[None, :, None, :] * (1 - H * H)
    gb1 = xp.sum(xp.sum(dHpre, axis=2), axis=0)
    dG = xp.matmul(xp.matrix_transpose(Xb)[None, None, ...], dHpre)  # (S, d, d, h)
    gU1 = xp.sum(dG * AT[..., None], axis=0) + lam * U1
    gA = xp.matrix_transpose(xp.sum(dG * U1[None, ...], axis=-1))
    return v, data, reg, gA, (gU1, gb1, gV, gc)


def _pl_logprob_grad(theta, P, xp):
    """Plackett-Luce log q(pi) of orders given as one-hot P (S, d, d) and its gradient
    wrt theta, (S,) and (S, d): d/dt_m = 1 - e^{t_m} sum_{k <= m} 1 / Z_k with
    Z_k = sum_{m' >= k} e^{t_m'} (t = theta in sampled order)."""
    t = xp.matmul(P, theta[:, None])[..., 0]  # (S, d)
    t = t - xp.max(theta)
    e = xp.exp(t)
    Z = xp.flip(xp.cumulative_sum(xp.flip(e, axis=-1), axis=-1), axis=-1)
    logq = xp.sum(t - xp.log(Z), axis=-1)
    gt = 1.0 - e * xp.cumulative_sum(1.0 / Z, axis=-1)
    return logq, xp.matmul(xp.matrix_transpose(P), gt[..., None])[..., 0]


def _draw_noise(draws, S, d, order, dtype):
    g_shape = (S, d) if order == "softsort" else (S, d, d)
    u = draws.uniform(0.0, 1.0, (S, d, d), dtype=dtype)
    xp = draws.xp
    tiny = xp.asarray(1e-12 if dtype == xp.float64 else 1e-6, dtype=dtype)
    u = xp.clip(u, tiny, 1 - tiny)
    return {"g": draws.gumbel(g_shape, dtype=dtype), "l": xp.log(u / (1 - u))}

