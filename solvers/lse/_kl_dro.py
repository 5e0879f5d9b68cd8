r"""KL-distributionally robust regression and classification, solved by Safe-KL.

:math:`\min_\theta \lambda \log \frac1n \sum_i e^{\ell_i(\theta)/\lambda} +
\frac{\alpha}{2}\|\theta\|^2`: the penalised dual of the worst case over :math:`Q` of
:math:`\mathbb{E}_Q \ell - \lambda\,\mathrm{KL}(Q\|P_n)`.
"""
import math

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from .._lib.backend import backend_arg, resolve_backend
from .._lib.docstrings import fill_doc
from .._lib.frames import unwrap_frame
from .._lib.namespace import array_namespace
from .._lib.params import (COUNT, NONNEGATIVE, POSITIVE, SEED, Array, Choice, Integer,
                           Options, Param)
from .._lib.results import Status, make_result
from .._lib.rng import check_rng
from .._lib.validation import check_finite, promote_float16
from ._minibatch import is_partitioned
from ._safe_kl_kernels import PASS_GENERIC_BELOW
from ._safe_kl_solver import (AVERAGE, BACKEND_OPTION, CALLBACK_OPTION, PROGRESS, RHO, RNG,
                              _softplus, scheduled)
from .logsumexp import logsumexp, softmax
from .safe_kl import minimize_logsumexp

__all__ = ["kl_dro", "kl_dro_objective", "kl_dro_losses", "dro_dataset"]

_LOSS = Param("loss", Choice("squared", "logistic"), "squared", "per-sample loss")
_LAM = Param("lam", POSITIVE, doc="temperature lambda")
_L2 = Param("l2", NONNEGATIVE, 0.0, "ridge coefficient alpha")
_THETA = Param("theta", Array(ndim=1, finite=False), doc="model coefficients (d,)")
_X = Param("X", Array(ndim=2, empty=False), doc="features (n, d)")
_Y = Param("y", Array(ndim=1), doc="targets or labels (n,)")

DATASET_OPTIONS = Options(
    "DRODatasetOptions",
    Param("n", Integer(low=2), 20000, "rows"),
    Param("d", COUNT, 10, "features before the intercept column"),
    Param("loss", Choice("logistic", "squared"), "logistic", "kind of target"),
    Param("rng", SEED, 0, "random numbers"))

LOSSES_OPTIONS = Options("KLDROLossesOptions", _THETA, _X, _Y, _LOSS)

OBJECTIVE_OPTIONS = Options("KLDROObjectiveOptions", _THETA, _X, _Y, _LAM, _LOSS, _L2)

KL_DRO_OPTIONS = Options(
    "KLDROOptions",
    _X, _Y, _LAM, _LOSS, _L2,
    Param("method", Choice("safe-kl", "naive", "lbfgs"), "safe-kl", "solver"),
    Param("x0", Array(ndim=1), None, "start (zeros by default)"),
    Param("rho", RHO, 0.005, "Safe-KL cap parameter or a schedule rho(k)"),
    Param("batch_size", COUNT, 32, "terms per minibatch"),
    Param("epochs", POSITIVE, 5, "passes over the data"),
    Param("maxiter", COUNT, None, "steps (L-BFGS iterations for 'lbfgs')"),
    Param("lr", scheduled(POSITIVE), 0.05, "step size or a schedule lr(k)"),
    AVERAGE, RNG, CALLBACK_OPTION, PROGRESS, BACKEND_OPTION)

_HU_HONG = """
References
----------
.. [1] Z. Hu, L. J. Hong, "Kullback-Leibler divergence constrained distributionally
   robust optimization", Optimization Online, 2013.
"""
_REFERENCES = _HU_HONG + """\
.. [2] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
   optimization of LogSumExp", arXiv:2509.24894, 2025.
"""

_ARRAY_TYPES = """
TypeError
    Complex or non-numeric arrays, or arrays from different array libraries.
"""

