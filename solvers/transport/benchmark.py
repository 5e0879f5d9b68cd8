"""Entropic OT benchmark pairs with known solutions, and the BW-UVP / cBW-UVP metrics.

The recipe of Gushchin et al. (NeurIPS 2023): choose :math:`p_0` and a Schrödinger
potential :math:`e^{f(y)/\\varepsilon} \\propto \\sum_n w_n N(y \\mid \\mu_n, \\Sigma_n)`. Then
the optimal conditional plan is known in closed form,

.. math::

   \\pi^*(y \\mid x) = \\sum_n \\gamma_n(x) N(y \\mid m_n(x), \\Lambda_n), \\qquad
   \\Lambda_n = (\\Sigma_n^{-1} + I/\\varepsilon)^{-1}, \\quad
   m_n(x) = \\Lambda_n(\\Sigma_n^{-1}\\mu_n + x/\\varepsilon), \\quad
   \\gamma_n(x) \\propto w_n N(x \\mid \\mu_n, \\Sigma_n + \\varepsilon I),

and :math:`p_1` is defined as its second marginal (draw :math:`x \\sim p_0`, then
:math:`y \\sim \\pi^*(\\cdot \\mid x)`). This is exactly a LightSB model with
:math:`S_n = \\Lambda_n/\\varepsilon`, :math:`r_n = \\Lambda_n \\Sigma_n^{-1}\\mu_n` and
:math:`\\log\\alpha_n = \\log w_n + \\log N(0 \\mid \\mu_n, \\Sigma_n + \\varepsilon I)`,
so :meth:`BenchmarkPair.bridge` returns the ground truth as a
:class:`~solvers.transport.SchrodingerBridgeResult`.

The official benchmark's data files are not used here: :func:`make_pair` builds pairs from
the recipe with its own choice of :math:`p_0` and potential (documented below).

Metrics (BW2-UVP convention, with the 1/2 factors):
:math:`\\mathrm{BW}_2^2(P, Q) = \\tfrac12\\|m_P - m_Q\\|^2 + \\tfrac12 \\operatorname{tr}\\Sigma_P
+ \\tfrac12\\operatorname{tr}\\Sigma_Q - \\operatorname{tr}(\\Sigma_P^{1/2}\\Sigma_Q
\\Sigma_P^{1/2})^{1/2}`, and
:math:`\\mathrm{UVP} = 100\\,\\mathrm{BW}_2^2 / (\\tfrac12 \\operatorname{Var} p_1)` in percent.
"""

import textwrap
import warnings

import numpy as np

from .._lib.docstrings import fill_doc, fill_doc_members
from .._lib.backend import resolve_backend
from .._lib.host import to_host
from .._lib.params import COUNT, NONE, POSITIVE, SEED, Array, Options, Param
from .._lib.rng import check_rng
from .._lib.validation import check_int, check_shape
from .bures import bures_wasserstein_distance
from .bures_kernels import check_gaussians


#: docstring fragments shared by the benchmark's functions and the pair's methods
_DOCS = dict(
    references="""
        References
        ----------
        .. [1] N. Gushchin, A. Kolesov, P. Mokrov, P. Karpikova, A. Spiridonov, E. Burnaev
           and A. Korotin, "Building the Bridge of Schrödinger: A Continuous Entropic
           Optimal Transport Benchmark", NeurIPS 2023.
        """,
    example_pair="""
        Examples
        --------
        >>> import numpy as np
        >>> from solvers.transport.benchmark import make_pair
        >>> pair = make_pair(2, 1.0)
        """,
    draws_returns_raises="""
        Returns
        -------
        ndarray, shape (n, D)

        Raises
        ------
        TypeError
            Non-integer ``n``, or ``rng`` not None, an int or a ``numpy.random.Generator``.
        ValueError
            ``n < 1`` or a negative ``rng`` seed.
        """,
)
#: a one-dimensional pair for the examples, after the reference
_DOCS["references_and_pair_1d"] = textwrap.dedent(_DOCS["references"]).strip("\n") + """

Examples
--------
>>> import numpy as np
>>> from solvers.transport.benchmark import BenchmarkPair
>>> pair = BenchmarkPair([1.0], np.zeros((1, 1)), np.eye(1)[None], 1.0)"""
#: the end of both draw methods' docstrings: returns, errors, reference, the example's setup
_DOCS["draws_tail"] = "\n\n".join(
    textwrap.dedent(_DOCS[k]).strip("\n") for k in ("draws_returns_raises", "references",
                                                     "example_pair"))

