"""Order refinement for linear SEMs: exact parent refits and topological swaps.

This goes beyond the COSMO paper. Given a node order, every DAG consistent with it is
scored by the equal-variance Gaussian BIC of the linear SEM (per sample)::

    score(order) = d/2 * log(sum_j rss_j / d) + |E| * log(n) / (2 n)

where ``rss_j`` is the residual variance of node ``j`` regressed on its selected parents.
For each node the parents are chosen *among its predecessors only* by forward selection on
the Gram matrix (add the predecessor that lowers ``rss_j`` most while the node's BIC
improves), then backward pruning (drop parents whose weight is below ``threshold`` or whose
BIC contribution is negative), with exact least-squares weights. Every graph built this way
is a DAG because edges only point forward in the order.

The order is then improved by local moves that lower the score, in the spirit of the
topological swaps of Deng et al. (2023): swap adjacent nodes, and for every current edge
``u -> v`` try moving ``v`` just before ``u`` or ``u`` just after ``v`` (reversing it).
Only the nodes whose predecessor sets change are refitted.

References
----------
.. [1] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
"""
import math
import time

import numpy as np

from .._lib.docstrings import fill_doc
from .graph import to_host

__all__ = ["refit_parents", "refine_order", "order_score"]


# the Notes and References shared by the public functions' docstrings
_NOTES_REFERENCES = """
Notes
-----
``X`` (or ``gram``) is not validated beyond the order check: it is assumed finite,
2-D and without constant columns (see :func:`solvers.dag.check_data`). An unknown
``backend`` raises ``ValueError``.

References
----------
.. [1] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
.. [2] G. Schwarz, "Estimating the dimension of a model", Annals of Statistics
   6(2):461-464, 1978.
"""


# ---------------------------------------------------------------------------------------
# local fits (numpy reference; the Numba kernel in _cosmo_numba.py mirrors it)

def _local_fit_numpy(C, y, cand, n, w_thr, max_parents):
    """Parents of ``y`` among ``cand`` by forward selection + backward pruning.

    Returns ``(rss, parents, coefs)`` with ``rss`` the residual variance (per sample).
    """
    log_n = math.log(n)
    cyy = C[y, y]
    floor = 1e-12 * max(cyy, 1e-300)
    cand = np.asarray(cand, dtype=np.int64)
    k = cand.shape[0]
    sel = []
    rss = cyy
    if k > 0 and max_parents > 0:
        active = np.ones(k, dtype=bool)
        cxy0 = C[cand, y]
        cxx0 = C[cand, cand]
        beta = np.zeros(0)
        L = np.zeros((0, 0))
        while len(sel) < max_parents:
            if sel:
                A = C[np.ix_(cand, sel)]
                cxy = cxy0 - A @ beta
                cxx = cxx0 - np.einsum("ks,st,kt->k", A, L, A)
            else:
                cxy, cxx = cxy0, cxx0
            ok = active & (cxx > 1e-10 * cxx0)
            gain = np.where(ok, cxy * cxy / np.where(ok, cxx, 1.0), -1.0)
            best = int(np.argmax(gain))
            g = gain[best]
            new_rss = max(rss - g, floor)
            if g <= 0 or n * math.log(rss / new_rss) <= log_n:
                break
            sel.append(int(cand[best]))
            active[best] = False
            rss = new_rss
            L = np.linalg.inv(C[np.ix_(sel, sel)])
            beta = L @ C[sel, y]
    coefs = np.zeros(0)
    while sel:
        L = np.linalg.inv(C[np.ix_(sel, sel)])
        coefs = L @ C[sel, y]
        rss = max(cyy - C[y, sel] @ coefs, floor)
        drop = coefs * coefs / np.diag(L)
        bad = (np.abs(coefs) < w_thr) | (n * np.log((rss + drop) / rss) <= log_n)
        if not bad.any():
            break
        idx = np.flatnonzero(bad)
        del sel[int(idx[np.argmin(drop[idx])])]
        coefs = np.zeros(0)
    if not sel:
        rss = max(cyy, floor)
    return float(rss), np.asarray(sel, dtype=np.int64), np.asarray(coefs, dtype=float)


def _numba_fit(C, y, cand, n, w_thr, max_parents):
    """The compiled local fit (kernel-table entry ``local_fit`` for numba)."""
    from ._cosmo_numba import local_fit

    out_p = np.empty(max(max_parents, 1), dtype=np.int64)
    out_c = np.empty(max(max_parents, 1))
    rss, m = local_fit(C, y, np.asarray(cand, dtype=np.int64), float(n), float(w_thr),
                       int(max_parents), out_p, out_c)
    return float(rss), out_p[:m].copy(), out_c[:m].copy()


