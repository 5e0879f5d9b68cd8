"""CBO's options, validated once into a frozen :class:`CBOConfig`, and the problem setup.

:func:`configure` checks every option of :func:`~solvers.optimize.cbo.minimize_cbo` and
fills in the defaults that depend on the dimension (``maxfev``, the polish reserve); the
solver (:mod:`._cbo_solver`) and the mapped runs (:mod:`._cbo_runs`) read the result by
attribute. :func:`prepare` turns ``bounds`` / ``x0`` / ``backend`` into a :class:`Problem`:
the resolved backend, the box and the start box.
"""
from dataclasses import dataclass, replace
import math
import numbers

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.namespace import array_namespace
from .._lib.validation import (as_float_array, check_callback, check_choice, check_finite,
                               check_int, check_positive, promote_float16)
from ._cbo_bounds import parse_bounds
from ._cbo_eval import check_cbo_workers
from ._polish import POLISH_METHODS

__all__ = ["CBOConfig", "Problem", "configure", "prepare", "NOISES", "OPTION_NAMES"]

NOISES = ("mixed", "anisotropic", "isotropic", "covariance")


@dataclass(frozen=True)
class CBOConfig:
    """The validated options of one :func:`minimize_cbo` call (see its docstring)."""

    d: int
    args: tuple
    n_particles: int
    maxiter: object  # int or None
    alpha: float
    alpha_growth: float
    alpha_max: object  # float or None: 1e5 for the growth schedule, none for ESS
    ess: object
    sigma: object
    lam: object
    dt: object
    noise: str
    batch_size: object
    memory: bool
    n_runs: int
    independent_runs: bool
    maxfev: object
    xtol: object  # float, or None: relative to the start box
    ftol: float
    f_target: object
    restarts: bool
    spend_budget: bool
    popsize_factor: float
    polish: object  # None, "local" or a SciPy method name
    polish_share: float
    polish_budget: int
    vectorized: bool
    workers: object
    callback: object
    backend: str
    progress: bool

    def piece(self, maxfev):
        """The configuration of one of the ``n_runs`` independent runs."""
        return replace(self, n_runs=1, independent_runs=False, maxfev=maxfev,
                       polish_budget=_polish_budget(self.polish, maxfev, 1,
                                                    self.polish_share, self.d))


#: the options a caller passes (the other fields are derived)
OPTION_NAMES = tuple(k for k in CBOConfig.__dataclass_fields__
                     if k not in ("d", "polish_budget"))


@dataclass(frozen=True)
class Problem:
    """Where the particles live: backend, dtype, box ``(lb, ub)`` (host float64 arrays, or
    None), and the start box ``low + width * U(0, 1)`` (+ ``x0`` when given)."""

    be: object
    dtype: object
    box: object
    low: np.ndarray
    width: np.ndarray
    x0: object

    @property
    def d(self):
        return self.low.shape[0]

    @property
    def scale(self):
        """The largest width of the start box (relative tolerances refer to it)."""
        return float(np.max(self.width))


def _bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _optional(value, check):
    return None if value is None else check(value)


def _check_dynamics(o):
    for k in ("alpha", "sigma", "lam"):
        o[k] = _optional(o[k], lambda v, k=k: check_positive(v, k, strict=False))
    for k in ("alpha_growth", "alpha_max", "dt"):
        o[k] = _optional(o[k], lambda v, k=k: check_positive(v, k))
    if o["ess"] is not None:
        o["ess"] = check_positive(o["ess"], "ess")
        if o["ess"] > 1:
            raise ValueError(f"ess must be in (0, 1], got {o['ess']}")
    check_choice(o["noise"], NOISES, "noise")
    b = o["batch_size"]
    if b is not None:
        b = check_int(b, "batch_size", minimum=1)
        if b > o["n_particles"]:
            raise ValueError(f"batch_size must be <= n_particles ({o['n_particles']}), got {b}")
        o["batch_size"] = None if b == o["n_particles"] else b
    o["memory"] = _bool(o["memory"], "memory")


def _check_stopping(o, d):
    o["xtol"] = _optional(o["xtol"], lambda v: check_positive(v, "xtol", strict=False))
    o["ftol"] = check_positive(o["ftol"], "ftol", strict=False)
    if o["f_target"] is not None:
        if isinstance(o["f_target"], bool) or not isinstance(o["f_target"], numbers.Real):
            raise TypeError(f"f_target must be a real number, got "
                            f"{type(o['f_target']).__name__}")
        o["f_target"] = float(o["f_target"])
        if not math.isfinite(o["f_target"]):
            raise ValueError(f"f_target must be finite, got {o['f_target']}")
    o["maxiter"] = _optional(o["maxiter"], lambda v: check_int(v, "maxiter", minimum=1))
    o["maxfev"] = _optional(o["maxfev"], lambda v: check_int(v, "maxfev", minimum=1))
    if o["maxfev"] is None and o["maxiter"] is None:
        o["maxfev"] = o["n_runs"] * 20 * max(4000, 200 * d)
    r = o["restarts"]
    if r not in (True, False, None, "ipop"):
        raise ValueError(f"restarts must be 'ipop', True or False, got {r!r}")
    o["restarts"] = bool(r)
    o["spend_budget"] = _bool(o["spend_budget"], "spend_budget")
    o["popsize_factor"] = check_positive(o["popsize_factor"], "popsize_factor")
    if o["popsize_factor"] < 1:
        raise ValueError(f"popsize_factor must be >= 1, got {o['popsize_factor']}")


