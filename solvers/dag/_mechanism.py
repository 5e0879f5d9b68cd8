r"""``mechanism="auto"``: linear or additive mechanisms, chosen by BIC.

The additive model nests the linear one (cubic splines reproduce straight lines), so
both are scored by the Gaussian BIC of the same data, in the same units: per sample,
variance parameters counted,

.. math::

    \mathrm{BIC}_\mathrm{add}/n = \tfrac12 \sum_j \log \widehat{\mathrm{var}}(x_j)
    \mathrm{rss}^{\mathrm{std}}_j + (q |E| + d) \frac{\log n}{2n},

with :math:`\mathrm{rss}^{\mathrm{std}}_j` the residual variance of the standardized
column (:mod:`solvers.dag.additive`), against the linear model's BIC (equal or non-equal
variances, :func:`solvers.dag.refine.model_bic`). The additive search is the expensive
step, so it runs only when the additive fit on the learned linear order or on CAM's
greedy order (:func:`~solvers.dag.additive.greedy_order`) already beats the linear BIC (a
gate costing the greedy pass and one parent selection per node); the search then starts
from those orders, and the additive graph is kept only if its BIC is lower still.
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
                     max_rounds, time_limit, n_basis=4, ridge=1e-5, greedy=None, pen=None):
    """Additive search (``"additive"``) or the BIC choice of ``"auto"``.

    Parameters
    ----------
    X_host : ndarray, shape (n, d)
    C_host : ndarray, shape (d, d)
        Centered Gram matrix of ``X_host`` (its diagonal: the column variances).
    best : dict
        The linear result kept (``W``, ``order``, ``score``, ...).
    bics : dict
        Linear BIC per noise model (updated in place with ``"additive"``).
    starts : list of orders
        Starting orders of the additive search.
    mechanism : {"additive", "auto"}
    greedy : order, optional
        :func:`greedy_start` of the same data and ``max_parents``, when already computed.

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
        if greedy is None:
            greedy = greedy_order(model, mp, gpen)
        starts = [greedy, best["order"]] + list(starts)
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