__all__ = ["BenchmarkPair", "make_pair", "bw2_squared", "bw_uvp", "cbw_uvp",
           "PUBLISHED_LIGHTSB_CBW_UVP"]

#: published cBW2-UVP (%) of LightSB on the official benchmark, {eps: {D: value}}
PUBLISHED_LIGHTSB_CBW_UVP = {
    0.1: {2: 0.03, 16: 0.08, 64: 0.28, 128: 0.60},
    1: {2: 0.05, 16: 0.09, 64: 0.24, 128: 0.62},
    10: {2: 0.07, 16: 0.11, 64: 0.21, 128: 0.37},
}


@fill_doc(**_DOCS)
def bw2_squared(m1, S1, m2, S2):
    """:math:`\\mathrm{BW}_2^2` with the 1/2 factors (half the squared 2-Wasserstein distance).

    Parameters
    ----------
    m1, m2 : array, shape (..., d)
    S1, S2 : array, shape (..., d, d)
        As in :func:`~solvers.transport.bures_wasserstein_distance`: finite symmetric
        positive semi-definite, each mean with the batch shape of its covariance.

    Returns
    -------
    array, shape (...)
        :math:`\\tfrac12 W_2^2`, clipped at zero.

    Raises
    ------
    TypeError
        Complex or non-numeric input, or arrays from different array libraries.
    ValueError
        Invalid means or covariances (see
        :func:`~solvers.transport.bures_wasserstein_distance`); the message names the
        argument.

    Notes
    -----
    A thin wrapper of :func:`~solvers.transport.bures_wasserstein_distance`.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport.benchmark import bw2_squared
    >>> float(bw2_squared(np.zeros(2), np.eye(2), np.ones(2), np.eye(2)))
    1.0
    """
    return 0.5 * bures_wasserstein_distance(m1, S1, m2, S2, squared=True)


PAIR_OPTIONS = Options(
    "BenchmarkPairOptions",
    Param("weights", Array(ndim=1), doc="positive mixture weights (N,)"),
    Param("means", Array(ndim=2, empty=False), doc="means of the potential (N, D)"),
    Param("covariances", Array(ndim=3), doc="covariances of the potential (N, D, D)"),
    Param("epsilon", POSITIVE, doc="entropy weight"))


def _check_potential(weights, means, covariances):
    """The mixture potential of a :class:`BenchmarkPair`: positive weights (N,), finite
    means (N, D), symmetric positive definite covariances (N, D, D), N >= 1."""
    arrays = PAIR_OPTIONS.arrays(resolve_backend("numpy", np), weights=weights, means=means,
                                 covariances=covariances)
    weights, means, covariances = (np.asarray(a, dtype=np.float64) for a in arrays)
    means, covariances = check_gaussians(means, covariances, np, "", diagonal=False,
                                         names=("means", "covariances"), dtype=np.float64)
    check_shape(weights, (means.shape[0],), "weights")
    if np.any(weights <= 0):
        raise ValueError("weights must be positive")
    return weights, means, covariances


