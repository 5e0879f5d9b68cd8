"""The order search behind :func:`solvers.dag.refine.refine_order` (and the additive model).

A state holds, for one node order, the fitted parents of every node (chosen among its
predecessors by the local fit) and the pieces of the score. Moves change the order;
only the nodes whose predecessor sets change are refitted, and a fit depends only on
``(node, candidate set)``, so fits are cached.

The search repeats, until none lowers the score by more than ``TOL``:

1. local moves (first improvement): for every edge ``u -> v``, move ``v`` just before
   ``u`` or ``u`` just after ``v``; for every pair where a later node would be a
   significant parent of an earlier one, the same two moves; swaps of adjacent nodes;
2. a depth-first search over *tucks* (Lam, Andrews, Ramsey 2022): for an edge
   ``u -> v``, move ``v`` together with its ancestors between them to just before ``u``.
   A tuck that lowers the score is taken; one that leaves it unchanged (for a
   score-equivalent score, a move inside the Markov equivalence class) is explored
   further, up to ``depth`` tucks deep, so the search walks across the plateaus of
   equivalent graphs that stop plain local moves.

Every decision is a comparison of scores with the margin ``TOL``, and ties go to the
first candidate in a fixed enumeration order (node index, then parent selection order),
so the search is deterministic and round-off in the data below ``TOL`` cannot change it.

References
----------
.. [1] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
.. [2] W.-Y. Lam, B. Andrews, J. Ramsey, "Greedy relaxations of the sparsest
   permutation algorithm", UAI 2022.
"""
import math
import time

import numpy as np

from .graph import topological_order
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["OrderState", "search", "greedy_order", "local_fit_xp", "add_gain_xp", "TOL"]

#: score margin (per sample) a move must gain to be taken
TOL = 1e-9

#: cached fits per state before the cache is cleared
_CACHE_LIMIT = 200000


def local_fit_xp(C, y, cand, n, pen, w_thr, max_parents):
    """Parents of ``y`` among ``cand`` by forward selection + backward pruning.

    An edge is kept when it lowers ``n log rss`` by more than ``pen`` (``log n`` is the
    BIC) and its weight is at least ``w_thr``. Returns ``(rss, parents, coefs)`` with
    ``rss`` the residual variance (per sample) and ``coefs`` the exact least-squares
    weights. The numpy reference of the Numba kernel ``local_fit``.
    """
    cyy = C[y, y]
    floor = 1e-12 * max(cyy, 1e-300)
    sel = _forward(C, y, np.asarray(cand, dtype=np.int64), n, pen, max_parents, floor)
    coefs, rss = np.zeros(0), cyy
    while sel:
        L = np.linalg.inv(C[np.ix_(sel, sel)])
        coefs = L @ C[sel, y]
        rss = max(cyy - C[y, sel] @ coefs, floor)
        drop = coefs * coefs / np.diag(L)
        bad = (np.abs(coefs) < w_thr) | (n * np.log((rss + drop) / rss) <= pen)
        if not bad.any():
            break
        idx = np.flatnonzero(bad)
        del sel[int(idx[np.argmin(drop[idx])])]
        coefs = np.zeros(0)
    if not sel:
        rss = max(cyy, floor)
    return float(rss), np.asarray(sel, dtype=np.int64), np.asarray(coefs, dtype=float)


def _forward(C, y, cand, n, pen, max_parents, floor):
    """Forward selection: add the candidate that lowers the residual variance most while
    the gain passes the penalty (ties: the first candidate).

    The candidates' covariances with ``y`` and their variances are kept residualized on
    the selected parents, updated by one Gram-Schmidt step per parent (``Z`` holds the
    candidates' coordinates on the orthonormalized parents), ``O(k s)`` per step."""
    sel, rss, k = [], C[y, y], cand.shape[0]
    if k == 0 or max_parents <= 0:
        return sel
    active = np.ones(k, dtype=bool)
    rxy, rxx = C[cand, y].copy(), C[cand, cand].copy()
    rxx0 = rxx.copy()
    Z = np.zeros((min(max_parents, k), k))
    while len(sel) < max_parents:
        ok = active & (rxx > 1e-10 * rxx0)
        gain = np.where(ok, rxy * rxy / np.where(ok, rxx, 1.0), -1.0)
        best = int(np.argmax(gain))
        g = gain[best]
        new_rss = max(rss - g, floor)
        if g <= 0 or n * math.log(rss / new_rss) <= pen:
            break
        s, p = len(sel), int(cand[best])
        sel.append(p)
        active[best] = False
        rss = new_rss
        root = math.sqrt(rxx[best])
        z = (C[cand, p] - Z[:s].T @ Z[:s, best]) / root
        Z[s] = z
        rxy = rxy - z * (rxy[best] / root)
        rxx = rxx - z * z
    return sel


