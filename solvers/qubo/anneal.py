r"""Simulated annealing for QUBOs: ``minimize_qubo``.

The objective ``f(x) = x^T Q x + c^T x + c_0`` is put in the form
``f(x) = c_0 + a^T x + x^T W x / 2`` (``W = Q + Q^T`` with zero diagonal,
``a = diag(Q) + c``). A read keeps the local field ``h = a + W x``; the energy change of
flipping bit ``i`` is ``(1 - 2 x_i) h_i`` (``O(1)``), and an accepted flip updates ``h``
with one row of ``W`` (``O(n)`` dense, ``O(deg i)`` sparse). Sweeps visit the bits in
order and accept a move with the Metropolis probability ``min(1, exp(-beta * delta))``;
``beta`` follows a schedule from hot to cold, one value per sweep, whose default range
comes from the problem's own local fields (:func:`default_beta_range`).

Backends (through the kernel table :mod:`solvers.qubo._anneal_kernels`): ``"numba"``
(default for numpy input) runs groups of reads in parallel with ``prange`` (a sparse
problem runs the reads of a group in lockstep, one SIMD lane each); ``"cupy"`` runs one GPU
thread per read; the generic code (``"numpy"`` and any other Array API namespace) updates
all reads at once, bit by bit. Every backend draws the uniform of proposal ``i`` of sweep
``t`` of read ``r`` from position ``t n + i`` of stream ``r`` of the library's
counter-based generator seeded once from ``rng``, so a result depends neither on the backend
nor on the number of threads nor on how the reads are split over ``workers``.
"""
import os

import numpy as np
import scipy.sparse as sps

from .._lib import (
    Status, call_callback, check_choice, check_positive, check_rng, make_result,
    resolve_backend, to_host,
)
from .._lib.parallel import check_workers
from .._lib.params import (
    BACKEND, CALLBACK, COUNT, FLAG, SEED, WORKERS, Choice, Constraint, Options, Param, Real,
)
from ._anneal_groups import GROUP
from ._anneal_kernels import make_chains, parallel_reads_ok, prepare
from ._anneal_run import Run, Schedule
from ._input import VARTYPE, parse_qubo, to_binary
from ._schedule import beta_range_from_fields, sample_fields

__all__ = ["minimize_qubo", "default_beta_range"]

SCHEDULES = ("geometric", "linear")


def _binary_parts(qb):
    """(a, W, c0) of the binary objective: dense W as numpy/xp, or CSR when sparse (a
    sparse matrix or BQM with more than a quarter of its entries set is made dense once,
    here: every kernel would densify it)."""
    xp = qb.xp
    if qb.sparse:
        Q = qb.Q
        a = Q.diagonal().copy()
        if qb.c is not None:
            a = a + np.asarray(qb.c, dtype=np.float64)
        if Q.nnz > 0.25 * Q.shape[0] ** 2:
            Qd = Q.toarray()
            W = Qd + Qd.T
            np.fill_diagonal(W, 0.0)
            return a, W, float(qb.offset)
        W = (Q + Q.T).tocsr()
        W = (W - sps.diags(W.diagonal())).tocsr()
        W.eliminate_zeros()
        return a, W, float(qb.offset)
    Q = qb.Q
    n = Q.shape[-1]
    d = xp.linalg.diagonal(Q)
    a = d if qb.c is None else d + qb.c
    W = (Q + xp.matrix_transpose(Q)) * (1.0 - xp.eye(n, dtype=Q.dtype))
    return a, W, float(qb.offset)


RANGE_OPTIONS = Options(
    "BetaRangeOptions",
    Param("vartype", VARTYPE, None, "binary or spin variables"),
    Param("backend", BACKEND, "auto", "where the greedy sweeps run"),
)