_MODEL = """
theta : array, shape (d,)
    Model coefficients (NaN and inf propagate).
X : array or pandas DataFrame, shape (n, d)
    Features (add a column of ones for an intercept); finite.
y : array or pandas Series, shape (n,)
    Targets (``"squared"``) or labels in {-1, +1} (``"logistic"``); finite.
"""


@DATASET_OPTIONS.entry
@fill_doc(references=_REFERENCES)
def dro_dataset(n=20000, d=10, loss="logistic", rng=0):
    r"""The documented synthetic data set used by the KL-DRO tests, benchmarks and example.

    Features :math:`x \sim N(0, I_d)` plus a column of ones (intercept); a linear score
    :math:`x^\top\beta + \sigma(x)\,\varepsilon` with :math:`\beta \sim N(0, I_d)`,
    :math:`\varepsilon \sim N(0, 1)` and heteroscedastic noise :math:`\sigma(x) = 3` on the
    subgroup :math:`x_1 > 1` (about 16% of the rows), 1 elsewhere: the subgroup a robust
    model must not neglect. ``"squared"`` returns the score as target; ``"logistic"``
    returns labels ``sign(score - median(score))`` in {-1, +1} (balanced classes).

    Parameters
    ----------
    n, d : int
        Rows (at least 2) and features (at least 1, before the intercept column).
    loss : {"logistic", "squared"}
    rng : None, int or numpy.random.Generator

    Returns
    -------
    X : ndarray, shape (n, d + 1)
        Last column all ones.
    y : ndarray, shape (n,)
        Real targets (``"squared"``) or labels in {-1, +1} (``"logistic"``).

    Raises
    ------
    TypeError
        Non-integer ``n`` or ``d``, or an ``rng`` that is not None, an int or a
        ``numpy.random.Generator``.
    ValueError
        ``n < 2``, ``d < 1``, an unknown ``loss``, or a negative ``rng`` seed.

    {{references}}

    Examples
    --------
    >>> from solvers.lse import dro_dataset
    >>> X, y = dro_dataset(1000)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 11), [-1.0, 1.0])
    """
    cfg = DATASET_OPTIONS.validate(n=n, d=d, loss=loss, rng=rng)
    gen = check_rng(cfg.rng)
    X = gen.normal(size=(cfg.n, cfg.d))
    beta = gen.normal(size=cfg.d)
    scale = np.where(X[:, 0] > 1.0, 3.0, 1.0)
    score = X @ beta + scale * gen.normal(size=cfg.n)
    y = score if cfg.loss == "squared" else np.where(score > np.median(score), 1.0, -1.0)
    return np.c_[X, np.ones(cfg.n)], y


def _model_arrays(spec, theta, X, y):
    """``(theta, X, y, xp)`` of a public loss or objective call: pandas unwrapped,
    converted and checked in the inputs' own namespace."""
    (theta, _), (X, _), (y, _) = (unwrap_frame(theta, "theta"), unwrap_frame(X, "X"),
                                  unwrap_frame(y, "y"))
    be = resolve_backend("auto", array_namespace(theta, X, y))
    theta, X, y = spec.arrays(be, theta=theta, X=X, y=y)
    if theta.shape[0] != X.shape[1]:
        raise ValueError(f"theta must have shape ({X.shape[1]},) to match X with "
                         f"{X.shape[1]} columns, got {tuple(theta.shape)}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},) like the rows of X, got "
                         f"{tuple(y.shape)}")
    return theta, X, y, be.xp


