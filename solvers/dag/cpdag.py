r"""Markov equivalence classes: the CPDAG of a DAG (Meek's rules) and its comparison.

Two DAGs are Markov equivalent (they imply the same conditional independences, hence the
same Gaussian likelihood for linear SEMs with one noise variance per node) exactly when
they have the same skeleton and the same v-structures ``a -> c <- b`` with ``a``, ``b``
non-adjacent (Verma & Pearl 1990). The class is drawn as a CPDAG (completed partially
directed acyclic graph): an edge is directed when every member of the class orients it the
same way (it is *compelled*), undirected otherwise. Starting from the v-structures, the
compelled edges are exactly those oriented by Meek's rules R1-R3 (Meek 1995; rule R4 is
not needed when the start is a DAG's own v-structures):

- R1: ``a -> b - c``, ``a``, ``c`` non-adjacent: orient ``b -> c``;
- R2: ``a -> b -> c`` and ``a - c``: orient ``a -> c``;
- R3: ``a - b``, ``a - c -> b``, ``a - d -> b``, ``c``, ``d`` non-adjacent: orient
  ``a -> b``.

Matrix convention: ``M[i, j] = 1, M[j, i] = 0`` is the directed edge ``i -> j``;
``M[i, j] = M[j, i] = 1`` an undirected edge ``i - j``.

References
----------
.. [1] C. Meek, "Causal inference and causal explanation with background knowledge",
   UAI 1995.
.. [2] D. M. Chickering, "Learning equivalence classes of Bayesian-network structures",
   JMLR 2:445-498, 2002.
"""
import numpy as np

from .graph import to_host, topological_order

__all__ = ["CPDAG", "dag_to_cpdag", "cpdag_accuracy"]


def _binary_square(B, name):
    B = np.asarray(to_host(B)) != 0
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {B.shape}")
    if np.any(np.diag(B)):
        raise ValueError(f"{name} must have no self-loops (nonzero diagonal)")
    return B


def dag_to_cpdag(B):
    """The CPDAG (Markov equivalence class) of a DAG, as a 0/1 matrix.

    Parameters
    ----------
    B : array_like, shape (d, d)
        Adjacency of a DAG (nonzero ``B[i, j]`` is the edge ``i -> j``).

    Returns
    -------
    M : ndarray of int8, shape (d, d)
        ``M[i, j] = 1, M[j, i] = 0``: compelled edge ``i -> j``; ``M[i, j] = M[j, i] = 1``:
        reversible (undirected) edge.

    Raises
    ------
    ValueError
        ``B`` not square, with a self-loop, or cyclic.

    References
    ----------
    .. [1] C. Meek, "Causal inference and causal explanation with background knowledge",
       UAI 1995.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cpdag import dag_to_cpdag
    >>> chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])     # 0 -> 1 -> 2
    >>> dag_to_cpdag(chain).tolist()                           # all reversible
    [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    >>> collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])  # 0 -> 2 <- 1
    >>> dag_to_cpdag(collider).tolist()                        # compelled
    [[0, 0, 1], [0, 0, 1], [0, 0, 0]]
    """
    B = _binary_square(B, "B")
    if topological_order(B) is None:
        raise ValueError("B must be the adjacency of a DAG (it has a cycle)")
    d = B.shape[0]
    adj = B | B.T
    directed = np.zeros_like(B)
    for c in range(d):           # v-structures a -> c <- b, a and b non-adjacent
        pa = np.flatnonzero(B[:, c])
        for i, a in enumerate(pa):
            for b in pa[i + 1:]:
                if not adj[a, b]:
                    directed[a, c] = directed[b, c] = True
    _meek(B, adj, directed)
    und = adj & ~directed & ~directed.T
    return (directed | und).astype(np.int8)


def _meek(B, adj, directed):
    """Apply Meek's rules R1-R3 in place until nothing changes (orientations follow B)."""
    d = B.shape[0]
    changed = True
    while changed:
        changed = False
        und = adj & ~directed & ~directed.T
        for a, b in zip(*np.nonzero(und & B)):   # each undirected edge, DAG direction a -> b
            if _compelled(a, b, adj, directed, und, d):
                directed[a, b] = True
                changed = True
                und[a, b] = und[b, a] = False


