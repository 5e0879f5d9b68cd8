r"""Additive nonlinear mechanisms (CAM-style): spline regressions scored by BIC.

Each node is a sum of smooth functions of its parents plus Gaussian noise with its own
variance,

.. math::

    x_j = \sum_{i \in \mathrm{pa}(j)} f_{ij}(x_i) + \sigma_j z_j, \qquad
    f_{ij}(x) = \Phi_i(x)^\top \beta_{ij},

with :math:`\Phi_i` a cubic B-spline basis (scipy's ``BSpline.design_matrix``, knots at
quantiles of the standardized column, each basis column centered, one dropped for the
intercept) and :math:`\beta` fitted by ridge regression. A node's parents are chosen among
its predecessors in the order by forward selection of whole groups, then pruned backwards,
each step accepted when it lowers the node's BIC
:math:`\tfrac n2 \log \mathrm{rss}_j + \tfrac{\log n}{2} q |\mathrm{pa}(j)|` (``q`` basis
functions per parent) — the penalized-likelihood version of CAM's pruning. The order is
searched with the same score by the local moves of :mod:`solvers.dag.refine` (swaps and edge
reversals), started from the linear result. Unlike the linear-Gaussian model, additive
models with Gaussian noise identify the DAG (Bühlmann, Peters, Ernest 2014) when the
functions are nonlinear.

References
----------
.. [1] P. Bühlmann, J. Peters, J. Ernest, "CAM: Causal additive models, high-dimensional
   order search and penalized regression", Annals of Statistics 42(6):2526-2556, 2014.
.. [2] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
"""
import math

import numpy as np

from ._order_search import OrderState, search
from .graph import topological_order

__all__ = ["spline_basis", "additive_search", "greedy_order"]


def spline_basis(x, n_basis=6, degree=3):
    """Centered cubic B-spline design matrix of one standardized column.

    Parameters
    ----------
    x : ndarray, shape (n,)
    n_basis : int
        Columns returned (the B-spline basis has ``n_basis + 1`` functions; one is
        dropped because they sum to one, which the intercept already spans).
    degree : int

    Returns
    -------
    Phi : ndarray, shape (n, n_basis)
        Centered columns (mean 0).
    """
    from scipy.interpolate import BSpline

    x = (x - x.mean()) / max(x.std(), 1e-300)
    n_inner = n_basis + 1 - degree - 1
    inner = np.quantile(x, np.linspace(0, 1, n_inner + 2)[1:-1]) if n_inner > 0 else []
    lo, hi = x.min() - 1e-9, x.max() + 1e-9
    t = np.r_[[lo] * (degree + 1), inner, [hi] * (degree + 1)]
    D = BSpline.design_matrix(np.clip(x, lo, hi), t, degree).toarray()[:, 1:]
    return D - D.mean(axis=0)


class _AdditiveModel:
    """Ridge spline fits of one node on groups of basis columns, from one big Gram."""

    def __init__(self, X, n_basis, ridge):
        n, d = X.shape
        Xs = (X - X.mean(axis=0)) / X.std(axis=0)
        Phi = np.hstack([spline_basis(Xs[:, i], n_basis) for i in range(d)])
        self.q, self.n, self.d = n_basis, n, d
        self.G = Phi.T @ Phi / n
        self.Gy = Phi.T @ Xs / n
        self.ridge = ridge
        self.idx = [np.arange(i * n_basis, (i + 1) * n_basis) for i in range(d)]
        self.screen = None      # optional per-node candidate sets (see screen_parents)

    def pair_rss(self):
        """``R[i, j]``: residual variance of node ``j`` on the single parent ``i``
        (all pairs at once: one ``q x q`` inverse per parent)."""
        q, d = self.q, self.d
        R = np.ones((d, d))
        for i in range(d):
            A = self.G[np.ix_(self.idx[i], self.idx[i])]
            g = self.Gy[self.idx[i], :]                           # (q, d)
            beta = np.linalg.solve(A + self.ridge * np.eye(q), g)
            R[i] = 1.0 - 2.0 * np.einsum("kj,kj->j", beta, g) \
                + np.einsum("kj,kj->j", beta, A @ beta)
        np.fill_diagonal(R, 1.0)
        return np.maximum(R, 1e-12)

    def screen_parents(self, k):
        """Restrict every node's parent candidates to the ``k`` with the largest
        single-parent fit (CAM's preliminary neighbourhood selection, here a cheap
        screen used by the ``mechanism="auto"`` gate when ``d`` is large)."""
        R = self.pair_rss()
        self.screen = [set(np.argsort(R[:, j])[:k].tolist()) - {j} for j in range(self.d)]

    def rss(self, y, groups):
        """Residual variance (standardized ``y``) and coefficients of the ridge fit."""
        if not groups:
            return 1.0, np.zeros(0)
        cols = np.concatenate([self.idx[g] for g in groups])
        A = self.G[cols[:, None], cols]     # fancy indexing: cheaper than np.ix_ here
        g = self.Gy[cols, y]
        ridged = A.copy()
        ridged.flat[::cols.size + 1] += self.ridge      # A + ridge I, without an eye
        beta = np.linalg.solve(ridged, g)
        return max(1.0 - 2.0 * beta @ g + beta @ A @ beta, 1e-12), beta

    def group_penalty(self, extra=0.0):
        """Penalty of one parent group (``q`` coefficients): ``q log n`` plus ``extra``."""
        return self.q * math.log(self.n) + extra

    def fit(self, y, cand, max_parents, pen=None):
        """Forward selection of parent groups by node BIC, then backward pruning."""
        pen = self.group_penalty() if pen is None else pen
        sel, (rss, _) = [], self.rss(y, [])
        cand = [int(c) for c in cand
                if self.screen is None or int(c) in self.screen[y]]
        while len(sel) < max_parents:
            best, best_rss = None, rss
            for c in cand:
                if c not in sel:
                    r = self.rss(y, sel + [c])[0]
                    if r < best_rss:
                        best, best_rss = c, r
            if best is None or self.n * math.log(rss / best_rss) <= pen:
                break
            sel.append(best)
            rss = best_rss
        while sel:
            drops = [(self.rss(y, [s for s in sel if s != c])[0], c) for c in sel]
            r_drop, c = min(drops)
            if self.n * math.log(r_drop / rss) > pen:
                break
            sel.remove(c)
            rss = r_drop
        rss, beta = self.rss(y, sel)
        # edge strength: the standard deviation of each fitted component
        strength = [math.sqrt(max(float(b @ self.G[np.ix_(self.idx[s], self.idx[s])] @ b),
                                  1e-300))
                    for s, b in zip(sel, np.split(beta, len(sel)) if sel else [])]
        return rss, np.asarray(sel, dtype=np.int64), np.asarray(strength)