@PAIR_OPTIONS.entry
class BenchmarkPair:
    """A pair ``(p0, p1)`` with a known entropic OT plan (see :func:`make_pair`).

    :math:`p_0 = N(0, I)` and the Schrödinger potential is the Gaussian mixture
    :math:`\\sum_n w_n N(\\mu_n, \\Sigma_n)`; the exact plan and :math:`p_1` follow in
    closed form (see the module docstring).

    Parameters
    ----------
    weights : array_like, shape (N,)
        Positive mixture weights of the potential (used as given, not normalised).
    means : array_like, shape (N, D)
        :math:`\\mu_n`.
    covariances : array_like, shape (N, D, D)
        :math:`\\Sigma_n`, symmetric positive definite.
    epsilon : float
        Entropy weight, > 0.
    rotated : bool
        ``False``: the covariances are diagonal and :meth:`bridge` uses diagonal ``S``;
        ``True``: full ``S``.
    seed : int
        Seed of the 200 000 draws that estimate ``var_x1``.

    Attributes
    ----------
    dim : int
    epsilon : float
    weights : ndarray, shape (N,)
    means : ndarray, shape (N, D)
        :math:`\\mu_n` of the potential.
    covariances : ndarray, shape (N, D, D)
        :math:`\\Sigma_n` of the potential.
    rotated : bool
    var_x1 : float
        :math:`\\operatorname{tr}\\operatorname{Cov}(p_1)`, estimated from 200 000 draws
        with a fixed seed (the UVP normaliser).
    Lambda : ndarray, shape (N, D, D)
        :math:`\\Lambda_n = (\\Sigma_n^{-1} + I/\\varepsilon)^{-1}`.
    S, r, log_alpha : ndarray
        LightSB parameters of the exact solution.
    seed : int

    Raises
    ------
    ValueError
        ``epsilon`` not finite or ``<= 0``, or a negative ``seed``; ``weights`` not
        positive and finite or not of shape (N,); ``means`` not finite, not 2-d or empty;
        ``covariances`` not finite, not of shape (N, D, D), or not symmetric positive
        definite. The message names the argument.
    TypeError
        ``epsilon`` not a real number; complex or non-numeric arrays.

    {{references_and_pair_1d}}
    >>> pair.Lambda.tolist()  # (1 + 1/epsilon)^-1
    [[[0.5]]]
    >>> abs(pair.var_x1 - 0.75) < 0.01  # y | x ~ N(x/2, 1/2), x ~ N(0, 1)
    True
    """

    def __init__(self, weights, means, covariances, epsilon, *, rotated=False, seed=0):
        self.weights, self.means, self.covariances = _check_potential(weights, means,
                                                                      covariances)
        self.epsilon = PAIR_OPTIONS.validate(epsilon=epsilon).epsilon
        self.dim = self.means.shape[1]
        self.rotated = bool(rotated)
        self.seed = seed
        D, eps = self.dim, self.epsilon
        eye = np.eye(D)
        prec = np.linalg.inv(self.covariances)
        self.Lambda = np.linalg.inv(prec + eye / eps)
        self.Lambda = 0.5 * (self.Lambda + np.swapaxes(self.Lambda, -1, -2))
        # LightSB parameters of the exact solution
        self.S = self.Lambda / eps
        self.r = np.einsum("nij,njk,nk->ni", self.Lambda, prec, self.means)
        P = np.linalg.inv(self.covariances + eps * eye)
        _, logdet = np.linalg.slogdet(2 * np.pi * (self.covariances + eps * eye))
        self.log_alpha = (np.log(self.weights) - 0.5 * np.einsum("ni,nij,nj->n", self.means, P,
                                                                 self.means) - 0.5 * logdet)
        self._bridge = None
        y = self.sample_x1(200_000, rng=np.random.default_rng([int(seed), 2024]))
        self.var_x1 = float(np.sum(np.var(y, axis=0)))

    def bridge(self):
        """The exact solution as a :class:`~solvers.transport.SchrodingerBridgeResult`.

        Returns
        -------
        SchrodingerBridgeResult
            LightSB parameters ``log_alpha``, ``r`` and ``S`` of the true plan (diagonal
            ``S`` unless ``rotated``); built once and cached.

        Raises
        ------
        numpy.linalg.LinAlgError
            For ``rotated=True``, when a matrix ``S`` is not numerically positive definite
            (cannot happen for pairs from :func:`make_pair`).

        {{references}}

        {{example_pair}}
        >>> sb = pair.bridge()
        >>> sb.covariance, sb.S.shape, sb is pair.bridge()
        ('diag', (5, 2), True)
        """
        if self._bridge is None:
            from .lightsb import bridge_from_parameters

            S = self.S if self.rotated else np.diagonal(self.S, axis1=1, axis2=2).copy()
            self._bridge = bridge_from_parameters(self.log_alpha, self.r, S, self.epsilon)
        return self._bridge

    def sample_x0(self, n, rng=None):
        """Draws from :math:`p_0 = N(0, I)`.

        Parameters
        ----------
        n : int
            Number of draws, >= 1.
        rng : None, int or numpy.random.Generator

        {{draws_tail}}
        >>> pair.sample_x0(3, rng=0).shape
        (3, 2)
        """
        return check_rng(rng).standard_normal((check_int(n, "n", minimum=1), self.dim))

    def sample(self, x, n_samples=None, rng=None):
        """Draws from the true :math:`\\pi^*(\\cdot \\mid x)`.

        See :meth:`SchrodingerBridgeResult.sample
        <solvers.transport.SchrodingerBridgeResult.sample>`.

        Parameters
        ----------
        x : array, shape (n, D) or (D,)
        n_samples : int, optional
            Samples per input; ``None`` draws one per input and drops that axis.
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape (n, D) or (n, n_samples, D)

        Raises
        ------
        ValueError
            ``x`` with a number of columns other than ``D`` or holding NaN/inf,
            ``n_samples < 1``, or a negative ``rng`` seed.
        TypeError
            Complex or non-numeric ``x``, non-integer ``n_samples``, or
            ``rng`` not None, an int or a ``numpy.random.Generator``.

        {{references}}

        {{example_pair}}
        >>> pair.sample(np.zeros((4, 2)), n_samples=3, rng=0).shape
        (4, 3, 2)
        """
        return self.bridge().sample(x, n_samples=n_samples, rng=rng)

    def conditional_moments(self, x):
        """Exact mean and covariance of :math:`\\pi^*(\\cdot \\mid x)`.

        Parameters
        ----------
        x : array, shape (n, D) or (D,)

        Returns
        -------
        mean : ndarray, shape (n, D)
        covariance : ndarray, shape (n, D, D)
            Of the Gaussian mixture :math:`\\sum_n \\gamma_n(x) N(m_n(x), \\Lambda_n)`.

        Raises
        ------
        ValueError
            ``x`` with a number of columns other than ``D`` or holding NaN/inf.
        TypeError
            Complex or non-numeric ``x``.

        {{references_and_pair_1d}}
        >>> m, C = pair.conditional_moments(np.array([[2.0]]))  # N(x / 2, 1 / 2)
        >>> m.round(12).tolist(), C.round(12).tolist()
        ([[1.0]], [[[0.5]]])
        """
        return self.bridge().conditional_moments(x)

    def sample_x1(self, n, rng=None):
        """Draws from :math:`p_1` (:math:`x \\sim p_0`, then :math:`y` from the true plan).

        Parameters
        ----------
        n : int
            Number of draws, >= 1 (generated in blocks of 10 000).
        rng : None, int or numpy.random.Generator

        {{draws_tail}}
        >>> pair.sample_x1(5, rng=0).shape
        (5, 2)
        """
        gen = check_rng(rng)
        out, n = [], check_int(n, "n", minimum=1)
        for start in range(0, n, 10_000):
            x = self.sample_x0(min(10_000, n - start), gen)
            out.append(self.sample(x, rng=gen))
        return np.concatenate(out, axis=0)

    def __repr__(self):
        return (f"BenchmarkPair(dim={self.dim}, epsilon={self.epsilon}, "
                f"n_components={self.weights.shape[0]}, rotated={self.rotated}, seed={self.seed})")


