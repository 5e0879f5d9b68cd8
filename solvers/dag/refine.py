r"""Order refinement for linear SEMs: exact parent refits and an order search.

This goes beyond the COSMO paper. Given a node order, every DAG consistent with it is
scored by a penalized Gaussian likelihood of the linear SEM, per sample,

.. math::

    \mathrm{score} = \tfrac d2 \log\Big(\tfrac1d \sum_j \mathrm{rss}_j\Big)
    + |E| \frac{\mathrm{pen}}{2n} \quad\text{(one noise variance)}, \qquad
    \tfrac12 \sum_j \log \mathrm{rss}_j + |E| \frac{\mathrm{pen}}{2n}
    \quad\text{(one per node)},

where ``rss_j`` is the residual variance of node ``j`` on its selected parents and the
penalty per edge is the extended BIC's (Chen & Chen 2008),
:math:`\mathrm{pen} = \log n + 2\gamma \log d` (``ebic_gamma`` :math:`\gamma`;
``0`` is the BIC). The BIC keeps edges whose gain is a few nats, and with tens of nodes
there are thousands of candidate edges, so at ``n = 1000`` it keeps several false ones;
the :math:`\log d` term pays for the number of candidates.

For each node the parents are chosen *among its predecessors only* by forward selection
on the Gram matrix (add the predecessor that lowers ``rss_j`` most while the gain passes
the penalty), then backward pruning (drop parents whose weight is below ``threshold`` or
whose gain no longer passes), with exact least-squares weights. Every graph built this way
is a DAG because edges only point forward in the order. The order is then improved by the
search of :mod:`solvers.dag._order_search` (local moves, then tucks).

References
----------
.. [1] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
.. [2] J. Chen, Z. Chen, "Extended Bayesian information criteria for model selection
   with large model spaces", Biometrika 95(3):759-771, 2008.
.. [3] W.-Y. Lam, B. Andrews, J. Ramsey, "Greedy relaxations of the sparsest
   permutation algorithm", UAI 2022.
"""
import math
import time

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.docstrings import fill_doc
from .._lib.host import to_host
from .._lib.params import NONE, NONNEGATIVE, POSITIVE, Choice, Integer, Options, Param
from ._dag_kernels import KERNELS
from ._order_search import OrderState, add_gain_xp, greedy_order, local_fit_xp, search
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["refit_parents", "refine_order", "order_score", "model_bic", "edge_penalty"]

NOISE_MODELS = ("equal", "nonequal")

#: default gamma of the extended BIC (Foygel & Drton's recommended value)
EBIC_GAMMA = 0.5

_COMMON = (
    Param("threshold", NONNEGATIVE, 0.3, "smallest kept weight"),
    Param("max_parents", (Integer(low=0), NONE), None, "parents per node (default: any)"),
    Param("backend", Choice("auto", "numpy", "numba"), "auto", "local-fit kernels"),
    Param("noise_variance", Choice(*NOISE_MODELS), "equal", "noise model of the score"),
    Param("ebic_gamma", NONNEGATIVE, EBIC_GAMMA, "extended BIC gamma (0: BIC)"),
)
REFIT_OPTIONS = Options("RefitOptions", *_COMMON)
SEARCH_OPTIONS = Options(
    "RefineOptions", *_COMMON,
    Param("max_rounds", Integer(low=1), 50, "rounds of the search"),
    Param("time_limit", (POSITIVE, NONE), None, "seconds of the search"),
    Param("depth", Integer(low=0), 2, "depth of the tuck search"))


# the Notes and References shared by the public functions' docstrings
_NOTES_REFERENCES = """
Notes
-----
``X`` (or ``gram``) is not validated beyond the order check: it is assumed finite,
2-D and without constant columns (see :func:`solvers.dag.check_data`). An unknown
``backend`` or a negative ``ebic_gamma`` raises ``ValueError``.

References
----------
.. [1] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
.. [2] G. Schwarz, "Estimating the dimension of a model", Annals of Statistics
   6(2):461-464, 1978.
.. [3] J. Chen, Z. Chen, "Extended Bayesian information criteria for model selection
   with large model spaces", Biometrika 95(3):759-771, 2008.
"""



def edge_penalty(n, d, ebic_gamma=EBIC_GAMMA):
    """Penalty per edge in units of ``2 log-likelihood``: ``log n + 2 gamma log d``."""
    return math.log(n) + 2.0 * float(ebic_gamma) * math.log(max(d, 2))


def kernels(be, d):
    """``(local_fit, add_gain)`` for the resolved backend ``be`` on ``d`` nodes (numpy
    references when it has no kernel of its own, or for a small graph under "auto")."""
    return (KERNELS.get("local_fit", be, generic=local_fit_xp, size=d),
            KERNELS.get("add_gain", be, generic=add_gain_xp, size=d))


