r"""The local covariance run that polishes a CBO answer (host side, a hard budget).

Started at the best point ``m`` with a covariance ``C`` (the Gibbs-weighted covariance of
the swarm that found it) and a step ``s``, each generation draws ``lam`` points, weights
them with Gibbs weights whose effective sample size is a fixed share of ``lam`` (as the
covariance starts do), moves the mean to their consensus and adapts ``C`` and ``s``:

.. math::

   x_i = m + s\,y_i,\quad y_i \sim N(0, C),\qquad
   w = \mathrm{softmax}(-\alpha f(x)),\qquad
   m \leftarrow \textstyle\sum_i w_i x_i,

   C \leftarrow (1 - c_1 - c_\mu)\,C + c_1\,p_c p_c^\top
                + c_\mu \textstyle\sum_i w_i\,y_i y_i^\top,\qquad
   s \leftarrow s\,\exp\!\Big(\frac{c_\sigma}{d_\sigma}
                \big(\tfrac{\lVert p_\sigma\rVert}{E\lVert N(0, I)\rVert} - 1\big)\Big),

with the evolution paths :math:`p_c` and :math:`p_\sigma` and the learning rates of
Hansen's CMA-ES tutorial (the consensus replaces the recombination of the ``mu`` best).
This is the covariance noise with memory: the consensus-based sampling step
``x ~ N(c, Sigma_w)`` re-estimates ``Sigma_w`` from scratch from the swarm every step and
needs ``N > d`` particles, while the run here keeps ``C`` across generations, so a small
population (``4 + 3 ln d``) suffices and, once ``C`` has been learned, the convergence rate
on an ill-conditioned valley no longer depends on its conditioning. As CMA-ES, the run is
invariant in distribution under affine maps ``x = A z + b`` given the mapped start
covariance ``A^{-1} C A^{-T}`` (the square roots come from eigendecompositions, so unlike
the covariance starts it is not the mapped run draw for draw). Finite differences
(L-BFGS-B) stall near ``1e-6`` on such valleys; this run does not.

Points leaving the box are reflected back (every evaluated point is feasible) and the
update uses the reflected points.

References
----------
.. [1] N. Hansen, "The CMA evolution strategy: a tutorial", arXiv:1604.00772 (2016).
.. [2] J. A. Carrillo, F. Hoffmann, A. M. Stuart, U. Vaes, "Consensus-based sampling",
   Stud. Appl. Math. 148 (2022).
"""
import math

import numpy as np

__all__ = ["local_run", "swarm_covariance"]

#: effective sample size of the Gibbs weights, as a share of the population
LOCAL_ESS = 0.3
#: the run ends when its best has not improved (relative 1e-12) over this many
#: generations, in units of 10 + 30 d / lam, or when the step fell below 1e-13 (relative)
LOCAL_PATIENCE = 1


def swarm_covariance(P, W, C):
    """Gibbs-weighted covariance ``sum_j w_j (P_j - c)(P_j - c)^T`` (host arrays)."""
    D = np.asarray(P, dtype=np.float64) - np.asarray(C, dtype=np.float64)[None, :]
    return (D * np.asarray(W, dtype=np.float64)[:, None]).T @ D


def _parameters(d, lam):
    mu_eff = max(1.0, LOCAL_ESS * lam)
    c_s = (mu_eff + 2.0) / (d + mu_eff + 5.0)
    d_s = 1.0 + 2.0 * max(0.0, math.sqrt((mu_eff - 1.0) / (d + 1.0)) - 1.0) + c_s
    c_c = (4.0 + mu_eff / d) / (d + 4.0 + 2.0 * mu_eff / d)
    c_1 = 2.0 / ((d + 1.3) ** 2 + mu_eff)
    c_mu = min(1.0 - c_1, 2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((d + 2.0) ** 2 + mu_eff))
    chi = math.sqrt(d) * (1.0 - 1.0 / (4.0 * d) + 1.0 / (21.0 * d * d))
    return mu_eff, c_s, d_s, c_c, c_1, c_mu, chi