class _AdditiveState(OrderState):
    """The order-search state (:mod:`solvers.dag._order_search`) with the additive local
    model."""

    def __init__(self, model, order, max_parents, pen=None):
        self.model = model
        pen = model.group_penalty() if pen is None else float(pen)

        def fit(C, y, cand, n, pen, w_thr, mp):
            return model.fit(y, cand, mp, pen)

        super().__init__(np.eye(model.d), model.n, order, w_thr=0.0, max_parents=max_parents,
                         pen=pen, noise="nonequal", fit=fit, add_gain=None)

    def score_of(self, total, n_edges):
        return 0.5 * total[1] + n_edges * self.pen / (2 * self.n)

    def would_add(self, w, v):
        P = [int(p) for p in self.parents[w]]
        if v in P:
            return False
        r = self.model.rss(w, P + [int(v)])[0]
        return self.n * math.log(self.rss[w] / r) > self.pen

    def backward_pairs(self):
        pos = {u: k for k, u in enumerate(self.order)}
        pairs = []
        for v in range(self.d):
            for w in self.order[pos[v] + 1:]:
                if self.would_add(v, w):
                    r = self.model.rss(v, [int(p) for p in self.parents[v]] + [w])[0]
                    pairs.append((self.rss[v] - r, w, v))
        pairs.sort(reverse=True)
        return [(w, v) for _, w, v in pairs]


def greedy_order(model, max_parents, pen=None):
    """CAM's greedy start: add, one at a time, the edge that lowers the additive BIC most
    while keeping the graph acyclic; return a topological order of the result."""
    d, n = model.d, model.n
    pen = model.group_penalty() if pen is None else pen
    parents = [[] for _ in range(d)]
    rss = np.ones(d)
    reach = np.eye(d, dtype=bool)           # reach[i, j]: a directed path i ~> j
    gain = -n * np.log(model.pair_rss())
    np.fill_diagonal(gain, -np.inf)
    if model.screen is not None:
        for j in range(d):
            gain[[i for i in range(d) if i not in model.screen[j]], j] = -np.inf
    while True:
        ok = ~reach.T & (gain > pen)        # i -> j allowed unless j ~> i
        if not ok.any():
            break
        i, j = np.unravel_index(np.argmax(np.where(ok, gain, -np.inf)), gain.shape)
        parents[j].append(int(i))
        rss[j] = model.rss(j, parents[j])[0]
        reach |= np.outer(reach[:, i], reach[j, :])
        for k in range(d):
            skip = (k == j or k in parents[j] or len(parents[j]) >= max_parents
                    or (model.screen is not None and k not in model.screen[j]))
            gain[k, j] = -np.inf if skip else \
                n * math.log(rss[j] / model.rss(j, parents[j] + [k])[0])
    B = np.zeros((d, d), dtype=bool)
    for j, P in enumerate(parents):
        B[P, j] = True
    return topological_order(B)


def additive_search(X, orders, *, n_basis=4, ridge=1e-3, max_parents=None, max_rounds=50,
                    time_limit=None, greedy=True, pen=None, depth=1):
    """Best additive DAG over local order moves started from each of ``orders``.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Host data (columns are standardized internally; the score is scale-free).
    orders : list of array_like of int
        Starting orders (permutations of ``range(d)``), searched after the greedy
        start of :func:`greedy_order`.
    n_basis : int
        Spline functions per parent (``q``).
    ridge : float
        Ridge penalty on the spline coefficients (Gram scaled by ``1/n``).
    max_parents, max_rounds, time_limit
        As in :func:`solvers.dag.refine.refine_order`.
    greedy : bool
        Also start from :func:`greedy_order` (first); ``False`` when the caller already
        passes it in ``orders``.
    pen : float, optional
        Penalty of one parent group (default ``n_basis log n``, the BIC).
    depth : int
        Depth of the tuck search (:func:`solvers.dag._order_search.search`).

    Returns
    -------
    order : ndarray of int
    W : ndarray, shape (d, d)
        Edge strengths (standard deviation of each fitted component ``f_ij(x_i)`` on the
        standardized scale); nonzero exactly on the edges. Always a DAG.
    score : float
        Its BIC per sample (lower is better).
    """
    model = _AdditiveModel(np.asarray(X, dtype=float), int(n_basis), float(ridge))
    d = model.d
    mp = d - 1 if max_parents is None else int(max_parents)
    best = None
    starts = ([greedy_order(model, mp, pen)] if greedy else []) + list(orders)
    for order in starts:
        state = _AdditiveState(model, order, mp, pen)
        search(state, max_rounds=max_rounds, time_limit=time_limit, depth=depth)
        if best is None or state.score < best.score:
            best = state
    return np.asarray(best.order, dtype=np.int64), best.W(), best.score