def _host_backend(backend):
    """The Backend of the host-side search (its data are d x d host matrices)."""
    return resolve_backend(backend, np)


def _gram(X):
    X = np.asarray(to_host(X), dtype=float)
    n = X.shape[0]
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / n, n


def score_from_totals(total, n_edges, d, n, noise, variances=False, pen=None):
    r"""Penalized Gaussian likelihood per sample of a linear SEM from its residual variances.

    ``total = (sum_j rss_j, sum_j log rss_j)``. With ``noise="equal"`` (one variance
    :math:`\sigma^2` for all nodes) the score is
    :math:`\tfrac d2 \log(\sum_j \mathrm{rss}_j / d) + |E|\,\mathrm{pen} / (2n)`; with
    ``"nonequal"`` (one variance per node) it is
    :math:`\tfrac12 \sum_j \log \mathrm{rss}_j + |E|\,\mathrm{pen} / (2n)`, which changes
    by a constant when a column is rescaled, whatever the graph. ``pen`` defaults to
    ``log n`` (the BIC). ``variances=True`` adds the variance parameters (1 or ``d``,
    ``log n`` each), so the two models compare.
    """
    tot, logsum = total
    var_pen = math.log(n) / (2 * n)
    edge_pen = var_pen if pen is None else pen / (2 * n)
    if noise == "equal":
        s = 0.5 * d * math.log(max(tot, 1e-300) / d) + n_edges * edge_pen
        return s + var_pen if variances else s
    s = 0.5 * logsum + n_edges * edge_pen
    return s + d * var_pen if variances else s


def _check_order(order, d):
    order = np.asarray(to_host(order), dtype=np.int64).ravel()
    if order.shape[0] != d or sorted(order.tolist()) != list(range(d)):
        raise ValueError(f"order must be a permutation of range({d})")
    return order


@REFIT_OPTIONS.entry
@fill_doc(**_DOCS, notes_references=_NOTES_REFERENCES)
def refit_parents(X, order, *, threshold=0.3, max_parents=None, backend="auto", gram=None,
                  noise_variance="equal", ebic_gamma=EBIC_GAMMA):
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
        Score: one noise variance for all nodes, or one per node
        (:func:`score_from_totals`); ``"nonequal"`` runs on the correlation matrix
        (``threshold`` then applies to standardized weights) and is invariant to
        rescaling any column.
    ebic_gamma : float
        Gamma of the extended BIC: penalty ``log n + 2 gamma log d`` per edge
        (:func:`edge_penalty`); 0 is the BIC.

    Returns
    -------
    W : ndarray, shape (d, d)
        Always a DAG: ``W[i, j] != 0`` only if ``i`` precedes ``j`` in ``order``.

    {{raises_order}}

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
    order = _check_order(order, C.shape[0])
    opts, _ = _search_options(C, n, threshold=threshold, max_parents=max_parents,
                              backend=backend, noise_variance=noise_variance,
                              ebic_gamma=ebic_gamma)
    return _unscale(_state(C, n, order, opts).W(), opts["sd"])


