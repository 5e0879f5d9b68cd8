"""Slow, obvious reference implementations every fast kernel is compared against.

Written for clarity, not speed: plain Python loops or direct formulas on numpy, no tricks.
"""
import itertools
import math

import numpy as np
from scipy.special import logsumexp as sp_lse


def logsumexp_loop(values, weights=None):
    """log(sum w exp(v)) of a 1-D sequence with Python floats and math.fsum at 1e-300 scale.

    Uses exact shifting by the max and ``math.fsum`` so it is accurate to the last bit
    for finite input; returns (value, sign).
    """
    values = [float(v) for v in values]
    weights = [1.0] * len(values) if weights is None else [float(w) for w in weights]
    pairs = [(v, w) for v, w in zip(values, weights) if w != 0.0]
    if not pairs:
        return -math.inf, 0.0
    mx = max(v for v, _ in pairs)
    total = math.fsum(w * math.exp(v - mx) for v, w in pairs)
    if total == 0.0:
        return -math.inf, 0.0
    return math.log(abs(total)) + mx, math.copysign(1.0, total)


def logsumexp_matmul_dense(A, B):
    """The materialised computation: build A @ B, then a row-wise log-sum-exp."""
    C = A @ B
    mx = C.max(axis=1, keepdims=True)
    return (np.log(np.exp(C - mx).sum(axis=1, keepdims=True)) + mx)[:, 0]


# ---------------------------------------------------------------------------------------
# Bures–Wasserstein kernel families (solvers/transport/bures_kernels.py): one pair of
# Gaussians at a time, the textbook formulas, float64 on the host.
# ---------------------------------------------------------------------------------------
def _pair_root(Rq, Si):
    """Eigenvalues and eigenvectors of ``C = Rq Si Rq`` (symmetrised); ``None`` when C holds
    NaN or inf (the kernels' contract: such a pair gives NaN)."""
    C = np.asarray(Rq, dtype=np.float64) @ np.asarray(Si, dtype=np.float64) \
        @ np.asarray(Rq, dtype=np.float64)
    C = 0.5 * (C + C.T)
    if not np.all(np.isfinite(C)):
        return None
    lam, V = np.linalg.eigh(C)
    return np.sqrt(np.clip(lam, 0.0, None)), V


