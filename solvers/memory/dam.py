"""Dense associative memories: Gaussians in the 2-Wasserstein geometry, and vectors.

Stored patterns :math:`X_i = N(\\mu_i, \\Sigma_i)`, state :math:`\\xi = N(m, \\Omega)`:

.. math::

   E(\\xi) = -\\frac{1}{\\beta}\\log\\sum_i e^{-\\beta W_2^2(\\xi, X_i)}, \\qquad
   p_i = \\operatorname{softmax}_i(-\\beta W_2^2(\\xi, X_i)),

   m^+ = \\sum_i p_i \\mu_i, \\qquad \\Omega^+ = A\\,\\Omega\\,A, \\quad
   A = \\sum_i p_i A_i, \\quad
   A_i = \\Omega^{-1/2}(\\Omega^{1/2}\\Sigma_i\\Omega^{1/2})^{1/2}\\Omega^{-1/2}.

With the weights frozen a step is one Álvarez-Esteban barycenter step, so
:math:`\\sum_i p_i W_2^2(\\xi^+, X_i) \\le \\sum_i p_i W_2^2(\\xi, X_i)`; with the Gibbs
variational formula :math:`E(\\xi) = \\min_q \\sum_i q_i W_2^2(\\xi, X_i) + \\beta^{-1}
\\sum_i q_i \\log q_i + \\beta^{-1}\\log N` this gives :math:`E(\\xi^+) \\le E(\\xi)`: the
energy never increases along retrieval. Fixed points are barycenters weighted by their own
Gibbs weights.

When all covariances share an eigenbasis (diagonal ones, say),
:math:`W_2^2 = \\|m - \\mu_i\\|^2 + \\|\\sqrt{\\lambda} - \\sqrt{\\lambda_i}\\|^2` and the step is
the vector DAM on :math:`z = (m, \\sqrt{\\lambda})`: an :math:`O(Nd)` fast path.
"""
import numpy as np

from .._lib.namespace import array_namespace, is_numpy_namespace, is_cupy_namespace
from .._lib.backend import resolve_backend
from .._lib.results import (OptimizeResult, Status, call_callback, Progress,
                            STOPPED_BY_CALLBACK)
from .._lib.validation import (as_float_array, check_finite, check_positive, check_int,
                               check_choice)
from ..lse import logsumexp, softmax
from ..transport import bures_kernels as _bw
from ._dask import is_dask_array, retrieve_dask

__all__ = ["GaussianMemory", "VectorMemory"]

#: floats per (queries x patterns) block when evaluating Gibbs weights
_BLOCK = 2 ** 22
#: relative size of off-diagonal entries below which matrices count as diagonal/commuting
_COMMUTE_RTOL = 1e-10


# ---------------------------------------------------------------------------------------
# geometries: distances to all patterns and one step, for a block of queries
# ---------------------------------------------------------------------------------------
class _VectorGeometry:
    """Euclidean (or dot-product) vector DAM on states z (Q, D)."""

    def __init__(self, Z, xp, similarity="euclidean"):
        self.Z, self.xp, self.similarity = Z, xp, similarity
        self.Zt = xp.matrix_transpose(Z)
        self.norms = xp.sum(Z * Z, axis=1)

    def scores(self, state, beta=None):
        """``-W2^2`` (euclidean) or the similarity (dot), per (query, pattern)."""
        (z,) = state
        xp = self.xp
        g = z @ self.Zt
        if self.similarity == "dot":
            return g
        d2 = xp.sum(z * z, axis=1)[:, None] + self.norms[None, :] - 2 * g
        return -xp.maximum(d2, xp.zeros_like(d2))

    def energy_offset(self, state):
        (z,) = state
        if self.similarity == "dot":
            return 0.5 * self.xp.sum(z * z, axis=1)
        return None

    def step(self, state, p):
        (z,) = state
        znew = p @ self.Z
        dz = znew - z
        return (znew,), self.xp.sum(dz * dz, axis=1)


