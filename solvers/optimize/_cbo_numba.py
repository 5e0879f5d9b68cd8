"""Numba kernels of CBO: inner operations only (the algorithm lives in :mod:`._cbo_solver`).

Each public function here has the signature of its generic ``xp`` twin of the same name
in :mod:`._cbo_generic` (``reflect``: :mod:`._cbo_bounds`), which is the reference it is
tested against on NaN, +-inf, empty and float32 inputs:

- :func:`gibbs_weights`: per run, the weights ``exp(-alpha (E_i - min E))`` normalised,
  over the mini-batch and over finite energies only (+inf energies get weight zero and do
  not count in the effective sample size); a run without a finite energy gets uniform
  weights; with ``ess`` the alpha of each run is found by bisection on log(alpha);
- :func:`move`: the drift toward the consensus plus diagonal (anisotropic) or isotropic
  noise in one pass, and the spread ``max |x_ij - c_j|``;
- :func:`consensus`: Gibbs-weighted means of (M, N, d) particles.
"""
import math

import numpy as np

from .._lib.numba_config import jit
from ._cbo_generic import ALPHA_SPAN, LOG_ALPHA_LO, N_BISECT, SECTION_BITS


@jit
def _weights_kernel(E, mask, use_mask, alpha, ess, log_alpha_lo, alpha_span, log_alpha_max,
                    n_pass, pieces, W, alphas, G):
    M, N = E.shape
    for m in range(M):
        fmin = math.inf
        count = 0
        for i in range(N):
            if use_mask and not mask[m, i]:
                continue
            e = E[m, i]
            if e < math.inf:
                count += 1
                if e < fmin:
                    fmin = e
        all_bad = count == 0
        for i in range(N):
            if use_mask and not mask[m, i]:
                G[i] = math.inf
            elif all_bad:
                G[i] = 0.0  # no finite energy: uniform weights (alpha -> 0)
            elif E[m, i] < math.inf:
                G[i] = E[m, i] - fmin
            else:
                G[i] = math.inf
        a = alpha
        if ess > 0.0 and not all_bad:
            # the generic twin's sectioned bisection on log(alpha), level by level: in
            # each pass, the integer position k of the node lo + step * k (the same
            # arithmetic, so the same nodes) is bisected over [0, pieces)
            target = ess * count
            lo = log_alpha_lo
            step = alpha_span / pieces
            for _ in range(n_pass):
                k_lo = 0
                k_hi = pieces
                while k_hi - k_lo > 1:
                    k = (k_lo + k_hi) // 2
                    node = lo + step * k
                    above = node <= log_alpha_max
                    if above:
                        a_node = math.exp(node)
                        s1 = 0.0
                        s2 = 0.0
                        for i in range(N):
                            if G[i] < math.inf:
                                w = math.exp(-a_node * G[i])
                                s1 += w
                                s2 += w * w
                        above = s1 * s1 >= target * s2  # ESS at or above the target
                    if above:  # the node lies below the root
                        k_lo = k
                    else:
                        k_hi = k
                lo = lo + step * k_lo
                step = step / pieces
            a = math.exp(min(lo + 0.5 * pieces * step, log_alpha_max))
        alphas[m] = a
        s = 0.0
        for i in range(N):
            w = 0.0 if G[i] == math.inf else math.exp(-a * G[i])
            W[m, i] = w
            s += w
        for i in range(N):
            W[m, i] /= s


#: what a call without a mini-batch mask passes for it (the kernel never reads it)
_NO_MASK = np.ones((1, 1), dtype=np.bool_)


def _weights_args(E, mask, alpha, ess, alpha_max):
    """The arguments of :func:`_weights_kernel` for energies ``E`` (M, N), its outputs
    ``W`` and ``alphas`` among them (the last three). The bisection's constants are
    arguments: a global would be frozen into the cache."""
    E = np.ascontiguousarray(E)
    M, N = E.shape
    return (E, _NO_MASK if mask is None else np.ascontiguousarray(mask), mask is not None,
            float(alpha), -1.0 if ess is None else float(ess), LOG_ALPHA_LO, ALPHA_SPAN,
            math.log(alpha_max), N_BISECT // SECTION_BITS, 2 ** SECTION_BITS,
            np.empty((M, N), dtype=E.dtype), np.empty(M, dtype=np.float64),
            np.empty(N, dtype=np.float64))


def gibbs_weights(E, mask, alpha, ess, alpha_max, xp):
    """Numba twin of ``_cbo_generic.gibbs_weights``: (W (M, N), alpha used)."""
    args = _weights_args(E, mask, alpha, ess, alpha_max)
    _weights_kernel(*args)
    W, alphas = args[-3], args[-2]
    return W, (float(alpha) if ess is None else alphas)


@jit
def _consensus_of(P, W, C):
    M, N, d = P.shape
    for m in range(M):
        for j in range(d):
            C[m, j] = 0.0
        for i in range(N):
            w = W[m, i]
            if w == 0.0:
                continue
            for j in range(d):
                C[m, j] += w * P[m, i, j]


def gibbs_consensus(P, E, mask, alpha, ess, alpha_max, xp):
    """Numba twin of ``_cbo_generic.gibbs_consensus``: (W, C, alpha used)."""
    W, alpha_used = gibbs_weights(E, mask, alpha, ess, alpha_max, xp)
    P = np.ascontiguousarray(P)
    C = np.empty((P.shape[0], P.shape[2]), dtype=P.dtype)
    _consensus_of(P, W, C)
    return W, C, alpha_used