@RANGE_OPTIONS.entry
def default_beta_range(Q, c=None, *, vartype=None, backend="auto"):
    r"""The default ``(beta_hot, beta_cold)`` of :func:`minimize_qubo`.

    Read from the problem's local fields ``h = a + W x`` (binary canonical form), whose
    sizes ``|h_i|`` are the energy changes of single flips:

    - ``beta_hot``: at 8 uniform random states, an uphill move is accepted with
      probability 0.3 on average (``mean exp(-beta |h_i|) = 0.3`` over the nonzero
      fields), so the anneal starts where uphill moves are common but the chain is no
      longer a random walk;
    - ``beta_cold``: after 16 greedy sweeps from those states (near the local minima where
      annealing ends), the expected number of accepted uphill moves in one sweep,
      ``sum_i exp(-beta |h_i|)``, is 0.01. The smallest nonzero energy change ``d_min``
      dominates this sum: ``beta_cold ~ ln(k / 0.01) / d_min`` with ``k`` the number of
      bits that have it, so the last sweeps are greedy but for rare uphill moves.

    Zero fields (moves that do not change the energy) are left out. The random states come
    from a fixed seed: the range depends on the problem only.

    Parameters
    ----------
    Q : array_like, scipy.sparse matrix, dict or dimod.BinaryQuadraticModel
        The ``(n, n)`` matrix, as in :func:`minimize_qubo` (no stacks).
    c : array_like, optional
        Linear coefficients ``(n,)``.
    vartype : {"binary", "spin"}, optional
        Domain of the variables (spin problems are first rewritten in binary variables).
        Default ``"binary"``; a BinaryQuadraticModel brings its own (a vartype given with
        one must agree with it).
    backend : {"auto", "numpy", "numba", "cupy"}
        Where the greedy sweeps run (as in :func:`minimize_qubo`).

    Returns
    -------
    tuple of float
        ``(beta_hot, beta_cold)`` with ``beta_hot <= beta_cold``; ``(1.0, 1.0)`` when every
        coefficient is zero.

    Raises
    ------
    ValueError
        A non-square, stacked or non-finite ``Q``, ``c`` of the wrong shape or not finite,
        an unknown ``vartype`` or ``backend``.
    TypeError
        A dict key that is not a pair ``(i, j)``, or ``c`` given with a
        BinaryQuadraticModel.

    References
    ----------
    .. [1] S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by simulated
       annealing", Science 220 (1983).

    Examples
    --------
    An antiferromagnetic ring of 6 spins, where a flip changes the energy by 0 or 4:
    ``beta_hot = ln(1 / 0.3) / 4``, and ``beta_cold`` is close to ``ln(6 / 0.01) / 4 = 1.60``
    (lower: some sampled states keep a pair of domain walls, whose spins flip for free):

    >>> from solvers.qubo.anneal import default_beta_range
    >>> ring = {(i, (i + 1) % 6): 1.0 for i in range(6)}
    >>> hot, cold = default_beta_range(ring, vartype="spin")
    >>> round(hot, 3), round(cold, 3)
    (0.301, 1.426)
    """
    cfg = RANGE_OPTIONS.validate(vartype=vartype, backend=backend)
    q = parse_qubo(Q, c, 0.0, cfg.vartype, allow_stack=False)
    qb = to_binary(q)
    a, W, _ = _binary_parts(qb)
    return _beta_range_from_parts(resolve_backend(cfg.backend, q.xp), a, W)


def _beta_range_from_parts(be, a, W, prepared=None):
    n = a.shape[0]
    if n == 0:
        return 1.0, 1.0
    hot, cold = sample_fields(
        lambda X0: make_chains(be, a, W, 0.0, X0, 0, prepared=prepared), n)
    return beta_range_from_fields(hot, cold)


class _BetaRange(Constraint):
    """``(beta_hot, beta_cold)``: two positive finite numbers, ``beta_hot <= beta_cold``."""

    kind = "(float, float)"

    def check(self, value, name):
        if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 2:
            raise ValueError(f"{name} must be (beta_hot, beta_cold), got {value!r}")
        pair = tuple(check_positive(b, f"{name} entries") for b in value)
        if pair[0] > pair[1]:
            raise ValueError(f"{name} must be (beta_hot, beta_cold) with beta_hot <= "
                             f"beta_cold (annealing cools), got {pair}")
        return pair

    def invalid_values(self):
        return {"short": (1.0,), "decreasing": (2.0, 1.0), "zero": (0.0, 1.0),
                "nan": (float("nan"), 1.0), "str": "hot"}


