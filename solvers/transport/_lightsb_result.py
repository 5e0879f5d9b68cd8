"""The fitted LightSB bridge: :class:`SchrodingerBridgeResult` and
:func:`bridge_from_parameters`."""
import math

import numpy as np

from .._lib.docstrings import fill_doc, fill_doc_members
from .._lib.frames import unwrap_frame
from .._lib.backend import resolve_backend
from .._lib.namespace import array_namespace
from .._lib.params import (BACKEND, COUNT, NONE, POSITIVE, SEED, Array, Options, Param,
                           Real)
from .._lib.results import OptimizeResult, Status
from .._lib.rng import Draws, check_rng
from .._lib.validation import check_positive_definite
from ..lse import logsumexp
from ._lightsb_kernels import Kernels
from ._lightsb_model import Params, S_matrices, drift, logits_c, sample, softmax_rows
from .._lib.host import to_host

__all__ = ["SchrodingerBridgeResult", "bridge_from_parameters"]

_X = Param("x", Array(ndim=(1, 2)), doc="inputs (n, D) or (D,)")
_Y = Param("y", Array(ndim=(1, 2)), None, "endpoints (n, D) (default: drawn)")
_T = Param("t", Real(0, 1), doc="time in [0, 1]")
_RNG = Param("rng", SEED, None, "random numbers")
#: the point arrays every method converts (``_prep``)
_POINTS = Options("BridgePointsOptions", _X, _Y)
_LOG_WEIGHTS = Options("BridgeLogWeightsOptions", _X)
_MOMENTS = Options("BridgeMomentsOptions", _X)
_SAMPLE = Options("BridgeSampleOptions", _X,
                  Param("n_samples", (COUNT, NONE), None, "samples per input (None: one)"),
                  _RNG)
_DRIFT = Options("BridgeDriftOptions", _X, _T)
_SIMULATE = Options("BridgeSimulateOptions", _X,
                    Param("n_steps", COUNT, 100, "Euler-Maruyama steps"), _RNG)
_BRIDGE = Options("BridgeBridgeOptions", _X, _T, _RNG, _Y)
_PARAMETERS = Options(
    "BridgeParametersOptions",
    Param("log_alpha", Array(ndim=1), doc="log mixture weights (K,)"),
    Param("r", Array(ndim=2), doc="component means (K, D)"),
    Param("S", Array(ndim=(2, 3)), doc="diagonal (K, D) or full (K, D, D) scales"),
    Param("epsilon", POSITIVE, doc="entropic regularisation"),
    Param("backend", BACKEND, "auto", "which kernels run"))

_REFERENCES = """
References
----------
.. [1] A. Korotin, N. Gushchin, E. Burnaev, "Light Schrödinger Bridge", ICLR 2024.
"""
_PARAM_X = """
Parameters
----------
x : array, shape (n, D) or (D,)
    Inputs (points of the source side); one point gives results without the first axis.
"""

_EXAMPLE_BRIDGE = """
Examples
--------
>>> import numpy as np
>>> from solvers.transport import bridge_from_parameters
>>> sb = bridge_from_parameters(np.zeros(1), np.array([[1.0, -1.0]]),
...                             np.array([[2.0, 0.5]]), 0.1)
"""

_RAISES_X = """
Raises
------
ValueError
    ``x`` not 1-D or 2-D, with a number of columns other than the bridge's
    dimension ``D``, or holding NaN/inf.
TypeError
    Complex or non-numeric ``x``.
"""