def _start_covariance(cov, d):
    """(C normalised to mean variance 1, the rms spread) from a swarm covariance."""
    if cov is None or not np.all(np.isfinite(cov)):
        return np.eye(d), None
    cov = 0.5 * (cov + cov.T)
    tr = float(np.trace(cov)) / d
    if not tr > 0:
        return np.eye(d), None
    return cov / tr + 1e-10 * np.eye(d), math.sqrt(tr)


def local_run(fb, weights, x, fx, cov, step, lb, ub, budget, normal, reflect):
    """Run the local covariance search; returns ``(x, f, nfev)``, the best point seen.

    ``fb``: host batch objective ((k, d) -> (k,)); ``weights``: Gibbs weights of a host
    energy vector (+inf for non-finite values); ``x``, ``fx``: the start and its value;
    ``cov``: a swarm covariance (``C`` is it scaled to mean variance 1) or None (then
    ``C = I``); ``step``: the start step ``s``, capped by the swarm's rms spread (the
    cumulative step-size rule grows a small step within a few generations, while a large
    one costs many to shrink); ``lb``, ``ub``: host bounds or None; ``normal(shape)``: host
    standard normal draws; ``reflect(X)``: points into the box. At most ``budget``
    evaluations; the run also ends when its best stalls (:data:`LOCAL_PATIENCE`) or its
    step falls below 1e-13 of the scale of ``m``.
    """
    d = x.shape[0]
    lam = 4 + int(3 * math.log(d))
    mu_eff, c_s, d_s, c_c, c_1, c_mu, chi = _parameters(d, lam)
    C, spread = _start_covariance(cov, d)
    s = step if spread is None else min(spread, step)
    m, best_x, best_f = np.array(x, dtype=np.float64), np.array(x, dtype=np.float64), fx
    p_s, p_c = np.zeros(d), np.zeros(d)
    patience = max(1, int(LOCAL_PATIENCE * (10 + math.ceil(30 * d / lam))))
    history, nfev, g = [], 0, 0
    while nfev < budget and s > 0 and math.isfinite(s):
        vals, B = np.linalg.eigh(C)
        D = np.sqrt(np.maximum(vals, 1e-300))
        k = min(lam, budget - nfev)
        Z = normal((lam, d))
        X = m + s * (Z * D) @ B.T
        if lb is not None:
            X = reflect(X)
        F = np.asarray(fb(X[:k]), dtype=np.float64)
        nfev += k
        F = np.where(np.isfinite(F), F, np.inf)
        i = int(np.argmin(F))
        if F[i] < best_f:
            best_f, best_x = float(F[i]), X[i].copy()
        if k < lam or not np.isfinite(F[i]):
            break
        w = weights(F)
        Y = (X - m) / s
        y_w = w @ Y
        m = m + s * y_w
        g += 1
        inv_sqrt = (B / D) @ B.T
        p_s = (1 - c_s) * p_s + math.sqrt(c_s * (2 - c_s) * mu_eff) * (inv_sqrt @ y_w)
        norm_ps = float(np.linalg.norm(p_s))
        h_s = norm_ps / math.sqrt(1 - (1 - c_s) ** (2 * g)) < (1.4 + 2 / (d + 1)) * chi
        p_c = (1 - c_c) * p_c + h_s * math.sqrt(c_c * (2 - c_c) * mu_eff) * y_w
        rank_mu = (Y * w[:, None]).T @ Y
        C = (1 - c_1 - c_mu) * C + c_1 * (np.outer(p_c, p_c) + (not h_s) * c_c * (2 - c_c) * C) \
            + c_mu * rank_mu
        C = 0.5 * (C + C.T)
        s *= math.exp(min(1.0, c_s / d_s * (norm_ps / chi - 1)))
        history.append(best_f)
        if len(history) > patience and history[-patience - 1] - best_f <= \
                1e-12 * (1 + abs(best_f)):
            break
        if s * math.sqrt(float(np.max(vals))) <= 1e-13 * (1 + float(np.max(np.abs(m)))):
            break
    return best_x, best_f, nfev