class _FullGeometry:
    """Full covariances; states (m (Q, d), Omega (Q, d, d))."""

    def __init__(self, mu, S, be, screen):
        self.mu, self.S, self.be, self.xp = mu, S, be, be.xp
        self.trS = be.xp.linalg.trace(S)
        self.screen = screen
        self.wmin = 1e-18
        self.rS = None  # square roots of the patterns' eigenvalues, for the screen

    def _roots(self, Om):
        return _bw.roots(Om, self.xp)

    def scores(self, state, beta=None):
        m, Om = state
        xp = self.xp
        r, R, Rinv = self._roots(Om)
        self._cache = (R, Rinv)
        trq = xp.linalg.trace(Om)
        if self.screen is not None and beta is not None:
            if self.rS is None:
                lam = xp.linalg.eigvalsh(_bw.sym(self.S, xp))
                self.rS = xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))
            d2 = _bw.screened_cdist(m, R, trq, r, self.mu, self.S, self.trS, self.rS,
                                    self.screen / beta, self.be)
        else:
            d2 = _bw.cdist_full(m, Om, self.mu, self.S, self.be, R=R)
        return -d2

    def energy_offset(self, state):
        return None

    def step(self, state, p):
        m, Om = state
        xp = self.xp
        R, Rinv = self._cache
        mnew = p @ self.mu
        # weights below 1e-18 of the largest change M by less than rounding: skip them
        # (the Numba kernel then needs eigenvectors for a handful of pairs per query)
        pmax = xp.max(p, axis=1, keepdims=True)
        p = xp.where(p < self.wmin * pmax, xp.zeros_like(p), p)
        M = _bw.weighted_root_sum(R, self.S, p, self.be)
        # the map x -> A x, A = Rinv M Rinv (symmetric PD), is the optimal one from Omega to
        # Omega+, so the exact squared W2 length of the step is ||(M - Omega) Rinv||_F^2
        G = (M - Om) @ Rinv
        dm = mnew - m
        step2 = xp.sum(dm * dm, axis=1) + xp.sum(G * G, axis=(-2, -1))
        return (mnew, _bw.sym(Rinv @ M @ M @ Rinv, xp)), step2


def _where_rows(mask, new, old, xp):
    shape = (mask.shape[0],) + (1,) * (new.ndim - 1)
    return xp.where(xp.reshape(mask, shape), new, old)


def _evaluate(geom, state, beta, xp, lse_backend, rows, with_step):
    """Energy, nearest pattern and (optionally) one step for every row of ``state``."""
    parts_E, parts_idx, parts_new, parts_step = [], [], [], []
    for a, b in rows:
        sub = tuple(s[a:b, ...] for s in state)
        scores = geom.scores(sub, beta)
        logits = beta * scores
        lse = logsumexp(logits, axis=1, backend=lse_backend)
        E = -lse / beta
        off = geom.energy_offset(sub)
        parts_E.append(E if off is None else E + off)
        parts_idx.append(xp.argmax(scores, axis=1))
        if with_step:
            # Gibbs weights from the log-partition already computed (one exp pass)
            new, step2 = geom.step(sub, xp.exp(logits - lse[:, None]))
            parts_new.append(new)
            parts_step.append(step2)
    if not rows:  # no queries: empty energies, indices and steps
        empty = xp.zeros((0,), dtype=state[0].dtype)
        return empty, xp.zeros((0,), dtype=xp.int64), state, empty
    cat = (lambda parts: parts[0] if len(parts) == 1 else xp.concat(parts, axis=0))
    E, index = cat(parts_E), cat(parts_idx)
    if not with_step:
        return E, index, None, None
    new = tuple(cat([p[k] for p in parts_new]) for k in range(len(state)))
    return E, index, new, cat(parts_step)