@LOSSES_OPTIONS.entry
@fill_doc(model=_MODEL, array_types=_ARRAY_TYPES, references=_HU_HONG)
def kl_dro_losses(theta, X, y, loss="squared"):
    r"""Per-sample losses of a linear model and their gradients in ``theta``.

    ``"squared"``: :math:`\ell_i = (x_i^\top\theta - y_i)^2 / 2`;
    ``"logistic"`` (labels in {-1, +1}): :math:`\ell_i = \log(1 + e^{-y_i x_i^\top\theta})`.

    Parameters
    ----------
    {{model}}
    loss : {"squared", "logistic"}

    Returns
    -------
    losses : array, shape (n,)
    jac : array, shape (n, d)
        Row ``i`` is :math:`\nabla_\theta \ell_i`.

    Raises
    ------
    ValueError
        An unknown ``loss``; ``X`` or ``y`` not finite, empty ``X``, or arrays with the
        wrong number of dimensions or shapes that do not match.
    {{array_types}}

    Notes
    -----
    ``"logistic"`` assumes labels in {-1, +1} (not checked). The logistic loss is
    evaluated as a stable softplus, so it does not overflow for large margins.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse import kl_dro_losses
    >>> l, g = kl_dro_losses(np.zeros(2), np.ones((3, 2)), np.array([1.0, -1.0, 1.0]),
    ...                      "logistic")
    >>> l.round(4).tolist(), g.shape
    ([0.6931, 0.6931, 0.6931], (3, 2))
    """
    cfg = LOSSES_OPTIONS.validate(loss=loss)
    theta, X, y, xp = _model_arrays(LOSSES_OPTIONS, theta, X, y)
    return _losses(theta, X, y, cfg.loss, xp)


def _losses(theta, X, y, loss, xp):
    """:func:`kl_dro_losses` on validated arrays (the minibatch steps call this)."""
    z = X @ theta
    if loss == "squared":
        r = z - y
        return 0.5 * r * r, xp.reshape(r, (-1, 1)) * X
    m = y * z
    with np.errstate(over="ignore"):
        sig = 1.0 / (1.0 + xp.exp(m))  # sigma(-m)
    return _softplus(-m, xp), xp.reshape(-sig * y, (-1, 1)) * X


@OBJECTIVE_OPTIONS.entry
@fill_doc(model=_MODEL, array_types=_ARRAY_TYPES, references=_REFERENCES)
def kl_dro_objective(theta, X, y, *, lam, loss="squared", l2=0.0):
    r"""Exact KL-DRO objective and gradient (full batch).

    .. math:: J(\theta) = \lambda \log \frac1n \sum_i e^{\ell_i(\theta)/\lambda}
              + \frac{\alpha}{2}\|\theta\|^2, \qquad
              \nabla J = \sum_i p_i \nabla\ell_i + \alpha\theta,\;
              p = \operatorname{softmax}(\ell/\lambda).

    Parameters
    ----------
    {{model}}
    lam : float
        Temperature :math:`\lambda > 0` (large: empirical risk; small: worst case).
    loss : {"squared", "logistic"}
    l2 : float
        Ridge coefficient :math:`\alpha \ge 0`.

    Returns
    -------
    value : float
    grad : array, shape (d,)

    Raises
    ------
    ValueError
        An unknown ``loss``, ``lam <= 0`` or ``l2 < 0``; ``X`` or ``y`` not finite, empty
        ``X``, or arrays with the wrong number of dimensions or shapes that do not match.
    {{array_types}}

    Notes
    -----
    The log-sum-exp and softmax are evaluated stably, so large ``losses / lam`` do not
    overflow.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse import kl_dro_objective
    >>> X, y = np.ones((4, 1)), np.array([0.0, 0.0, 0.0, 2.0])
    >>> v, g = kl_dro_objective(np.zeros(1), X, y, lam=1.0)
    >>> round(v, 6)  # losses (0, 0, 0, 2): log(3/4 + e^2/4)
    0.954459
    """
    cfg = OBJECTIVE_OPTIONS.validate(lam=lam, loss=loss, l2=l2)
    theta, X, y, xp = _model_arrays(OBJECTIVE_OPTIONS, theta, X, y)
    return _objective(theta, X, y, cfg.lam, cfg.loss, cfg.l2, xp)