def bures_cdist_loop(qm, R, trq, m, S, trS):
    """Exact ``W2^2`` (Q, N) pair by pair: ``|m_q - m_i|^2 + tr Omega_q + tr S_i
    - 2 tr (R_q S_i R_q)^{1/2}`` with ``R_q = Omega_q^{1/2}``, clipped at 0 (NaN stays)."""
    Q, N = len(qm), len(m)
    out = np.empty((Q, N))
    for q in range(Q):
        for i in range(N):
            root = _pair_root(R[q], S[i])
            cross = math.nan if root is None else math.fsum(root[0])
            diff = np.asarray(qm[q], dtype=np.float64) - np.asarray(m[i], dtype=np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                d2 = float(diff @ diff) + float(trq[q]) + float(trS[i]) - 2.0 * cross
            out[q, i] = d2 if (math.isnan(d2) or d2 > 0.0) else 0.0
    return out


def weighted_root_sum_loop(R, S, W):
    """``M_q = sum_i W[q, i] (R_q S_i R_q)^{1/2}`` (Q, d, d), pair by pair; a zero weight
    drops its pair (even a NaN one), a kept pair with NaN/inf in ``C`` makes ``M_q`` NaN."""
    Q, N = W.shape
    d = S.shape[-1]
    out = np.zeros((Q, d, d))
    for q in range(Q):
        for i in range(N):
            w = float(W[q, i])
            if w == 0.0:
                continue
            root = _pair_root(R[q], S[i])
            if root is None:
                out[q] = np.nan
                continue
            s, V = root
            out[q] += w * (V * s) @ V.T
    return out


def screened_cdist_loop(qm, R, trq, rq, m, S, trS, rS, cut):
    """What a screened distance matrix may be: the exact ``W2^2`` (:func:`bures_cdist_loop`)
    and the pairs a screen may skip (``+inf`` there), those whose spectral lower bound
    ``|m_q - m_i|^2 + |rq_q - rS_i|^2`` (square roots of the ascending eigenvalues; von
    Neumann's trace inequality) exceeds the row's exact minimum by more than ``cut``."""
    exact = bures_cdist_loop(qm, R, trq, m, S, trS)
    with np.errstate(invalid="ignore", over="ignore"):
        bound = (((np.asarray(qm)[:, None, :] - np.asarray(m)[None, :, :]) ** 2).sum(-1)
                 + ((np.asarray(rq)[:, None, :] - np.asarray(rS)[None, :, :]) ** 2).sum(-1))
        best = np.nanmin(np.where(np.isnan(exact), np.inf, exact), axis=1, initial=np.inf)
        skippable = bound - cut > best[:, None]
    return exact, skippable


# ------------------------------------------------------------------------------- Safe-KL

def _capped_weight(v, s, rho):
    """w = 1 / (rho + e^(s - v)) in (0, 1/rho]; 0 where e^(s - v) overflows."""
    t = s - v
    if t > 709.0:
        return 0.0
    return 1.0 / (rho + math.exp(t))


def _softplus_term(v, s, rho):
    """h = log(1 + rho e^(v - s)) / rho, as log(1 + e^x) with x = v - s + log(rho)."""
    x = v - s + math.log(rho)
    if x != x:
        return math.nan
    if x > 0:
        return (x + math.log1p(math.exp(-x))) / rho
    return math.log1p(math.exp(x)) / rho


def safe_kl_terms_loop(values, s, rho):
    """Per-term Safe-KL weights and softplus terms ``(w, h)`` of a 1-D sequence, one
    Python float at a time (``-inf`` gives 0, 0; ``+inf`` gives 1/rho, inf; NaN, NaN)."""
    w = [_capped_weight(float(v), float(s), rho) for v in values]
    h = [_softplus_term(float(v), float(s), rho) for v in values]
    return np.array(w), np.array(h)


def safe_kl_step_loop(values, jac, s, rho):
    """The minibatch step of Safe-KL: ``(mean(w jac), mean(w), mean(h))`` with ``math.fsum``
    (NaN throughout for an empty batch)."""
    B, p = np.shape(jac)
    if B == 0:
        return np.full(p, np.nan), math.nan, math.nan
    w, h = safe_kl_terms_loop(values, s, rho)
    gx = [math.fsum(w[i] * float(jac[i][j]) for i in range(B)) / B for j in range(p)]
    return np.array(gx), math.fsum(w) / B, math.fsum(h) / B


def safe_kl_shift(values, rho, mu=None):
    """The Safe-KL shift and surrogate of one row: ``(s, F_rho)``.

    ``s`` is the root of ``E_mu w(s) = 1`` (``E_mu w`` decreases in ``s``), found by
    bisection to the last bit; ``F_rho = s - 1 + E_mu h(s)``, the minimum over ``s`` of
    the Safe-KL objective. ``values`` are finite or ``-inf`` (not all ``-inf``); ``mu``
    the weights of the reference measure (uniform by default, normalised).
    """
    values = [float(v) for v in values]
    mu = [1.0] * len(values) if mu is None else [float(m) for m in mu]
    total = math.fsum(mu)
    mu = [m / total for m in mu]

    def mean_w(s):
        return math.fsum(m * _capped_weight(v, s, rho) for v, m in zip(values, mu))

    lo = hi = max(v for v, m in zip(values, mu) if m > 0)
    for _ in range(2000):  # E w -> (finite mass) / rho as s -> -inf, 0 as s -> +inf
        if mean_w(lo) >= 1.0 and mean_w(hi) <= 1.0:
            break
        lo, hi = lo - (1.0 + abs(lo)), hi + (1.0 + abs(hi))
    else:
        raise ValueError("no root: the finite terms hold no more than rho of the measure")
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if mean_w(mid) > 1.0 else (lo, mid)
    s = lo if abs(mean_w(lo) - 1.0) <= abs(mean_w(hi) - 1.0) else hi
    value = s - 1.0 + math.fsum(m * _softplus_term(v, s, rho) for v, m in zip(values, mu)
                                if v != -math.inf)
    return s, value


def scatter_add_loop(v, idx, vals):
    """``v[idx] += vals`` with repeated indices accumulated, one index at a time."""
    out = np.array(v, copy=True)
    for i, x in zip(idx, vals):
        out[int(i)] += x
    return out


# ---------------------------------------------------------------------------------- CBO

def reflect_into_box(x, lb, ub):
    w = ub - lb
    y = np.mod(x - lb, 2 * w)
    return np.clip(lb + np.where(y > w, 2 * w - y, y), lb, ub)


def cbo_loop(f, lb, ub, n_particles, n_runs, steps, seed, *, alpha=30.0, growth=1.05,
              alpha_max=1e5, sigma=10.5, lam=0.4, dt=0.01, aniso=True, batch=None):
    """The dynamics written as plain loops (the slow obvious reference)."""
    rng = np.random.default_rng(seed)
    M, N, d = n_runs, n_particles, lb.shape[0]
    X = lb + (ub - lb) * rng.uniform(0.0, 1.0, (M, N, d))
    best = np.full(M, np.inf)
    C = np.zeros((M, d))
    for _ in range(steps):
        F = np.array([[f(X[m, i]) for i in range(N)] for m in range(M)])
        F = np.where(np.isfinite(F), F, np.inf)
        best = np.minimum(best, F.min(axis=1))
        mask = np.ones((M, N), dtype=bool)
        if batch is not None:
            u = rng.uniform(0.0, 1.0, (M, N))
            mask = u <= np.sort(u, axis=1)[:, batch - 1:batch]
        xi = rng.standard_normal((M, N, d))
        Xn = np.empty_like(X)
        for m in range(M):
            fmin = min(F[m, i] for i in range(N) if mask[m, i])
            num, den = np.zeros(d), 0.0
            for i in range(N):
                if mask[m, i] and math.isfinite(F[m, i]):
                    w = math.exp(-alpha * (F[m, i] - fmin))
                    num += w * X[m, i]
                    den += w
            C[m] = num / den
            for i in range(N):
                diff = X[m, i] - C[m]
                scale = diff if aniso else np.linalg.norm(diff)
                Xn[m, i] = X[m, i] - lam * dt * diff + sigma * math.sqrt(dt) * scale * xi[m, i]
        X = reflect_into_box(Xn, lb, ub)
        alpha = min(alpha * growth, alpha_max)
    return C, best


# ------------------------------------------------------------------------------ LightSB

def lightsb_loss_loop(x, y, la, r, S, eps):
    """mean log c(x) - mean log v(y) with explicit per-component loops (full S matrices)."""
    K, D = r.shape
    lc = np.array([[la[k] + (xi @ S[k] @ xi + 2 * r[k] @ xi) / (2 * eps) for k in range(K)]
                   for xi in x])
    lv = []
    for yj in y:
        row = []
        for k in range(K):
            C = eps * S[k]
            diff = yj - r[k]
            row.append(la[k] - 0.5 * (D * math.log(2 * math.pi) + np.linalg.slogdet(C)[1])
                       - 0.5 * diff @ np.linalg.solve(C, diff))
        lv.append(row)
    return sp_lse(lc, axis=1).mean() - sp_lse(np.array(lv), axis=1).mean()


# ------------------------------------------------------------------------- DAG learning

def dag_metrics_loop(B_true, B_est):
    """SHD / TPR / FDR from the definitions, pair by pair."""
    d = B_true.shape[0]
    extra = missing = rev = 0
    for i, j in itertools.combinations(range(d), 2):
        t = (bool(B_true[i, j]), bool(B_true[j, i]))
        e = (bool(B_est[i, j]), bool(B_est[j, i]))
        if any(t) and not any(e):
            missing += 1
        elif any(e) and not any(t):
            extra += 1
        elif any(t) and any(e) and t != e:
            rev += 1
    tp = int(np.sum(B_true & B_est))
    pred = int(B_est.sum())
    fd = pred - tp
    return extra + missing + rev, tp / max(B_true.sum(), 1), fd / max(pred, 1)


def plackett_luce_prob(theta, order):
    w = np.exp(theta[list(order)])
    return float(np.prod([w[k] / w[k:].sum() for k in range(len(order))]))


# --------------------------------------------------------------------------------- QUBO

def qubo_brute_force_min(Q, c=None):
    """Exact minimum of x^T Q x + c^T x over {0,1}^n, splitting the bits in two halves."""
    Q = np.asarray(Q, dtype=float)
    n = Q.shape[0]
    c = np.zeros(n) if c is None else np.asarray(c, dtype=float)
    lo, hi = n // 2, n - n // 2
    L = np.array(list(itertools.product([0.0, 1.0], repeat=lo))).reshape(-1, lo)
    H = np.array(list(itertools.product([0.0, 1.0], repeat=hi))).reshape(-1, hi)
    A, B = slice(0, lo), slice(lo, n)
    fl = np.einsum("si,ij,sj->s", L, Q[A, A], L) + L @ c[A]
    fh = np.einsum("si,ij,sj->s", H, Q[B, B], H) + H @ c[B]
    F = fl[:, None] + fh[None, :] + L @ (Q[A, B] + Q[B, A].T) @ H.T
    return float(F.min())


# ------------------------------------------------------------------------- QUBO moments

def qubo_moments_enumerated(Q, c, offset, vartype="binary", p=None, weight=None):
    """Mean and variance by listing all 2^n assignments (math.fsum for the sums)."""
    Q = np.asarray(Q, dtype=np.float64)
    n = Q.shape[0]
    X = np.array(list(itertools.product([0.0, 1.0], repeat=n))).reshape(-1, n)
    Z = 2 * X - 1 if vartype == "spin" else X
    f = np.einsum("si,ij,sj->s", Z, Q, Z) + offset
    if c is not None:
        f = f + Z @ np.asarray(c, dtype=np.float64)
    if weight is not None:
        w = (X.sum(axis=1) == weight).astype(float)
    else:
        pv = np.broadcast_to(0.5 if p is None else np.asarray(p, dtype=float), (n,))
        w = np.prod(np.where(X == 1, pv, 1 - pv), axis=1)
    w = w / math.fsum(w)
    mean = math.fsum(w * f)
    var = math.fsum(w * (f - mean) ** 2)
    return mean, var


# ------------------------------------------------------------------ which kernels they check

#: every kernel table of the package -> the references above its kernels are tested against
#: (a test checks that each table has an entry and each name exists; tables whose kernels
#: are also checked against a peer library say so in their tests)
FAMILIES = {
    "solvers.lse._lse_kernels": ["logsumexp_loop", "logsumexp_matmul_dense"],
    "solvers.lse._safe_kl_kernels": ["safe_kl_terms_loop", "safe_kl_step_loop",
                                     "safe_kl_shift", "scatter_add_loop"],
    "solvers.transport.bures_kernels": ["bures_cdist_loop", "weighted_root_sum_loop",
                                        "screened_cdist_loop"],
    "solvers.transport._lightsb_kernels": ["lightsb_loss_loop"],
    "solvers.optimize._cbo_kernels": ["cbo_loop", "reflect_into_box"],
    "solvers.dag._dag_kernels": ["dag_metrics_loop", "plackett_luce_prob"],
    "solvers.qubo._anneal_kernels": ["qubo_brute_force_min", "qubo_moments_enumerated"],
}
