"""The vector dense associative memory (modern Hopfield network)."""
import numpy as np

from .._lib.backend import backend_arg, resolve_backend
from .._lib.docstrings import fill_doc_members
from .._lib.namespace import array_namespace, is_dask_array
from .._lib.params import BACKEND, POSITIVE, Array, Choice, Options, Param
from ..lse import logsumexp, softmax
from ._dask import retrieve_dask
from ._retrieval import (_VectorGeometry, _iterate, _no_live_output, _result, from_frame,
                         retrieve_options, vector_backend)

__all__ = ["VectorMemory"]

OPTIONS = Options(
    "VectorMemoryOptions",
    Param("patterns", Array(ndim=2), doc="stored patterns (N, d)"),
    Param("beta", POSITIVE, 1.0, "inverse temperature"),
    Param("similarity", Choice("euclidean", "dot"), "euclidean", "similarity of states"),
    Param("backend", BACKEND, "auto", "which kernels run"))

#: the queries of energy / weights / step / retrieve
_X = Param("x", Array(ndim=(1, 2)), doc="queries (Q, d)")
#: each query method declares its own spec (so each has its own bad-input cells)
QUERY_OPTIONS = {name: Options(f"VectorMemory{name.title()}Options", _X)
                 for name in ("energy", "weights", "step")}
RETRIEVE_OPTIONS = retrieve_options(1e-10, _X)

_X_PARAM = """
Parameters
----------
x : array, shape (Q, d) or (d,)
    Query states (a pandas DataFrame with the stored columns works too).
"""
_REFERENCES = """
References
----------
.. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.
"""
_RAISES_REFERENCES = """
Raises
------
ValueError
    ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
    NaN/inf.
TypeError
    Complex or non-numeric ``x``.
""" + _REFERENCES
_EXAMPLE_MEMORY = """
>>> import numpy as np
>>> from solvers import VectorMemory
>>> mem = VectorMemory(np.eye(3) * 4.0, beta=1.0)
"""