def add_gain_xp(C, w, v, parents, coefs):
    """Drop in the residual variance of ``w`` if ``v`` joined its ``parents`` (0 if
    degenerate). The numpy reference of the Numba kernel ``add_gain``."""
    cxy, cxx = C[v, w], C[v, v]
    if parents.size:
        cvp = C[v, parents]
        cxy -= cvp @ coefs
        cxx -= cvp @ np.linalg.solve(C[np.ix_(parents, parents)], cvp)
    if cxx <= 1e-10 * C[v, v]:
        return 0.0
    return float(cxy * cxy / cxx)


def _as_set(parents):
    """The parents of a node as a Python set (membership tests on it are ~50x faster than
    on the numpy array the fit returns)."""
    return set(parents.tolist()) if hasattr(parents, "tolist") else set(parents)


class OrderState:
    """Fits of every node for one order, with the pieces of the score.

    Parameters
    ----------
    C : ndarray, shape (d, d)
        Gram matrix the fits run on (the correlation matrix for one noise variance per
        node).
    n : int
    order : sequence of int
    w_thr : float
        Smallest weight kept.
    max_parents : int
    pen : float
        Penalty per edge in units of ``2 log-likelihood`` (``log n``: BIC).
    noise : {"equal", "nonequal"}
    fit, add_gain : callables
        The local fit and the one-parent gain (numpy references or Numba kernels).
    cache : dict, optional
        Fits ``(node, candidate set) -> fit`` shared with other states of the same data
        and options.
    """

    def __init__(self, C, n, order, *, w_thr, max_parents, pen, noise, fit, add_gain,
                 cache=None):
        self.C, self.n, self.w_thr, self.max_parents = C, n, w_thr, max_parents
        self.pen, self.noise, self.fit, self.add_gain = float(pen), noise, fit, add_gain
        self.d = len(order)
        self._cache = {} if cache is None else cache
        self._gains = {}           # (w, v) -> (parents of w it was computed for, answer)
        self.order = [int(v) for v in order]
        self.rss = [0.0] * self.d    # Python floats: the search reads them one at a time
        self.parents = [None] * self.d
        self.coefs = [None] * self.d
        for k, v in enumerate(self.order):
            self.rss[v], self.parents[v], self.coefs[v] = self._fit(v, self.order[:k])
        self.n_edges = sum(len(p) for p in self.parents)
        self._parent_sets = [_as_set(p) for p in self.parents]  # fast membership
        rss = np.asarray(self.rss)
        self.total = (float(rss.sum()), float(np.log(np.maximum(rss, 1e-300)).sum()))

    def _fit(self, v, cand):
        # the fit depends only on (node, candidate set): cache it, moves revisit sets often
        key = (v, frozenset(cand))
        hit = self._cache.get(key)
        if hit is None:
            hit = self.fit(self.C, v, cand, self.n, self.pen, self.w_thr, self.max_parents)
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def score_of(self, total, n_edges):
        """Penalized negative log-likelihood per sample (variance parameters left out)."""
        tot, logsum = total
        edges = n_edges * self.pen / (2 * self.n)
        if self.noise == "equal":
            return 0.5 * self.d * math.log(max(tot, 1e-300) / self.d) + edges
        return 0.5 * logsum + edges

    def is_parent(self, u, v):
        """Whether ``u`` is a parent of ``v`` in the current fit."""
        return u in self._parent_sets[v]

    @property
    def score(self):
        return self.score_of(self.total, self.n_edges)

    def would_add(self, w, v):
        """Whether ``v`` passes the penalty as one more parent of ``w`` (a cheap screen
        before refitting a node that gains a candidate)."""
        P = self.parents[w]
        hit = self._gains.get((w, v))
        if hit is not None and hit[0] is P:
            # the same fit of w as when computed (a fit's parents and rss are set together),
            # so the same answer
            return hit[1]
        g = self.add_gain(self.C, w, v, P, self.coefs[w])
        rss = self.rss[w]
        answer = g > 0 and self.n * math.log(rss / max(rss - g, 1e-300)) > self.pen
        self._gains[(w, v)] = (P, answer)
        return answer

    def try_order(self, new_order, changed, lost=None, gained=None):
        """Evaluate ``new_order`` without applying it; return (score, updates, total, edges).

        ``changed`` nodes are refit; of the ``lost = (u, nodes)`` (nodes that lose the
        candidate ``u``), only those with ``u`` as a parent; of the ``gained = (v, nodes)``
        (nodes that gain ``v``), only those for which ``v`` passes :meth:`would_add`.
        """
        refit = list(dict.fromkeys(changed))
        if lost is not None:
            moved, nodes = lost
            refit += [w for w in nodes if w not in refit and self.is_parent(moved, w)]
        if gained is not None:
            moved, nodes = gained
            refit += [w for w in nodes if w not in refit and self.would_add(w, moved)]
        return self._evaluate(new_order, refit)

    def try_tuck(self, new_order, u, v, middle, ancestors):
        """Evaluate the tuck of :func:`_tuck`: ``[u] + middle + [v]`` became ``ancestors +
        [v, u] + rest``. ``ancestors`` and ``v`` lose ``u`` (no node of ``rest`` is a
        parent of theirs: it would be an ancestor of ``v``); ``u`` gains ``ancestors``
        and ``v``; a node of ``rest`` gains ``v`` and the ancestors that were after it.
        Losers are refit when ``u`` was a parent, gainers when a gained node passes
        :meth:`would_add`."""
        moved = [x for x in middle if x in ancestors] + [v]
        refit = [x for x in moved if self.is_parent(u, x)]
        if any(self.would_add(u, x) for x in moved):
            refit.append(u)
        ahead = list(moved)              # moved nodes still after the current one
        for x in middle:
            if x in ancestors:
                ahead.remove(x)
            elif any(self.would_add(x, g) for g in ahead):
                refit.append(x)
        return self._evaluate(new_order, refit)

    def _evaluate(self, new_order, refit):
        (tot, logsum), n_edges = self.total, self.n_edges
        updates = {}
        for v in refit:
            fit = self._fit(v, new_order[:new_order.index(v)])
            tot += fit[0] - self.rss[v]
            logsum += math.log(max(fit[0], 1e-300)) - math.log(max(self.rss[v], 1e-300))
            n_edges += len(fit[1]) - len(self.parents[v])
            updates[v] = fit
        total = (tot, logsum)
        return self.score_of(total, n_edges), updates, total, n_edges

    def apply(self, new_order, updates, total, n_edges):
        self.order = list(new_order)
        for v, (r, p, c) in updates.items():
            self.rss[v], self.parents[v], self.coefs[v] = r, p, c
            self._parent_sets[v] = _as_set(p)
        self.total, self.n_edges = total, n_edges

    def snapshot(self):
        return (list(self.order), list(self.rss), list(self.parents), list(self.coefs),
                self.total, self.n_edges)

    def restore(self, snap):
        order, rss, parents, coefs, self.total, self.n_edges = snap
        self.order, self.rss = list(order), list(rss)
        self.parents, self.coefs = list(parents), list(coefs)
        self._parent_sets = [_as_set(p) for p in self.parents]

    def backward_pairs(self):
        """Pairs ``(w, v)``, ``w`` after ``v`` in the order, such that ``w`` would pass the
        penalty as a parent of ``v``; by decreasing gain (ties: node index)."""
        C, pos = self.C, {u: k for k, u in enumerate(self.order)}
        pairs = []
        for v in range(self.d):
            later = np.asarray(self.order[pos[v] + 1:], dtype=np.int64)
            if later.size == 0:
                continue
            P = self.parents[v]
            cxy, cxx = C[later, v].copy(), C[later, later].copy()
            if P.size:
                A = C[np.ix_(later, P)]
                cxy -= A @ self.coefs[v]
                cxx -= np.einsum("ks,st,kt->k", A, np.linalg.inv(C[np.ix_(P, P)]), A)
            ok = cxx > 1e-10 * C[later, later]
            gain = np.where(ok, cxy * cxy / np.where(ok, cxx, 1.0), 0.0)
            rss = self.rss[v]
            sig = self.n * np.log(rss / np.maximum(rss - gain, 1e-300)) > self.pen
            pairs += [(-float(g), v, int(w)) for w, g in zip(later[sig], gain[sig])]
        pairs.sort()
        return [(w, v) for _, v, w in pairs]

    def edges(self):
        """Current edges ``(u, v)``: by child index, parents in selection order."""
        return [(int(u), v) for v in range(self.d) for u in self.parents[v]]

    def W(self):
        W = np.zeros((self.d, self.d))
        for v in range(self.d):
            W[self.parents[v], v] = self.coefs[v]
        return W


