r"""``mechanism="auto"``: linear or additive mechanisms, chosen by extended BIC.

The additive model nests the linear one (cubic splines reproduce straight lines), so
both are scored by the Gaussian extended BIC of the same data, in the same units: per
sample, variance parameters counted,

.. math::

    \mathrm{EBIC}_\mathrm{add}/n = \tfrac12 \sum_j \log \widehat{\mathrm{var}}(x_j)
    \mathrm{rss}^{\mathrm{std}}_j + |E| \frac{q \log n + e}{2n} + d \frac{\log n}{2n},

with :math:`\mathrm{rss}^{\mathrm{std}}_j` the residual variance of the standardized
column (:mod:`solvers.dag.additive`), ``q`` spline coefficients per edge and ``e`` the
extended BIC's ``2 gamma log d``, against the linear models' scores (equal and non-equal
variances, :func:`solvers.dag.refine.model_bic`, ``log n + e`` per edge). Each additive
edge pays for ``q - 1`` more coefficients than a linear one, so on linear data the
additive score loses by about ``(q - 1) |E| log(n) / (2n)``. The additive search is the
expensive step, so it runs only when the additive fit on the learned linear order or on
CAM's greedy order (:func:`~solvers.dag.additive.greedy_order`) already beats the linear
score (a gate costing the greedy pass and one parent selection per node); the search then
starts from those orders, and the additive graph is kept only if its score is lower still.
"""
import math

import numpy as np

from .additive import _AdditiveModel, _AdditiveState, additive_search, greedy_order

__all__ = ["choose_mechanism"]

# above this many nodes the gate screens each node's parent candidates down to this many
# (by single-parent fit); the search itself is never screened
_SCREEN = 20


def _to_raw_units(score_std, var, n):
    """Additive BIC per sample on standardized columns -> raw units, variances counted."""
    return float(score_std + 0.5 * np.log(var).sum() + var.size * math.log(n) / (2 * n))


def _gate_model(X_host, n_basis, ridge):
    """The additive model of the gate: parent candidates screened above ``_SCREEN`` nodes."""
    model = _AdditiveModel(X_host, int(n_basis), float(ridge))
    if model.d > _SCREEN:
        model.screen_parents(_SCREEN)
    return model


def choose_mechanism(X_host, C_host, n, best, bics, starts, *, mechanism, max_parents,
                     max_rounds, time_limit, n_basis=4, ridge=1e-5, pen=None):
    """Additive search (``"additive"``) or the extended-BIC choice of ``"auto"``.

    Parameters
    ----------
    X_host : ndarray, shape (n, d)
    C_host : ndarray, shape (d, d)
        Centered Gram matrix of ``X_host`` (its diagonal: the column variances).
    best : dict
        The linear result kept (``W``, ``order``, ``score``, ...).
    bics : dict
        Linear score per noise model (updated in place with ``"additive"``).
    starts : list of orders
        Starting orders of the additive search.
    mechanism : {"additive", "auto"}
    pen : float, optional
        Penalty per linear edge (``log n + 2 gamma log d``; default ``log n``, the BIC).

    Returns
    -------
    best : dict
        ``best`` itself (linear kept) or a copy with the additive ``W``, ``order``,
        ``score``.
    used : {"linear", "additive"}
    """
    var = np.diag(C_host).copy()
    d = var.size
    mp = d - 1 if max_parents is None else int(max_parents)
    extra = 0.0 if pen is None else pen - math.log(n)
    if mechanism == "auto":
        model = _gate_model(X_host, n_basis, ridge)
        gpen = model.group_penalty(extra)
        starts = [greedy_order(model, mp, gpen), best["order"]] + list(starts)
        gate = min(_to_raw_units(_AdditiveState(model, o, mp, gpen).score, var, n)
                   for o in starts[:2])
        bics["additive"] = gate
        if gate >= min(v for k, v in bics.items() if k != "additive"):
            return best, "linear"
    order_a, W_a, score_a = additive_search(X_host, starts, n_basis=n_basis, ridge=ridge,
                                            max_parents=max_parents, max_rounds=max_rounds,
                                            time_limit=time_limit,
                                            greedy=mechanism != "auto",
                                            pen=n_basis * math.log(n) + extra)
    bic_a = _to_raw_units(score_a, var, n)
    if mechanism == "auto":
        bics["additive"] = min(bic_a, bics["additive"])
        if bic_a >= min(v for k, v in bics.items() if k != "additive"):
            return best, "linear"
    else:
        bics["additive"] = bic_a
    return dict(best, W=W_a, order=order_a, score=score_a), "additive"
