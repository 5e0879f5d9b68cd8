"""Generic (Array API) twins of the CBO kernels of :mod:`._cbo_kernels`.

Each function here runs on any namespace ``xp`` and is the reference its Numba and CuPy
twins (:mod:`._cbo_numba`, :mod:`._cbo_cupy`) are tested against on NaN, +-inf, empty and
float32 inputs:

- :func:`gibbs_weights`: per run, the weights ``exp(-alpha (E_i - min E))`` normalised,
  over the mini-batch ``mask`` and over finite energies only (+inf energies get weight zero
  and do not count in the effective sample size); a run without a finite energy gets
  uniform weights; with ``ess`` the alpha of each run is found by bisection on log(alpha)
  so that the effective sample size ``1 / sum w^2`` is ``ess`` times the finite count.
  The effective sample size of ``w = exp(-alpha g)``, ``g >= 0``, decreases with alpha
  (its log-derivative is ``-2 alpha (E_w[g] - E_{w^2}[g]) <= 0``), so ``b`` steps of the
  bisection are decided at once by counting which of the ``2^b - 1`` evenly spaced points
  of the interval lie at or above the target: the same interval, with ``b`` times fewer
  array operations (:data:`SECTION_BITS`);
- :func:`gibbs_consensus`: the same weights and the consensus ``sum_i w_i P_i``;
- :func:`move`: the drift toward the consensus plus diagonal (anisotropic) or isotropic
  noise, and the spread ``max |x_ij - c_j|`` per run;
- :func:`consensus_move`: a whole diagonal-noise step after the evaluation, in one call:
  :func:`gibbs_consensus`, :func:`move`, and the reflection into the box;
- :func:`track_best`: non-finite energies -> +inf (counted) and the best point per run;
- :func:`consensus`: Gibbs-weighted means of (M, N, d) particles.

The twin of the ``reflect`` kernel is :func:`._cbo_bounds.reflect`.
"""
import math

from ._cbo_bounds import reflect

__all__ = ["gibbs_weights", "gibbs_consensus", "move", "consensus_move", "track_best",
           "consensus"]

#: the ESS bisection on log(alpha), shared with the Numba kernel: its lower end (alpha =
#: 1e-300, so that any scale of ``f`` is resolved), the width of its range (a power of two,
#: so that every node ``lo + width * k / 2^j`` is computed with one rounding on every
#: backend, fused multiply-add or not; nodes above ``log(alpha_max)`` count as too large)
#: and its number of steps (log(alpha) to 2e-6)
LOG_ALPHA_LO = math.log(1e-300)
ALPHA_SPAN = 2048.0
N_BISECT = 30
#: levels of the bisection the generic code takes per pass (N_BISECT / SECTION_BITS
#: passes): one pass evaluates the effective sample size at the 2^b - 1 interior points of
#: b bisection steps at once, in one array operation instead of b
SECTION_BITS = 6
#: ``exp(-t)`` is 0 for every ``t`` above this in float32 and float64: the ESS weights cap
#: the products ``alpha * g`` here (alpha reaches 1e300), so that they never overflow (the
#: overflow would only warn and give the same weight 0)
EXP_UNDERFLOW = 1e4


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
    the Numba kernel's bisection on log(alpha) (capped at log alpha_max), taken
    :data:`SECTION_BITS` levels per pass (module docstring)."""
    M = g.shape[0]
    target = ess * xp.sum(xp.astype(g < xp.inf, xp.float64), axis=1)[:, None]
    neg_g = -xp.astype(g, xp.float64)[:, None, :]
    pieces = 2 ** SECTION_BITS
    ks = xp.reshape(xp.arange(1, pieces, dtype=xp.float64), (1, pieces - 1))
    cap = math.log(alpha_max)
    lo = xp.full((M,), LOG_ALPHA_LO, dtype=xp.float64)
    step = ALPHA_SPAN / pieces
    for _ in range(N_BISECT // SECTION_BITS):
        nodes = lo[:, None] + step * ks  # (M, 2^b - 1) values of log(alpha)
        a = xp.exp(xp.minimum(nodes, xp.full_like(nodes, cap)))  # above the cap: unused
        a = a[:, :, None]
        w = xp.exp(a * xp.maximum(neg_g, -EXP_UNDERFLOW / a))  # the best particle's w is 1
        s1 = xp.sum(w, axis=2)
        # ESS = s1^2 / s2 decreases with alpha: the nodes at or above the target (and
        # not above the cap) lie below the root, and their count says which piece holds it
        above = (s1 * s1 >= target * xp.sum(w * w, axis=2)) & (nodes <= cap)
        lo = lo + step * xp.sum(xp.astype(above, xp.float64), axis=1)
        step = step / pieces
    return xp.exp(xp.minimum(lo + 0.5 * pieces * step, xp.full_like(lo, cap)))


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
        # alpha may reach 1e300: in float64 (as the kernel), the products capped so that
        # no alpha * g overflows
        a, g = alpha_used[:, None], xp.astype(g, xp.float64)
    excluded = g == xp.inf
    g = xp.where(excluded, xp.zeros_like(g), g)
    if ess is not None:
        g = xp.minimum(g, EXP_UNDERFLOW / a)
    logits = -a * g
    # the best particle's logit is 0, so exp never overflows and the sum is at least 1
    # (a run without a finite energy has all logits 0: uniform weights)
    w = xp.astype(xp.where(excluded, xp.zeros_like(g), xp.exp(logits)), E.dtype)
    return w / xp.sum(w, axis=1, keepdims=True), alpha_used


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


def consensus_move(P, E, mask, alpha, ess, alpha_max, X, xi, lam_dt, sig_sqdt, aniso, box,
                   xp, move=move):
    """One diagonal- or isotropic-noise step from the energies ``E`` of the points ``P``:
    the Gibbs weights and consensus (:func:`gibbs_consensus`), the particles ``X`` moved
    toward it (``move``: :func:`move` or a backend's twin of it), then reflected into
    ``box = (lb, ub)`` unless it is None. Returns ``(W, C, alpha_used, X_new, spread)``."""
    W, C, alpha_used = gibbs_consensus(P, E, mask, alpha, ess, alpha_max, xp)
    X_new, spread = move(X, C, xi, lam_dt, sig_sqdt, aniso, xp)
    if box is not None:
        X_new = reflect(X_new, box[0], box[1], xp)
    return W, C, alpha_used, X_new, spread


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