def _iterate(geom, state, beta, maxiter, tol, xp, lse_backend, *, callback=None,
             progress=False, block=_BLOCK, n_patterns=1, to_user=None,
             to_input=lambda a: a):
    """The retrieval loop shared by every geometry.

    On namespaces with integer-array indexing (numpy, cupy) only the queries still moving
    are evaluated; elsewhere (array-api-strict) every query is evaluated and converged
    ones are frozen with ``where``. A query that converged gets one last evaluation at its
    final state (energy and nearest pattern) and is then left alone.
    """
    Q = state[0].shape[0]
    gather = is_numpy_namespace(xp) or is_cupy_namespace(xp)
    nit = xp.zeros((Q,), dtype=xp.int64)
    converged = xp.zeros((Q,), dtype=xp.bool)
    need = xp.ones((Q,), dtype=xp.bool)     # rows evaluated this iteration
    E_cur = xp.zeros((Q,), dtype=state[0].dtype)
    idx_cur = xp.zeros((Q,), dtype=xp.int64)
    trace = []
    status, message = int(Status.MAXITER), (f"maxiter={maxiter} reached before every "
                                            "query converged")
    with Progress(maxiter, "retrieve", enabled=progress) as bar:
        for t in range(maxiter + 1):
            last = t == maxiter
            if gather:
                act = xp.nonzero(need)[0]
                sub = tuple(s[act, ...] for s in state)
            else:
                sub = state
            n_rows = sub[0].shape[0]
            rows = _bw.chunk_rows(n_rows, n_patterns, block)
            E, index, new, step2 = _evaluate(geom, sub, beta, xp, lse_backend, rows,
                                             with_step=not last)
            if gather:
                E_cur, idx_cur = xp.asarray(E_cur, copy=True), xp.asarray(idx_cur, copy=True)
                E_cur[act] = E
                idx_cur[act] = xp.astype(index, xp.int64)
            else:
                E_cur, idx_cur = E, xp.astype(index, xp.int64)
            trace.append(E_cur)
            if last:
                break
            moving = xp.logical_and(need, xp.logical_not(converged))
            if gather:
                mv = moving[act]
                st = [xp.asarray(s, copy=True) for s in state]
                keep = xp.nonzero(mv)[0]
                for k in range(len(st)):
                    st[k][act[keep], ...] = new[k][keep, ...]
                state = tuple(st)
                full_step = xp.zeros((Q,), dtype=step2.dtype)
                full_step[act] = step2
                step2 = full_step
            else:
                state = tuple(_where_rows(moving, n, s, xp) for n, s in zip(new, state))
            nit = nit + xp.astype(moving, xp.int64)
            if bool(xp.any(xp.logical_and(moving, xp.logical_not(xp.isfinite(step2))))):
                status, message = int(Status.NONFINITE), ("a non-finite state appeared "
                                                          "(numerical failure)")
                break
            converged = xp.logical_or(converged,
                                      xp.logical_and(moving, step2 <= tol * tol))
            need = moving
            n_conv = int(xp.sum(xp.astype(converged, xp.int64)))
            bar.update(1, converged=n_conv)
            if callback is not None:
                user_state = to_user(state) if to_user is not None else state
                if call_callback(callback, x=to_input(user_state[0]), nit=t + 1,
                                 state=user_state, energy=E_cur, converged=converged):
                    status, message = STOPPED_BY_CALLBACK
                    need = xp.ones((Q,), dtype=xp.bool)
                    maxiter = t + 1  # evaluate the final state once, then stop
                    continue
            if not bool(xp.any(need)):
                status, message = int(Status.CONVERGED), "every query converged"
                break
    return state, nit, converged, idx_cur, xp.stack(trace, axis=0), status, message


def _lse_backend(be):
    return _bw.backend_arg(be)


def _offdiag_scale(M, xp):
    """max |off-diagonal| and max |entry| of a stack of matrices (0, 0 when empty)."""
    if M.shape[0] == 0 or M.shape[-1] == 0:
        return 0.0, 0.0
    d = M.shape[-1]
    eye = xp.eye(d, dtype=M.dtype)
    off = xp.max(xp.abs(M * (1 - eye)))
    return float(off), float(xp.max(xp.abs(M)))


