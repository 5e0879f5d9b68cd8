"""Slow, obvious reference implementations every fast kernel is compared against.

Written for clarity, not speed: plain Python loops or direct formulas on numpy, no tricks.
"""
import math

import numpy as np


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