MAKE_PAIR_OPTIONS = Options(
    "MakePairOptions",
    Param("dim", COUNT, doc="dimension D"),
    Param("epsilon", POSITIVE, doc="entropy weight"),
    Param("n_components", COUNT, 5, "mixture components of the potential"))


@MAKE_PAIR_OPTIONS.entry
@fill_doc(**_DOCS)
def make_pair(dim, epsilon, *, n_components=5, rotated=False, rng=0, seed=None):
    """Build a benchmark pair with a known entropic OT solution.

    The recipe: :math:`p_0 = N(0, I_D)`; the potential has ``n_components`` equally
    weighted Gaussians with means :math:`\\mu_n \\sim N(0, 4 I)` and covariances
    :math:`\\Sigma_n = Q_n \\operatorname{diag}(\\lambda_n) Q_n^\\top` with
    :math:`\\lambda_{n,i}` log-uniform in [0.25, 1]; :math:`Q_n = I` (axis-aligned pairs) or a
    Haar-random rotation (``rotated=True``). With axis-aligned covariances the exact
    solution is a diagonal-S LightSB model; rotated pairs need full S.

    Parameters
    ----------
    dim : int
        Dimension ``D`` >= 1.
    epsilon : float
        Entropy weight, > 0.
    n_components : int
        Number ``N`` >= 1 of Gaussians in the potential.
    rotated : bool
        Haar-rotated (full) instead of axis-aligned covariances.
    rng : int or numpy.random.Generator
        A non-negative int names a pair: the same ``(dim, rng)`` gives the same potential
        (pair ``rng=0`` is the one of the published tables); a Generator draws the
        potential from its stream.
    seed : int, optional
        Deprecated alias of an int ``rng`` (``DeprecationWarning``).

    Returns
    -------
    BenchmarkPair

    Raises
    ------
    TypeError
        Non-integer ``dim`` or ``n_components``, ``rng`` not an int or a Generator, or
        non-real ``epsilon``.
    ValueError
        ``dim < 1``, ``n_components < 1``, a negative ``rng``, or ``epsilon`` not finite
        or ``<= 0``.

    {{references}}


    Examples
    --------
    >>> from solvers.transport.benchmark import make_pair
    >>> pair = make_pair(2, 1.0, rng=0)
    >>> pair.sample_x1(5, rng=0).shape
    (5, 2)
    """
    cfg = MAKE_PAIR_OPTIONS.validate(dim=dim, epsilon=epsilon, n_components=n_components)
    dim, epsilon, N = cfg.dim, cfg.epsilon, cfg.n_components
    if seed is not None:
        warnings.warn("make_pair(seed=) is deprecated; pass rng= (the same int names the "
                      "same pair)", DeprecationWarning, stacklevel=2)
        rng = seed
    if isinstance(rng, np.random.Generator):
        seed = int(rng.integers(2 ** 32))
    else:
        seed = check_int(rng, "rng", minimum=0)
        rng = np.random.default_rng([seed, dim, 7])
    means = 2.0 * rng.standard_normal((N, dim))
    lam = np.exp(rng.uniform(np.log(0.25), 0.0, size=(N, dim)))
    covs = np.zeros((N, dim, dim))
    for n in range(N):
        if rotated:
            Q, R = np.linalg.qr(rng.standard_normal((dim, dim)))
            Q = Q * np.sign(np.diag(R))
        else:
            Q = np.eye(dim)
        covs[n] = (Q * lam[n]) @ Q.T
    return BenchmarkPair(np.full(N, 1.0 / N), means, covs, epsilon, rotated=rotated, seed=seed)