_numba_fit.numba = True


def _fitter(backend):
    """The local fit for ``backend`` ("auto" and "numba": the compiled one when numba is
    installed), from the area's kernel table."""
    from .._lib.backend import resolve_backend
    from .._lib.validation import check_choice
    from ._dag_kernels import KERNELS

    check_choice(backend, ("auto", "numpy", "numba"), "backend")
    return KERNELS.get("local_fit", resolve_backend(backend, np), generic=_local_fit_numpy)


def _gram(X):
    X = np.asarray(to_host(X), dtype=float)
    n = X.shape[0]
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / n, n


class _State:
    """Fits of every node for one order, with the pieces of the score."""

    def __init__(self, C, n, order, w_thr, max_parents, fit, noise="equal"):
        self.C, self.n, self.w_thr, self.max_parents, self.fit = C, n, w_thr, max_parents, fit
        self.noise = noise
        d = C.shape[0]
        self.d = d
        self._cache = {}
        self.add_gain = None
        if getattr(fit, "numba", False):
            from ._cosmo_numba import add_gain

            self.add_gain = add_gain
        self.order = [int(v) for v in order]
        self.rss = np.zeros(d)
        self.parents = [None] * d
        self.coefs = [None] * d
        for k, v in enumerate(self.order):
            self.rss[v], self.parents[v], self.coefs[v] = self._fit(v, self.order[:k])
        self.n_edges = sum(len(p) for p in self.parents)
        self.total = (float(self.rss.sum()), float(np.log(np.maximum(self.rss, 1e-300)).sum()))

    def _fit(self, v, cand):
        # the fit depends only on (node, candidate set): cache it, moves revisit sets often
        mask = np.zeros(self.d, dtype=bool)
        mask[cand] = True
        key = (v, mask.tobytes())
        hit = self._cache.get(key)
        if hit is None:
            hit = self.fit(self.C, v, cand, self.n, self.w_thr, self.max_parents)
            if len(self._cache) > 200000:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def score_of(self, total, n_edges):
        """BIC per sample without the variance parameters; ``total = (sum rss, sum log rss)``."""
        return score_from_totals(total, n_edges, self.d, self.n, self.noise)

    @property
    def score(self):
        return self.score_of(self.total, self.n_edges)

    def would_add(self, w, v):
        """Whether ``v`` passes the BIC test as an extra parent of ``w`` (given its current
        parents): a cheap screen before refitting a node that gains a candidate."""
        C = self.C
        P = self.parents[w]
        if self.add_gain is not None:
            g = self.add_gain(C, w, v, P, self.coefs[w])
        else:
            cxy = C[v, w]
            cxx = C[v, v]
            if P.size:
                cvp = C[v, P]
                cxy -= cvp @ self.coefs[w]
                cxx -= cvp @ np.linalg.solve(C[np.ix_(P, P)], cvp)
            if cxx <= 1e-10 * C[v, v]:
                return False
            g = cxy * cxy / cxx
        rss = self.rss[w]
        return g > 0 and self.n * math.log(rss / max(rss - g, 1e-300)) > math.log(self.n)

    def try_order(self, new_order, changed, lost=None, gained=None):
        """Evaluate ``new_order`` without applying it; return (score, updates, total, edges).

        ``changed`` nodes are refit; of the ``lost = (u, nodes)`` (nodes that lose the
        candidate ``u``), only those with ``u`` as a parent; of the ``gained = (v, nodes)``
        (nodes that gain ``v``), only those for which ``v`` passes :meth:`would_add`.
        """
        pos = {v: k for k, v in enumerate(new_order)}
        refit = set(changed)
        if lost is not None:
            moved, nodes = lost
            refit |= {w for w in nodes if moved in set(self.parents[w].tolist())}
        if gained is not None:
            moved, nodes = gained
            refit |= {w for w in nodes if w not in refit and self.would_add(w, moved)}
        (tot, logsum), n_edges = self.total, self.n_edges
        updates = {}
        for v in refit:
            fit = self._fit(v, new_order[:pos[v]])
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
        self.total, self.n_edges = total, n_edges

    def W(self):
        W = np.zeros((self.d, self.d))
        for v in range(self.d):
            W[self.parents[v], v] = self.coefs[v]
        return W