def _compelled(a, b, adj, directed, und, d):
    # R1: some c -> a with c, b non-adjacent
    if np.any(directed[:, a] & ~adj[:, b] & (np.arange(d) != b)):
        return True
    # R2: a -> c -> b
    if np.any(directed[a, :] & directed[:, b]):
        return True
    # R3: two non-adjacent c, d with a - c -> b and a - d -> b
    mids = np.flatnonzero(und[a, :] & directed[:, b])
    for i, c in enumerate(mids):
        if np.any(~adj[c, mids[i + 1:]]):
            return True
    return False


class CPDAG:
    """A Markov equivalence class drawn as a CPDAG.

    Parameters
    ----------
    matrix : array_like, shape (d, d)
        0/1 matrix in the convention of :func:`dag_to_cpdag`.

    Attributes
    ----------
    matrix : ndarray of int8
    directed : list of (int, int)
        Compelled edges ``(i, j)`` meaning ``i -> j``.
    undirected : list of (int, int)
        Reversible edges ``(i, j)`` with ``i < j``.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cpdag import CPDAG, dag_to_cpdag
    >>> c = CPDAG(dag_to_cpdag(np.array([[0, 1], [0, 0]])))
    >>> c.directed, c.undirected
    ([], [(0, 1)])
    """

    def __init__(self, matrix):
        self.matrix = np.asarray(to_host(matrix)).astype(np.int8)
        M = self.matrix != 0
        self.directed = [(int(i), int(j)) for i, j in zip(*np.nonzero(M & ~M.T))]
        self.undirected = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(M & M.T)))]

    def __repr__(self):
        return (f"CPDAG(d={self.matrix.shape[0]}, directed={len(self.directed)}, "
                f"undirected={len(self.undirected)})")

    def to_networkx(self, labels=None):
        """A ``networkx.DiGraph``: compelled edges once, reversible edges both ways; every
        edge has the attribute ``directed`` (False on both arcs of a reversible edge)."""
        import networkx as nx

        d = self.matrix.shape[0]
        names = list(range(d)) if labels is None else list(labels)
        G = nx.DiGraph()
        G.add_nodes_from(names)
        for i, j in self.directed:
            G.add_edge(names[i], names[j], directed=True)
        for i, j in self.undirected:
            G.add_edge(names[i], names[j], directed=False)
            G.add_edge(names[j], names[i], directed=False)
        return G


def _as_cpdag(B, name):
    """A CPDAG matrix from a DAG adjacency, a CPDAG matrix (it has symmetric pairs) or a
    :class:`CPDAG`."""
    if isinstance(B, CPDAG):
        return B.matrix != 0
    M = _binary_square(B, name)
    if np.any(M & M.T):
        return M
    return dag_to_cpdag(M) != 0


def cpdag_accuracy(B_true, B_est):
    """Compare two equivalence classes edge mark by edge mark.

    Each unordered pair counts once in the SHD when its marks differ (absent, ``i -> j``,
    ``j -> i`` or ``i - j``). A DAG is first replaced by its CPDAG.

    Parameters
    ----------
    B_true, B_est : array_like or CPDAG
        DAG adjacencies, CPDAG matrices or :class:`CPDAG` objects.

    Returns
    -------
    dict
        ``shd`` (= ``extra + missing + misoriented``), ``extra``, ``missing``,
        ``misoriented`` (adjacent in both, marks differ), ``skeleton_f1``.

    Raises
    ------
    ValueError
        A matrix not square or with a self-loop, a cyclic DAG, or different sizes.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cpdag import cpdag_accuracy
    >>> chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> cpdag_accuracy(chain, chain.T)["shd"]        # reversed chain: same class
    0
    """
    T = _as_cpdag(B_true, "B_true")
    E = _as_cpdag(B_est, "B_est")
    if T.shape != E.shape:
        raise ValueError(f"B_true and B_est shapes differ: {T.shape} vs {E.shape}")
    lower = np.tril(np.ones(T.shape, dtype=bool), -1)
    st, se = T | T.T, E | E.T
    extra = int(np.sum(se & ~st & lower))
    missing = int(np.sum(st & ~se & lower))
    both = st & se & lower
    mis = int(np.sum(both & ((T != E) | (T.T != E.T))))
    tp = int(np.sum(both))
    prec = tp / max(int(np.sum(se & lower)), 1)
    rec = tp / max(int(np.sum(st & lower)), 1)
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    return {"shd": extra + missing + mis, "extra": extra, "missing": missing,
            "misoriented": mis, "skeleton_f1": f1}
