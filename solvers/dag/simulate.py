"""Random DAGs and linear structural equation models (SEMs).

Convention (NOTEARS, DAGMA, gCastle, networkx): ``W[i, j] != 0`` means the edge ``i -> j``;
column ``j`` holds the parents of ``j``; the linear SEM is ``X = X W + N``.

Everything here runs on the host (numpy) with the caller's ``rng``; move the data to
another namespace afterwards if needed (``cupy.asarray(X)``).
"""
from collections import namedtuple

import numpy as np

from .._lib.rng import check_rng
from .._lib.host import to_host
from .._lib.validation import check_choice, check_int, check_positive
from ._checks import NOISE_TYPES, as_adjacency, as_real_square
from .graph import topological_order
from .simulate_nonlinear import SEM_TYPES, simulate_nonlinear_sem
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["simulate_dag", "simulate_weights", "simulate_linear_sem", "simulate_data",
           "SEMData", "GRAPH_TYPES", "NOISE_TYPES"]

GRAPH_TYPES = ("ER", "SF")

#: the default edge-weight ranges, U([-2, -0.5] u [0.5, 2])
DEFAULT_WEIGHT_RANGES = ((-2.0, -0.5), (0.5, 2.0))

SEMData = namedtuple("SEMData", ["X", "W", "B"])
SEMData.__doc__ = """Simulated linear SEM data: the named tuple :func:`simulate_data` returns.

Parameters
----------
X : ndarray, shape (n, d)
    Samples of the SEM.
W : ndarray, shape (d, d)
    Weighted adjacency of the DAG.
B : ndarray of bool, shape (d, d)
    Binary adjacency.

Attributes
----------
X : ndarray, shape (n, d)
    Samples (standardized per column when asked).
W : ndarray, shape (d, d)
    True weighted adjacency, ``W[i, j]`` the weight of ``i -> j``.
B : ndarray of bool, shape (d, d)
    True binary adjacency ``W != 0``.

Raises
------
TypeError
    Not exactly three fields given (the usual named-tuple constructor check). The
    fields themselves are not validated: ``B`` is assumed to equal ``W != 0``.

References
----------
.. [1] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing, "DAGs with NO TEARS: continuous
   optimization for structure learning", NeurIPS 2018.

Examples
--------
>>> from solvers.dag import simulate_data
>>> data = simulate_data(d=4, n=50, k=1, rng=0)
>>> data.X.shape, bool((data.B == (data.W != 0)).all())
((50, 4), True)
"""


@fill_doc(**_DOCS)
def simulate_dag(d, k=2, graph_type="ER", rng=None):
    """A random DAG as a binary adjacency matrix.

    Parameters
    ----------
    d : int
        Number of nodes (>= 1).
    k : int or float
        Edge density: ER-k has ``round(k * d)`` edges (capped at ``d (d - 1) / 2``), drawn
        uniformly among unordered pairs; SF-k is Barabási–Albert with ``round(k)`` edges
        added per new node (each pointing from the new node to an older one, so hubs are
        children of many, the usual NOTEARS orientation).
    graph_type : {"ER", "SF"}
        Erdős–Rényi or scale-free.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    B : ndarray of bool, shape (d, d)
        ``B[i, j]`` is True for the edge ``i -> j``. Nodes are randomly permuted, so the
        index order says nothing about the causal order.

    Raises
    ------
    ValueError
        ``d < 1``, ``k < 0`` or not finite, an unknown ``graph_type``, or a negative
        integer seed.
    TypeError
        ``d`` not an integer, ``k`` not a real number, or ``rng`` not None, an int or a
        ``numpy.random.Generator``.

    {{ref_notears}}
    .. [2] P. Erdős, A. Rényi, "On random graphs I", Publicationes Mathematicae 6:290-297,
       1959.
    .. [3] A.-L. Barabási, R. Albert, "Emergence of scaling in random networks", Science
       286(5439):509-512, 1999.

    Examples
    --------
    >>> from solvers.dag import simulate_dag, is_dag
    >>> B = simulate_dag(10, k=2, graph_type="ER", rng=0)
    >>> int(B.sum()), is_dag(B)
    (20, True)
    """
    d = check_int(d, "d", minimum=1)
    k = check_positive(k, "k", strict=False)
    graph_type = check_choice(str(graph_type).upper(), GRAPH_TYPES, "graph_type")
    rng = check_rng(rng)
    lower = np.zeros((d, d), dtype=bool)  # edges from later to earlier in a hidden order
    if graph_type == "ER":
        pairs = d * (d - 1) // 2
        m = min(int(round(k * d)), pairs)
        if m > 0:
            rows, cols = np.tril_indices(d, -1)
            chosen = rng.choice(pairs, size=m, replace=False)
            lower[rows[chosen], cols[chosen]] = True
    else:
        m = int(round(k))
        if m >= 1 and d >= 2:
            degree = np.zeros(d)
            for new in range(1, d):
                n_old = new
                take = min(m, n_old)
                weights = degree[:n_old] + 1.0  # +1 so the first nodes can be picked
                targets = rng.choice(n_old, size=take, replace=False,
                                     p=weights / weights.sum())
                lower[new, targets] = True
                degree[targets] += 1
                degree[new] += take
    perm = rng.permutation(d)
    B = lower[np.ix_(perm, perm)]
    return B