@OPTIONS.entry
class VectorMemory:
    """Modern Hopfield network / vector dense associative memory.

    Stores ``N`` patterns :math:`x_i \\in \\mathbb{R}^d` and retrieves them from queries
    by the fixed-point iteration :math:`\\xi^+ = \\sum_i p_i x_i` with Gibbs weights
    :math:`p = \\operatorname{softmax}(\\beta s(\\xi, x))`. The similarity is

    - ``"euclidean"`` (default): :math:`s = -\\|\\xi - x_i\\|^2`, energy
      :math:`E = -\\beta^{-1}\\log\\sum_i e^{-\\beta\\|\\xi - x_i\\|^2}` -- the degenerate
      (zero-covariance or commuting) case of :class:`GaussianMemory`;
    - ``"dot"``: :math:`s = \\xi \\cdot x_i`, energy
      :math:`E = -\\beta^{-1}\\log\\sum_i e^{\\beta \\xi\\cdot x_i} + \\tfrac12\\|\\xi\\|^2`
      (Ramsauer et al. 2021).

    Both updates are concave-convex procedure steps, so the energy never increases.

    Parameters
    ----------
    patterns : array, shape (N, d)
        Stored patterns; a pandas DataFrame gives its columns as :attr:`feature_names`.
    beta : float
        Inverse temperature, > 0.
    similarity : {"euclidean", "dot"}
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"cupy"`` moves numpy patterns to the GPU once; results come back as numpy.

    Attributes
    ----------
    feature_names : list or None
        The columns of a DataFrame of patterns (``None`` for arrays). Query DataFrames
        must have the same columns, in the same order.

    Raises
    ------
    ValueError
        Non-finite patterns, wrong shapes, ``beta <= 0``.

    References
    ----------
    .. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.
    .. [2] D. Krotov and J. J. Hopfield, "Dense associative memory for pattern
       recognition", NeurIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import VectorMemory
    >>> X = np.eye(3) * 4.0
    >>> res = VectorMemory(X, beta=1.0).retrieve(np.array([3.0, 0.5, 0.0]))
    >>> res.index, np.round(res.x, 6).tolist(), res.converged
    (0, [4.0, 0.0, 0.0], True)
    """

    def __init__(self, patterns, beta=1.0, *, similarity="euclidean", backend="auto"):
        cfg = OPTIONS.validate(beta=beta, similarity=similarity, backend=backend)
        patterns, self.feature_names = from_frame(patterns, "patterns")
        self._be = resolve_backend(cfg.backend, array_namespace(patterns))
        self._backend = cfg.backend
        self.beta, self.similarity = cfg.beta, cfg.similarity
        (X,) = OPTIONS.arrays(self._be, patterns=patterns)
        if X.shape[0] < 1:
            raise ValueError("patterns must hold at least one stored pattern, got 0 rows")
        self.patterns = X
        self._geom = _VectorGeometry(X, self._be.xp, self.similarity)

    @property
    def n_patterns(self):
        return self.patterns.shape[0]

    @property
    def dim(self):
        return self.patterns.shape[1]

    def _queries(self, x, spec):
        xp = self._be.xp
        x, _ = from_frame(x, "x", self.feature_names)
        (x,) = spec.arrays(self._be, x=x)
        single = x.ndim == 1
        x = xp.reshape(x, (-1, x.shape[-1]))
        if x.shape[1] != self.dim:
            raise ValueError(f"queries must have dimension {self.dim}, got shape "
                             f"{tuple(x.shape)}")
        return xp.astype(x, xp.result_type(x.dtype, self.patterns.dtype)), single

    def _scores(self, x, spec):
        x, single = self._queries(x, spec)
        return self._geom.scores((x,)), x, single

    @QUERY_OPTIONS["energy"].entry
    def energy(self, x):
        """Energy of each query.

        ``"euclidean"``: :math:`E = -\\beta^{-1}\\log\\sum_i e^{-\\beta\\|\\xi - x_i\\|^2}`;
        ``"dot"``: :math:`E = -\\beta^{-1}\\log\\sum_i e^{\\beta \\xi\\cdot x_i}
        + \\tfrac12\\|\\xi\\|^2`.

        {{x}}

        Returns
        -------
        array, shape (Q,)
            A scalar for one query of shape (d,).

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> round(float(mem.energy(np.zeros(3))), 6)  # 16 - log 3
        14.901388
        """
        s, x, single = self._scores(x, QUERY_OPTIONS["energy"])
        be = vector_backend(self._be, s.shape[0], self.n_patterns)
        E = -logsumexp(self.beta * s, axis=1, backend=backend_arg(be)) / self.beta
        off = self._geom.energy_offset((x,))
        E = E if off is None else E + off
        return self._be.to_input(E[0] if single else E)

    @QUERY_OPTIONS["weights"].entry
    def weights(self, x):
        """Gibbs weights over the patterns, :math:`p = \\operatorname{softmax}(\\beta s)`.

        {{x}}

        Returns
        -------
        array, shape (Q, N)
            Rows sum to one; shape (N,) for one query of shape (d,).

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> mem.weights(np.array([4.0, 0.0, 0.0])).round(6).tolist()
        [1.0, 0.0, 0.0]
        """
        s, _, single = self._scores(x, QUERY_OPTIONS["weights"])
        be = vector_backend(self._be, s.shape[0], self.n_patterns)
        p = softmax(self.beta * s, axis=1, backend=backend_arg(be))
        return self._be.to_input(p[0, ...] if single else p)

    @QUERY_OPTIONS["step"].entry
    def step(self, x):
        """One update :math:`\\xi^+ = \\sum_i p_i x_i`.

        {{x}}

        Returns
        -------
        array, shape (Q, d) or (d,)
            The updated states.

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> mem.step(np.array([3.0, 0.5, 0.0])).round(6).tolist()
        [4.0, 0.0, 0.0]
        """
        s, x, single = self._scores(x, QUERY_OPTIONS["step"])
        be = vector_backend(self._be, s.shape[0], self.n_patterns)
        (z,), _ = self._geom.step((x,), softmax(self.beta * s, axis=1, backend=backend_arg(be)))
        return self._be.to_input(z[0, ...] if single else z)

    @RETRIEVE_OPTIONS.entry
    def retrieve(self, x, maxiter=100, tol=1e-10, *, callback=None, progress=False):
        """Iterate the update from each query until it moves less than ``tol``.

        Parameters
        ----------
        x : array, shape (Q, d) or (d,)
            Queries; a dask array of shape (Q, d) is retrieved chunk by chunk and the
            result holds lazy dask arrays (no ``energy`` trace; ``status`` and
            ``success`` are lazy 0-d arrays; no ``callback`` or ``progress``). A
            pandas DataFrame with the stored columns works too.
        maxiter : int
        tol : float
            Stop a query when ``|xi_{t+1} - xi_t| <= tol``.
        callback : callable, optional
            ``callback(OptimizeResult(x, nit, state, energy, converged))`` each
            iteration, ``x`` the current states (Q, d) in the input's namespace; raising
            ``StopIteration`` stops (``success=False``, ``status=99``).
        progress : bool

        Returns
        -------
        OptimizeResult
            ``x`` (retrieved states), ``nit``, ``converged``, ``index`` (nearest stored
            pattern at the end), ``energy`` (trace, shape (T + 1, Q)), ``fun`` (final
            energy), ``success``, ``status``, ``message``; ``feature_names`` (the
            columns of ``x``) when the memory was built from a DataFrame.

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
            NaN/inf; ``maxiter < 0``; ``tol`` negative or not finite.
        TypeError
            Complex or non-numeric ``x``, non-integer ``maxiter``, non-real ``tol`` or a
            ``callback`` that is not callable.

        {{references}}

        Examples
        --------
        {{example_memory}}
        >>> res = mem.retrieve(np.array([[3.0, 0.5, 0.0], [0.2, 0.1, 3.5]]))
        >>> res.index.tolist(), bool(res.converged.all())
        ([0, 2], True)
        """
        cfg = RETRIEVE_OPTIONS.validate(maxiter=maxiter, tol=tol, callback=callback,
                                        progress=progress)
        maxiter, tol, callback, progress = cfg.maxiter, cfg.tol, cfg.callback, cfg.progress
        if is_dask_array(x):
            _no_live_output(callback, progress)
            payload = (VectorMemory, (self._be.to_input(self.patterns), self.beta),
                       dict(similarity=self.similarity, backend=self._backend))
            return retrieve_dask(payload, (x,), maxiter=maxiter, tol=tol,
                                 dtype=np.result_type(x.dtype, self.patterns.dtype))
        x, single = self._queries(x, RETRIEVE_OPTIONS)
        be = vector_backend(self._be, x.shape[0], self.n_patterns, calls=maxiter + 1)
        state, nit, conv, index, trace, status, message = _iterate(
            self._geom, (x,), self.beta, maxiter, tol, be, callback=callback,
            progress=progress, n_patterns=self.n_patterns)
        return _result(self._be, single, status, message, nit, conv, index, trace,
                       self.feature_names, x=state[0])


fill_doc_members(VectorMemory, x=_X_PARAM, raises_references=_RAISES_REFERENCES,
                 references=_REFERENCES, example_memory=_EXAMPLE_MEMORY)
