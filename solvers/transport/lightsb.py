"""LightSB: Schrödinger bridges between sample sets with a Gaussian-mixture potential.

Korotin, Gushchin & Burnaev, "Light Schrödinger Bridge", ICLR 2024. The Schrödinger bridge
with Wiener prior :math:`dX_t = \\sqrt{\\varepsilon}\\, dW_t` between :math:`p_0` and
:math:`p_1` (equivalently entropic OT with cost :math:`\\|x-y\\|^2/2` and entropy weight
:math:`\\varepsilon`) is modelled through the adjusted Schrödinger potential

.. math::

   v_\\theta(y) = \\sum_{k=1}^K \\alpha_k N(y \\mid r_k, \\varepsilon S_k), \\qquad
   c_\\theta(x) = \\sum_k \\alpha_k
   \\exp\\Big(\\frac{x^\\top S_k x + 2 r_k^\\top x}{2\\varepsilon}\\Big),

which gives the conditional plan in closed form,

.. math::

   \\pi_\\theta(y \\mid x) = \\sum_k \\gamma_k(x) N(y \\mid r_k + S_k x, \\varepsilon S_k), \\qquad
   \\log \\gamma_k(x) = \\log \\alpha_k + \\frac{x^\\top S_k x + 2 r_k^\\top x}{2\\varepsilon}
   - \\log c_\\theta(x).

The parameters minimise :math:`L(\\theta) = \\mathbb{E}_{p_0} \\log c_\\theta(x)
- \\mathbb{E}_{p_1} \\log v_\\theta(y)`, which equals
:math:`\\mathrm{KL}(\\pi^* \\| \\pi_\\theta)` up to a constant. Both terms are
log-sum-exps over the components, and their gradients are written out here in closed form
(no autodiff).

The code: :mod:`._lightsb_model` (the model against ``xp``), :mod:`._lightsb_kernels`
(its kernel table), :mod:`._lightsb_fit` (starts and optimizers), :mod:`._lightsb_result`
(the fitted bridge) and this module (the public entry point).
"""
import math
import time

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.frames import unwrap_frame
from .._lib.namespace import array_namespace
from .._lib.results import make_result, STOPPED_BY_CALLBACK
from .._lib.rng import Draws, check_rng
from .._lib.params import (Array, Choice, Options, Param, Real, BACKEND, CALLBACK, COUNT,
                           FLAG, NONNEGATIVE, POSITIVE, SEED)
from ..lse import logsumexp
from ._lightsb_fit import _Fitter, NONFINITE, SUCCESS
from ._lightsb_kernels import Kernels
from ._lightsb_search import Search
from ._lightsb_model import Params, S_matrices
from ._lightsb_result import SchrodingerBridgeResult, bridge_from_parameters

__all__ = ["schrodinger_bridge", "SchrodingerBridgeResult", "bridge_from_parameters"]

#: Adam step size (both kinds of S)
_DEFAULT_LR = 1e-2

OPTIONS = Options(
    "SchrodingerBridgeOptions",
    Param("x0", Array(ndim=2, empty=False), doc="samples of the initial distribution"),
    Param("x1", Array(ndim=2, empty=False), doc="samples of the final distribution"),
    Param("epsilon", POSITIVE, doc="entropy weight (variance of the prior per unit time)"),
    Param("n_components", COUNT, 50, "mixture components K (the most the split path grows to)"),
    Param("covariance", Choice("diag", "full"), "diag", "diagonal or full S_k"),
    Param("method", Choice("lightsb"), "lightsb", "the model"),
    Param("optimizer", Choice("lbfgs", "adam"), "lbfgs", "full-batch L-BFGS or minibatch Adam"),
    Param("batch_size", COUNT, 128, "Adam minibatch size per side"),
    Param("maxiter", COUNT, None, "iterations per fit (default 500 L-BFGS, 10000 Adam)"),
    Param("lr", POSITIVE, None, "Adam step size (default 1e-2)"),
    Param("lr_decay", NONNEGATIVE, 0.05, "final fraction of lr in the cosine schedule"),
    Param("validation_fraction", Real(0, 0.5, high_open=True), 0.1,
          "L-BFGS: share of each sample set held out for early stopping"),
    Param("patience", COUNT, 10, "L-BFGS: iterations without held-out improvement"),
    Param("init", Choice("auto", "split", "kmeans++", "random"), None,
          "how the mixture starts (default: auto for L-BFGS, kmeans++ for Adam)"),
    Param("split_tol", NONNEGATIVE, 1e-3, "smallest score drop per split that keeps splitting"),
    Param("init_scale", POSITIVE, 1.0, "initial S_k = init_scale I"),
    Param("n_restarts", COUNT, 1, "repeats of the starts of init"),
    Param("rng", SEED, None, "random numbers"),
    Param("callback", CALLBACK, None, "called with every iteration's intermediate result"),
    Param("progress", FLAG, False, "show a progress bar"),
    Param("backend", BACKEND, "auto", "which kernels run"),
)