@fill_doc(**_DOCS)
def simulate_weights(B, weight_ranges=DEFAULT_WEIGHT_RANGES, rng=None):
    """Edge weights drawn uniformly from a union of intervals, on the support of ``B``.

    Parameters
    ----------
    B : array_like of bool, shape (d, d)
        Binary (0/1) adjacency of a DAG.
    weight_ranges : sequence of (low, high)
        Disjoint intervals; each edge picks one interval uniformly, then a uniform value in
        it. The default is U([-2, -0.5] u [0.5, 2]).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    W : ndarray, shape (d, d)

    Raises
    ------
    ValueError
        ``B`` is not a square (2-D) 0/1 matrix of a DAG (NaN, other values and cycles are
        refused), ``weight_ranges`` is not a sequence of ``(low, high)`` pairs with
        ``low <= high``, or ``rng`` is a negative seed.
    TypeError
        ``B`` is complex or not numeric, or ``rng`` is not None, an int or a
        ``numpy.random.Generator``.

    {{ref_notears}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import simulate_dag, simulate_weights
    >>> W = simulate_weights(simulate_dag(5, rng=1), rng=1)
    >>> bool(np.all((np.abs(W[W != 0]) >= 0.5) & (np.abs(W[W != 0]) <= 2)))
    True
    """
    B = as_adjacency(B, "B", binary=True)
    if topological_order(B) is None:
        raise ValueError("B must be the adjacency of a DAG (it has a cycle)")
    rng = check_rng(rng)
    ranges = np.asarray(weight_ranges, dtype=float)
    if ranges.ndim != 2 or ranges.shape[1] != 2 or np.any(ranges[:, 1] < ranges[:, 0]):
        raise ValueError("weight_ranges must be a sequence of (low, high) pairs with low <= high")
    W = np.zeros(B.shape)
    pick = rng.integers(len(ranges), size=B.shape)
    U = rng.uniform(size=B.shape)
    values = ranges[pick, 0] + U * (ranges[pick, 1] - ranges[pick, 0])
    W[B] = values[B]
    return W


def _noise_scale(noise_scale, d):
    """``noise_scale`` (a scalar or one per node) as a finite, positive ``(d,)`` array."""
    scale = np.asarray(to_host(noise_scale))
    if scale.dtype.kind not in "iuf":
        raise TypeError(f"noise_scale must be a real number or array of them, got "
                        f"{type(noise_scale).__name__} of dtype {scale.dtype}")
    if scale.shape not in ((), (1,), (d,)):
        raise ValueError(f"noise_scale must be a scalar or have shape ({d},), "
                         f"got shape {scale.shape}")
    scale = np.broadcast_to(scale.astype(float), (d,))
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ValueError(f"noise_scale must be finite and > 0, got {noise_scale!r}")
    return scale