@REFIT_OPTIONS.entry
@fill_doc(**_DOCS, notes_references=_NOTES_REFERENCES)
def order_score(X, order, *, threshold=0.3, max_parents=None, backend="auto", gram=None,
                noise_variance="equal", ebic_gamma=EBIC_GAMMA):
    """The score (per sample, lower is better) of the refit at ``order``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (ignored when ``gram`` is given).
    order : array_like of int, shape (d,)
        A permutation of ``range(d)``, causes first.
    threshold, max_parents, backend, gram, noise_variance, ebic_gamma
        As in :func:`refit_parents`.

    Returns
    -------
    float
        The score of :func:`refit_parents` at ``order``: the penalized Gaussian
        likelihood of the refit graph, divided by ``n`` (variance parameters not
        counted); lower is better.

    {{raises_order}}

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
    opts, _ = _search_options(C, n, threshold=threshold, max_parents=max_parents,
                              backend=backend, noise_variance=noise_variance,
                              ebic_gamma=ebic_gamma)
    W = _unscale(_state(C, n, order, opts).W(), opts["sd"])
    return model_bic(C, n, W, opts["noise"], variances=False, pen=opts["pen"])


def _search_options(C, n, spec=REFIT_OPTIONS, **values):
    """Options of the public functions checked by their spec, as :func:`search_order`
    takes them (and the validated config)."""
    cfg = spec.validate(**values)
    return search_options(C, n, noise=cfg.noise_variance, threshold=cfg.threshold,
                          max_parents=cfg.max_parents,
                          pen=edge_penalty(n, C.shape[0], cfg.ebic_gamma),
                          be=_host_backend(cfg.backend)), cfg


def _state(C, n, order, opts, cache=None):
    return OrderState(opts["Cs"], n, order, w_thr=opts["w_thr"],
                      max_parents=opts["max_parents"], pen=opts["pen"], noise=opts["noise"],
                      fit=opts["fit"], add_gain=opts["add_gain"], cache=cache)


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


def model_bic(C, n, W, noise, variances=True, pen=None):
    """Gaussian BIC per sample (lower is better) of the linear SEM ``W`` on the centered
    Gram matrix ``C``, with equal or non-equal noise variances (see
    :func:`score_from_totals`); ``variances=True`` counts the variance parameters, which
    makes the two noise models comparable."""
    rss = residual_variances(C, W)
    total = (float(rss.sum()), float(np.log(rss).sum()))
    return score_from_totals(total, int(np.count_nonzero(W)), C.shape[0], n, noise,
                             variances=variances, pen=pen)


def _max_parents(max_parents, d):
    return max(d - 1, 0) if max_parents is None else int(max_parents)


@SEARCH_OPTIONS.entry
@fill_doc(**_DOCS, notes_references=_NOTES_REFERENCES)
def refine_order(X, order, *, threshold=0.3, max_parents=None, max_rounds=50,
                 time_limit=None, backend="auto", gram=None, noise_variance="equal",
                 ebic_gamma=EBIC_GAMMA, depth=2):
    """Improve a node order by score-lowering moves; return the refit DAG.

    Moves (see :mod:`solvers.dag._order_search`): swaps of adjacent nodes; for every
    current edge ``u -> v``, moving ``v`` just before ``u`` or ``u`` just after ``v``;
    then tucks (``v`` and its ancestors between them moved before ``u``), explored
    ``depth`` deep across moves that leave the score unchanged. The search stops at an
    order no move improves, which is then refit exactly and searched again until the
    refit is a fixed point (or ``max_rounds`` / ``time_limit`` stop it).

    Parameters
    ----------
    X : array_like, shape (n, d)
    order : array_like of int
        Starting order (a permutation of ``range(d)``).
    threshold, max_parents, backend, gram, noise_variance, ebic_gamma
        As in :func:`refit_parents`.
    {{params_search_limits}}

    Returns
    -------
    order : ndarray of int
    W : ndarray, shape (d, d)
        The refit at the returned order (a DAG).
    score : float
        Its score per sample under ``noise_variance`` (lower is better; variance
        parameters not counted).

    {{raises_order}}

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
    order = _check_order(order, C.shape[0])
    opts, cfg = _search_options(C, n, SEARCH_OPTIONS, threshold=threshold,
                                max_parents=max_parents, backend=backend,
                                noise_variance=noise_variance, ebic_gamma=ebic_gamma,
                                max_rounds=max_rounds, time_limit=time_limit, depth=depth)
    order, W, score, _ = search_order(C, n, order, opts, max_rounds=cfg.max_rounds,
                                      time_limit=cfg.time_limit, depth=cfg.depth)
    return order, W, score


def search_order(C, n, order, opts, *, max_rounds=50, time_limit=None, depth=2):
    """The search of :func:`refine_order` on checked options (:func:`search_options`).

    Returns ``(order, W, score, converged)``: ``W`` in the units of ``C``, ``score``
    per sample (variance parameters not counted), ``converged`` True when the exact
    refit at the returned order is a fixed point of the moves.
    """
    cache = opts["cache"]           # fits shared by every search with these options
    order = [int(v) for v in order]
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    fixed = False
    for _ in range(_FIXED_POINT_ROUNDS):
        state = _state(C, n, order, opts, cache)
        left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        if not search(state, max_rounds=max_rounds, time_limit=left, depth=depth):
            break
        if state.order == order:     # no move gains from the exact refit: a fixed point
            fixed = True
            break
        order = state.order          # moves used partial refits: refit exactly, again
    W = _unscale(state.W(), opts["sd"])
    return (np.asarray(state.order, dtype=np.int64), W,
            model_bic(C, n, W, opts["noise"], variances=False, pen=opts["pen"]), fixed)


#: exact refits at the searched order before the search is declared not converged
_FIXED_POINT_ROUNDS = 10


def search_options(C, n, *, noise, threshold, max_parents, pen, be):
    """Options of :func:`search_order` from already checked values and a Backend."""
    Cs, sd = _scaled(C, noise)
    fit, gain = kernels(be, C.shape[0])
    return {"noise": noise, "Cs": Cs, "sd": sd, "w_thr": float(threshold),
            "max_parents": _max_parents(max_parents, C.shape[0]), "pen": float(pen),
            "fit": fit, "add_gain": gain, "cache": {}}


def greedy_start(C, n, opts):
    """:func:`solvers.dag._order_search.greedy_order` on the searched Gram matrix."""
    return greedy_order(opts["Cs"], n, pen=opts["pen"], max_parents=opts["max_parents"],
                        add_gain=opts["add_gain"])
