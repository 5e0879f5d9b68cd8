"""CBO's options, declared once (:data:`OPTIONS`), and the problem setup.

Every option of :func:`~solvers.optimize.cbo.minimize_cbo` is a :class:`~solvers._lib.params.Param`
of :data:`OPTIONS` (its constraint, default and a one-line doc); ``OPTIONS.validate`` checks
the user's values into a frozen config, and :func:`configure` fills in what depends on the
problem (the default ``maxfev``) and normalises a few values for the solver
(``restarts`` a bool, ``polish`` ``"local"`` / a SciPy method / None, ``args`` a tuple).
The solver (:mod:`._cbo_solver`) and the mapped runs (:mod:`._cbo_runs`) read the config
by attribute. What a constraint cannot say stays here, written by hand: the options that
must agree with one another (``batch_size <= n_particles``, ``workers`` or
``vectorized``, ``callback`` without ``independent_runs``) and the shapes of ``bounds``,
``x0`` and ``x0_spread`` (:func:`prepare`, which also resolves the backend).
"""
from dataclasses import dataclass

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.host import to_host
from .._lib.namespace import array_namespace
from .._lib.params import (BACKEND, CALLBACK, COUNT, FLAG, NONNEGATIVE, POSITIVE,
                           SEED, WORKERS, Array, Choice, Constraint, Integer, Options, Param,
                           Real)
from .._lib.validation import promote_float16
from ._cbo_bounds import parse_bounds
from ._polish import POLISH_METHODS

__all__ = ["OPTIONS", "CBOOptions", "CONSENSUS_OPTIONS", "Problem", "configure", "prepare",
           "reserve", "NOISES"]

NOISES = ("mixed", "anisotropic", "isotropic", "covariance")


class ExtraArgs(Constraint):
    """``args=``: a tuple, or one value that becomes a one-element tuple (SciPy's rule)."""

    kind = "tuple"

    def check(self, value, name):
        return value if isinstance(value, tuple) else (value,)


class Spread(Constraint):
    """``x0_spread=``: a positive finite number or a sequence of them (one per dimension,
    checked against ``x0`` by :func:`prepare`); returned as a host float64 array."""

    kind = "float or array_like"

    def check(self, value, name):
        if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
            raise TypeError(f"{name} must be a positive number or a sequence of them, got "
                            f"{type(value).__name__}")
        try:
            spread = np.asarray(to_host(value), dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a positive number or a sequence of them, got "
                            f"{type(value).__name__}") from None
        if spread.ndim > 1 or spread.size == 0:
            raise ValueError(f"{name} must be a scalar or one value per dimension, got "
                             f"shape {spread.shape}")
        if not np.all(np.isfinite(spread)) or np.any(spread <= 0):
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
        return spread

    def describe(self):
        return "> 0"

    def invalid_values(self):
        return {"zero": 0.0, "neg": -1.0, "nan": float("nan"), "inf": float("inf"),
                "str": "1", "empty": []}


OPTIONS = Options(
    "CBOOptions",
    Param("fun", CALLBACK, doc="objective fun(x, *args) -> float (or (S,) vectorized)"),
    Param("x0", Array(ndim=1, empty=False), None, "start: particle 0 of the first start"),
    Param("args", ExtraArgs(), (), "extra arguments passed to fun"),
    Param("n_particles", Integer(low=2), 20, "particles per run in the first start"),
    Param("maxiter", COUNT, None, "cap on the steps over all starts"),
    Param("alpha", NONNEGATIVE, 30.0, "initial inverse temperature"),
    Param("alpha_growth", POSITIVE, 1.05, "growth of alpha per step"),
    Param("alpha_max", POSITIVE, None, "cap of alpha (default: by schedule)"),
    Param("ess", Real(0, 1, low_open=True), None,
          "alpha per step so that the effective sample size is ess * N"),
    Param("sigma", NONNEGATIVE, None, "noise strength (default: by noise)"),
    Param("lam", NONNEGATIVE, None, "drift strength (default: by noise)"),
    Param("dt", POSITIVE, None, "time step (default: by noise)"),
    Param("noise", Choice(*NOISES), "mixed", "noise of the starts"),
    Param("batch_size", COUNT, None, "mini-batch consensus over this many particles"),
    Param("memory", FLAG, False, "consensus over the particles' personal bests"),
    Param("n_runs", COUNT, 1, "independent runs"),
    Param("independent_runs", FLAG, False, "run the n_runs runs one by one, mapped"),
    Param("x0_spread", Spread(), None, "half-width of the start box around x0"),
    Param("maxfev", COUNT, None, "cap on the point evaluations"),
    Param("xtol", NONNEGATIVE, None, "spread at which a start has collapsed"),
    Param("ftol", NONNEGATIVE, 1e-10, "tolerance on values (starts and restarts)"),
    Param("f_target", Real(), None, "stop once a value <= f_target is found"),
    Param("restarts", Choice("ipop", True, False), "ipop", "IPOP restarts or one start"),
    Param("spend_budget", FLAG, False, "keep restarting until maxfev is spent"),
    Param("popsize_factor", Real(low=1), 2.0, "population growth per restart"),
    Param("polish", Choice(True, False, *POLISH_METHODS), True,
          "refinement of each start's best point"),
    Param("polish_share", Real(0, 1, high_open=True), 0.1,
          "share of one run's budget left for the last refinement"),
    Param("vectorized", FLAG, False, "fun takes the whole population at once"),
    Param("workers", WORKERS, 1, "where the points (or the runs) are evaluated"),
    Param("rng", SEED, None, "source of all random draws"),
    Param("callback", CALLBACK, None, "callback(intermediate_result) every step"),
    Param("backend", BACKEND, "auto", "which kernels run"),
    Param("progress", FLAG, False, "show a progress bar on stderr"),
)