def score_from_totals(total, n_edges, d, n, noise, variances=False):
    r"""Gaussian BIC per sample of a linear SEM from its residual variances.

    ``total = (sum_j rss_j, sum_j log rss_j)``. With ``noise="equal"`` (one variance
    :math:`\sigma^2` for all nodes) the score is
    :math:`\tfrac d2 \log(\sum_j \mathrm{rss}_j / d) + |E| \log n / (2n)`; with
    ``"nonequal"`` (one variance per node) it is
    :math:`\tfrac12 \sum_j \log \mathrm{rss}_j + |E| \log n / (2n)`, which changes by a
    constant when a column is rescaled, whatever the graph. ``variances=True`` adds the
    variance parameters (1 or ``d``) to the penalty, so the two models compare by BIC.
    """
    tot, logsum = total
    pen = math.log(n) / (2 * n)
    if noise == "equal":
        s = 0.5 * d * math.log(max(tot, 1e-300) / d) + n_edges * pen
        return s + pen if variances else s
    s = 0.5 * logsum + n_edges * pen
    return s + d * pen if variances else s


def self_backward_pairs(state, limit=None):
    """Pairs ``(w, v)``, ``w`` after ``v`` in the order, such that adding ``w`` to the
    parents of ``v`` would pass the node's BIC test; sorted by decreasing gain."""
    C, n = state.C, state.n
    log_n = math.log(n)
    pos = {u: k for k, u in enumerate(state.order)}
    pairs = []
    for v in range(state.d):
        later = np.asarray(state.order[pos[v] + 1:], dtype=np.int64)
        if later.size == 0:
            continue
        P = state.parents[v]
        cxy = C[later, v].copy()
        cxx = C[later, later].copy()
        if P.size:
            A = C[np.ix_(later, P)]
            L = np.linalg.inv(C[np.ix_(P, P)])
            cxy -= A @ state.coefs[v]
            cxx -= np.einsum("ks,st,kt->k", A, L, A)
        ok = cxx > 1e-10 * C[later, later]
        gain = np.where(ok, cxy * cxy / np.where(ok, cxx, 1.0), 0.0)
        rss = state.rss[v]
        new = np.maximum(rss - gain, 1e-300)
        sig = n * np.log(rss / new) > log_n
        for w, g in zip(later[sig], gain[sig]):
            pairs.append((float(g), int(w), v))
    pairs.sort(reverse=True)
    if limit is not None:
        pairs = pairs[:limit]
    return [(w, v) for _, w, v in pairs]


def _check_order(order, d):
    order = np.asarray(to_host(order), dtype=np.int64).ravel()
    if order.shape[0] != d or sorted(order.tolist()) != list(range(d)):
        raise ValueError(f"order must be a permutation of range({d})")
    return order


@fill_doc(notes_references=_NOTES_REFERENCES)
def refit_parents(X, order, *, threshold=0.3, max_parents=None, backend="auto", gram=None,
                  noise_variance="equal"):
    """Weighted adjacency of the best sparse linear SEM consistent with a node ``order``.

    Each node's parents are selected among its predecessors in ``order`` (forward selection
    by BIC, then pruning of weights below ``threshold``) and fitted by exact least squares
    on centered data.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (host copy is used; the Gram matrix is d x d).
    order : array_like of int, shape (d,)
        A permutation of ``range(d)``, causes first.
    threshold : float
        Smallest absolute weight kept.
    max_parents : int, optional
        Cap on the parents of a node (default: no cap).
    backend : {"auto", "numpy", "numba"}
        ``"numba"`` (the ``"auto"`` choice) runs the compiled local fit.
    gram : tuple (C, n), optional
        A precomputed centered Gram matrix ``C = Xc^T Xc / n`` and ``n`` (``X`` is then
        ignored and may be None).
    noise_variance : {"equal", "nonequal"}
        Score of the search: the equal-variance BIC, or the BIC with one noise variance
        per node (:func:`score_from_totals`); ``"nonequal"`` runs on the correlation
        matrix (``threshold`` then applies to standardized weights) and is invariant to
        rescaling any column.

    Returns
    -------
    W : ndarray, shape (d, d)
        Always a DAG: ``W[i, j] != 0`` only if ``i`` precedes ``j`` in ``order``.

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(d)``, or an unknown ``backend``.

    {{notes_references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import simulate_data, refit_parents, shd
    >>> X, W, B = simulate_data(d=6, n=2000, k=1, rng=0)
    >>> from solvers.dag import topological_order
    >>> W_hat = refit_parents(X, topological_order(B))
    >>> shd(B, W_hat)
    0
    """
    C, n = gram if gram is not None else _gram(X)
    d = C.shape[0]
    order = _check_order(order, d)
    noise = _check_noise(noise_variance)
    Cs, sd = _scaled(C, noise)
    state = _State(Cs, n, order, float(threshold), _max_parents(max_parents, d),
                   _fitter(backend), noise)
    return _unscale(state.W(), sd)