class _BetaSchedule(Constraint):
    """``"geometric"``, ``"linear"`` or a 1-D sequence of inverse temperatures ``>= 0``."""

    kind = "str or array_like"

    def check(self, value, name):
        if isinstance(value, str):
            return check_choice(value, SCHEDULES, name)
        try:
            betas = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be 'geometric', 'linear' or a sequence of real "
                            f"inverse temperatures: {exc}") from None
        if betas.ndim != 1 or betas.size == 0:
            raise ValueError(f"{name} must be 'geometric', 'linear' or a 1-D sequence of "
                             f"inverse temperatures, got shape {betas.shape}")
        if not np.all(betas >= 0) or np.any(np.isnan(betas)):
            raise ValueError(f"{name} values must be >= 0 (inf allowed: greedy sweeps)")
        return betas

    def invalid_values(self):
        return {"choice": "cosine", "negative": [-1.0, 1.0], "matrix": [[1.0]], "empty": [],
                "text": ["hot"]}


OPTIONS = Options(
    "AnnealOptions",
    Param("method", Choice("anneal"), "anneal", "simulated annealing"),
    Param("vartype", VARTYPE, None, "binary or spin variables"),
    Param("n_reads", COUNT, None, "independent reads"),
    Param("maxiter", COUNT, None, "sweeps per read"),
    Param("n_sweeps", COUNT, None, "sweeps per read (the annealing name of maxiter)"),
    Param("beta_range", _BetaRange(), None, "(beta_hot, beta_cold)"),
    Param("beta_schedule", _BetaSchedule(), "geometric", "interpolation or every beta"),
    Param("polish", FLAG, True, "finish with steepest descent"),
    Param("f_target", Real(finite=False), None, "stop at this energy"),
    Param("coupling_dtype", Choice("float32", "float64"), None, "dense sweep couplings"),
    Param("rng", SEED, None, "random numbers"),
    Param("backend", BACKEND, "auto", "which kernels run"),
    Param("workers", WORKERS, 1, "processes or a map over the groups of reads"),
    Param("callback", CALLBACK, None, "called after every sweep"),
    Param("progress", FLAG, False, "progress bar on stderr"),
)


def _schedule_of(cfg, n_sweeps, default, restarts):
    """The :class:`Schedule`; ``default()`` gives the default beta range (computed only
    when needed); ``restarts``: Luby restarts unless the schedule is an explicit list."""
    if not isinstance(cfg.beta_schedule, str):
        betas = cfg.beta_schedule
        return Schedule("explicit", (betas[0], betas[-1]), betas.size, betas, False)
    beta_range = default() if cfg.beta_range is None else cfg.beta_range
    return Schedule(cfg.beta_schedule, tuple(beta_range), n_sweeps, None, restarts)