@fill_doc(**_DOCS)
def simulate_linear_sem(W, n, noise_type="gauss", noise_scale=1.0, standardize=False,
                        rng=None):
    """Samples of the linear SEM ``X = X W + N``.

    Parameters
    ----------
    W : array_like, shape (d, d)
        Weighted adjacency of a DAG (``W[i, j]`` the weight of ``i -> j``).
    n : int
        Number of samples (>= 1).
    noise_type : {"gauss", "exp", "gumbel"}
        Independent noise per node: N(0, s^2), Exponential(scale s), Gumbel(0, s).
    noise_scale : float or array_like of shape (d,)
        Scale ``s > 0`` of each node's noise.
    standardize : bool
        Rescale every column to mean 0 and variance 1. This removes the "marginal variance
        grows along the causal order" shortcut (varsortability) that many methods exploit
        on raw simulated data.
    {{rng_returns_x}}

    Raises
    ------
    ValueError
        ``W`` not square, not finite or not acyclic, ``n < 1``, unknown ``noise_type``,
        ``noise_scale`` not finite and ``> 0`` or not of shape ``()`` or ``(d,)``, or a
        negative integer seed.
    TypeError
        ``W`` or ``noise_scale`` not real numbers, ``n`` not an integer, or ``rng`` not
        None, an int or a ``numpy.random.Generator``.

    {{ref_notears}}
    .. [2] A. G. Reisach, C. Seiler, S. Weichwald, "Beware of the simulated DAG! Causal
       discovery benchmarks may be easy to game", NeurIPS 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import simulate_linear_sem
    >>> W = np.array([[0.0, 2.0], [0.0, 0.0]])   # x0 -> x1 with weight 2
    >>> X = simulate_linear_sem(W, 20000, rng=0)
    >>> np.round(np.var(X, axis=0), 1)
    array([1., 5.])
    """
    W = as_real_square(W, "W")
    n = check_int(n, "n", minimum=1)
    noise_type = check_choice(noise_type, NOISE_TYPES, "noise_type")
    rng = check_rng(rng)
    d = W.shape[0]
    order = topological_order(W != 0)
    if order is None:
        raise ValueError("W must be the weighted adjacency of a DAG (it has a cycle)")
    scale = _noise_scale(noise_scale, d)
    if noise_type == "gauss":
        N = rng.standard_normal((n, d)) * scale
    elif noise_type == "exp":
        N = rng.exponential(size=(n, d)) * scale
    else:
        N = rng.gumbel(size=(n, d)) * scale
    X = np.zeros((n, d))
    for j in order:
        X[:, j] = X @ W[:, j] + N[:, j]
    if standardize:
        X = X - X.mean(axis=0)
        sd = X.std(axis=0)
        X = X / np.where(sd > 0, sd, 1.0)
    return X


@fill_doc(**_DOCS)
def simulate_data(d, n, k=2, graph_type="ER", noise_type="gauss", noise_scale=1.0,
                  standardize=False, weight_ranges=DEFAULT_WEIGHT_RANGES, rng=None,
                  sem_type="linear"):
    """A random DAG, its weights and ``n`` samples of the linear SEM, in one call.

    Parameters
    ----------
    d, n : int
        Number of nodes and of samples.
    k, graph_type
        See :func:`simulate_dag` (``"ER"`` with ``k=2`` is "ER2").
    noise_type, noise_scale, standardize
        See :func:`simulate_linear_sem`.
    weight_ranges
        See :func:`simulate_weights`.
    rng : None, int or numpy.random.Generator
    sem_type : {"linear", "mlp", "gp", "gp-add", "quadratic", "additive"}
        ``"linear"`` (default): the linear SEM. Otherwise a nonlinear SEM of
        :func:`solvers.dag.simulate_nonlinear.simulate_nonlinear_sem` (then ``W`` is the
        binary adjacency as floats and ``weight_ranges`` is unused).

    Returns
    -------
    SEMData
        Named tuple ``(X, W, B)``.

    Raises
    ------
    ValueError
        Bad ``d``, ``n``, ``k``, ``graph_type``, ``noise_type``, ``noise_scale`` (not
        finite and ``> 0``) or ``weight_ranges`` (see the functions above), or a negative
        integer seed.
    TypeError
        Non-integer ``d`` or ``n``, non-real ``k`` or ``noise_scale``, or an ``rng`` that
        is not None, an int or a ``numpy.random.Generator``.

    {{ref_notears}}

    Examples
    --------
    >>> from solvers.dag import simulate_data
    >>> X, W, B = simulate_data(d=10, n=100, k=2, rng=0)
    >>> X.shape, int(B.sum())
    ((100, 10), 20)
    """
    rng = check_rng(rng)
    _noise_scale(noise_scale, check_int(d, "d", minimum=1))
    if sem_type != "linear":
        check_choice(sem_type, ("linear",) + SEM_TYPES, "sem_type")
        B = simulate_dag(d, k=k, graph_type=graph_type, rng=rng)
        X = simulate_nonlinear_sem(B, n, sem_type=sem_type, noise_type=noise_type,
                                   noise_scale=noise_scale, standardize=standardize, rng=rng)
        return SEMData(X, B.astype(float), B)
    B = simulate_dag(d, k=k, graph_type=graph_type, rng=rng)
    W = simulate_weights(B, weight_ranges=weight_ranges, rng=rng)
    X = simulate_linear_sem(W, n, noise_type=noise_type, noise_scale=noise_scale,
                            standardize=standardize, rng=rng)
    return SEMData(X, W, B)