def _moments(y):
    m = y.mean(axis=-2)
    c = y - m[..., None, :]
    return m, np.swapaxes(c, -1, -2) @ c / (y.shape[-2] - 1)


def _check_model_pair(model, pair):
    """``TypeError`` naming ``model`` / ``pair`` unless they are a fitted bridge and a pair."""
    if not all(callable(getattr(model, a, None)) for a in ("sample", "conditional_moments")):
        raise TypeError("model must have sample() and conditional_moments() methods (e.g. a "
                        f"SchrodingerBridgeResult), got {type(model).__name__}")
    if not isinstance(pair, BenchmarkPair):
        raise TypeError(f"pair must be a BenchmarkPair, got {type(pair).__name__}")


@fill_doc(**_DOCS)
def bw_uvp(model, pair, *, n_samples=10_000, exact=False, rng=None):
    """BW2-UVP (%) between the model's and the true second marginal :math:`p_1`.

    Parameters
    ----------
    model
        Anything with ``sample(x, rng=...)`` and ``conditional_moments(x)`` (a
        :class:`~solvers.transport.SchrodingerBridgeResult`).
    pair : BenchmarkPair
    n_samples : int
        Inputs :math:`x \\sim p_0` (and model / true samples) used.
    exact : bool
        ``False``: sample moments of ``n_samples`` model draws against ``n_samples`` true
        draws (as published). ``True``: both marginals' moments from the exact conditional
        moments averaged over the same inputs (law of total covariance), so the only noise
        is the choice of inputs, shared by both sides.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    float
        :math:`100\\,\\mathrm{BW}_2^2(\\hat p_1, p_1) / (\\tfrac12 \\operatorname{tr}
        \\operatorname{Cov} p_1)`, in percent.

    Raises
    ------
    ValueError
        ``n_samples < 2`` (``< 1`` with ``exact=True``), a negative ``rng`` seed, or inputs
        the model rejects.
    TypeError
        ``model`` without ``sample`` / ``conditional_moments`` methods, ``pair`` not a
        :class:`BenchmarkPair`, ``rng`` that is not None, an int or a
        ``numpy.random.Generator``; non-integer ``n_samples``.

    {{references}}
    .. [2] A. Korotin, N. Gushchin, E. Burnaev, "Light Schrödinger Bridge", ICLR 2024.

    Examples
    --------
    >>> from solvers.transport.benchmark import make_pair, bw_uvp
    >>> pair = make_pair(2, 1.0)
    >>> round(bw_uvp(pair.bridge(), pair, n_samples=200, exact=True, rng=0), 6)
    0.0
    """
    _check_model_pair(model, pair)
    n_samples = check_int(n_samples, "n_samples", minimum=1 if exact else 2)
    gen = check_rng(rng)
    x = pair.sample_x0(n_samples, gen)
    if exact:
        stats = []
        for obj in (model, pair):
            m, C = (to_host(a) for a in obj.conditional_moments(x))
            mean = m.mean(axis=0)
            cov = C.mean(axis=0) + np.cov(m.T, bias=True).reshape(pair.dim, pair.dim)
            stats.append((mean, cov))
        (m1, C1), (m2, C2) = stats
    else:
        m1, C1 = _moments(to_host(model.sample(x, rng=gen)))
        m2, C2 = _moments(pair.sample_x1(n_samples, gen))
    return float(100.0 * bw2_squared(m1, C1, m2, C2) / (0.5 * pair.var_x1))


