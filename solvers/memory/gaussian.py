"""The dense associative memory of Gaussians in the 2-Wasserstein geometry."""
import numpy as np

from .._lib.backend import backend_arg, resolve_backend
from .._lib.docstrings import fill_doc_members
from .._lib.namespace import array_namespace, is_dask_array
from .._lib.params import BACKEND, NONE, POSITIVE, Array, Choice, Options, Param
from ..lse import logsumexp, softmax
from ..transport import bures_kernels as _bw
from ._dask import retrieve_dask
from ._retrieval import (_BLOCK, _COMMUTE_RTOL, _FullGeometry, _VectorGeometry, _iterate,
                         _no_live_output, _offdiag_scale, _result, from_frame,
                         retrieve_options, vector_backend)

__all__ = ["GaussianMemory"]


OPTIONS = Options(
    "GaussianMemoryOptions",
    Param("means", Array(ndim=2), doc="stored means (N, d)"),
    Param("covs", Array(), doc="stored covariances (N, d, d) or variances (N, d)"),
    Param("beta", POSITIVE, 1.0, "inverse temperature"),
    Param("path", Choice("auto", "full", "diagonal", "commuting"), "auto",
          "retrieval geometry"),
    Param("screen", (POSITIVE, NONE), 50.0, "distance screening margin (None: off)"),
    Param("backend", BACKEND, "auto", "which kernels run"))

#: the query arrays of every method (the covariances' shapes and SPD checks are by hand)
_QUERY_MEANS = Param("means", Array(ndim=(1, 2)), doc="query means (Q, d) or (d,)")
_QUERY_COVS = Param("covs", Array(), doc="query covariances (Q, d, d) or variances (Q, d)")
#: each query method declares its own spec (so each has its own bad-input cells)
QUERY_OPTIONS = {name: Options(f"GaussianMemory{name.title()}Options", _QUERY_MEANS,
                               _QUERY_COVS)
                 for name in ("distances", "energy", "weights", "nearest", "step")}
RETRIEVE_OPTIONS = retrieve_options(1e-9, _QUERY_MEANS, _QUERY_COVS)

_REFERENCES = """
References
----------
.. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
   Bures-Wasserstein space", arXiv:2509.23162 (2025).
"""
_QUERIES = """
Parameters
----------
means : array, shape (Q, d) or (d,)
    Query means (a pandas DataFrame with the stored columns works too).
covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
    memory stores variances
"""
_RAISES_QUERIES = """
Raises
------
ValueError
    Query means of the wrong dimension, covariances whose shape does not match
    them, non-finite input, covariances that are not symmetric positive definite
    (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
    ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
TypeError
    Complex or non-numeric input.
"""