@OPTIONS.entry
def minimize_qubo(Q, c=None, offset=0.0, *, method="anneal", vartype=None, n_reads=None,
                  maxiter=None, n_sweeps=None, beta_range=None, beta_schedule="geometric",
                  x0=None, polish=True, f_target=None, coupling_dtype=None, rng=None,
                  backend="auto", workers=1, callback=None, progress=False):
    r"""Minimize ``f(x) = x^T Q x + c^T x + offset`` over binary or spin vectors.

    Simulated annealing with ``O(1)`` energy deltas and ``O(n)`` (dense) or ``O(deg)``
    (sparse) field updates per accepted flip; ``n_reads`` independent reads run in parallel,
    in groups of 8, and with ``f_target`` the run returns as soon as a group reaches it.

    Parameters
    ----------
    Q : array_like, scipy.sparse matrix, dict or dimod.BinaryQuadraticModel
        ``(n, n)`` matrix (not necessarily symmetric), a dict ``{(i, j): w}``, or a
        BinaryQuadraticModel (its vartype, linear biases and offset are used); a pair
        ``(Q, c)`` is accepted too (``minimize(..., method="anneal")`` passes it as
        ``fun``).
    c : array_like, optional
        Linear coefficients ``(n,)``.
    offset : float, optional
        Constant term, included in ``fun`` and ``energies``.
    method : {"anneal"}
        Only simulated annealing for now.
    vartype : {"binary", "spin"}, optional
        Variables in ``{0, 1}`` or ``{-1, +1}``; dimod's ``"BINARY"`` / ``"SPIN"``, its
        ``Vartype`` members and the sets ``{0, 1}`` / ``{-1, 1}`` are accepted too. Default
        ``"binary"``; a BinaryQuadraticModel brings its own, and a vartype given with one
        must agree with it (``ValueError`` otherwise: convert the model with
        ``bqm.change_vartype``).
    n_reads : int, optional
        Independent annealing runs (run in parallel, in groups of 8); default 16, or at most
        1024 with ``f_target`` (the run stops at the first group that reaches it).
    maxiter : int, optional
        Sweeps per read (one sweep proposes a flip of every variable once, in order);
        default 1000. Ignored when ``beta_schedule`` is an explicit sequence. With
        ``f_target`` and no sweep count, group ``g`` runs ``1000 * L(g + 1)`` sweeps, with
        ``L`` Luby's restart sequence ``1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ...``: an easy target
        costs short schedules only and a hard one gets ever longer ones (within a log
        factor of the best fixed length; M. Luby, A. Sinclair, D. Zuckerman, 1993).
    n_sweeps : int, optional
        The same as ``maxiter`` (the annealing name); give one, or both equal.
    beta_range : (float, float), optional
        ``(beta_hot, beta_cold)``; default from :func:`default_beta_range`: hot enough that
        30% of the uphill moves at a random state are accepted, cold enough that the last
        sweeps accept about one uphill move in a hundred sweeps, both read from the local
        fields of the problem.
    beta_schedule : {"geometric", "linear"} or array_like
        Interpolation from hot to cold, or the inverse temperature of every sweep
        (``inf`` gives greedy sweeps).
    x0 : array_like, optional
        Initial state, ``(n,)`` for all reads or ``(n_reads, n)``; random by default.
    polish : bool
        Finish every read with steepest descent to a 1-flip local minimum.
    f_target : float, optional
        Stop early at this energy. The reads are taken in groups of 8 consecutive reads; a
        group stops at the end of the first sweep at which one of its reads has an energy
        ``<= f_target`` (from the incremental fields, so within round-off for non-integer
        weights), and the run returns the groups up to and including the first group that
        stopped (``samples`` then holds fewer than ``n_reads`` reads). Which reads are
        returned does not depend on the number of threads or workers. With a callback,
        every group runs the same ``maxiter`` sweeps.
    coupling_dtype : {None, "float32", "float64"}
        Numba backend, dense problems with non-integer coefficients: precision of the
        couplings the annealing sweeps read (the fields are accumulated in float64; the
        final descent and the energies use float64 couplings). float32 halves the memory
        traffic of a flip; the acceptance decisions then see deltas perturbed by ~1e-7
        relative. Default: float32 for n >= 256, float64 otherwise. Integer coefficients
        whose fields stay below ``2**24`` always run float32 fields and couplings (exact),
        dense or sparse.
    rng : None, int or numpy.random.Generator
        Seeds the initial states and the per-read random streams.
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"auto"``: Numba for numpy input, CuPy for cupy input, generic code otherwise.
    workers : int or map-like callable
        ``1`` runs in this process. An int ``k > 1`` (or ``-1``: all cores) splits the reads,
        in whole groups of 8, into ``k`` pieces run by a pool of processes (started with the
        ``spawn`` method: guard scripts with ``if __name__ == "__main__":``); a callable such as
        ``Pool.map`` or dask's ``Client.map`` is called as ``workers(func, pieces)`` with
        one piece per group of 8 reads. The result is identical for every choice. Numba
        backend only.
    callback : callable, optional
        ``callback(intermediate_result)`` after every sweep, with ``x`` (the best current
        sample, an array of the input's namespace), ``fun`` (its energy, from the
        incremental fields), ``energies`` and ``nit``; raising ``StopIteration`` ends the
        run (``success=False``, ``status=99``) with the current samples, unpolished.
        Needs ``workers=1``.
    progress : bool
        Show a progress bar on stderr (``workers=1`` only).

    Returns
    -------
    OptimizeResult
        ``x`` (best sample, int8), ``fun`` (its energy), ``samples`` (``(n_reads, n)``
        int8), ``energies`` (``(n_reads,)``), ``nfev`` (flip proposals), ``nit``
        (sweeps), ``beta_range``, ``success``, ``status`` (1: the schedule ran to its end,
        a success; 99: stopped by the callback), ``message`` and ``variables`` (labels,
        for dict or BinaryQuadraticModel input).

    Raises
    ------
    ValueError
        Bad ``Q`` (non-square, stacked, NaN or inf), ``c`` or ``offset`` of the wrong shape;
        a ``vartype`` that contradicts a BinaryQuadraticModel's;
        an unknown ``method``, ``vartype``, ``coupling_dtype``, ``backend`` or
        ``beta_schedule`` name; a ``beta_schedule`` sequence that is not 1-d, empty or
        negative; a ``beta_range`` that is not two positive finite numbers in increasing
        order (``beta_hot <= beta_cold``); ``n_reads``,
        ``maxiter`` or ``n_sweeps`` < 1, or ``maxiter != n_sweeps``; a NaN ``f_target``;
        ``x0`` of the wrong
        shape or with entries outside the vartype's values; ``workers`` 0 or below -1,
        ``workers`` with a callback or a non-Numba backend; or ``backend="cupy"`` without
        a usable GPU.
    TypeError
        ``n_reads``, ``maxiter``, ``n_sweeps``, ``workers`` or ``f_target`` of the wrong
        type, a
        ``beta_schedule`` sequence that is not numeric, a ``callback`` that is not
        callable, an invalid ``rng``, a dict key that is not a pair ``(i, j)``, ``c``
        given with a BinaryQuadraticModel, or a dimod model that is not a
        BinaryQuadraticModel (constrained, integer, discrete or higher-order: the message
        names the dimod conversion).
    RuntimeError
        A worker process died (e.g. ``workers=k`` in a script without a ``__main__``
        guard).

    Notes
    -----
    Sparse input runs a CSR kernel when less than a quarter of ``Q`` is nonzero (Numba):
    the 8 reads of a group run in lockstep, each in a SIMD lane, so a flip walks the
    neighbour list once for the group; the generic and CuPy paths use a dense ``W``. With
    integer coefficients whose fields stay below ``2**24`` the Numba fields are float32
    (exact). Energies are recomputed from the final samples, so floating-point drift of the
    incremental fields never reaches ``fun``.

    References
    ----------
    .. [1] S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by simulated
       annealing", Science 220 (1983).
    .. [2] S. V. Isakov, I. N. Zintchenko, T. F. Ronnow, M. Troyer, "Optimised simulated
       annealing for Ising spin glasses", Comput. Phys. Commun. 192 (2015).
    .. [3] M. Luby, A. Sinclair, D. Zuckerman, "Optimal speedup of Las Vegas algorithms",
       Inf. Process. Lett. 47 (1993).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize_qubo
    >>> Q = np.array([[-1.0, 2.0, 0.0], [0.0, -1.0, 2.0], [0.0, 0.0, -1.0]])
    >>> res = minimize_qubo(Q, n_reads=4, maxiter=50, rng=0)
    >>> res.x.tolist(), res.fun
    ([1, 0, 1], -2.0)
    """
    cfg = OPTIONS.validate(
        method=method, vartype=vartype, n_reads=n_reads, maxiter=maxiter, n_sweeps=n_sweeps,
        beta_range=beta_range, beta_schedule=beta_schedule, polish=polish, f_target=f_target,
        coupling_dtype=coupling_dtype, rng=rng, backend=backend, workers=workers,
        callback=callback, progress=progress)
    Q, c = _split_qubo(Q, c)
    target = cfg.f_target
    n_reads = cfg.n_reads or (16 if target is None else 1024)
    n_sweeps = _check_sweeps(cfg.maxiter, cfg.n_sweeps)
    q = parse_qubo(Q, c, offset, cfg.vartype, allow_stack=False)
    qb = to_binary(q)
    be = resolve_backend(cfg.backend, q.xp)
    a, W, c0 = _binary_parts(qb)
    restarts = target is not None and cfg.maxiter is None and cfg.n_sweeps is None \
        and callback is None
    single = (qb.n >= 256) if cfg.coupling_dtype is None else cfg.coupling_dtype == "float32"
    prepared = prepare(be, a, W, single)  # the couplings in the kernels' formats, once
    schedule = _schedule_of(cfg, n_sweeps,
                            lambda: _beta_range_from_parts(be, a, W, prepared), restarts)
    pmap = check_workers(cfg.workers)
    if pmap is not None and (callback is not None or not parallel_reads_ok(be)):
        raise ValueError("workers needs callback=None and the Numba backend (numpy input); "
                         f"got callback={callback!r}, backend {be.name!r}")
    gen = check_rng(cfg.rng)
    X0 = _initial_states(x0, n_reads, qb.n, q.vartype, gen)
    base = int(gen.integers(0, 2**63))  # seeds read r's stream r (see _lib._prng)
    run = Run(be, a, W, c0, schedule, cfg.polish, single, target, prepared)
    out = _Output(be, q)
    if pmap is None:
        parts, status = run.serial(X0, base, callback, cfg.progress, out)
    else:
        parts, status = run.pieces(pmap, X0, base, _n_pieces(workers, n_reads)), None
    return out.result(run.merge(parts), status, target, schedule.betas())


