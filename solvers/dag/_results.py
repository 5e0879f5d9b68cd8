"""The result every DAG learner returns, and the data check they share.

Kept apart from :mod:`solvers.dag.learn` (the router) so that the learners import it
without importing the router that imports them.
"""
import numpy as np

from .._lib.frames import unwrap_frame
from .._lib.host import to_host
from .._lib.namespace import array_namespace
from .._lib.results import OptimizeResult, make_result
from .._lib.validation import as_float_array, check_finite, promote_float16
from .cpdag import CPDAG, dag_to_cpdag
from .graph import is_dag, to_networkx, topological_order
from .._lib.docstrings import fill_doc_members
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["DAGResult", "dag_result", "check_data"]


class DAGResult(OptimizeResult):
    """A learned DAG (an :class:`~scipy.optimize.OptimizeResult` with graph methods).

    Learners build it; users normally only read it.

    Parameters
    ----------
    **fields
        The attributes below, as keywords (a ``dict`` subclass: ``res["W"]`` and
        ``res.W`` are the same). Learners may add extra fields.

    Attributes
    ----------
    W : array, shape (d, d)
        Weighted adjacency; ``W[i, j] != 0`` is the edge ``i -> j`` (column ``j`` holds
        the parents of ``j``). Same namespace as the input data.
    adjacency : array of bool, shape (d, d)
        Binary adjacency ``W != 0``, in the input's namespace (like every array field).
        Always acyclic.
    order : array of int, shape (d,)
        A topological order of ``adjacency`` (the learned causal order).
    priorities : array, shape (d,) or None
        COSMO's node priorities (edges point from low to high priority), if any.
    fun : float
        Final value of the objective.
    loss_history : ndarray
        Objective recorded during training.
    nit : int
        Optimizer steps taken.
    success : bool
    status : int
    message : str
    method : str
    time : float
        Wall time of the fit, seconds.
    cpdag : :class:`~solvers.dag.cpdag.CPDAG`
        What the data identify: the Markov equivalence class of ``adjacency`` (edges whose
        direction the model cannot tell are undirected) when the model only identifies
        the class (linear-Gaussian with one noise variance per node), or the DAG itself
        (every edge directed) when it identifies directions (equal noise variances,
        nonlinear additive mechanisms). ``cpdag.to_networkx()`` draws it.
    identified : bool
        Whether the model identifies edge directions (then ``cpdag`` is the DAG).
    labels : list, optional
        Node names, set when the data were a pandas DataFrame (its columns, in order):
        ``to_networkx()`` names the nodes with them (``res.cpdag.to_networkx(res.labels)``
        for the class).

    Raises
    ------
    AttributeError
        Reading a field that was not set (``res.missing``). Construction itself does not
        validate the fields; it assumes ``adjacency == (W != 0)`` and ``order`` a
        topological order of it, which the library's learners guarantee.

    {{ref_cosmo}}
    .. [2] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import learn_dag, simulate_data
    >>> X, W, B = simulate_data(d=4, n=300, k=1, rng=0)
    >>> res = learn_dag(X, method="cosmo", rng=0)
    >>> res.W.shape, res.is_dag(), bool((res.adjacency == (res.W != 0)).all())
    ((4, 4), True, True)
    >>> sorted(res.order.tolist())
    [0, 1, 2, 3]
    """

    def to_networkx(self, labels=None):
        """The learned graph as a ``networkx.DiGraph`` with edge ``weight`` attributes;
        nodes are named by ``labels``, else by the result's ``labels`` (a DataFrame's
        columns), else ``0..d-1``."""
        if labels is None:
            labels = self.get("labels")
        return to_networkx(self.W, threshold=0.0, labels=labels)

    def is_dag(self):
        """Whether ``adjacency`` is acyclic (always True for results of this library)."""
        return is_dag(self.adjacency)