class SchrodingerBridgeResult(OptimizeResult):
    """A fitted LightSB bridge: an ``OptimizeResult`` with sampling methods.

    Returned by :func:`schrodinger_bridge` and :func:`bridge_from_parameters`; it is not
    meant to be built by hand (the methods need the private fitted parameters those
    functions attach).

    Parameters
    ----------
    **fields
        The attributes below, as keyword arguments (stored as given, not validated).

    Attributes
    ----------
    log_alpha : array, shape (K,)
        Log mixture weights of the potential (normalised to sum to one).
    r : array, shape (K, D)
        Component means of the potential.
    S : array, shape (K, D) or (K, D, D)
        Component matrices ``S_k`` (diagonals for ``covariance="diag"``).
    epsilon : float
    covariance : {"diag", "full"}
    fun : float
        Final training loss (minibatch loss for Adam).
    loss : ndarray
        Loss history, one entry per iteration.
    nit : int
    success : bool
    status : int
    message : str
    optimizer : str

    Raises
    ------
    ValueError
        From the methods: inputs ``x`` whose number of columns is not the bridge's
        dimension ``D`` or that hold NaN/inf, ``t`` outside ``[0, 1]``, or a ``y`` whose
        shape differs from ``x`` in :meth:`bridge`.
    TypeError
        From the methods: complex or non-numeric ``x``, or a non-integer ``n_samples`` /
        ``n_steps``.

    Notes
    -----
    The conditional plan is the Gaussian mixture
    :math:`\\pi(y \\mid x) = \\sum_k \\gamma_k(x) N(y \\mid r_k + S_k x, \\varepsilon S_k)`
    with :math:`\\gamma_k(x) \\propto \\alpha_k \\exp(\\tfrac{1}{2\\varepsilon} x^\\top S_k x
    + \\tfrac{1}{\\varepsilon} r_k^\\top x)` [1]_.

    {{references}}

    {{example_bridge}}
    >>> m, C = sb.conditional_moments(np.ones((1, 2)))  # N(r + S x, epsilon S)
    >>> m.round(12).tolist(), np.diagonal(C[0]).round(12).tolist()
    ([[3.0, -0.5]], [0.2, 0.05])
    """

    def _attach(self, params):
        """Keep the fitted parameters as instance attributes, outside the mapping: they
        are not result fields (``keys()`` and ``repr`` show only the public ones)."""
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_eig", None)
        return self

    def __dir__(self):
        return list(self.keys()) + [
            "sample", "conditional_moments", "drift", "simulate", "bridge", "log_weights"]

    # -- helpers ----------------------------------------------------------------------
    def _prep(self, x, name="x"):
        x, _ = unwrap_frame(x, name)
        xp_in = array_namespace(x)
        # numpy input follows the fit's backend; other namespaces run where they live
        be = resolve_backend("auto", xp_in)
        if be.on_host:
            be = resolve_backend(self.backend, xp_in)
        xp = be.xp
        (x,) = _POINTS.arrays(be, **{name: x})
        one = x.ndim == 1
        if one:
            x = x[None, :]
        D = self._params.r.shape[1]
        if x.shape[1] != D:
            raise ValueError(f"{name} must have {D} columns (the bridge's dimension), "
                             f"got shape {tuple(x.shape)}")
        p = self._params.to(xp)
        x = xp.astype(x, p.r.dtype)
        return x, p, xp, be, one

    def _out(self, a, be, one):
        if one:
            a = a[0, ...]
        return be.to_input(a)

    @_LOG_WEIGHTS.entry
    def log_weights(self, x):
        """Log mixture weights :math:`\\log \\gamma_k(x)` of :math:`\\pi(\\cdot \\mid x)`.

        {{param_x}}

        Returns
        -------
        array, shape (n, K) or (K,)

        {{raises_x}}

        {{references}}

        {{example_bridge}}
        >>> sb.log_weights(np.zeros(2)).tolist()  # one component: log 1
        [0.0]
        """
        x, p, xp, be, one = self._prep(x)
        if p.kind == "diag":
            lw = Kernels(be).log_weights_diag(x, p.la, p.r, xp.exp(p.q), self.epsilon)
            return self._out(lw, be, one)
        logits = logits_c(x, p, xp, self.epsilon)
        lse = logsumexp(logits, axis=1, backend=Kernels(be).lse)
        return self._out(logits - lse[:, None], be, one)

    # -- public methods ---------------------------------------------------------------
    @_MOMENTS.entry
    def conditional_moments(self, x):
        """Exact mean and covariance of the mixture :math:`\\pi_\\theta(\\cdot \\mid x)`.

        {{param_x}}

        Returns
        -------
        mean : array, shape (n, D)
        covariance : array, shape (n, D, D)
            :math:`\\sum_k \\gamma_k (\\varepsilon S_k + \\mu_k \\mu_k^\\top) - m m^\\top`
            with :math:`\\mu_k = r_k + S_k x`.

        {{raises_x}}

        {{references}}

        {{example_bridge}}
        >>> m, C = sb.conditional_moments(np.zeros(2))  # N(r + S x, epsilon S) at x = 0
        >>> m.tolist(), np.diag(C).round(12).tolist()
        ([1.0, -1.0], [0.2, 0.05])
        """
        x, p, xp, be, one = self._prep(x)
        eps = self.epsilon
        logits = logits_c(x, p, xp, eps)
        g, _ = softmax_rows(logits, xp, Kernels(be).lse)          # (n, K)
        S = S_matrices(p, xp)
        K, D = p.r.shape
        if p.kind == "diag":
            mu = p.r[None, :, :] + S[None, :, :] * x[:, None, :]        # (n, K, D)
            within = g @ S                                               # (n, D)
            eye = xp.eye(D, dtype=x.dtype)
            cov_within = eps * within[:, :, None] * eye[None, :, :]
        else:
            mu = p.r[:, None, :] + xp.matrix_transpose(S @ xp.matrix_transpose(x))  # (K,n,D)
            mu = xp.permute_dims(mu, (1, 0, 2))
            cov_within = eps * xp.reshape(g @ xp.reshape(S, (K, D * D)), (-1, D, D))
        mean = xp.squeeze(g[:, None, :] @ mu, axis=1)
        second = xp.matrix_transpose(mu) @ (g[:, :, None] * mu)
        cov = cov_within + second - mean[:, :, None] * mean[:, None, :]
        cov = 0.5 * (cov + xp.matrix_transpose(cov))
        return self._out(mean, be, one), self._out(cov, be, one)

    @_SAMPLE.entry
    def sample(self, x, n_samples=None, rng=None):
        """Exact samples :math:`y \\sim \\pi_\\theta(\\cdot \\mid x)` (no simulation).

        {{param_x}}
        n_samples : int, optional
            Samples per input. ``None`` draws one per input and drops that axis.
        rng : None, int or numpy.random.Generator

        Returns
        -------
        array, shape (n, D) or (n, n_samples, D)

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, with a number of columns other than the bridge's
            dimension ``D``, or holding NaN/inf; ``n_samples < 1``; a negative ``rng``
            seed.
        TypeError
            Complex or non-numeric ``x``, non-integer ``n_samples``, or ``rng`` not None,
            an int or a ``numpy.random.Generator``.

        {{references}}

        {{example_bridge}}
        >>> y = sb.sample(np.zeros((2000, 2)), rng=0)
        >>> y.shape, bool(np.all(np.abs(y.mean(axis=0) - [1.0, -1.0]) < 0.05))
        ((2000, 2), True)
        """
        cfg = _SAMPLE.validate(n_samples=n_samples, rng=rng)
        x, p, xp, be, one = self._prep(x)
        ns = 1 if cfg.n_samples is None else cfg.n_samples
        draws = Draws(check_rng(cfg.rng), xp)
        y = sample(x, p, self.epsilon, ns, draws, xp, Kernels(be))       # (n, ns, D)
        if n_samples is None:
            y = y[:, 0, :]
        return self._out(y, be, one)

    @_DRIFT.entry
    def drift(self, x, t):
        """Closed-form drift :math:`g(x, t)` of the fitted bridge SDE.

        With :math:`M_k = t S_k + (1-t) I`,

        .. math:: g(x, t) = \\sum_k \\beta_k(x, t)\\, M_k^{-1}\\big(r_k + (S_k - I) x\\big),
                  \\qquad \\beta_k \\propto \\alpha_k N(x \\mid t r_k, \\varepsilon t M_k),

        the :math:`\\varepsilon \\nabla_x \\log` of the potential's heat-kernel smoothing
        (the weights are computed in a form that stays finite as :math:`t \\to 0`).

        {{param_x}}
        t : float in [0, 1]

        Returns
        -------
        array, shape (n, D) or (D,)

        {{raises_x}}
        ValueError
            ``t`` outside ``[0, 1]``.

        {{references}}

        {{example_bridge}}
        >>> sb.drift(np.zeros(2), 0.0).tolist()  # r + (S - I) x at t = 0
        [1.0, -1.0]
        >>> sb.drift(np.zeros(2), 1.0).tolist()  # S^{-1} r at t = 1, x = 0
        [0.5, -2.0]
        """
        t = _DRIFT.validate(t=t).t
        x, p, xp, be, one = self._prep(x)
        return self._out(drift(x, t, p, self.epsilon, xp, Kernels(be).lse,
                                 self._eig_in(xp)), be, one)

    def _eig_in(self, xp):
        if self._params.kind == "diag":
            return None
        if self._eig is None:
            S = S_matrices(self._params, array_namespace(self._params.r))
            xs = array_namespace(S)
            lam, U = xs.linalg.eigh(0.5 * (S + xs.matrix_transpose(S)))
            object.__setattr__(self, "_eig", (lam, U))
        lam, U = self._eig
        if array_namespace(lam) is not xp:
            lam, U = xp.asarray(to_host(lam)), xp.asarray(to_host(U))
        return lam, U

    @_SIMULATE.entry
    def simulate(self, x, n_steps=100, rng=None):
        """Euler–Maruyama simulation of the bridge SDE from ``x`` at t = 0 to t = 1.

        :math:`X_{t+h} = X_t + g(X_t, t) h + \\sqrt{\\varepsilon h}\\, \\xi`, with the
        closed-form drift. Prefer :meth:`sample` for the endpoint (it is exact).

        Parameters
        ----------
        x : array, shape (n, D)
        n_steps : int
        rng : None, int or numpy.random.Generator

        Returns
        -------
        array, shape (n_steps + 1, n, D)
            The path, ``path[0] = x`` and ``path[-1]`` the endpoint.

        Raises
        ------
        ValueError
            ``x`` not 1-D or 2-D, with a number of columns other than the bridge's
            dimension ``D``, or holding NaN/inf; ``n_steps < 1``; a negative ``rng`` seed.
        TypeError
            Complex or non-numeric ``x``, non-integer ``n_steps``, or ``rng`` not None, an
            int or a ``numpy.random.Generator``.

        Notes
        -----
        A 1-D ``x`` gives a path of shape ``(n_steps + 1, D)``.

        {{references}}

        {{example_bridge}}
        >>> path = sb.simulate(np.zeros((100, 2)), n_steps=10, rng=0)
        >>> path.shape, bool(np.all(path[0] == 0.0))
        ((11, 100, 2), True)
        """
        cfg = _SIMULATE.validate(n_steps=n_steps, rng=rng)
        x, p, xp, be, one = self._prep(x)
        n_steps = cfg.n_steps
        draws = Draws(check_rng(cfg.rng), xp)
        h = 1.0 / n_steps
        eig = self._eig_in(xp)
        path = [x]
        lb = Kernels(be).lse
        for i in range(n_steps):
            t = i * h
            noise = draws.normal(tuple(x.shape), dtype=x.dtype)
            x = (x + h * drift(x, t, p, self.epsilon, xp, lb, eig)
                 + math.sqrt(self.epsilon * h) * noise)
            path.append(x)
        path = xp.stack(path, axis=0)
        if one:
            path = path[:, 0, :]
        return be.to_input(path)

    @_BRIDGE.entry
    def bridge(self, x, t, rng=None, y=None):
        """Sample :math:`X_t` given :math:`X_0 = x` (and :math:`X_1 = y` when given).

        :math:`X_t = t y + (1-t) x + \\sqrt{\\varepsilon t (1-t)}\\, \\xi` with
        :math:`y \\sim \\pi_\\theta(\\cdot \\mid x)` drawn exactly when not supplied.

        Parameters
        ----------
        x : array, shape (n, D)
        t : float in [0, 1]
        rng : None, int or numpy.random.Generator
        y : array, shape (n, D), optional

        Returns
        -------
        array, shape (n, D)

        Raises
        ------
        ValueError
            ``t`` outside ``[0, 1]``; ``x`` (or ``y``) not 1-D or 2-D, with a number of
            columns other than ``D``, or holding NaN/inf; ``y`` whose shape differs from
            ``x``; a negative ``rng`` seed.
        TypeError
            Complex or non-numeric ``x`` or ``y``, or ``rng`` not None, an int or a
            ``numpy.random.Generator``.

        {{references}}

        {{example_bridge}}
        >>> x, y = np.zeros((3, 2)), np.ones((3, 2))
        >>> x0, x1 = sb.bridge(x, 0.0, rng=0), sb.bridge(x, 1.0, y=y)  # the two ends
        >>> bool(np.all(x0 == x)), bool(np.all(x1 == y))
        (True, True)
        """
        cfg = _BRIDGE.validate(t=t, rng=rng)
        t, gen = cfg.t, check_rng(cfg.rng)
        xd, p, xp, be, one = self._prep(x)
        if y is None:
            yd = sample(xd, p, self.epsilon, 1, Draws(gen, xp), xp, Kernels(be))[:, 0, :]
        else:
            yd, *_ = self._prep(y, "y")
            if yd.shape != xd.shape:
                raise ValueError(f"y must have the shape of x {tuple(xd.shape)}, "
                                 f"got {tuple(yd.shape)}")
        noise = Draws(gen, xp).normal(tuple(xd.shape), dtype=xd.dtype)
        xt = t * yd + (1.0 - t) * xd + math.sqrt(self.epsilon * t * (1.0 - t)) * noise
        return self._out(xt, be, one)