class _Clock:
    """The optional time limit of a search."""

    def __init__(self, limit):
        self.end = None if limit is None else time.perf_counter() + limit

    @property
    def out(self):
        return self.end is not None and time.perf_counter() > self.end


def _take_better(state, current, first, second):
    """Apply the better of two evaluated moves ``(new_order, (score, updates, total,
    edges))`` if it gains more than ``TOL``; ties go to ``first``."""
    (o1, r1), (o2, r2) = first, second
    order, res = (o2, r2) if r2[0] < r1[0] - TOL else (o1, r1)
    if res[0] < current - TOL:
        state.apply(order, *res[1:])
        return True
    return False


def _two_moves(state, u, v):
    """``v`` just before ``u``, and ``u`` just after ``v`` (``u`` earlier in the order)."""
    o = state.order
    a, b = o.index(u), o.index(v)
    new1 = o[:a] + [v] + o[a:b] + o[b + 1:]
    new2 = o[:a] + o[a + 1:b + 1] + [u] + o[b + 1:]
    return ((new1, state.try_order(new1, [v], gained=(v, o[a:b]))),
            (new2, state.try_order(new2, [u], lost=(u, o[a + 1:b + 1]))))


def _local_round(state, clock):
    """One pass of the local moves; True if any was taken."""
    improved = False
    for family in (state.edges, state.backward_pairs):
        for u, v in family():
            if clock.out:
                return improved
            if family is state.edges and not state.is_parent(u, v):
                continue       # removed by an earlier move of this pass
            if family is state.backward_pairs:
                u, v = v, u    # (w, v): w after v would be a parent of v
            if state.order.index(u) >= state.order.index(v):
                continue
            improved |= _take_better(state, state.score, *_two_moves(state, u, v))
    for k in range(state.d - 1):
        if clock.out:
            break
        o = state.order
        a, b = o[k], o[k + 1]
        new = o[:k] + [b, a] + o[k + 2:]
        res = state.try_order(new, [a], lost=(a, [b]))
        if res[0] < state.score - TOL:
            state.apply(new, *res[1:])
            improved = True
    return improved


