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