@fill_doc(notes_references=_NOTES_REFERENCES)
def order_score(X, order, *, threshold=0.3, max_parents=None, backend="auto", gram=None,
                noise_variance="equal"):
    """The equal-variance BIC (per sample, lower is better) of the refit at ``order``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (ignored when ``gram`` is given).
    order : array_like of int, shape (d,)
        A permutation of ``range(d)``, causes first.
    threshold, max_parents, backend, gram, noise_variance
        As in :func:`refit_parents`.

    Returns
    -------
    float
        The score of :func:`refit_parents` at ``order``: the equal-variance Gaussian BIC
        of the refit graph, divided by ``n``; lower is better.

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(d)``, or an unknown ``backend``.

    {{notes_references}}

    Examples
    --------
    >>> from solvers.dag import simulate_data, topological_order
    >>> from solvers.dag.refine import order_score
    >>> X, W, B = simulate_data(d=5, n=1000, k=1, rng=0)
    >>> good = topological_order(B)
    >>> bool(order_score(X, good) <= order_score(X, good[::-1]))
    True
    """
    C, n = gram if gram is not None else _gram(X)
    order = _check_order(order, C.shape[0])
    noise = _check_noise(noise_variance)
    Cs, sd = _scaled(C, noise)
    W = _unscale(_State(Cs, n, order, float(threshold), _max_parents(max_parents, C.shape[0]),
                        _fitter(backend), noise).W(), sd)
    return model_bic(C, n, W, noise, variances=False)


NOISE_MODELS = ("equal", "nonequal")


def _check_noise(noise_variance):
    from .._lib.validation import check_choice

    return check_choice(noise_variance, NOISE_MODELS, "noise_variance")


def _scaled(C, noise):
    """The Gram matrix the search runs on: ``C`` itself for equal variances, the
    correlation matrix for non-equal ones (then every step, the weight threshold included,
    is invariant to rescaling a column); returns ``(C_used, sd)`` (``sd`` None if unscaled)."""
    if noise == "equal":
        return C, None
    sd = np.sqrt(np.maximum(np.diag(C), 1e-300))
    return C / np.outer(sd, sd), sd


def _unscale(W, sd):
    """Weights fitted on standardized columns back to the original units."""
    if sd is None:
        return W
    return W * sd[None, :] / sd[:, None]


def residual_variances(C, W):
    """Per-node residual variances ``diag((I - W)^T C (I - W))`` of a linear SEM."""
    d = C.shape[0]
    I_W = np.eye(d) - W
    return np.maximum(np.einsum("ij,ik,kj->j", I_W, C, I_W), 1e-300)


def model_bic(C, n, W, noise, variances=True):
    """Gaussian BIC per sample (lower is better) of the linear SEM ``W`` on the centered
    Gram matrix ``C``, with equal or non-equal noise variances (see
    :func:`score_from_totals`); ``variances=True`` counts the variance parameters, which
    makes the two noise models comparable."""
    rss = residual_variances(C, W)
    total = (float(rss.sum()), float(np.log(rss).sum()))
    return score_from_totals(total, int(np.count_nonzero(W)), C.shape[0], n, noise,
                             variances=variances)


def _max_parents(max_parents, d):
    if max_parents is None:
        return max(d - 1, 0)
    return int(max_parents)


