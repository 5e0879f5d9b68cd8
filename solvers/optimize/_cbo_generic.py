"""Generic (Array API) twins of the CBO kernels of :mod:`._cbo_kernels`.

Each function here runs on any namespace ``xp`` and is the reference its Numba and CuPy
twins (:mod:`._cbo_numba`, :mod:`._cbo_cupy`) are tested against on NaN, +-inf, empty and
float32 inputs:

- :func:`gibbs_weights`: per run, the weights ``exp(-alpha (E_i - min E))`` normalised,
  over the mini-batch ``mask`` and over finite energies only (+inf energies get weight zero
  and do not count in the effective sample size); a run without a finite energy gets
  uniform weights; with ``ess`` the alpha of each run is found by bisection on log(alpha)
  so that the effective sample size ``1 / sum w^2`` is ``ess`` times the finite count;
- :func:`gibbs_consensus`: the same weights and the consensus ``sum_i w_i P_i``;
- :func:`move`: the drift toward the consensus plus diagonal (anisotropic) or isotropic
  noise, and the spread ``max |x_ij - c_j|`` per run;
- :func:`track_best`: non-finite energies -> +inf (counted) and the best point per run;
- :func:`consensus`: Gibbs-weighted means of (M, N, d) particles.

The twin of the ``reflect`` kernel is :func:`._cbo_bounds.reflect`.
"""
import math

from ..lse import softmax, logsumexp

__all__ = ["gibbs_weights", "gibbs_consensus", "move", "track_best", "consensus"]

#: the ESS bisection on log(alpha): its lower end (alpha = 1e-300, so that any scale of
#: ``f`` is resolved) and its number of steps, shared with the Numba kernel
LOG_ALPHA_LO = math.log(1e-300)
N_BISECT = 60


def _energy_gaps(E, mask, xp):
    """``g = E - min E`` per run, +inf for excluded particles; zeros in a run without a
    finite energy. Returns ``(g, all_bad)`` with ``all_bad`` of shape (M, 1)."""
    inf = xp.asarray(xp.inf, dtype=E.dtype)
    zero = xp.asarray(0.0, dtype=E.dtype)
    if mask is not None:
        E = xp.where(mask, E, inf)
    fmin = xp.min(E, axis=1, keepdims=True)
    all_bad = ~xp.isfinite(fmin)
    g = xp.where(all_bad, zero, E - xp.where(all_bad, zero, fmin))
    if mask is not None:
        g = xp.where(mask, g, inf)
    return g, all_bad


def _ess_alpha(g, ess, alpha_max, xp):
    """Per-run alpha with effective sample size 1/sum(w^2) = ess * (finite particles):
    bisection on log(alpha) in [LOG_ALPHA_LO, log alpha_max] (the Numba kernel's)."""
    M = g.shape[0]
    count = xp.sum(xp.astype(g < xp.inf, xp.float64), axis=1)
    log_target = xp.log(ess * count)
    lo = xp.full((M,), LOG_ALPHA_LO, dtype=xp.float64)
    hi = xp.full((M,), math.log(alpha_max), dtype=xp.float64)
    g64 = xp.astype(g, xp.float64)
    for _ in range(N_BISECT):
        mid = 0.5 * (lo + hi)
        la = -xp.exp(mid)[:, None] * g64
        log_ess = 2.0 * logsumexp(la, axis=1) - logsumexp(2.0 * la, axis=1)
        small = log_ess < log_target
        hi = xp.where(small, mid, hi)
        lo = xp.where(small, lo, mid)
    return xp.exp(0.5 * (lo + hi))


def gibbs_weights(E, mask, alpha, ess, alpha_max, xp):
    """Weights softmax(-alpha (E - min E)) per run over the batch ``mask`` and the finite
    energies (``E`` holds +inf for bad ones); uniform in a run without a finite energy.
    Returns ``(W, alpha_used)``; ``alpha_used`` is per run (M,) when ``ess`` is given."""
    if E.shape[1] == 0:  # no particles: no weights
        a = alpha if ess is None else xp.full((E.shape[0],), alpha, dtype=xp.float64)
        return xp.zeros(E.shape, dtype=E.dtype), a
    g, all_bad = _energy_gaps(E, mask, xp)
    if ess is None:
        a = alpha_used = alpha
    else:
        alpha_used = xp.where(all_bad[:, 0], xp.asarray(alpha, dtype=xp.float64),
                              _ess_alpha(g, ess, alpha_max, xp))
        a = xp.astype(alpha_used, g.dtype)[:, None]
    excluded = g == xp.inf
    logits = -a * xp.where(excluded, xp.zeros_like(g), g)
    logits = xp.where(excluded, xp.asarray(-xp.inf, dtype=g.dtype), logits)
    return softmax(logits, axis=1), alpha_used


def gibbs_consensus(P, E, mask, alpha, ess, alpha_max, xp):
    """Gibbs weights (:func:`gibbs_weights`) and the consensus ``sum_i w_i P_i`` per run.
    Returns ``(W, C, alpha_used)``."""
    W, alpha_used = gibbs_weights(E, mask, alpha, ess, alpha_max, xp)
    return W, xp.sum(W[:, :, None] * P, axis=1), alpha_used


def move(X, C, xi, lam_dt, sig_sqdt, aniso, xp):
    """Drift toward ``C`` plus diagonal or isotropic noise; returns (X_new, spread)."""
    M, N, d = X.shape
    diff = X - C[:, None, :]
    spread = xp.max(xp.reshape(xp.abs(diff), (M, N * d)), axis=1) if N * d else \
        xp.zeros((M,), dtype=X.dtype)
    if aniso:
        return X - lam_dt * diff + sig_sqdt * diff * xi, spread
    nrm = xp.sqrt(xp.sum(diff * diff, axis=2, keepdims=True))
    return X - lam_dt * diff + (sig_sqdt * nrm) * xi, spread


def consensus(X, E, alpha, xp):
    """Consensus points of (M, N, d) particles; non-finite energies get weight zero."""
    E = xp.where(xp.isfinite(E), E, xp.asarray(xp.inf, dtype=E.dtype))
    W, _ = gibbs_weights(E, None, alpha, None, 1.0, xp)
    return xp.sum(W[:, :, None] * X, axis=1)


def track_best(X, F, BF, BX, xp):
    """Non-finite energies -> +inf; update each run's best point (``BF``, ``BX``; the
    first minimiser, as the kernel's strict '<'). Returns ``(F, n_bad, BF, BX)``;
    ``n_bad`` may stay on the device."""
    M, N, _ = X.shape
    bad = ~xp.isfinite(F)
    n_bad = xp.sum(xp.astype(bad, xp.int64))
    F = xp.where(bad, xp.asarray(xp.inf, dtype=F.dtype), F)
    if N == 0:
        return F, n_bad, BF, BX
    idx = xp.argmin(F, axis=1)
    f_step = xp.min(F, axis=1)
    onehot = xp.reshape(xp.arange(N), (1, N)) == xp.reshape(idx, (M, 1))
    x_step = xp.sum(xp.where(onehot[:, :, None], X, xp.zeros_like(X)), axis=1)
    better = f_step < BF
    return F, n_bad, xp.where(better, f_step, BF), xp.where(better[:, None], x_step, BX)