@OPTIONS.entry
def schrodinger_bridge(x0, x1, epsilon, *, n_components=50, covariance="diag",
                       method="lightsb", optimizer="lbfgs", batch_size=128, maxiter=None,
                       lr=None, lr_decay=0.05, validation_fraction=0.1, patience=10,
                       init=None, split_tol=1e-3, init_scale=1.0, n_restarts=1, rng=None,
                       callback=None, progress=False,
                       backend="auto"):
    """Fit a Schrödinger bridge (entropic OT plan) between two sample sets with LightSB.

    Parameters
    ----------
    x0, x1 : array or pandas.DataFrame, shape (n0, D), (n1, D)
        Samples of the initial and final distributions (a DataFrame's numeric columns are
        its D coordinates).
    epsilon : float
        Entropy weight: the prior is Brownian motion with variance ``epsilon`` per unit
        time, the static cost :math:`\\|x-y\\|^2/2`.
    n_components : int
        Number of Gaussian components K of the potential (``x1`` needs at least K rows);
        with ``init="split"`` the most the fit may grow to.
    covariance : {"diag", "full"}
        Diagonal ``S_k`` (cost O(n K D) per step) or full ``S_k = L_k L_k^T``
        (O(n K D^2)). Data whose conditional covariances are not axis-aligned needs
        ``"full"`` for high accuracy.
    method : {"lightsb"}
    optimizer : {"lbfgs", "adam"}
        Full-batch L-BFGS on the closed-form gradient with early stopping on a
        held-out ``validation_fraction`` of both sets (default: measured faster or as fast
        to the same accuracy for every epsilon tried, and far better at small epsilon), or
        minibatch Adam (minibatches drawn from the samples each step; memory independent
        of the sample size, the choice for data that does not fit in memory).
    batch_size : int
        Adam minibatch size per side.
    maxiter : int, optional
        Adam steps (default 10000) or L-BFGS iterations per fit (default 500; each size
        of the split path and each start is one fit).
    lr : float, optional
        Adam step size (default 1e-2), decayed by a cosine schedule to
        ``lr * lr_decay``.
    lr_decay : float
        Final fraction of ``lr`` in the cosine schedule.
    validation_fraction : float
        L-BFGS only: fraction of each sample set held out for early stopping (0 disables).
    patience : int
        L-BFGS only: iterations without held-out improvement before a fit stops; the
        fit that is returned may go on to twice as many (see Notes).
    init : {"auto", "split", "kmeans++", "random"}, optional
        How the mixture starts.

        - ``"split"``: fit one component, then repeatedly split every component in two
          (the heaviest first, up to ``n_components``) and refit, keeping the larger
          mixture only while the score drops by more than ``split_tol``.
        - ``"kmeans++"`` (default for Adam): ``n_components`` means drawn from ``x1`` by
          k-means++ seeding; ``"random"``: drawn uniformly.
        - ``"auto"`` (default for L-BFGS): both ``"split"`` and ``"kmeans++"``, raced on
          the score: the split path runs first, then the k-means++ start, which is
          dropped as soon as its held-out loss curve shows it cannot get below the split
          path's score (see Notes); the lower score is kept.

        The score is the held-out loss (the training loss without a held-out part); the
        sizes tried and their scores are in ``stages``. Neither start wins everywhere:
        a fixed K = 50 start misses potential components that serve a few percent of
        the inputs (recipe pair D = 64, eps = 0.1: cBW2-UVP 0.77 % vs 0.23 % by
        splitting), while splitting can stop in a coarser optimum (D = 16, eps = 0.1:
        0.17 % vs 0.05 %); the held-out loss tells which one is better.
    split_tol : float
        Smallest drop of the score per split (in nats, the loss is an average) that
        keeps splitting.
    init_scale : float
        Initial ``S_k = init_scale * I``.
    n_restarts : int
        The starts of ``init`` repeated with other initial means or split directions
        (each fit with the full ``maxiter``; labelled ``"split #2"``, ...), raced like
        the starts of ``"auto"``; the lowest score is kept, the scores in
        ``restart_scores``.
    rng : None, int or numpy.random.Generator
        The held-out split, then (in the order the candidates run) split directions,
        initial means and minibatches: one stream, so a seed reproduces the fit.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration of every candidate, with

        - ``x``: the current parameters as one vector ``[log alpha (K), r (K D), q]`` in
          the input's namespace, ``q`` = log of the diagonal S (K D) or the Cholesky
          factors of S (K D D); ``bridge``: the same iterate as a
          :class:`SchrodingerBridgeResult` (weights normalised; ``log_alpha``, ``r``,
          ``S`` and every method, e.g. ``conditional_moments``);
        - ``candidate`` (``"split"``, ``"kmeans++"``, ...), ``n_components`` (K of the
          iterate), ``fun`` (training loss), ``val_loss`` (held-out loss; the training
          loss without a held-out part, NaN for Adam), ``nit`` (iterations so far, all
          candidates together) and ``elapsed`` (seconds since the call began).

        Raise ``StopIteration`` to stop: the best fit so far is returned with
        ``success=False``, ``status=99``.
    progress : bool
        Show a progress bar on stderr.
    backend : {"auto", "numpy", "numba", "cupy"}

    Returns
    -------
    SchrodingerBridgeResult
        With ``log_alpha``, ``r``, ``S``, ``n_components`` (the number kept),
        ``success``, ``loss`` (training-loss history of the kept candidate, every stage),
        ``nit`` (iterations of all candidates), ``stages`` (``(n_components, score)`` of
        every fit tried), ``restart_scores`` (one score per candidate), ``fit_seconds``,
        ``candidates`` and the methods ``sample``, ``conditional_moments``, ``drift``,
        ``simulate``, ``bridge``, ``log_weights``.

        ``candidates`` is one dict per candidate, in the order they ran: ``label``,
        ``outcome`` (``"finished"``, ``"dropped"`` when it could not overtake the best,
        ``"stopped"`` by the callback, ``"not run"`` after a stop), ``kept``, ``score``,
        ``n_components`` (of its best fit), ``stages``, ``nit``, ``seconds`` and
        ``history``: arrays with one entry per iteration, ``n_components``, ``loss``
        (training), ``val_loss`` (held-out) and ``time`` (seconds since the call began).

    Raises
    ------
    ValueError
        ``epsilon <= 0``, ``x0`` and ``x1`` with different dimensions, NaN or inf samples,
        fewer than ``n_components`` samples in ``x1``, or unknown option values.
    TypeError
        A ``callback`` that is not callable.

    Notes
    -----
    The loss :math:`L = \\mathbb{E}_{x \\sim p_0} \\log c_\\theta(x)
    - \\mathbb{E}_{y \\sim p_1} \\log v_\\theta(y)` has the closed-form gradients

    .. math::

       \\partial_{r_k} L = \\mathbb{E}_{p_0}[\\gamma_k(x)]\\, x / \\varepsilon
          - \\mathbb{E}_{p_1}[u_k(y) S_k^{-1}(y - r_k)] / \\varepsilon, \\qquad
       \\partial_{S_k} L = \\mathbb{E}_{p_0}[\\gamma_k x x^\\top] / (2\\varepsilon)
          + \\tfrac12 \\mathbb{E}_{p_1}\\big[u_k \\big(S_k^{-1}
          - S_k^{-1}(y-r_k)(y-r_k)^\\top S_k^{-1}/\\varepsilon\\big)\\big],

    and :math:`\\partial_{\\log\\alpha_k} L = \\mathbb{E}_{p_0}\\gamma_k - \\mathbb{E}_{p_1} u_k`,
    where :math:`u_k(y)` are the posterior weights of the components of :math:`v_\\theta`.

    The candidates (the split path, the k-means++ start, their restarts) run one after
    the other; each fit keeps the iterate with the lowest held-out loss. A candidate in
    its last fit is dropped at the first iteration where its best held-out loss
    :math:`h_t`, minus 2.5 times its drop over the last half of its iterations
    (:math:`2.5 (h_{t/2} - h_t)`, at least 15 iterations in), is still above the best
    score of the other candidates: L-BFGS curves flatten, so that is a generous guess of
    what it has left to gain. A split whose fit cannot beat its parent's score by
    ``split_tol`` by the same bound (judged from 8 iterations on) ends early. Once the
    race is decided, the kept fit resumes where it stopped (same L-BFGS state) until its
    held-out loss has not improved for ``2 * patience`` iterations, spending at most 5 %
    of what the race spent: telling candidates apart needs only the shorter wait, while
    at small epsilon the kept fit's held-out loss can pause and then fall again (recipe
    pairs with 150 000 samples: cBW2-UVP 0.074 -> 0.032 % at D = 64, eps = 1; 0.024 ->
    0.020 % at D = 16, eps = 0.1).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import schrodinger_bridge
    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=(2000, 2))
    >>> x1 = 2.0 * rng.normal(size=(2000, 2)) + 1.0
    >>> sb = schrodinger_bridge(x0, x1, 1.0, n_components=1, rng=0)
    >>> y = sb.sample(np.zeros((4000, 2)), rng=1)
    >>> bool(np.all(np.abs(y.mean(axis=0) - 1.0) < 0.2))
    True

    References
    ----------
    .. [1] A. Korotin, N. Gushchin, E. Burnaev, "Light Schrödinger Bridge", ICLR 2024.
    .. [2] N. Gushchin et al., "Building the Bridge of Schrödinger: A Continuous Entropic
       Optimal Transport Benchmark", NeurIPS 2023.
    """
    start_time = time.perf_counter()
    opts = _fill_defaults(OPTIONS.validate(
        epsilon=epsilon, n_components=n_components, covariance=covariance, method=method,
        optimizer=optimizer, batch_size=batch_size, maxiter=maxiter, lr=lr,
        lr_decay=lr_decay, validation_fraction=validation_fraction, patience=patience,
        init=init, split_tol=split_tol, init_scale=init_scale, n_restarts=n_restarts,
        rng=rng, callback=callback, progress=progress, backend=backend))
    (x0, _), (x1, _) = unwrap_frame(x0, "x0"), unwrap_frame(x1, "x1")
    be = resolve_backend(opts.backend, array_namespace(x0, x1))
    x0, x1 = _check_samples(*OPTIONS.arrays(be, x0=x0, x1=x1), opts.n_components, be.xp)
    fitter = _init_fitter(x0, x1, opts, be)
    search = Search(fitter, callback=opts.callback, progress=opts.progress,
                    start_time=start_time, to_bridge=lambda p: _bridge_view(p, opts, be))
    _add_candidates(search, opts, x0, x1)
    search.run()
    return _finish(search, opts, be, time.perf_counter() - start_time)