@OPTIONS.entry
class GaussianMemory:
    """Dense associative memory of Gaussians in the 2-Wasserstein (Bures) geometry.

    Stores :math:`X_i = N(\\mu_i, \\Sigma_i)` and retrieves them from query Gaussians by
    Gibbs-weighted barycenter steps (see the module notes and the user guide):
    :math:`m^+ = \\sum_i p_i\\mu_i`, :math:`\\Omega^+ = A\\Omega A` with
    :math:`A = \\sum_i p_i A_i` the Gibbs average of the Monge maps to the patterns and
    :math:`p = \\operatorname{softmax}(-\\beta W_2^2(\\xi, X_\\cdot))`.

    Parameters
    ----------
    means : array, shape (N, d)
        Stored means; a pandas DataFrame gives its columns as :attr:`feature_names`.
    covs : array, shape (N, d, d), or (N, d) variances (diagonal storage)
        Symmetric positive definite.
    beta : float
        Inverse temperature, > 0. Large ``beta``: every pattern is a fixed point;
        small ``beta``: everything collapses to the global barycenter.
    path : {"auto", "full", "diagonal", "commuting"}
        ``"auto"`` picks ``"diagonal"`` for variances or diagonal matrices, ``"commuting"``
        when all covariances share an eigenbasis (found from a generic linear combination
        and checked to 1e-10 relative), and ``"full"`` otherwise. The fast paths run the
        vector DAM on :math:`z = (m, \\sqrt{\\lambda})`; queries that are not diagonal in
        the shared basis fall back to ``"full"`` under ``"auto"`` (and raise otherwise).
    screen : float or None
        Full path with the Numba backend: skip the exact distance of a pair whose spectral
        lower bound exceeds the best exact distance by ``screen / beta`` (its Gibbs weight
        is below ``exp(-screen)`` relative to the best; it gets weight 0). ``None``
        computes every pair exactly.
    backend : {"auto", "numpy", "numba", "cupy"}

    Attributes
    ----------
    feature_names : list or None
        The columns of a DataFrame of stored means (``None`` for arrays). Query
        DataFrames must have the same columns, in the same order.

    Raises
    ------
    ValueError
        Non-finite input, shape mismatches, non-symmetric or non-positive-definite
        covariances, ``beta <= 0``.

    {{references}}
    .. [2] P. C. Álvarez-Esteban, E. del Barrio, J. A. Cuesta-Albertos and C. Matrán, "A
       fixed-point approach to barycenters in Wasserstein space", J. Math. Anal. Appl.
       441 (2016).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import GaussianMemory
    >>> means = np.array([[0.0, 0.0], [5.0, 0.0]])
    >>> covs = np.array([[[1.0, 0.3], [0.3, 0.5]], [[0.5, -0.2], [-0.2, 2.0]]])
    >>> mem = GaussianMemory(means, covs, beta=2.0)
    >>> res = mem.retrieve(np.array([4.2, 0.3]), np.eye(2))
    >>> res.index, res.converged, bool(np.allclose(res.covs, covs[1], atol=1e-8))
    (1, True, True)
    """

    def __init__(self, means, covs, beta=1.0, *, path="auto", screen=50.0, backend="auto"):
        cfg = OPTIONS.validate(beta=beta, path=path, screen=screen, backend=backend)
        means, self.feature_names = from_frame(means, "means")
        covs, _ = from_frame(covs, "covs")  # variances (N, d) may come as a frame too
        be = self._be = resolve_backend(cfg.backend, array_namespace(means, covs))
        self._options = dict(path=cfg.path, screen=cfg.screen, backend=cfg.backend)
        xpc = be.xp
        self.beta, self.screen = cfg.beta, cfg.screen
        path, screen = cfg.path, cfg.screen
        (covs_in,) = OPTIONS.arrays(be, covs=covs)
        if covs_in.ndim >= 1 and covs_in.shape[0] == 0:
            raise ValueError("means and covs must hold at least one stored pattern, got 0")
        self.diagonal_storage = covs_in.ndim == 2
        (m,) = OPTIONS.arrays(be, means=means)
        S = _bw.check_covariances(m, covs_in, xpc, diagonal=self.diagonal_storage)
        dtype = xpc.result_type(m.dtype, S.dtype)
        self.means, self.covs = xpc.astype(m, dtype), xpc.astype(S, dtype)
        self._forced_fast = path in ("diagonal", "commuting")
        self._full = self._vec = None
        self._basis = None  # None: identity (diagonal); array U: shared eigenbasis
        self.path = self._resolve_path(path)
        if self.path in ("diagonal", "commuting"):
            lam = self._eigs_in_basis(self.covs)
            self._vec = _VectorGeometry(xpc.concat([self.means, xpc.sqrt(lam)], axis=1),
                                        xpc)
        if not self.diagonal_storage:
            self._full = _FullGeometry(self.means, self.covs, be, screen)

    # -- path selection -------------------------------------------------------------
    def _resolve_path(self, path):
        xp = self._be.xp
        if self.diagonal_storage:
            if path in ("full", "commuting"):
                raise ValueError(f"path={path!r} needs full covariance matrices; covs were "
                                 "given as variances (diagonal storage)")
            return "diagonal"
        off, scale = _offdiag_scale(self.covs, xp)
        if path in ("auto", "diagonal") and off <= _COMMUTE_RTOL * scale:
            return "diagonal"
        if path == "diagonal":
            raise ValueError("path='diagonal' needs diagonal covariances; the largest "
                             f"off-diagonal entry is {off:.3g}")
        if path in ("auto", "commuting"):
            U = self._shared_basis()
            if U is not None:
                self._basis = U
                return "commuting"
            if path == "commuting":
                raise ValueError("path='commuting' needs covariances with a shared "
                                 "eigenbasis; these do not commute")
        return "full"

    def _shared_basis(self):
        xp = self._be.xp
        N, d = self.covs.shape[0], self.covs.shape[1]
        # a generic combination of commuting matrices has their common eigenvectors
        c = xp.asarray(np.cos(1.0 + 2.3 * np.arange(N)) + 2.0, dtype=self.covs.dtype)
        combo = xp.reshape(c @ xp.reshape(self.covs, (N, d * d)), (d, d))
        _, U = xp.linalg.eigh(_bw.sym(combo, xp))
        rot = xp.matrix_transpose(U) @ self.covs @ U
        off, scale = _offdiag_scale(rot, xp)
        return U if off <= 1e3 * _COMMUTE_RTOL * scale else None

    def _eigs_in_basis(self, S):
        xp = self._be.xp
        if self._basis is not None:
            S = xp.matrix_transpose(self._basis) @ S @ self._basis
        if self.diagonal_storage:
            return S
        d = S.shape[-1]
        return xp.sum(S * xp.eye(d, dtype=S.dtype), axis=-1)

    def _query_fits_fast_path(self, qS):
        if self.diagonal_storage:
            return True
        xp = self._be.xp
        rot = qS if self._basis is None else (
            xp.matrix_transpose(self._basis) @ qS @ self._basis)
        off, scale = _offdiag_scale(rot, xp)
        return off <= 1e3 * _COMMUTE_RTOL * scale

    # -- queries --------------------------------------------------------------------
    @property
    def n_patterns(self):
        return self.means.shape[0]

    @property
    def dim(self):
        return self.means.shape[1]

    def _queries(self, means, covs, spec):
        be, xp = self._be, self._be.xp
        means, _ = from_frame(means, "means", self.feature_names)
        covs, _ = from_frame(covs, "covs")
        qm, qS = spec.arrays(be, means=means, covs=covs)
        single = qm.ndim == 1
        qm = xp.reshape(qm, (-1, qm.shape[-1]))
        want_nd = 1 if self.diagonal_storage else 2
        if qS.ndim == want_nd:
            qS = xp.reshape(qS, (1,) + tuple(qS.shape))
        kind = "variances (Q, d)" if self.diagonal_storage else "covariances (Q, d, d)"
        expect = (qm.shape[0], self.dim) + (() if self.diagonal_storage else (self.dim,))
        if qm.shape[1] != self.dim:
            raise ValueError(f"query means must have dimension {self.dim}, got shape "
                             f"{tuple(qm.shape)}")
        if tuple(qS.shape) != expect:
            raise ValueError(f"query covs must be {kind} with shape {expect} to match the "
                             f"query means and the stored patterns, got {tuple(qS.shape)}")
        qS = _bw.check_covariances(qm, qS, xp, diagonal=self.diagonal_storage,
                                   names=("query_means", "query_covs"))
        dtype = xp.result_type(qm.dtype, qS.dtype, self.means.dtype)
        return xp.astype(qm, dtype), xp.astype(qS, dtype), single

    def _state(self, qm, qS, calls=1):
        """(geometry, state, to_user, backend) for a batch of queries; the full geometry
        runs its kernels on the backend picked for ``calls`` evaluations of the batch
        (the generic code for a small computation under ``"auto"``)."""
        xp = self._be.xp
        if self.path != "full" and self._query_fits_fast_path(qS):
            lam = self._eigs_in_basis(qS)
            z = xp.concat([qm, xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))], axis=1)
            be = vector_backend(self._be, qm.shape[0], self.n_patterns, calls)
            return self._vec, (z,), self._from_vector, be
        if self.path != "full" and self._forced_fast:
            raise ValueError(f"path={self.path!r}: the query covariances are not diagonal "
                             "in the patterns' eigenbasis; use path='auto' or 'full'")
        be = _bw.kernel_backend(self._be, qm.shape[0], self.n_patterns, self.dim, calls)
        return self._full.on(be), (qm, qS), (lambda st: st), be

    def _from_vector(self, state):
        xp = self._be.xp
        (z,) = state
        d = self.dim
        m, r = z[:, :d], z[:, d:]
        lam = r * r
        if self.diagonal_storage:
            return m, lam
        if self._basis is None:
            return m, lam[:, :, None] * xp.eye(d, dtype=lam.dtype)
        U = self._basis
        return m, _bw.sym((U * lam[:, None, :]) @ xp.matrix_transpose(U), xp)

    def _out(self, x, single):
        x = x[0, ...] if single else x
        return self._be.to_input(x)

    @QUERY_OPTIONS["distances"].entry
    def distances(self, means, covs):
        """Squared W2 distances from each query Gaussian to every stored pattern.

        {{queries}}

        Returns
        -------
        array, shape (Q, N)
            Shape (N,) for a single query.

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> mem.distances(np.zeros(2), np.eye(2)).round(12).tolist()  # 9 + 2 (2 - 1)^2
        [0.0, 11.0]
        """
        qm, qS, single = self._queries(means, covs, QUERY_OPTIONS["distances"])
        geom, state, _, _ = self._state(qm, qS)
        return self._out(-geom.scores(state), single)

    @QUERY_OPTIONS["energy"].entry
    def energy(self, means, covs):
        """:math:`E(\\xi) = -\\beta^{-1}\\log\\sum_i e^{-\\beta W_2^2(\\xi, X_i)}`.

        {{queries}}

        Returns
        -------
        array, shape (Q,)
            A scalar for a single query.

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> round(float(mem.energy(np.zeros(2), np.eye(2))), 8)  # -log(1 + e^-11)
        -1.67e-05
        """
        qm, qS, single = self._queries(means, covs, QUERY_OPTIONS["energy"])
        geom, state, _, be = self._state(qm, qS)
        s = geom.scores(state)
        E = -logsumexp(self.beta * s, axis=1, backend=backend_arg(be)) / self.beta
        return self._out(E, single)

    @QUERY_OPTIONS["weights"].entry
    def weights(self, means, covs):
        """Gibbs weights :math:`p_i \\propto e^{-\\beta W_2^2(\\xi, X_i)}`.

        {{queries}}

        Returns
        -------
        array, shape (Q, N)
            Rows sum to one; shape (N,) for a single query.

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> mem.weights(np.zeros(2), np.eye(2)).round(6).tolist()
        [0.999983, 1.7e-05]
        """
        qm, qS, single = self._queries(means, covs, QUERY_OPTIONS["weights"])
        geom, state, _, be = self._state(qm, qS)
        return self._out(softmax(self.beta * geom.scores(state), axis=1,
                                 backend=backend_arg(be)), single)

    @QUERY_OPTIONS["nearest"].entry
    def nearest(self, means, covs):
        """Index of the stored pattern nearest in W2 to each query.

        {{queries}}

        Returns
        -------
        array of int, shape (Q,)
            A scalar for a single query.

        {{raises_references}}

        Examples
        --------
        {{example_memory}}
        >>> int(mem.nearest(np.array([2.5, 0.0]), 3.5 * np.eye(2)))
        1
        """
        qm, qS, single = self._queries(means, covs, QUERY_OPTIONS["nearest"])
        geom, state, _, _ = self._state(qm, qS)
        idx = self._be.xp.argmax(geom.scores(state), axis=1)
        return self._out(idx, single)

    @QUERY_OPTIONS["step"].entry
    def step(self, means, covs):
        """One retrieval step (a Gibbs-weighted Álvarez-Esteban barycenter step).

        :math:`m^+ = \\sum_i p_i \\mu_i` and :math:`\\Omega^+ = A\\Omega A` with
        :math:`A = \\sum_i p_i A_i` the Gibbs average of the Monge maps to the patterns.

        {{queries}}

        Returns
        -------
        means : array, shape (Q, d) or (d,)
        covs : array
            Same layout as the query ``covs``.

        {{raises_queries}}

        {{references}}
        .. [2] P. C. Álvarez-Esteban, E. del Barrio, J. A. Cuesta-Albertos and C. Matrán,
           "A fixed-point approach to barycenters in Wasserstein space", J. Math. Anal.
           Appl. 441 (2016).

        Examples
        --------
        {{example_memory}}
        >>> m, S = mem.step(np.array([0.2, 0.0]), 1.2 * np.eye(2))
        >>> bool(np.linalg.norm(m) < 1e-3), bool(np.allclose(S, np.eye(2), atol=1e-3))
        (True, True)
        """
        qm, qS, single = self._queries(means, covs, QUERY_OPTIONS["step"])
        geom, state, to_user, be = self._state(qm, qS)
        s, aux = geom.scores_aux(state, self.beta)
        new, _ = geom.step(state, softmax(self.beta * s, axis=1, backend=backend_arg(be)),
                           aux)
        m, S = to_user(new)
        return self._out(m, single), self._out(S, single)

    @RETRIEVE_OPTIONS.entry
    def retrieve(self, means, covs, maxiter=100, tol=1e-9, *, callback=None,
                 progress=False):
        """Retrieve stored Gaussians from query Gaussians (batched over queries).

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
            Query means; with dask arrays of queries (means and/or covs) the batched
            retrieval is mapped over row chunks (the stored patterns sent once to each
            worker) and the result holds lazy dask arrays: ``means``, ``covs``, ``nit``,
            ``converged``, ``index``, ``fun``, and 0-d ``status`` / ``success`` (no
            ``energy`` trace or ``path``; no ``callback`` or ``progress``). A pandas
            DataFrame with the stored columns works too.
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances
        maxiter : int
        tol : float
            Stop a query when the step :math:`W_2(\\xi_t, \\xi_{t+1}) \\le` ``tol``
            (computed without cancellation from the step's Monge map).
        callback : callable, optional
            ``callback(OptimizeResult(x, nit, state, energy, converged))`` after each
            iteration, ``x`` the current means (Q, d) in the input's namespace; raising
            ``StopIteration`` stops (``success=False``, ``status=99``).
        progress : bool

        Returns
        -------
        OptimizeResult
            ``means``, ``covs`` (the retrieved states, same layout as the queries),
            ``nit`` and ``converged`` per query, ``index`` (nearest stored pattern at the
            end), ``energy`` (trace of shape (T + 1, Q): the energy never increases along
            it), ``fun`` (final energies), ``path`` ("full", "diagonal" or "commuting"),
            ``success``, ``status``, ``message``; ``feature_names`` (the columns of the
            ``means``) when the memory was built from a DataFrame.

        Raises
        ------
        ValueError
            Invalid queries (wrong dimension or shape, non-finite, not symmetric positive
            definite, or not diagonal in the patterns' eigenbasis when ``path`` forces a
            fast path); ``maxiter < 0``; ``tol`` negative or not finite.
        TypeError
            Complex or non-numeric input, non-integer ``maxiter``, non-real ``tol`` or a
            ``callback`` that is not callable.

        {{references}}

        Examples
        --------
        {{example_memory}}
        >>> res = mem.retrieve(np.array([2.5, 0.0]), 3.5 * np.eye(2))
        >>> res.index, bool(res.converged), res.path
        (1, True, 'diagonal')
        """
        cfg = RETRIEVE_OPTIONS.validate(maxiter=maxiter, tol=tol, callback=callback,
                                        progress=progress)
        maxiter, tol, callback, progress = cfg.maxiter, cfg.tol, cfg.callback, cfg.progress
        if is_dask_array(means) or is_dask_array(covs):
            _no_live_output(callback, progress)
            payload = (GaussianMemory, (self._be.to_input(self.means),
                                        self._be.to_input(self.covs), self.beta),
                       self._options)
            return retrieve_dask(payload, (means, covs), maxiter=maxiter, tol=tol,
                                 dtype=np.result_type(means.dtype, self.means.dtype))
        qm, qS, single = self._queries(means, covs, RETRIEVE_OPTIONS)
        geom, state, to_user, be = self._state(qm, qS, calls=maxiter + 1)
        full = geom is not self._vec
        state, nit, conv, index, trace, status, message = _iterate(
            geom, state, self.beta, maxiter, tol, be, callback=callback,
            progress=progress, n_patterns=self.n_patterns,
            block=max(1, _BLOCK // (self.dim * self.dim)) if full else _BLOCK,
            to_user=to_user)
        m, S = to_user(state)
        path = "full" if full else self.path
        return _result(self._be, single, status, message, nit, conv, index, trace,
                       self.feature_names, means=m, covs=S, path=path)


_EXAMPLE_MEMORY = """
>>> import numpy as np
>>> from solvers import GaussianMemory
>>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
"""
fill_doc_members(GaussianMemory, references=_REFERENCES, raises_queries=_RAISES_QUERIES,
                 raises_references=_RAISES_QUERIES + _REFERENCES, queries=_QUERIES,
                 example_memory=_EXAMPLE_MEMORY)