@jit
def _move_kernel(X, C, xi, lam_dt, sig_sqdt, aniso, X_out, spread):
    M, N, d = X.shape
    for m in range(M):
        sp = 0.0
        for i in range(N):
            scale = sig_sqdt
            if not aniso:
                nrm2 = 0.0
                for j in range(d):
                    diff = X[m, i, j] - C[m, j]
                    nrm2 += diff * diff
                scale = sig_sqdt * math.sqrt(nrm2)
            for j in range(d):
                diff = X[m, i, j] - C[m, j]
                ad = abs(diff)
                if ad > sp or ad != ad:  # a NaN spread stays NaN (as numpy's max)
                    if sp == sp:
                        sp = ad
                noise = scale * diff * xi[m, i, j] if aniso else scale * xi[m, i, j]
                X_out[m, i, j] = X[m, i, j] - lam_dt * diff + noise
        spread[m] = sp


def move(X, C, xi, lam_dt, sig_sqdt, aniso, xp):
    """Numba twin of ``_cbo_generic.move``: (moved particles, spread per run)."""
    X = np.ascontiguousarray(X)
    X_out = np.empty_like(X)
    spread = np.empty(X.shape[0], dtype=X.dtype)
    _move_kernel(X, np.ascontiguousarray(C, dtype=X.dtype), np.ascontiguousarray(xi), lam_dt,
                 sig_sqdt, bool(aniso), X_out, spread)
    return X_out, spread


@jit
def _consensus_move_kernel(E, mask, use_mask, alpha, ess, log_alpha_lo, alpha_span,
                           log_alpha_max, n_pass, pieces, W, alphas, G, P, C, X, xi, lam_dt,
                           sig_sqdt, aniso, bounded, lb, ub, X_out, spread):
    # weights, consensus, move and reflection: one dispatch from Python instead of three
    _weights_kernel(E, mask, use_mask, alpha, ess, log_alpha_lo, alpha_span, log_alpha_max,
                    n_pass, pieces, W, alphas, G)
    _consensus_of(P, W, C)
    _move_kernel(X, C, xi, lam_dt, sig_sqdt, aniso, X_out, spread)
    if bounded:
        _reflect_kernel(X_out, lb, ub, X_out)  # in place: each entry reads only itself


def consensus_move(P, E, mask, alpha, ess, alpha_max, X, xi, lam_dt, sig_sqdt, aniso, box,
                   xp):
    """Numba twin of ``_cbo_generic.consensus_move``: (W, C, alpha used, X_new, spread)."""
    X = np.ascontiguousarray(X)
    M, _, d = X.shape
    args = _weights_args(E, mask, alpha, ess, alpha_max)
    C = np.empty((M, d), dtype=P.dtype)
    X_out, spread = np.empty_like(X), np.empty(M, dtype=X.dtype)
    lb, ub = box if box is not None else (np.empty(0, dtype=X.dtype),) * 2
    _consensus_move_kernel(*args, np.ascontiguousarray(P), C, X, np.ascontiguousarray(xi),
                           lam_dt, sig_sqdt, bool(aniso), box is not None,
                           np.ascontiguousarray(lb, dtype=X.dtype),
                           np.ascontiguousarray(ub, dtype=X.dtype), X_out, spread)
    W, alphas = args[-3], args[-2]
    return W, C, (float(alpha) if ess is None else alphas), X_out, spread


def consensus(X, E, alpha, xp):
    """Numba twin of ``_cbo_generic.consensus`` for (M, N, d) particles and (M, N) energies."""
    E = np.where(np.isfinite(E), E, np.inf)  # NaN and +-inf: weight zero
    return gibbs_consensus(X, E, None, alpha, None, 1.0, xp)[1]


@jit
def _reflect_kernel(X, lb, ub, out):
    M, N, d = X.shape
    for m in range(M):
        for i in range(N):
            for j in range(d):
                x = X[m, i, j]
                lo = lb[j]
                hi = ub[j]
                if x >= lo and x <= hi:  # inside: nothing to do (the common case)
                    out[m, i, j] = x
                    continue
                w = hi - lo
                if w < math.inf:
                    y = (x - lo) % (2.0 * w)  # Python semantics: y in [0, 2w)
                    if y > w:
                        y = 2.0 * w - y
                    x = lo + y
                else:
                    if x < lo:
                        x = 2.0 * lo - x
                    if x > hi:
                        x = 2.0 * hi - x
                out[m, i, j] = min(max(x, lo), hi)


def reflect(X, lb, ub, xp):
    """Numba twin of :func:`._cbo_bounds.reflect` for (M, N, d) points."""
    X = np.ascontiguousarray(X)
    out = np.empty_like(X)
    _reflect_kernel(X, np.ascontiguousarray(lb, dtype=X.dtype),
                    np.ascontiguousarray(ub, dtype=X.dtype), out)
    return out


@jit
def _track_kernel(X, F, BF, BX):
    M, N, d = X.shape
    n_bad = 0
    for m in range(M):
        k = -1
        fk = math.inf
        for i in range(N):
            f = F[m, i]
            if not (f < math.inf and f > -math.inf):  # NaN or +-inf: the worst particle
                n_bad += 1
                F[m, i] = math.inf
            elif f < fk:
                fk = f
                k = i
        if k >= 0 and fk < BF[m]:
            BF[m] = fk
            for j in range(d):
                BX[m, j] = X[m, k, j]
    return n_bad


def track_best(X, F, BF, BX, xp):
    """Numba twin of ``_cbo_generic.track_best``: (F cleaned, n_bad, BF, BX)."""
    F = np.array(F, dtype=X.dtype)  # cleaned in place: a copy
    BF, BX = BF.copy(), np.ascontiguousarray(BX).copy()
    n_bad = _track_kernel(np.ascontiguousarray(X), F, BF, BX)
    return F, n_bad, BF, BX