def _add_candidates(search, opts, x0_all, x1_all):
    """The starts of ``init``, ``n_restarts`` times. They run one after the other and
    draw from the one stream of ``rng`` in that order (the held-out split first)."""
    kinds = {"auto": ("split", "kmeans++")}.get(opts.init, (opts.init,))
    for i in range(opts.n_restarts):
        for kind in kinds:
            label = kind if opts.n_restarts == 1 else f"{kind} #{i + 1}"
            search.add(kind, label, search.fitter.draws, x0_all, x1_all)


def _fill_defaults(opts):
    """The defaults that depend on the optimizer (and on K for ``init``)."""
    adam = opts.optimizer == "adam"
    init = opts.init if opts.init is not None else ("kmeans++" if adam else "auto")
    if init == "auto" and opts.n_components == 1:
        init = "split"  # both starts are the same single component
    return opts.replace(
        init=init, maxiter=opts.maxiter if opts.maxiter is not None else (10000 if adam else 500),
        lr=opts.lr if opts.lr is not None else _DEFAULT_LR)


def _check_samples(x0, x1, K, xp):
    """What the spec cannot say about ``x0``, ``x1``: the same dimension D >= 1, enough
    rows; both cast to their common float dtype."""
    if x0.shape[1] != x1.shape[1]:
        raise ValueError(f"x0 and x1 must have the same number of columns (dimension), got "
                         f"{x0.shape[1]} and {x1.shape[1]}")
    if x0.shape[1] == 0:
        raise ValueError("x0 and x1 must have at least one column")
    if x0.shape[0] < 2:
        raise ValueError(f"x0 needs at least 2 samples, got {x0.shape[0]}")
    if x1.shape[0] < max(K, 2):
        raise ValueError(f"x1 needs at least n_components={K} samples (the initial means are "
                         f"drawn from it), got {x1.shape[0]}")
    dtype = xp.result_type(x0.dtype, x1.dtype)
    return xp.astype(x0, dtype), xp.astype(x1, dtype)


