"""Graph helpers: acyclicity checks, topological orders, networkx conversion.

These work on the host (numpy); device arrays (cupy) are copied to the host explicitly
first, since graphs are small (d x d) next to the data.
"""
import numpy as np

from .._lib.host import to_host  # noqa: F401  (re-exported: the one device -> host copy)
from .._lib.validation import check_positive
from ._checks import as_adjacency, as_real_square, check_graph, check_labels
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = dict(DOCS)
_DOCS["references_1"] = """
References
----------
.. [1] A. B. Kahn, "Topological sorting of large networks", Communications of the ACM
   5(11):558-562, 1962.
"""
_DOCS["references_2"] = """
References
----------
.. [1] A. A. Hagberg, D. A. Schult, P. J. Swart, "Exploring network structure,
   dynamics, and function using NetworkX", Proc. SciPy 2008, 11-15.
"""

__all__ = ["is_dag", "topological_order", "order_mask", "to_networkx", "from_networkx",
           "to_host"]


@fill_doc(**_DOCS)
def topological_order(B):
    """A topological order of the graph with adjacency ``B``, or ``None`` if it has a cycle.

    {{param_adjacency}}

    Returns
    -------
    order : ndarray of int, shape (d,), or None
        Kahn's algorithm, smallest ready index first (deterministic).

    {{raises_adjacency}}

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import topological_order
    >>> topological_order(np.array([[0, 0], [1, 0]]))
    array([1, 0])
    >>> topological_order(np.array([[0, 1], [1, 0]])) is None
    True
    """
    A = as_adjacency(B, "B")
    d = A.shape[0]
    indeg = A.sum(axis=0).astype(np.int64)
    ready = sorted(np.flatnonzero(indeg == 0).tolist())
    order = []
    import heapq

    heapq.heapify(ready)
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in np.flatnonzero(A[i]):
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, int(j))
    if len(order) < d:
        return None
    return np.asarray(order, dtype=np.int64)


@fill_doc(**_DOCS)
def is_dag(B):
    """Whether the adjacency ``B`` (``B[i, j] != 0`` for ``i -> j``) has no directed cycle.

    {{param_adjacency}}

    Returns
    -------
    bool
        True when :func:`topological_order` finds an order.

    {{raises_adjacency}}

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import is_dag
    >>> is_dag(np.triu(np.ones((4, 4)), 1)), is_dag(np.eye(2))
    (True, False)
    """
    return topological_order(B) is not None


def order_mask(order):
    """The edges a node order allows: ``M[i, j]`` True when ``i`` comes before ``j``.

    Any graph supported on ``M`` is a DAG.

    Parameters
    ----------
    order : array_like of int, shape (d,)
        A permutation of ``range(d)``, earliest node first.

    Returns
    -------
    M : ndarray of bool, shape (d, d)
        ``M[i, j]`` is True when ``i`` precedes ``j``; it has ``d (d - 1) / 2`` True
        entries and a False diagonal.

    Raises
    ------
    ValueError
        ``order`` is not a 1-D permutation of ``range(d)``, or holds non-integer values.

    References
    ----------
    .. [1] M. Teyssier, D. Koller, "Ordering-based search: a simple and effective
       algorithm for learning Bayesian networks", UAI 2005.
    .. [2] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
       topological swaps", ICML 2023.

    Examples
    --------
    >>> from solvers.dag import order_mask
    >>> order_mask([2, 0, 1]).astype(int)
    array([[0, 1, 0],
           [0, 0, 0],
           [1, 1, 0]])
    """
    order = np.asarray(to_host(order))
    if order.ndim != 1:
        raise ValueError(f"order must be 1-D, got shape {order.shape}")
    if order.dtype.kind not in "iub":
        try:
            as_int = order.astype(np.int64)
            integral = bool(np.all(as_int == order))
        except (TypeError, ValueError):
            integral = False
        if not integral:
            raise ValueError(f"order must hold integers, got {order.tolist()}")
        order = as_int
    order = order.astype(np.int64)
    d = order.shape[0]
    if sorted(order.tolist()) != list(range(d)):
        raise ValueError(f"order must be a permutation of range({d}), got {order.tolist()}")
    pos = np.empty(d, dtype=np.int64)
    pos[order] = np.arange(d)
    return pos[:, None] < pos[None, :]


@fill_doc(**_DOCS)
def to_networkx(W, threshold=0.0, labels=None):
    """A ``networkx.DiGraph`` with an edge ``i -> j`` for every ``|W[i, j]| > threshold``.

    Parameters
    ----------
    W : array_like, shape (d, d)
        Weighted (or binary) adjacency.
    threshold : float
        Entries with ``|W[i, j]| <= threshold`` are not edges (``>= 0``; ``inf`` gives no
        edges).
    labels : sequence, optional
        Distinct node names (default ``0 .. d-1``).

    Returns
    -------
    networkx.DiGraph
        Every node is present (isolated ones too); edges carry ``weight``.

    Raises
    ------
    ValueError
        ``W`` is not a square (2-D) matrix or holds NaN or inf, ``threshold`` is negative
        or NaN, or ``labels`` does not have ``d`` distinct entries.
    TypeError
        ``W`` is complex or not numeric, or ``threshold`` is not a real number.
    ImportError
        networkx is not installed.

    {{references_2}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import to_networkx
    >>> G = to_networkx(np.array([[0.0, 1.5], [0.0, 0.0]]))
    >>> list(G.edges(data="weight"))
    [(0, 1, 1.5)]
    """
    import networkx as nx

    W = as_real_square(W, "W")
    threshold = check_positive(threshold, "threshold", strict=False, finite=False)
    names = check_labels(labels, W.shape[0])
    G = nx.DiGraph()
    G.add_nodes_from(names)
    for i, j in zip(*np.nonzero(np.abs(W) > threshold)):
        G.add_edge(names[i], names[j], weight=float(W[i, j]))
    return G


@fill_doc(**_DOCS)
def from_networkx(G, nodelist=None, weight="weight"):
    """The weighted adjacency of a ``networkx`` graph (``W[i, j]`` for ``i -> j``).

    Parameters
    ----------
    G : networkx.DiGraph
    nodelist : sequence, optional
        Row/column order (default ``list(G.nodes)``); distinct nodes.
    weight : str or None
        Edge attribute used as the weight; edges without it, or ``weight=None``, give 1.

    Returns
    -------
    W : ndarray, shape (d, d)

    Raises
    ------
    TypeError
        ``G`` is not a networkx graph (no ``nodes`` / ``edges``).
    ValueError
        ``nodelist`` names a node twice.

    Notes
    -----
    It assumes ``G`` is a directed graph with numeric edge weights: edges with an
    endpoint outside ``nodelist`` are silently dropped, an undirected graph gives only one
    direction per edge, and parallel edges of a multigraph overwrite each other (the last
    one wins).

    {{references_2}}

    Examples
    --------
    >>> import networkx as nx
    >>> from solvers.dag import from_networkx
    >>> from_networkx(nx.DiGraph([("a", "b")]), nodelist=["a", "b"])
    array([[0., 1.],
           [0., 0.]])
    """
    G = check_graph(G, "G")
    if nodelist is None:
        nodes = list(G.nodes)
    else:
        nodes = check_labels(nodelist, None, "nodelist")
    index = {v: k for k, v in enumerate(nodes)}
    W = np.zeros((len(nodes), len(nodes)))
    for u, v, data in G.edges(data=True):
        if u not in index or v not in index:
            continue
        w = 1.0 if weight is None else data.get(weight, 1.0)
        W[index[u], index[v]] = w
    return W