#: the config class, importable from here so that a config pickles (independent runs are
#: sent to worker processes with theirs)
CBOOptions = OPTIONS.config_class
CBOOptions.__module__ = __name__

CONSENSUS_OPTIONS = Options(
    "ConsensusOptions",
    Param("x", Array(ndim=(2, 3)), doc="particles (N, d) or (M, N, d)"),
    Param("energies", Array(ndim=(1, 2), finite=False), doc="their values (N,) or (M, N)"),
    Param("alpha", NONNEGATIVE, doc="inverse temperature"),
    Param("backend", BACKEND, "auto", "which kernels run"),
)


def default_maxfev(n_runs, d):
    """The default cap on the evaluations: ``n_runs * 20 * max(4000, 200 d)``."""
    return n_runs * 20 * max(4000, 200 * d)


def configure(cfg, d):
    """The validated options ``cfg`` (``OPTIONS.validate``) of a problem of dimension
    ``d``, completed for the solver.

    Raises
    ------
    ValueError
        Options that contradict one another (``batch_size > n_particles``, ``workers``
        with ``vectorized=True``, ``callback`` with ``independent_runs=True``).
    """
    if cfg.batch_size is not None and cfg.batch_size > cfg.n_particles:
        raise ValueError(f"batch_size must be <= n_particles ({cfg.n_particles}), got "
                         f"{cfg.batch_size}")
    if cfg.workers != 1 and cfg.vectorized:
        raise ValueError("use either vectorized=True or workers, not both: a vectorized "
                         "objective is evaluated in one call per step")
    if cfg.independent_runs and cfg.callback is not None:
        raise ValueError("callback is not supported with independent_runs=True (each run "
                         "runs on its own, possibly in another process); use the batched "
                         "runs to follow the iterations")
    maxfev = cfg.maxfev
    if maxfev is None and cfg.maxiter is None:
        maxfev = default_maxfev(cfg.n_runs, d)
    polish = "local" if cfg.polish is True else (cfg.polish or None)
    return cfg.replace(
        maxfev=maxfev, restarts=bool(cfg.restarts), polish=polish,
        batch_size=None if cfg.batch_size == cfg.n_particles else cfg.batch_size)


def reserve(cfg, d):
    """Evaluations reserved for refining the last start's best point when ``maxfev``
    ends the run (a share of one run's budget: the refinement improves one point)."""
    if cfg.polish is None:
        return 0
    if cfg.maxfev is None:
        return 1000 * (d + 1)
    return int(cfg.polish_share * cfg.maxfev / cfg.n_runs)


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


def _start_box(x0, box, spread, d):
    """(low, width) of the start: the bounds, or ``x0 +- spread``."""
    if x0 is None:
        return box[0], box[1] - box[0]
    if spread is None:
        if box is not None and np.all(np.isfinite(box[1] - box[0])):
            spread = 0.25 * (box[1] - box[0])
        else:
            spread = np.ones(d)
    elif spread.size not in (1, d):
        raise ValueError(f"x0_spread must be a scalar or have length {d}, got "
                         f"{spread.size} values")
    spread = np.broadcast_to(spread, (d,))
    return -spread, 2.0 * spread


def prepare(bounds, x0, x0_spread, backend):
    """Check ``bounds`` / ``x0`` (``x0_spread`` validated by its spec) and resolve
    ``backend``: a :class:`Problem`."""
    if bounds is None and x0 is None:
        raise ValueError("minimize_cbo needs bounds (the start box) or x0")
    xp = array_namespace(x0 if hasattr(x0, "__array_namespace__") else None,
                         bounds if hasattr(bounds, "__array_namespace__") else None)
    be = resolve_backend(backend, xp)
    dtype, x0_dev = be.xp.float64, None
    if x0 is not None:
        (x0_dev,) = OPTIONS.arrays(be, x0=x0)
        x0_dev = promote_float16(x0_dev, be.xp)
        dtype, d = x0_dev.dtype, x0_dev.shape[0]
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