def _search(state, max_rounds, time_limit):
    """The local-move loop of :func:`refine_order` on a fitted state (any local model)."""
    d = state.d
    pairs = getattr(state, "backward_pairs", None) or (lambda: self_backward_pairs(state))
    start = time.perf_counter()
    tol = 1e-9
    for _ in range(int(max_rounds)):
        improved = False
        current = state.score
        # reversals of current edges (moves over several positions)
        edges = [(int(u), v) for v in range(d) for u in state.parents[v]]
        for u, v in edges:
            if time_limit is not None and time.perf_counter() - start > time_limit:
                break
            if u not in set(state.parents[v].tolist()):
                continue
            order_l = state.order
            a, b = order_l.index(u), order_l.index(v)
            if a >= b:
                continue
            between = order_l[a:b]
            # v just before u
            new1 = order_l[:a] + [v] + order_l[a:b] + order_l[b + 1:]
            s1, up1, t1, e1 = state.try_order(new1, [v], gained=(v, between))
            # u just after v
            between2 = order_l[a + 1:b + 1]
            new2 = order_l[:a] + between2 + [u] + order_l[b + 1:]
            s2, up2, t2, e2 = state.try_order(new2, [u], lost=(u, between2))
            best = min((s1, 1), (s2, 2))
            if best[0] < current - tol:
                if best[1] == 1:
                    state.apply(new1, up1, t1, e1)
                else:
                    state.apply(new2, up2, t2, e2)
                current = state.score
                improved = True
        # pairs (w after v) where w would be a significant parent of v: move w just
        # before v, or v just after w (the candidate swaps of Deng et al.)
        for w, v in pairs():
            if time_limit is not None and time.perf_counter() - start > time_limit:
                break
            order_l = state.order
            a, b = order_l.index(v), order_l.index(w)
            if a >= b:
                continue
            new1 = order_l[:a] + [w] + order_l[a:b] + order_l[b + 1:]
            s1, up1, t1, e1 = state.try_order(new1, [w], gained=(w, order_l[a:b]))
            between2 = order_l[a + 1:b + 1]
            new2 = order_l[:a] + between2 + [v] + order_l[b + 1:]
            s2, up2, t2, e2 = state.try_order(new2, [v], lost=(v, between2))
            best = min((s1, 1), (s2, 2))
            if best[0] < current - tol:
                if best[1] == 1:
                    state.apply(new1, up1, t1, e1)
                else:
                    state.apply(new2, up2, t2, e2)
                current = state.score
                improved = True
        # adjacent swaps
        for k in range(d - 1):
            if time_limit is not None and time.perf_counter() - start > time_limit:
                break
            o = state.order
            a, b = o[k], o[k + 1]
            new = o[:k] + [b, a] + o[k + 2:]
            s, up, t, e = state.try_order(new, [a], lost=(a, [b]))
            if s < current - tol:
                state.apply(new, up, t, e)
                current = state.score
                improved = True
        if not improved or (time_limit is not None and time.perf_counter() - start > time_limit):
            break
    return state


@fill_doc(notes_references=_NOTES_REFERENCES)
def refine_order(X, order, *, threshold=0.3, max_parents=None, max_rounds=50,
                 time_limit=None, backend="auto", gram=None, noise_variance="equal"):
    """Improve a node order by score-lowering local moves; return the refit DAG.

    Moves: swaps of adjacent nodes, and for every current edge ``u -> v``, moving ``v``
    just before ``u`` or ``u`` just after ``v``. First improvement is applied; rounds
    repeat until none improves the score (or ``max_rounds`` / ``time_limit``).

    Parameters
    ----------
    X : array_like, shape (n, d)
    order : array_like of int
        Starting order (a permutation of ``range(d)``).
    threshold, max_parents, backend, gram, noise_variance
        As in :func:`refit_parents`.
    max_rounds : int
        Maximum number of passes over all moves.
    time_limit : float, optional
        Seconds after which the search stops (the best order so far is kept).

    Returns
    -------
    order : ndarray of int
    W : ndarray, shape (d, d)
        The refit at the returned order (a DAG).
    score : float
        Its BIC per sample under ``noise_variance`` (lower is better; variance parameters
        not counted).

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(d)``, or an unknown ``backend``.

    {{notes_references}}

    Examples
    --------
    >>> from solvers.dag import simulate_data, shd
    >>> from solvers.dag.refine import refine_order
    >>> X, W, B = simulate_data(d=8, n=1000, k=1, rng=2)
    >>> order, W_hat, score = refine_order(X, list(range(8)))
    >>> shd(B, W_hat) <= 2
    True
    """
    C, n = gram if gram is not None else _gram(X)
    d = C.shape[0]
    order = _check_order(order, d)
    noise = _check_noise(noise_variance)
    C0, (C, sd) = C, _scaled(C, noise)
    state = _State(C, n, order, float(threshold), _max_parents(max_parents, d),
                   _fitter(backend), noise)
    state = _search(state, max_rounds, time_limit)
    # final exact refit of every node at the returned order (moves used partial refits)
    final = _State(C, n, state.order, state.w_thr, state.max_parents, state.fit, noise)
    W = _unscale(final.W(), sd)
    return (np.asarray(final.order, dtype=np.int64), W,
            model_bic(C0, n, W, noise, variances=False))