def dag_result(W, *, be, dtype, status, method, success=None, message=None, order=None,
               priorities=None, fun=np.nan, loss_history=(), nit=0, time=0.0,
               identified=True, **extra):
    """Build a :class:`DAGResult` through the shared :func:`solvers._lib.results.make_result`,
    deriving ``adjacency`` and the ``cpdag``.

    Learners call this last, with the host weights ``W``, the run's :class:`Backend`
    ``be``, the output ``dtype`` and a :class:`~solvers._lib.results.Status`; every array
    field is returned in the user's namespace (``be.to_result``). ``W_cosmo`` and ``W_vi``
    among ``extra`` are host arrays converted the same way.

    Raises
    ------
    RuntimeError
        ``W`` has a cycle: the learners build DAGs by construction, so this is a bug.
    """
    W_host = np.asarray(to_host(W), dtype=np.float64)
    B = W_host != 0
    topo = topological_order(B)
    if topo is None:
        raise RuntimeError("internal error: the learned graph has a cycle")
    order = topo if order is None else np.asarray(to_host(order), dtype=np.int64)
    for key in ("W_cosmo", "W_vi"):
        if isinstance(extra.get(key), np.ndarray):
            extra[key] = be.to_result(extra[key], dtype)
    if isinstance(priorities, np.ndarray):
        priorities = be.to_result(priorities, dtype)
    return make_result(
        status, success=success, message=message, result_class=DAGResult,
        W=be.to_result(W_host, dtype), adjacency=be.to_result(B),
        order=be.to_result(order.astype(np.int64)), priorities=priorities, fun=float(fun),
        loss_history=be.to_result(np.asarray(loss_history, dtype=np.float64)),
        nit=int(nit), method=method, time=float(time), identified=bool(identified),
        cpdag=CPDAG(B if identified else dag_to_cpdag(B)), **extra)


def check_data(X, name="X"):
    """Validate a data matrix for structure learning and return ``(X, xp)``.

    ``X`` must be 2-D (n samples x d variables), real, finite, with ``n >= 2``, ``d >= 1``
    and no constant column (a constant variable has no defined regression on others).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (numpy, cupy or any Array API array; lists and pandas DataFrames are
        converted).
    name : str
        Name used in error messages.

    Returns
    -------
    X : array, shape (n, d)
        The data as a floating-point array of its own namespace (integers are converted to
        float64, float16 to float32).
    xp : module
        The Array API namespace of ``X`` (for numpy input, a numpy-compatible
        namespace, not necessarily the ``numpy`` module itself).

    Raises
    ------
    TypeError
        Non-numeric or complex data (a DataFrame with a non-numeric column).
    ValueError
        Wrong number of dimensions, NaN/inf, ``n < 2``, or a constant column.

    References
    ----------
    .. [1] Consortium for Python Data API Standards, "Python array API standard",
       https://data-apis.org/array-api/ (the ``xp`` namespace convention).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import check_data
    >>> X, xp = check_data([[1, 2], [3, 5], [4, 4]])
    >>> type(X).__name__, X.dtype, X.shape
    ('ndarray', dtype('float64'), (3, 2))
    >>> check_data(np.array([[1.0, 2.0], [3.0, 2.0]]))
    Traceback (most recent call last):
    ...
    ValueError: X has constant column(s) [1]; drop them before learning
    """
    X, _ = unwrap_frame(X, name)
    xp = array_namespace(X)
    X = promote_float16(as_float_array(X, xp, name, ndim=2), xp)  # Numba takes no float16
    n, d = X.shape
    if n < 2:
        raise ValueError(f"{name} needs at least 2 samples (rows), got {n}")
    if d < 1:
        raise ValueError(f"{name} needs at least 1 variable (column), got {d}")
    check_finite(X, xp, name)
    spread = xp.max(X, axis=0) - xp.min(X, axis=0)
    const = spread <= 0
    if bool(xp.any(const)):
        idx = np.flatnonzero(to_host(const)).tolist()
        raise ValueError(f"{name} has constant column(s) {idx[:10]}"
                         f"{' ...' if len(idx) > 10 else ''}; drop them before learning")
    return X, xp


fill_doc_members(DAGResult, **_DOCS)