def _polish_budget(polish, maxfev, n_runs, share, d):
    """Evaluations reserved for refining the last start's best point when ``maxfev``
    ends the run (a share of one run's budget: the refinement improves one point)."""
    if polish is None:
        return 0
    if maxfev is None:
        return 1000 * (d + 1)
    return int(share * maxfev / n_runs)


def _check_polish(o, d):
    p = o["polish"]
    if p is True:
        p = "local"
    elif p is False or p is None:
        p = None
    elif not (isinstance(p, str) and p in POLISH_METHODS):
        raise ValueError(f"polish must be True, False or one of {POLISH_METHODS}, got {p!r}")
    o["polish"] = p
    share = check_positive(o["polish_share"], "polish_share", strict=False)
    if share >= 1:
        raise ValueError(f"polish_share must be in [0, 1), got {share}")
    o["polish_share"] = share
    o["polish_budget"] = _polish_budget(p, o["maxfev"], o["n_runs"], share, d)


def configure(options, d):
    """Validate the option dict of :func:`minimize_cbo` (dimension ``d``): a CBOConfig."""
    o = dict(options)
    o["n_particles"] = check_int(o["n_particles"], "n_particles", minimum=2)
    o["n_runs"] = check_int(o["n_runs"], "n_runs", minimum=1)
    o["independent_runs"] = _bool(o["independent_runs"], "independent_runs")
    if not isinstance(o["args"], tuple):
        o["args"] = (o["args"],)
    _check_dynamics(o)
    _check_stopping(o, d)
    _check_polish(o, d)
    o["vectorized"] = _bool(o["vectorized"], "vectorized")
    o["progress"] = _bool(o["progress"], "progress")
    check_callback(o["callback"])
    if check_cbo_workers(o["workers"]) is not None and o["vectorized"]:
        raise ValueError("use either vectorized=True or workers, not both: a vectorized "
                         "objective is evaluated in one call per step")
    if o["independent_runs"] and o["callback"] is not None:
        raise ValueError("callback is not supported with independent_runs=True (each run "
                         "runs on its own, possibly in another process); use the batched "
                         "runs to follow the iterations")
    return CBOConfig(d=d, **{k: o[k] for k in CBOConfig.__dataclass_fields__ if k != "d"})


def _start_box(x0, box, x0_spread, d):
    """(low, width) of the start: the bounds, or ``x0 +- x0_spread``."""
    if x0 is None:
        return box[0], box[1] - box[0]
    if x0_spread is None:
        if box is not None and np.all(np.isfinite(box[1] - box[0])):
            spread0 = 0.25 * (box[1] - box[0])
        else:
            spread0 = np.ones(d)
    else:
        try:
            spread0 = np.broadcast_to(np.asarray(x0_spread, dtype=np.float64), (d,))
        except (ValueError, TypeError):
            raise ValueError(f"x0_spread must be a scalar or have length {d}") from None
        if not np.all(np.isfinite(spread0)) or np.any(spread0 <= 0):
            raise ValueError("x0_spread must be positive and finite")
    return -spread0, 2.0 * spread0


def prepare(bounds, x0, x0_spread, backend):
    """Check ``bounds`` / ``x0`` and resolve ``backend``: a :class:`Problem`."""
    if bounds is None and x0 is None:
        raise ValueError("minimize_cbo needs bounds (the start box) or x0")
    xp = array_namespace(x0 if hasattr(x0, "__array_namespace__") else None,
                         bounds if hasattr(bounds, "__array_namespace__") else None)
    be = resolve_backend(backend, xp)
    cx, dtype, x0_dev = be.xp, be.xp.float64, None
    if x0 is not None:
        x0_dev = promote_float16(as_float_array(be.to_device(x0), cx, "x0", ndim=1), cx)
        check_finite(x0_dev, cx, "x0")
        dtype, d = x0_dev.dtype, x0_dev.shape[0]
        if d == 0:
            raise ValueError("x0 must have at least one entry")
        box = parse_bounds(bounds, d)
        if box is not None:
            x0_h = np.asarray([float(v) for v in x0_dev.tolist()])
            if np.any(x0_h < box[0]) or np.any(x0_h > box[1]):
                raise ValueError("x0 must lie within bounds")
    else:
        box = parse_bounds(bounds)
        d = box[0].shape[0]
    low, width = _start_box(x0_dev, box, x0_spread, d)
    return Problem(be, dtype, box, np.asarray(low, dtype=np.float64),
                   np.asarray(width, dtype=np.float64), x0_dev)