def _tuck(state, u, v):
    """The order with ``v`` and its ancestors strictly between ``u`` and ``v`` moved, in
    their order, to just before ``u``; returns ``(new_order, middle, ancestors)``."""
    o = state.order
    a, b = o.index(u), o.index(v)
    middle = o[a + 1:b]
    inside = set(middle)
    anc, stack = set(), [v]
    while stack:
        for p in state.parents[stack.pop()]:
            p = int(p)
            if p in inside and p not in anc:
                anc.add(p)
                stack.append(p)
    moved = [x for x in middle if x in anc] + [v, u]
    return o[:a] + moved + [x for x in middle if x not in anc] + o[b + 1:], middle, anc


def _dfs(state, target, depth, seen, clock):
    """Tucks from the current state: True (state left at the better order) as soon as one
    lowers the score below ``target - TOL``; ties explored ``depth - 1`` tucks deeper."""
    for u, v in state.edges():
        if clock.out:
            return False
        if state.order.index(u) >= state.order.index(v):
            continue
        new, middle, anc = _tuck(state, u, v)
        res = state.try_tuck(new, u, v, middle, anc)
        if res[0] < target - TOL:
            state.apply(new, *res[1:])
            return True
        key = tuple(new)
        if depth > 1 and res[0] < target + TOL and key not in seen:
            seen.add(key)
            snap = state.snapshot()
            state.apply(new, *res[1:])
            if _dfs(state, target, depth - 1, seen, clock):
                return True
            state.restore(snap)
    return False