fill_doc_members(SchrodingerBridgeResult, references=_REFERENCES, raises_x=_RAISES_X,
                 param_x=_PARAM_X, example_bridge=_EXAMPLE_BRIDGE)


def _cholesky_S(S, xp):
    """Cholesky factor of the symmetrised full ``S``; ``ValueError`` naming ``S`` when it is
    not numerically positive definite (a singular matrix passes the eigenvalue check by
    rounding, then fails here)."""
    try:
        q = xp.linalg.cholesky(0.5 * (S + xp.matrix_transpose(S)))
    except np.linalg.LinAlgError:
        q = None
    if q is None or not bool(xp.all(xp.isfinite(q))):  # CuPy returns NaN instead of raising
        raise ValueError("S must be numerically positive definite: its Cholesky "
                         "factorisation failed (a singular matrix?)")
    return q


@_PARAMETERS.entry
@fill_doc(references=_REFERENCES)
def bridge_from_parameters(log_alpha, r, S, epsilon, *, backend="auto"):
    """Build a :class:`SchrodingerBridgeResult` from given LightSB parameters.

    Used for known solutions (the benchmark pairs' ground truth, the Gaussian closed form).

    Parameters
    ----------
    log_alpha : array, shape (K,)
    r : array, shape (K, D)
    S : array, shape (K, D) (diagonal) or (K, D, D) (full, positive definite)
    epsilon : float
    backend : {"auto", "numpy", "numba", "cupy"}

    Returns
    -------
    SchrodingerBridgeResult
        With ``log_alpha`` normalised to log-sum-exp zero, ``nit=0`` and ``fun=None`` (no
        loss was minimised).

    Raises
    ------
    ValueError
        ``epsilon <= 0`` or not finite, arrays with the wrong number of dimensions,
        ``log_alpha``, ``r`` and ``S`` that disagree on ``K`` or ``D``, NaN/inf entries,
        a diagonal ``S`` with a non-positive entry, a full ``S`` that is not symmetric
        positive definite, or an unknown ``backend``.
    TypeError
        ``epsilon`` not a real number, or complex or non-numeric arrays.

    Notes
    -----
    Full ``S`` is symmetrised before factorisation.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import bridge_from_parameters
    >>> sb = bridge_from_parameters(np.log([1.0, 3.0]), np.zeros((2, 2)), np.ones((2, 2)), 1.0)
    >>> np.exp(sb.log_alpha).round(12).tolist(), sb.covariance
    ([0.25, 0.75], 'diag')
    """
    epsilon = _PARAMETERS.validate(epsilon=epsilon, backend=backend).epsilon
    xp_in = array_namespace(log_alpha, r, S)
    be = resolve_backend(backend, xp_in)
    xp = be.xp
    la, r, S = _PARAMETERS.arrays(be, log_alpha=log_alpha, r=r, S=S)
    kind = "diag" if S.ndim == 2 else "full"
    if S.shape[0] != r.shape[0] or la.shape[0] != r.shape[0] or S.shape[1] != r.shape[1]:
        raise ValueError("log_alpha, r and S must describe the same K components of dimension D")
    if kind == "diag" and not bool(xp.all(S > 0)):
        raise ValueError("diagonal S must have positive entries (it is a covariance scale)")
    if kind == "full":
        check_positive_definite(S, xp, "S")
    q = xp.log(S) if kind == "diag" else _cholesky_S(S, xp)
    la = la - logsumexp(la, backend="auto")
    params = Params(la, r, q, kind)
    res = SchrodingerBridgeResult(
        log_alpha=be.to_input(la), r=be.to_input(r), S=be.to_input(S_matrices(params, xp)),
        epsilon=epsilon, covariance=kind, fun=None, loss=np.zeros(0), nit=0,
        success=True, status=Status.CONVERGED, message="built from parameters", optimizer=None,
        n_components=r.shape[0], backend=backend, fit_seconds=0.0)
    return res._attach(params)