def _objective(theta, X, y, lam, loss, l2, xp, backend="auto"):
    """:func:`kl_dro_objective` on validated arrays (L-BFGS evaluates this); ``backend``
    of its log-sum-exp and softmax."""
    losses, jac = _losses(theta, X, y, loss, xp)
    a = losses / lam
    value = lam * (float(logsumexp(a, backend=backend)) - math.log(a.shape[0])) \
        + 0.5 * l2 * float(xp.sum(theta * theta))
    grad = softmax(a, backend=backend) @ jac + l2 * theta
    return value, grad


@KL_DRO_OPTIONS.entry
@fill_doc(references=_REFERENCES)
def kl_dro(X, y, *, lam, loss="squared", l2=0.0, method="safe-kl", x0=None, rho=0.005,
           batch_size=32, epochs=5, maxiter=None, lr=0.05, average=0.5, rng=None,
           callback=None, progress=False, backend="auto", options=None):
    r"""KL-distributionally robust linear regression or classification.

    Minimizes :math:`\lambda \log \frac1n \sum_i e^{\ell_i(\theta)/\lambda} +
    \frac{\alpha}{2}\|\theta\|^2` (see :func:`kl_dro_objective`), the value of
    :math:`\sup_Q \mathbb{E}_Q \ell_\theta - \lambda\,\mathrm{KL}(Q \| P_n)`.

    Parameters
    ----------
    X : array or pandas DataFrame, shape (n, d)
        Features (add a column of ones for an intercept). A DataFrame's column labels
        become the result's ``feature_names``.
    y : array or pandas Series, shape (n,)
        Targets (``"squared"``) or labels in {-1, +1} (``"logistic"``).
    lam : float
        Temperature :math:`\lambda > 0`, a modelling choice (no default): large is close
        to the empirical risk, small to the worst case; the radius of the KL ball it
        penalises grows as it shrinks.
    loss : {"squared", "logistic"}
        ``"logistic"`` takes labels in {-1, +1}, or in {0, 1} as scikit-learn's binary
        classifiers do (0 is mapped to -1; the positive class is 1); any other labels
        raise ``ValueError``.
    l2 : float
        Ridge coefficient :math:`\alpha \ge 0` (added to every exponent as
        :math:`\alpha\|\theta\|^2 / (2\lambda)`, which leaves the objective unchanged).
    method : {"safe-kl", "naive", "lbfgs"}
        Stochastic Safe-KL (:func:`solvers.minimize_logsumexp`), the naive minibatch
        softmax estimator (biased), or full-batch L-BFGS on the exact objective.
    x0 : array, shape (d,), optional
        Start (zeros by default).
    rho, batch_size, epochs, lr, average, rng, callback, progress, backend
        Passed to :func:`solvers.minimize_logsumexp` (checked, but unused, with
        ``"lbfgs"``: its objective's log-sum-exp runs the Numba kernels, or the generic
        code on fewer than 32768 rows).
    maxiter : int, optional
        Steps (overrides ``epochs``); L-BFGS iterations for ``"lbfgs"`` (default 2000).
    options : dict, optional
        Further options for :func:`solvers.minimize_logsumexp` (``diagnose=False`` skips
        the reliability check; the exact objective is then computed separately, which
        dask inputs do not allow), or for SciPy's L-BFGS-B.

    Returns
    -------
    OptimizeResult
        ``x`` (the model), ``feature_names`` (the column labels of a DataFrame ``X``,
        one per entry of ``x``; ``None`` for arrays), ``fun`` (the *exact* objective at
        ``x``), ``nit``, ``nfev`` (per-sample loss evaluations), ``success``; stochastic
        runs add ``s``, ``history``.

    Raises
    ------
    ValueError
        Non-finite data, shape mismatch, ``lam <= 0``, unknown ``method`` or ``loss``,
        labels other than -1/+1 or 0/1 for ``"logistic"``.
    TypeError
        Options of the wrong type, complex or non-numeric data.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import kl_dro
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[rng.normal(size=(5000, 3)), np.ones(5000)]
    >>> y = X @ np.array([1.0, -2.0, 0.5, 1.0]) + rng.normal(size=5000)
    >>> exact = kl_dro(X, y, lam=10.0, method="lbfgs")
    >>> fast = kl_dro(X, y, lam=10.0, epochs=3, rng=0)
    >>> bool(fast.fun - exact.fun < 0.01 * exact.fun)
    True

    {{references}}
    """
    cfg = KL_DRO_OPTIONS.validate(
        lam=lam, loss=loss, l2=l2, method=method, rho=rho, batch_size=batch_size,
        epochs=epochs, maxiter=maxiter, lr=lr, average=average, rng=rng, callback=callback,
        progress=progress, backend=backend)
    options = dict(options or {})
    (X, names), (y, _), (x0, _) = (unwrap_frame(X, "X"), unwrap_frame(y, "y"),
                                   unwrap_frame(x0, "x0"))
    if is_partitioned((X, y), "X and y"):
        X, y, be, d, names = _partitioned_inputs(X, y, cfg.loss)
        if cfg.method == "lbfgs":
            raise ValueError("method='lbfgs' needs in-memory numpy X and y, not dask "
                             "collections; use method='safe-kl'")
        if options.get("diagnose", True) is not True:
            raise ValueError("options: diagnose=False with dask X, y -- kl_dro needs the "
                             "end-of-run pass over the partitions for its exact objective")
        dtype = be.xp.float64
    else:
        X, y, be = _inputs(X, y, x0, cfg.loss)
        d, dtype = X.shape[1], X.dtype
    theta0 = _start(x0, be, d, dtype)
    if cfg.method == "lbfgs":
        if cfg.maxiter is not None:
            options.setdefault("maxiter", cfg.maxiter)
        res = _kl_dro_lbfgs(X, y, be, theta0, cfg, options)
    else:
        res = _kl_dro_stochastic(X, y, be.xp, theta0, cfg, options)
    res.feature_names = names
    return res