def _init_fitter(x0, x1, opts, be):
    """The solver state: kernels, draws, block size and (L-BFGS) the held-out split."""
    K, D = opts.n_components, x0.shape[1]
    width = (K + 2) * D * (D if opts.covariance == "full" else 1)
    fitter = _Fitter(x0, x1, opts.epsilon, be=be, kernels=Kernels(be),
                     draws=Draws(check_rng(opts.rng), be.xp), opts=opts,
                     progress=opts.progress, chunk=max(256, int(2 ** 21 // max(width, 1))))
    if opts.optimizer == "lbfgs" and opts.validation_fraction > 0:
        fitter.hold_out(opts.validation_fraction)
    return fitter


def _bridge_fields(params, opts, be):
    """The result fields of a bridge with these parameters (gauge fixed: the weights
    sum to one), and the gauge-fixed parameters."""
    xp = be.xp
    la = params.la - logsumexp(params.la, backend=Kernels(be).lse)
    params = Params(la, params.r, params.q, params.kind)
    fields = dict(log_alpha=be.to_input(la), r=be.to_input(params.r),
                  S=be.to_input(S_matrices(params, xp)), epsilon=opts.epsilon,
                  covariance=opts.covariance, optimizer=opts.optimizer,
                  n_components=int(params.r.shape[0]), backend=opts.backend)
    return fields, params


def _bridge_view(params, opts, be):
    """The iterate as a :class:`SchrodingerBridgeResult` (what a callback sees as
    ``intermediate_result.bridge``)."""
    fields, params = _bridge_fields(params, opts, be)
    return SchrodingerBridgeResult(**fields)._attach(params)


def _candidate_record(c):
    """What the result keeps of one candidate (see ``candidates`` in the docstring)."""
    rows = np.asarray(c.history, dtype=np.float64).reshape(-1, 4)
    return {"label": c.label, "outcome": c.outcome, "score": c.best_val,
            "n_components": None if c.best is None else int(c.best[1].r.shape[0]),
            "stages": list(c.stages), "nit": c.nit, "seconds": c.seconds,
            "history": {"n_components": rows[:, 0].astype(np.int64), "loss": rows[:, 1],
                        "val_loss": rows[:, 2], "time": rows[:, 3]}}


def _finish(search, opts, be, seconds):
    """Pick the candidate with the lowest score, fix the gauge and build the result."""
    xp = be.xp
    cands = search.candidates
    win = search.winner()
    _, params, status, message = win.best
    if search.stopped:
        status, message = STOPPED_BY_CALLBACK
    finite = all(bool(xp.all(xp.isfinite(a))) for a in params.arrays())
    if not finite and status in SUCCESS:
        status, message = NONFINITE[0], "parameters became non-finite"
    hist = np.asarray([row[1] for row in win.history], dtype=np.float64)
    records = [_candidate_record(c) for c in cands]
    for rec, c in zip(records, cands):
        rec["kept"] = c is win
    fields, params = _bridge_fields(params, opts, be)
    res = make_result(
        status, success=status in SUCCESS, message=message,
        result_class=SchrodingerBridgeResult, fun=float(hist[-1]) if hist.size else math.nan,
        loss=hist, nit=search.nit, restart_scores=[c.best_val for c in cands],
        stages=[st for c in cands for st in c.stages], candidates=records,
        fit_seconds=seconds, **fields)
    return res._attach(params)