@fill_doc(**_DOCS)
def search(state, *, max_rounds=1000, time_limit=None, depth=2):
    """Run the moves on ``state`` until none gains (a fixed point) or a limit is hit.

    Parameters
    ----------
    state : OrderState
    {{params_search_limits}}

    Returns
    -------
    bool
        True when the search stopped at a fixed point (no move gains), False when a
        limit stopped it.
    """
    clock = _Clock(time_limit)
    for _ in range(int(max_rounds)):
        while _local_round(state, clock):
            if clock.out:
                return False
        if clock.out:
            return False
        if depth <= 0 or not _dfs(state, state.score, depth, set(), clock):
            return not clock.out
    return False


def greedy_order(C, n, *, pen, max_parents, add_gain):
    """A start for the search: add, one at a time, the edge whose gain in
    ``n log rss_child`` is largest (and passes ``pen``) while the graph stays acyclic;
    return a topological order of the result (ties within a relative ``1e-9``: the first
    pair in index order).

    With one variance per node this is the forward phase of a greedy search in DAG space
    (the linear twin of CAM's greedy start); it does not depend on a previous run.
    """
    d = C.shape[0]
    parents = [np.zeros(0, dtype=np.int64) for _ in range(d)]
    coefs = [np.zeros(0) for _ in range(d)]
    rss = np.diag(C).copy()
    reach = np.eye(d, dtype=bool)             # reach[i, j]: a directed path i ~> j
    gain = np.full((d, d), -np.inf)
    for j in range(d):
        _greedy_column(C, n, j, parents, coefs, rss, gain, max_parents, add_gain)
    while True:
        ok = ~reach.T & (gain > pen)          # i -> j allowed unless j ~> i
        if not ok.any():
            break
        i, j = _first_best(np.where(ok, gain, -np.inf))
        P = np.append(parents[j], i).astype(np.int64)
        coefs[j] = np.linalg.solve(C[np.ix_(P, P)], C[P, j])
        parents[j] = P
        rss[j] = max(C[j, j] - C[j, P] @ coefs[j], 1e-12 * C[j, j])
        reach |= np.outer(reach[:, i], reach[j, :])
        _greedy_column(C, n, j, parents, coefs, rss, gain, max_parents, add_gain)
    B = np.zeros((d, d), dtype=bool)
    for j, P in enumerate(parents):
        B[P, j] = True
    return topological_order(B)


def _first_best(gain):
    """The first pair (row-major) whose gain is within a relative ``1e-9`` of the largest:
    on one variance per node a lone pair gains exactly as much both ways, so the choice
    must not be left to round-off."""
    best = gain.max()
    flat = np.flatnonzero(gain.ravel() >= best - 1e-9 * abs(best))
    return np.unravel_index(int(flat[0]), gain.shape)


def _greedy_column(C, n, j, parents, coefs, rss, gain, max_parents, add_gain):
    """Gains of every candidate parent of ``j`` given its current parents."""
    full = len(parents[j]) >= max_parents
    for i in range(C.shape[0]):
        g = 0.0 if full or i == j or i in parents[j] else add_gain(C, j, i, parents[j],
                                                                    coefs[j])
        gain[i, j] = n * math.log(rss[j] / max(rss[j] - g, 1e-300)) if g > 0 else -np.inf