CBW_OPTIONS = Options(
    "CbwUvpOptions",
    Param("x", Array(ndim=2, empty=False), None, "inputs (n, D) (default: drawn from p0)"),
    Param("n_inputs", COUNT, 1000, "inputs drawn when x is None"),
    Param("n_samples", COUNT, 1000, "draws per input (>= 2 for the sample version)"),
    Param("rng", SEED, None, "random numbers"),
    Param("chunk", (COUNT, NONE), None, "inputs per sampling block"))


@CBW_OPTIONS.entry
@fill_doc(**_DOCS)
def cbw_uvp(model, pair, *, x=None, n_inputs=1000, n_samples=1000, exact=False, rng=None,
            chunk=None):
    """Conditional BW2-UVP (%): mean over inputs of BW2^2(model(.|x), true(.|x)) / (Var p1 / 2).

    Parameters
    ----------
    model
        Anything with ``sample(x, n_samples, rng)`` and ``conditional_moments(x)``.
    pair : BenchmarkPair
    x : array, shape (n, D), optional
        Test inputs; default ``n_inputs`` draws from :math:`p_0`.
    n_inputs : int
    n_samples : int
        Sample version: draws per input from each side (published: 1000 x 1000). Its noise
        floor is about :math:`(D + 4)/(4 n)` of the conditional variance.
    exact : bool
        Use the exact mixture moments of both sides instead of sample moments.
    rng : None, int or numpy.random.Generator
    chunk : int, optional
        Inputs per sampling block (memory: ``chunk * n_samples * D`` floats per side).

    Returns
    -------
    float
        Mean conditional :math:`\\mathrm{BW}_2^2` over the inputs, in percent of
        :math:`\\tfrac12 \\operatorname{tr}\\operatorname{Cov} p_1`.

    Raises
    ------
    ValueError
        ``n_samples < 2`` (sample version), ``n_inputs < 1``, ``chunk < 1``, a negative
        ``rng`` seed, or ``x`` that is empty, not 2-d, holds NaN/inf or whose number of
        columns is not the pair's dimension.
    TypeError
        ``model`` without ``sample`` / ``conditional_moments`` methods, ``pair`` not a
        :class:`BenchmarkPair`, ``rng`` that is not None, an int or a
        ``numpy.random.Generator``; non-integer ``n_samples``, ``n_inputs`` or ``chunk``;
        complex or non-numeric ``x``.

    {{references}}
    .. [2] A. Korotin, N. Gushchin, E. Burnaev, "Light Schrödinger Bridge", ICLR 2024.

    Examples
    --------
    >>> from solvers.transport.benchmark import make_pair, cbw_uvp
    >>> pair = make_pair(2, 1.0)
    >>> cbw_uvp(pair.bridge(), pair, n_inputs=10, exact=True)
    0.0
    """
    _check_model_pair(model, pair)
    cfg = CBW_OPTIONS.validate(n_inputs=n_inputs, n_samples=n_samples, rng=rng, chunk=chunk)
    chunk, gen = cfg.chunk, check_rng(cfg.rng)
    if x is None:
        x = pair.sample_x0(cfg.n_inputs, gen)
    (x,) = CBW_OPTIONS.arrays(resolve_backend("numpy", np), x=x)
    check_shape(x, (None, pair.dim), "x")
    norm = 0.5 * pair.var_x1
    if exact:
        m1, C1 = (to_host(a) for a in model.conditional_moments(x))
        m2, C2 = (to_host(a) for a in pair.conditional_moments(x))
        vals = to_host(bw2_squared(m1, C1, m2, C2))
        return float(100.0 * np.mean(vals) / norm)
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    chunk = chunk or max(1, int(4_000_000 // (n_samples * pair.dim)))
    vals = []
    for start in range(0, x.shape[0], chunk):
        xb = x[start:start + chunk]
        m1, C1 = _moments(to_host(model.sample(xb, n_samples=n_samples, rng=gen)))
        m2, C2 = _moments(to_host(pair.sample(xb, n_samples=n_samples, rng=gen)))
        vals.append(to_host(bw2_squared(m1, C1, m2, C2)))
    return float(100.0 * np.mean(np.concatenate(vals)) / norm)


fill_doc_members(BenchmarkPair, **_DOCS)