def _check_sweeps(maxiter, n_sweeps):
    given = [v for v in (maxiter, n_sweeps) if v is not None]
    if len(given) == 2 and given[0] != given[1]:
        raise ValueError(f"maxiter and n_sweeps are the same option (sweeps per read); got "
                         f"maxiter={given[0]} and n_sweeps={given[1]}")
    return given[0] if given else 1000


def _n_pieces(workers, n_reads):
    groups = -(-n_reads // GROUP)
    if callable(workers):
        return groups
    k = (os.cpu_count() or 1) if workers == -1 else int(workers)
    return max(1, min(k, groups))


class _Output:
    """Samples back in the user's namespace and vartype; the callback's and final results."""

    def __init__(self, be, q):
        self.be, self.q = be, q

    def samples(self, X):
        X = self.be.to_input(X)
        return 2 * X - 1 if self.q.vartype == "spin" else X

    def report(self, callback, chains, nit):
        X, energies = chains.current()
        best = int(np.argmin(to_host(energies)))
        return call_callback(callback, x=self.samples(X[best, ...]),
                             fun=float(energies[best]), energies=self.be.to_input(energies),
                             nit=nit)

    def result(self, merged, status, target, betas):
        X = self.samples(merged.X)
        energies = self.be.to_input(merged.energies)
        best = int(np.argmin(to_host(energies)))
        if status is None:
            status = Status.TARGET if merged.reached else Status.MAXITER
        message = {Status.TARGET: "f_target reached",
                   Status.MAXITER: "annealing schedule finished" + (
                       "" if target is None else " without reaching f_target")}.get(status)
        success = status == Status.TARGET or (status == Status.MAXITER and target is None)
        res = make_result(status, success=success, message=message, x=X[best, ...],
                          fun=float(energies[best]), samples=X, energies=energies,
                          nfev=merged.nfev, nit=merged.nit,
                          beta_range=(float(betas[0]), float(betas[-1])),
                          backend=self.be.name)
        if self.q.variables is not None:
            res["variables"] = self.q.variables
        return res


def _initial_states(x0, n_reads, n, vartype, gen):
    if x0 is None:  # random bits, eight per drawn byte
        octets = gen.integers(0, 256, size=(n_reads, -(-n // 8)), dtype=np.uint8)
        return np.unpackbits(octets, axis=1)[:, :n].astype(np.int8)
    x0 = to_host(x0)
    if x0.ndim == 1:
        x0 = np.broadcast_to(x0, (n_reads, x0.shape[0]))
    if x0.shape != (n_reads, n):
        raise ValueError(f"x0 must have shape ({n},) or ({n_reads}, {n}), got {x0.shape}")
    allowed = (-1, 1) if vartype == "spin" else (0, 1)
    if not np.all(np.isin(x0, allowed)):
        raise ValueError(f"x0 entries must be in {{{allowed[0]}, {allowed[1]}}} for "
                         f"vartype={vartype!r}")
    X0 = (x0 + 1) // 2 if vartype == "spin" else x0
    return np.ascontiguousarray(X0, dtype=np.int8)


def _split_qubo(Q, c):
    """``minimize(Q, method="anneal")`` passes the QUBO as ``fun``: a matrix, a dict, a
    BinaryQuadraticModel, or a pair ``(Q, c)``, never a Python function."""
    if isinstance(Q, tuple):
        if len(Q) != 2 or c is not None:
            raise TypeError("Q (fun for method 'anneal') must be a matrix or a pair (Q, c)")
        Q, c = Q
    if callable(Q) and not hasattr(Q, "shape") and not isinstance(Q, dict):
        raise TypeError("minimize_qubo (method 'anneal') minimizes a QUBO: pass the matrix Q "
                        "(or (Q, c), a dict, or a BinaryQuadraticModel) as fun, not a "
                        "Python function")
    return Q, c