def _kl_dro_stochastic(X, y, xp, theta0, cfg, options):
    res = minimize_logsumexp(_dro_phi(cfg.loss, cfg.lam, cfg.l2, xp), theta0, (X, y),
                             rho=cfg.rho, batch_size=cfg.batch_size, epochs=cfg.epochs,
                             maxiter=cfg.maxiter, estimator=cfg.method, lr=cfg.lr,
                             average=cfg.average, rng=cfg.rng, callback=cfg.callback,
                             progress=cfg.progress, backend=cfg.backend, **options)
    if res.diagnostics is not None:  # the full pass already gave the exact objective
        value = cfg.lam * res.diagnostics["lme"]
    else:
        value, _ = _objective(res.x, X, y, cfg.lam, cfg.loss, cfg.l2, xp)
    res.fun_estimate = cfg.lam * res.fun
    res.fun = value
    res.s = None if res.s is None else cfg.lam * res.s
    res.method = cfg.method
    return res


def _start(x0, be, d, dtype):
    """The first iterate: zeros, or ``x0`` checked (finite, shape ``(d,)``)."""
    if x0 is None:
        return be.xp.zeros((d,), dtype=dtype)
    (theta0,) = KL_DRO_OPTIONS.arrays(be, x0=x0)
    if theta0.shape[0] != d:
        raise ValueError(f"x0 must have shape ({d},), got {tuple(theta0.shape)}")
    return be.xp.astype(theta0, dtype, copy=False)


def _labels_ok(values):
    """Labels in {-1, +1} or in {0, 1}; returns the mapping applied (or None if bad)."""
    if values <= {-1.0, 1.0}:
        return "pm1"
    if values <= {0.0, 1.0}:
        return "01"
    return None