# ---------------------------------------------------------------------------------------
# public classes
# ---------------------------------------------------------------------------------------
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
    beta : float
        Inverse temperature, > 0.
    similarity : {"euclidean", "dot"}
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"cupy"`` moves numpy patterns to the GPU once; results come back as numpy.

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
        xp = array_namespace(patterns)
        self._be = resolve_backend(backend, xp)
        self._backend = backend
        self.beta = check_positive(beta, "beta")
        self.similarity = check_choice(similarity, ("euclidean", "dot"), "similarity")
        X = as_float_array(self._be.to_device(patterns), self._be.xp, "patterns", ndim=2)
        check_finite(X, self._be.xp, "patterns")
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

    def _queries(self, x):
        xp = self._be.xp
        x = as_float_array(self._be.to_device(x), xp, "x", ndim=(1, 2))
        single = x.ndim == 1
        x = xp.reshape(x, (-1, x.shape[-1]))
        if x.shape[1] != self.dim:
            raise ValueError(f"queries must have dimension {self.dim}, got shape "
                             f"{tuple(x.shape)}")
        check_finite(x, xp, "x")
        return xp.astype(x, xp.result_type(x.dtype, self.patterns.dtype)), single

    def _scores(self, x):
        x, single = self._queries(x)
        return self._geom.scores((x,)), x, single

    def energy(self, x):
        """Energy of each query.

        ``"euclidean"``: :math:`E = -\\beta^{-1}\\log\\sum_i e^{-\\beta\\|\\xi - x_i\\|^2}`;
        ``"dot"``: :math:`E = -\\beta^{-1}\\log\\sum_i e^{\\beta \\xi\\cdot x_i}
        + \\tfrac12\\|\\xi\\|^2`.

        Parameters
        ----------
        x : array, shape (Q, d) or (d,)
            Query states.

        Returns
        -------
        array, shape (Q,)
            A scalar for one query of shape (d,).

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
            NaN/inf.
        TypeError
            Complex or non-numeric ``x``.

        References
        ----------
        .. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import VectorMemory
        >>> mem = VectorMemory(np.eye(3) * 4.0, beta=1.0)
        >>> round(float(mem.energy(np.zeros(3))), 6)  # 16 - log 3
        14.901388
        """
        s, x, single = self._scores(x)
        E = -logsumexp(self.beta * s, axis=1, backend=_lse_backend(self._be)) / self.beta
        off = self._geom.energy_offset((x,))
        E = E if off is None else E + off
        return self._be.to_input(E[0] if single else E)

    def weights(self, x):
        """Gibbs weights over the patterns, :math:`p = \\operatorname{softmax}(\\beta s)`.

        Parameters
        ----------
        x : array, shape (Q, d) or (d,)
            Query states.

        Returns
        -------
        array, shape (Q, N)
            Rows sum to one; shape (N,) for one query of shape (d,).

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
            NaN/inf.
        TypeError
            Complex or non-numeric ``x``.

        References
        ----------
        .. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import VectorMemory
        >>> mem = VectorMemory(np.eye(3) * 4.0, beta=1.0)
        >>> mem.weights(np.array([4.0, 0.0, 0.0])).round(6).tolist()
        [1.0, 0.0, 0.0]
        """
        s, _, single = self._scores(x)
        p = softmax(self.beta * s, axis=1)
        return self._be.to_input(p[0, ...] if single else p)

    def step(self, x):
        """One update :math:`\\xi^+ = \\sum_i p_i x_i`.

        Parameters
        ----------
        x : array, shape (Q, d) or (d,)
            Query states.

        Returns
        -------
        array, shape (Q, d) or (d,)
            The updated states.

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
            NaN/inf.
        TypeError
            Complex or non-numeric ``x``.

        References
        ----------
        .. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import VectorMemory
        >>> mem = VectorMemory(np.eye(3) * 4.0, beta=1.0)
        >>> mem.step(np.array([3.0, 0.5, 0.0])).round(6).tolist()
        [4.0, 0.0, 0.0]
        """
        s, x, single = self._scores(x)
        (z,), _ = self._geom.step((x,), softmax(self.beta * s, axis=1))
        return self._be.to_input(z[0, ...] if single else z)

    def retrieve(self, x, maxiter=100, tol=1e-10, *, callback=None, progress=False):
        """Iterate the update from each query until it moves less than ``tol``.

        Parameters
        ----------
        x : array, shape (Q, d) or (d,)
            Queries; a dask array of shape (Q, d) is retrieved chunk by chunk and the
            result holds lazy dask arrays (no ``energy`` trace; ``status`` and
            ``success`` are lazy 0-d arrays; no ``callback`` or ``progress``).
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
            energy), ``success``, ``status``, ``message``.

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, of a dimension other than the patterns', or holding
            NaN/inf; ``maxiter < 0``; ``tol`` negative or not finite.
        TypeError
            Complex or non-numeric ``x``, non-integer ``maxiter`` or non-real ``tol``.

        References
        ----------
        .. [1] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021.

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import VectorMemory
        >>> mem = VectorMemory(np.eye(3) * 4.0, beta=1.0)
        >>> res = mem.retrieve(np.array([[3.0, 0.5, 0.0], [0.2, 0.1, 3.5]]))
        >>> res.index.tolist(), bool(res.converged.all())
        ([0, 2], True)
        """
        maxiter = check_int(maxiter, "maxiter", minimum=0)
        tol = check_positive(tol, "tol", strict=False)
        if is_dask_array(x):
            _no_live_output(callback, progress)
            payload = ("vector", (self._be.to_input(self.patterns), self.beta),
                       dict(similarity=self.similarity, backend=self._backend))
            return retrieve_dask(payload, (x,), maxiter=maxiter, tol=tol,
                                 dtype=np.result_type(x.dtype, self.patterns.dtype))
        x, single = self._queries(x)
        xp = self._be.xp
        state, nit, conv, index, trace, status, message = _iterate(
            self._geom, (x,), self.beta, maxiter, tol, xp, _lse_backend(self._be),
            callback=callback, progress=progress, n_patterns=self.n_patterns,
            to_input=self._be.to_input)
        return _result(self._be, single, status, message, nit, conv, index, trace,
                       x=state[0])


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

    Raises
    ------
    ValueError
        Non-finite input, shape mismatches, non-symmetric or non-positive-definite
        covariances, ``beta <= 0``.

    References
    ----------
    .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162 (2025).
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
        xp = array_namespace(means, covs)
        be = self._be = resolve_backend(backend, xp)
        self._options = dict(path=path, screen=screen, backend=backend)
        xpc = be.xp
        self.beta = check_positive(beta, "beta")
        check_choice(path, ("auto", "full", "diagonal", "commuting"), "path")
        if screen is not None:
            screen = check_positive(screen, "screen")
        self.screen = screen
        covs_in = as_float_array(be.to_device(covs), xpc, "covs")
        if covs_in.ndim >= 1 and covs_in.shape[0] == 0:
            raise ValueError("means and covs must hold at least one stored pattern, got 0")
        self.diagonal_storage = covs_in.ndim == 2
        m, S = _bw.check_gaussians(be.to_device(means), covs_in, xpc, "",
                                    diagonal=self.diagonal_storage)
        if m.shape[0] < 1:
            raise ValueError("means and covs must hold at least one stored pattern, got 0")
        dtype = xpc.result_type(m.dtype, S.dtype)
        self.means, self.covs = xpc.astype(m, dtype), xpc.astype(S, dtype)
        self._forced_fast = path in ("diagonal", "commuting")
        self._full = self._vec = None
        self._basis = None  # None: identity (diagonal); array U: shared eigenbasis
        self.path = self._resolve_path(path)
        if self.path in ("diagonal", "commuting"):
            lam = self._eigs_in_basis(self.covs, patterns=True)
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

    def _eigs_in_basis(self, S, patterns=False):
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

    def _queries(self, means, covs):
        be, xp = self._be, self._be.xp
        qm = as_float_array(be.to_device(means), xp, "query means", ndim=(1, 2))
        single = qm.ndim == 1
        qm = xp.reshape(qm, (-1, qm.shape[-1]))
        qS = as_float_array(be.to_device(covs), xp, "query covs")
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
        qm, qS = _bw.check_gaussians(qm, qS, xp, "query", diagonal=self.diagonal_storage)
        dtype = xp.result_type(qm.dtype, qS.dtype, self.means.dtype)
        return xp.astype(qm, dtype), xp.astype(qS, dtype), single

    def _state(self, qm, qS, force_full=False):
        """(geometry, state, to_user) for a batch of queries."""
        xp = self._be.xp
        if not force_full and self.path != "full" and self._query_fits_fast_path(qS):
            lam = self._eigs_in_basis(qS)
            z = xp.concat([qm, xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))], axis=1)
            return self._vec, (z,), self._from_vector
        if self.path != "full" and self._forced_fast:
            raise ValueError(f"path={self.path!r}: the query covariances are not diagonal "
                             "in the patterns' eigenbasis; use path='auto' or 'full'")
        return self._full, (qm, qS), (lambda st: st)

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

    def distances(self, means, covs):
        """Squared W2 distances from each query Gaussian to every stored pattern.

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances

        Returns
        -------
        array, shape (Q, N)
            Shape (N,) for a single query.

        Raises
        ------
        ValueError
            Query means of the wrong dimension, covariances whose shape does not match
            them, non-finite input, covariances that are not symmetric positive definite
            (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
            ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
        TypeError
            Complex or non-numeric input.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> mem.distances(np.zeros(2), np.eye(2)).round(12).tolist()  # 9 + 2 (2 - 1)^2
        [0.0, 11.0]
        """
        qm, qS, single = self._queries(means, covs)
        geom, state, _ = self._state(qm, qS)
        if geom is self._full:
            d2 = _bw.cdist_full(qm, qS, self.means, self.covs, self._be)
        else:
            d2 = -geom.scores(state)
        return self._out(d2, single)

    def energy(self, means, covs):
        """:math:`E(\\xi) = -\\beta^{-1}\\log\\sum_i e^{-\\beta W_2^2(\\xi, X_i)}`.

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances

        Returns
        -------
        array, shape (Q,)
            A scalar for a single query.

        Raises
        ------
        ValueError
            Query means of the wrong dimension, covariances whose shape does not match
            them, non-finite input, covariances that are not symmetric positive definite
            (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
            ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
        TypeError
            Complex or non-numeric input.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> round(float(mem.energy(np.zeros(2), np.eye(2))), 8)  # -log(1 + e^-11)
        -1.67e-05
        """
        qm, qS, single = self._queries(means, covs)
        geom, state, _ = self._state(qm, qS)
        s = geom.scores(state)
        E = -logsumexp(self.beta * s, axis=1, backend=_lse_backend(self._be)) / self.beta
        return self._out(E, single)

    def weights(self, means, covs):
        """Gibbs weights :math:`p_i \\propto e^{-\\beta W_2^2(\\xi, X_i)}`.

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances

        Returns
        -------
        array, shape (Q, N)
            Rows sum to one; shape (N,) for a single query.

        Raises
        ------
        ValueError
            Query means of the wrong dimension, covariances whose shape does not match
            them, non-finite input, covariances that are not symmetric positive definite
            (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
            ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
        TypeError
            Complex or non-numeric input.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> mem.weights(np.zeros(2), np.eye(2)).round(6).tolist()
        [0.999983, 1.7e-05]
        """
        qm, qS, single = self._queries(means, covs)
        geom, state, _ = self._state(qm, qS)
        return self._out(softmax(self.beta * geom.scores(state), axis=1), single)

    def nearest(self, means, covs):
        """Index of the stored pattern nearest in W2 to each query.

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances

        Returns
        -------
        array of int, shape (Q,)
            A scalar for a single query.

        Raises
        ------
        ValueError
            Query means of the wrong dimension, covariances whose shape does not match
            them, non-finite input, covariances that are not symmetric positive definite
            (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
            ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
        TypeError
            Complex or non-numeric input.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> int(mem.nearest(np.array([2.5, 0.0]), 3.5 * np.eye(2)))
        1
        """
        qm, qS, single = self._queries(means, covs)
        geom, state, _ = self._state(qm, qS)
        idx = self._be.xp.argmax(geom.scores(state), axis=1)
        return self._out(idx, single)

    def step(self, means, covs):
        """One retrieval step (a Gibbs-weighted Álvarez-Esteban barycenter step).

        :math:`m^+ = \\sum_i p_i \\mu_i` and :math:`\\Omega^+ = A\\Omega A` with
        :math:`A = \\sum_i p_i A_i` the Gibbs average of the Monge maps to the patterns.

        Parameters
        ----------
        means : array, shape (Q, d) or (d,)
        covs : array, shape (Q, d, d) or (d, d); variances (Q, d) or (d,) when the
            memory stores variances

        Returns
        -------
        means : array, shape (Q, d) or (d,)
        covs : array
            Same layout as the query ``covs``.

        Raises
        ------
        ValueError
            Query means of the wrong dimension, covariances whose shape does not match
            them, non-finite input, covariances that are not symmetric positive definite
            (or non-positive variances), or, with ``path`` forced to ``"diagonal"`` or
            ``"commuting"``, query covariances not diagonal in the patterns' eigenbasis.
        TypeError
            Complex or non-numeric input.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).
        .. [2] P. C. Álvarez-Esteban, E. del Barrio, J. A. Cuesta-Albertos and C. Matrán,
           "A fixed-point approach to barycenters in Wasserstein space", J. Math. Anal.
           Appl. 441 (2016).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> m, S = mem.step(np.array([0.2, 0.0]), 1.2 * np.eye(2))
        >>> bool(np.linalg.norm(m) < 1e-3), bool(np.allclose(S, np.eye(2), atol=1e-3))
        (True, True)
        """
        qm, qS, single = self._queries(means, covs)
        geom, state, to_user = self._state(qm, qS)
        s = geom.scores(state, self.beta)
        new, _ = geom.step(state, softmax(self.beta * s, axis=1))
        m, S = to_user(new)
        return self._out(m, single), self._out(S, single)

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
            ``energy`` trace or ``path``; no ``callback`` or ``progress``).
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
            ``success``, ``status``, ``message``.

        Raises
        ------
        ValueError
            Invalid queries (wrong dimension or shape, non-finite, not symmetric positive
            definite, or not diagonal in the patterns' eigenbasis when ``path`` forces a
            fast path); ``maxiter < 0``; ``tol`` negative or not finite.
        TypeError
            Complex or non-numeric input, non-integer ``maxiter`` or non-real ``tol``.

        References
        ----------
        .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
           Bures-Wasserstein space", arXiv:2509.23162 (2025).

        Examples
        --------
        >>> import numpy as np
        >>> from solvers import GaussianMemory
        >>> mem = GaussianMemory(np.array([[0.0, 0.0], [3.0, 0.0]]),
        ...                      np.stack([np.eye(2), 4 * np.eye(2)]), beta=1.0)
        >>> res = mem.retrieve(np.array([2.5, 0.0]), 3.5 * np.eye(2))
        >>> res.index, bool(res.converged), res.path
        (1, True, 'diagonal')
        """
        maxiter = check_int(maxiter, "maxiter", minimum=0)
        tol = check_positive(tol, "tol", strict=False)
        if is_dask_array(means) or is_dask_array(covs):
            _no_live_output(callback, progress)
            payload = ("gaussian", (self._be.to_input(self.means),
                                    self._be.to_input(self.covs), self.beta), self._options)
            return retrieve_dask(payload, (means, covs), maxiter=maxiter, tol=tol,
                                 dtype=np.result_type(means.dtype, self.means.dtype))
        qm, qS, single = self._queries(means, covs)
        geom, state, to_user = self._state(qm, qS)
        xp = self._be.xp
        state, nit, conv, index, trace, status, message = _iterate(
            geom, state, self.beta, maxiter, tol, xp, _lse_backend(self._be),
            callback=callback, progress=progress, n_patterns=self.n_patterns,
            block=_BLOCK if geom is not self._full else max(
                1, _BLOCK // (self.dim * self.dim)),
            to_user=to_user, to_input=self._be.to_input)
        m, S = to_user(state)
        path = self.path if geom is self._vec else "full"
        return _result(self._be, single, status, message, nit, conv, index, trace,
                       means=m, covs=S, path=path)


def _no_live_output(callback, progress):
    if callback is not None or progress:
        raise ValueError("callback and progress are not available with dask queries (the "
                         "chunks run on the workers); compute the lazy result instead")


def _result(be, single, status, message, nit, conv, index, trace, **arrays):
    out = {}
    for k, v in arrays.items():
        if isinstance(v, str):
            out[k] = v
        else:
            out[k] = be.to_input(v[0, ...] if single else v)
    fun = trace[-1, ...]
    if single:
        out.update(nit=int(nit[0]), converged=bool(conv[0]), index=int(index[0]),
                   energy=be.to_input(trace[:, 0]), fun=float(fun[0]))
    else:
        out.update(nit=be.to_input(nit), converged=be.to_input(conv),
                   index=be.to_input(index), energy=be.to_input(trace),
                   fun=be.to_input(fun))
    if "x" not in out and "means" in out:
        out["x"] = out["means"]
    return OptimizeResult(success=status == 0, status=status, message=message, **out)
