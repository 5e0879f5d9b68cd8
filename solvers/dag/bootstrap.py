r"""Bootstrap edge frequencies: refit a DAG learner on resampled data, count the edges.

For ``b = 1..B`` draw ``n`` rows with replacement, fit ``learn_dag`` on them, and report
:math:`\hat f_{ij} = \frac1B \sum_b \mathbb 1[i \to j \in \hat G_b]` — a measure of how
stable each edge is (Friedman, Goldszmidt, Wyner 1999). Every piece has its own generator
spawned from ``rng`` (``numpy.random.Generator.spawn``) that draws its rows and seeds its
fit, so the frequencies do not depend on how the pieces are mapped (``workers``).

References
----------
.. [1] N. Friedman, M. Goldszmidt, A. Wyner, "Data analysis with Bayesian networks: a
   bootstrap approach", UAI 1999.
"""
import functools
import time

import numpy as np

from .._lib.frames import unwrap_frame
from .._lib.parallel import parallel_map, spawn_generators
from .._lib.results import OptimizeResult
from .._lib.validation import check_int
from .graph import to_host
from .learn import check_data, learn_dag

__all__ = ["bootstrap", "BootstrapResult"]


class BootstrapResult(OptimizeResult):
    """Edge frequencies over bootstrap fits (an ``OptimizeResult``).

    Attributes
    ----------
    frequencies : ndarray, shape (d, d)
        Fraction of the fits with the edge ``i -> j``.
    n_bootstrap : int
    method : str
    time : float
        Wall time, seconds.
    labels : list or None
        Node names (a DataFrame's columns), used by :meth:`to_networkx`.
    """

    def to_networkx(self, threshold=0.5, labels=None):
        """Edges with frequency ``>= threshold`` (attribute ``weight`` = frequency) as a
        ``networkx.DiGraph``. The union of DAGs need not be acyclic at low thresholds."""
        import networkx as nx

        F = self.frequencies
        d = F.shape[0]
        if labels is None:
            labels = self.get("labels")
        names = list(range(d)) if labels is None else list(labels)
        G = nx.DiGraph()
        G.add_nodes_from(names)
        for i, j in zip(*np.nonzero(F >= threshold)):
            G.add_edge(names[i], names[j], weight=float(F[i, j]))
        return G


def _piece(X, method, options, gen):
    idx = gen.integers(0, X.shape[0], size=X.shape[0])
    res = learn_dag(X[idx], method=method, rng=gen, **options)
    return np.asarray(to_host(res.adjacency)) != 0


def bootstrap(X, method="cosmo", *, n_bootstrap=50, workers=None, rng=None, **options):
    """Edge frequencies of ``learn_dag`` over bootstrap resamples of the rows of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (host numpy or a pandas DataFrame, whose columns become ``labels``; it is
        sent to the workers).
    method : str
        A :func:`solvers.dag.learn_dag` method.
    n_bootstrap : int
        Number of resamples.
    workers : None, int or map-like callable
        How the pieces are mapped: serially (None / 1), over a process pool (an int,
        -1 for one process per CPU) or through any ``map(func, iterable)`` such as dask's
        ``Client.map`` (futures are resolved). The result does not depend on it.
    rng : None, int or numpy.random.Generator
        Source of the per-piece generators.
    **options
        Passed to :func:`~solvers.dag.learn_dag` (``rng`` is set per piece).

    Returns
    -------
    BootstrapResult
        ``frequencies`` (d x d), ``n_bootstrap``, ``method``, ``time``,
        ``to_networkx(threshold)``.

    Raises
    ------
    ValueError
        Bad data (see :func:`solvers.dag.check_data`), ``n_bootstrap < 1`` or a bad
        ``workers``; the learner's own errors for bad options.
    TypeError
        ``rng`` given in ``options``, a non-integer ``n_bootstrap``.

    References
    ----------
    .. [1] N. Friedman, M. Goldszmidt, A. Wyner, "Data analysis with Bayesian networks: a
       bootstrap approach", UAI 1999.

    Examples
    --------
    >>> from solvers.dag import simulate_data
    >>> from solvers.dag.bootstrap import bootstrap
    >>> X, W, B = simulate_data(d=4, n=300, k=1, rng=0)
    >>> res = bootstrap(X, n_bootstrap=4, rng=0, maxiter=300)
    >>> res.frequencies.shape, float(res.frequencies.max()) <= 1.0
    ((4, 4), True)
    """
    start = time.perf_counter()
    if "rng" in options:
        raise TypeError("pass rng to bootstrap itself, not as a learner option")
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=1)
    X, labels = unwrap_frame(X, "X")
    X, _ = check_data(X)
    X = np.asarray(to_host(X))
    gens = spawn_generators(rng, n_bootstrap)
    adj = parallel_map(functools.partial(_piece, X, method, options), gens, workers)
    freq = np.mean(np.stack(adj).astype(float), axis=0)
    return BootstrapResult(frequencies=freq, n_bootstrap=n_bootstrap, method=method,
                           time=time.perf_counter() - start, labels=labels)
