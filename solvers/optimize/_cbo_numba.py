"""Numba kernel for consensus-based optimization: one fused step per call.

:func:`cbo_step` does, for each of the ``M`` runs and in one kernel call, everything the
generic ``xp`` step in :mod:`solvers.optimize.cbo` does with a dozen array operations:

1. non-finite energies (NaN, +-inf) become +inf (the particle gets weight zero) and are
   counted;
2. the best point ever evaluated and (with ``memory``) the personal bests are updated;
3. alpha is either the scheduled value or found by bisection on the effective sample size;
4. the Gibbs weights ``exp(-alpha (f_i - f_min))`` (shifted by the minimum: the same
   stable softmax as :func:`solvers.softmax`, fused so that it never materialises the
   weights) and the consensus point are accumulated in one pass over the particles;
5. every particle moves toward the consensus with the drift and the (an)isotropic noise,
   written to a second buffer, and the spread ``max |x_ij - c_j|`` is recorded.

The noise ``xi`` and the mini-batch mask come from the host Generator, so a run on this
kernel sees the same draws as the generic code and agrees with it draw for draw.
"""
import math

import numpy as np

from .._lib.numba_config import jit


@jit
def _log_ess(g, mask, use_mask, a):
    """log of the effective sample size (sum w)^2 / sum w^2 for w = exp(-a g), g >= 0."""
    s1 = 0.0
    s2 = 0.0
    for i in range(g.shape[0]):
        if use_mask and not mask[i]:
            continue
        gi = g[i]
        if gi == math.inf:
            continue
        w = math.exp(-a * gi)
        s1 += w
        s2 += w * w
    return 2.0 * math.log(s1) - math.log(s2)


@jit
def _ess_alpha(g, mask, use_mask, target, log_lo, log_hi, n_bisect):
    """Bisection on log(alpha) so that the effective sample size is ``target``.

    Same iteration as the generic code: the ESS decreases in alpha; the answer is the
    midpoint after ``n_bisect`` halvings of [log_lo, log_hi].
    """
    lo = log_lo
    hi = log_hi
    log_target = math.log(target)
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        if _log_ess(g, mask, use_mask, math.exp(mid)) < log_target:
            hi = mid
        else:
            lo = mid
    return math.exp(0.5 * (lo + hi))


@jit
def cbo_step(X, F, Y, FY, BX, BF, memory, alpha, ess, alpha_max, xi, mask, use_mask,
             lam_dt, sig_sqdt, aniso, X_out, C, spread, alphas, G):
    """One CBO step for all runs; returns the number of non-finite energies seen.

    Parameters (arrays are modified in place)
    ----------
    X : (M, N, d) positions that were evaluated; F : (M, N) their energies (raw).
    Y, FY : personal bests and their energies (used when ``memory``).
    BX, BF : (M, d), (M,) best point ever evaluated per run and its energy.
    alpha : scheduled alpha (used when ``ess <= 0``); ``ess``: target ESS fraction.
    xi : (M, N, d) standard normal draws; mask : (M, N) mini-batch membership.
    X_out : (M, N, d) receives the moved particles. C : (M, d) the consensus points.
    spread : (M,) max |X - c| per run; alphas : (M,) the alpha used; G : (N,) scratch.
    """
    M, N, d = X.shape
    n_bad = 0
    for m in range(M):
        # 1-2: clean energies, best ever, personal bests
        for i in range(N):
            f = F[m, i]
            if not (f < math.inf and f > -math.inf):  # NaN or +-inf: the worst particle
                n_bad += 1
                f = math.inf
                F[m, i] = f
            if f < BF[m]:
                BF[m] = f
                for j in range(d):
                    BX[m, j] = X[m, i, j]
            if memory and f < FY[m, i]:
                FY[m, i] = f
                for j in range(d):
                    Y[m, i, j] = X[m, i, j]
        # energies and points the consensus is taken over
        fmin = math.inf
        count = 0
        for i in range(N):
            if use_mask and not mask[m, i]:
                continue
            count += 1
            e = FY[m, i] if memory else F[m, i]
            if e < fmin:
                fmin = e
        all_bad = not (fmin < math.inf)
        for i in range(N):
            e = FY[m, i] if memory else F[m, i]
            if all_bad:
                G[i] = 0.0  # no finite energy in the batch: plain mean (alpha -> 0)
            elif e == math.inf:
                G[i] = math.inf
            else:
                G[i] = e - fmin
        # 3: alpha
        if ess > 0.0 and not all_bad:
            a = _ess_alpha(G, mask[m], use_mask, ess * count, math.log(1e-12),
                           math.log(alpha_max), 50)
        else:
            a = alpha
        alphas[m] = a
        # 4: weights and consensus in one pass
        s = 0.0
        for j in range(d):
            C[m, j] = 0.0
        for i in range(N):
            if use_mask and not mask[m, i]:
                continue
            gi = G[i]
            if gi == math.inf:
                continue
            w = math.exp(-a * gi)
            s += w
            if memory:
                for j in range(d):
                    C[m, j] += w * Y[m, i, j]
            else:
                for j in range(d):
                    C[m, j] += w * X[m, i, j]
        for j in range(d):
            C[m, j] /= s
        # 5: drift and noise
        sp = 0.0
        for i in range(N):
            if aniso:
                for j in range(d):
                    diff = X[m, i, j] - C[m, j]
                    ad = abs(diff)
                    if not ad <= sp:  # also catches NaN
                        sp = ad
                    X_out[m, i, j] = X[m, i, j] - lam_dt * diff + sig_sqdt * diff * xi[m, i, j]
            else:
                nrm2 = 0.0
                for j in range(d):
                    diff = X[m, i, j] - C[m, j]
                    ad = abs(diff)
                    if not ad <= sp:
                        sp = ad
                    nrm2 += diff * diff
                scale = sig_sqdt * math.sqrt(nrm2)
                for j in range(d):
                    diff = X[m, i, j] - C[m, j]
                    X_out[m, i, j] = X[m, i, j] - lam_dt * diff + scale * xi[m, i, j]
        spread[m] = sp
    return n_bad


@jit
def consensus_kernel(X, F, alpha, C):
    """Consensus points of (M, N, d) particles with (M, N) energies (non-finite = worst)."""
    M, N, d = X.shape
    for m in range(M):
        fmin = math.inf
        for i in range(N):
            f = F[m, i]
            if f < fmin and f > -math.inf:
                fmin = f
        s = 0.0
        for j in range(d):
            C[m, j] = 0.0
        for i in range(N):
            f = F[m, i]
            if not (fmin < math.inf):
                w = 1.0
            elif not (f < math.inf and f > -math.inf):
                continue
            else:
                w = math.exp(-alpha * (f - fmin))
            s += w
            for j in range(d):
                C[m, j] += w * X[m, i, j]
        for j in range(d):
            C[m, j] /= s


def empty_like_state(X):
    """Scratch arrays the kernel needs for positions ``X`` of shape (M, N, d)."""
    M, N, d = X.shape
    return (np.empty_like(X), np.empty((M, d), dtype=X.dtype), np.empty(M, dtype=X.dtype),
            np.empty(M, dtype=np.float64), np.empty(N, dtype=np.float64))