def _check_labels(y, xp):
    """``y`` for ``loss="logistic"``: {-1, +1} kept, {0, 1} mapped to {-1, +1}.

    Anything else (three or more distinct values, {1, 2}, {-1, 0}, continuous targets)
    raises: the model's sign convention would otherwise be a silent guess.
    """
    vals = xp.unique_values(y)
    k = int(vals.shape[0])
    kind = _labels_ok({float(v) for v in vals}) if k <= 2 else None
    if kind is None:
        shown = [float(v) for v in vals[:min(k, 5)]]
        raise ValueError(
            "y must hold binary labels for loss='logistic': -1/+1, or 0/1 (0 is mapped to "
            f"-1); got {k} distinct value(s): {shown}{' ...' if k > 5 else ''}")
    return 2.0 * y - 1.0 if kind == "01" else y


def _inputs(X, y, x0, loss):
    """In-memory ``X`` and ``y`` checked in their own namespace: ``(X, y, be)``."""
    be = resolve_backend("auto", array_namespace(X, y, x0))
    X, y = KL_DRO_OPTIONS.arrays(be, X=X, y=y)
    X = promote_float16(X, be.xp)
    y = be.xp.astype(y, X.dtype, copy=False)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},), got {tuple(y.shape)}")
    if loss == "logistic":
        y = _check_labels(y, be.xp)
    return X, y, be


def _check_block(block, name, loss):
    """Per-partition checks of dask inputs (run when the partition is read)."""
    arr = np.asarray(block.to_numpy() if hasattr(block, "to_numpy") else block,
                     dtype=np.float64)
    check_finite(arr, np, name)
    if name == "y" and loss == "logistic":
        arr = _check_labels(arr, np)
    return arr


def _partitioned_inputs(X, y, loss):
    """Dask X and y, checked lazily partition by partition (never all at once):
    ``(X, y, be, d, names)``; ``names`` are a dataframe's columns, else ``None``."""
    def lazy(obj, name):
        if not hasattr(obj, "map_blocks"):  # a dataframe / series: lengths read once
            obj = obj.to_dask_array(lengths=True)
        return obj.map_blocks(_check_block, name, loss, dtype=np.float64)

    d = X.shape[1] if hasattr(X, "map_blocks") else len(X.columns)
    if isinstance(d, float) or y.ndim != 1 and hasattr(y, "map_blocks"):
        raise ValueError("X must be a 2-D dask array or dataframe with known columns and y "
                         "a 1-D dask array or series")
    names = None if hasattr(X, "map_blocks") else list(X.columns)
    meta = getattr(X, "_meta", None)
    xp = array_namespace(meta) if hasattr(meta, "__array_namespace__") else np
    return lazy(X, "X"), lazy(y, "y"), resolve_backend("auto", xp), int(d), names


def _dro_phi(loss, lam, l2, xp):
    def phi(theta, batch):
        Xb, yb = batch
        losses, jac = _losses(theta, Xb, yb, loss, xp)
        if l2:
            losses = losses + 0.5 * l2 * xp.sum(theta * theta)
            jac = jac + l2 * xp.reshape(theta, (1, -1))
        return losses / lam, jac / lam

    return phi


def _kl_dro_lbfgs(X, y, be, theta0, cfg, options):
    if not be.on_host:
        raise ValueError("method='lbfgs' runs SciPy and needs numpy arrays")
    n = X.shape[0]
    Xn, yn = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    opts = {"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-15}
    opts.update(options)
    backend = backend_arg(be.for_size(n, PASS_GENERIC_BELOW))  # small: nothing to compile
    res = scipy_minimize(lambda t: _objective(t, Xn, yn, cfg.lam, cfg.loss, cfg.l2, be.xp,
                                              backend),
                         np.asarray(theta0, dtype=np.float64), jac=True,
                         method="L-BFGS-B", options=opts)
    status = Status.CONVERGED if res.success else Status.MAXITER
    return make_result(status, success=bool(res.success), message=str(res.message),
                       x=res.x.astype(X.dtype), fun=float(res.fun), nit=res.nit,
                       nfev=res.nfev * n, method="lbfgs")
