r"""Weight sweeps over scaled objectives, non-dominated sets and the hypervolume indicator.

All objectives are minimized. A point ``y`` dominates ``z`` when ``y <= z`` in every
objective and ``y < z`` in at least one. The hypervolume of a set ``P`` with respect to a
reference point ``r`` is the Lebesgue measure of ``{z : z <= r and some y in P
dominates-or-equals z}``; larger is better, and it rewards both convergence and spread.
"""
import itertools

import numpy as np

from .._lib import OptimizeResult, Progress, check_int
from .._lib import to_host
from .._lib.parallel import check_workers, parallel_map, spawn_generators
from .._lib.params import FLAG, POSITIVE, SEED, WORKERS, Choice, Integer, Options, Param, Real
from ._input import VARTYPE
from .anneal import minimize_qubo
from .scaling import METHODS, _as_objective, _objectives, qubo_energy, scalarize, scale_qubos

__all__ = ["pareto_front", "hypervolume", "pareto_sweep", "weight_grid"]


def pareto_front(points):
    """Boolean mask of the non-dominated rows of ``points`` (minimization).

    Of several identical non-dominated rows only the first is kept.

    Parameters
    ----------
    points : array_like, shape (m, k)
        ``m`` points in ``k`` objectives, all minimized.

    Returns
    -------
    numpy.ndarray of bool, shape (m,)
        True for the rows no other row dominates (the first of equal rows only).

    Raises
    ------
    ValueError
        ``points`` not 2-d, or holding NaN or inf.
    TypeError
        ``points`` complex or not numeric.

    Notes
    -----
    Cost ``O(m^2 k)``.

    References
    ----------
    .. [1] E. Zitzler, L. Thiele, "Multiobjective optimization using evolutionary
       algorithms -- a comparative case study", PPSN V (1998) (Pareto dominance, the
       non-dominated set).

    Examples
    --------
    >>> from solvers.qubo import pareto_front
    >>> pareto_front([[1, 3], [2, 2], [2, 3], [3, 1], [1, 3]]).tolist()
    [True, True, False, True, False]
    """
    P = _real_array(points, "points")
    if P.ndim != 2:
        raise ValueError(f"points must have shape (m, k), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"points must be finite; they hold {int(np.isnan(P).sum())} NaN and "
                         f"{int(np.isinf(P).sum())} inf value(s)")
    return _nondominated(P)


def _nondominated(P):
    """The mask of :func:`pareto_front` for a checked finite ``(m, k)`` float array."""
    m = P.shape[0]
    keep = np.ones(m, dtype=bool)
    for i in range(m):
        if not keep[i]:
            continue
        le = np.all(P <= P[i], axis=1)
        lt = np.any(P < P[i], axis=1)
        if np.any(le & lt):
            keep[i] = False
            continue
        same = np.all(P == P[i], axis=1)
        same[: i + 1] = False
        keep[same] = False
    return keep


def _real_array(values, name):
    """``values`` as float64; complex or non-numeric input is a TypeError naming ``name``."""
    arr = np.asarray(values)
    if np.iscomplexobj(arr) or arr.dtype.kind not in "biufO":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold real numbers: {exc}") from None


def hypervolume(points, reference):
    """Hypervolume dominated by ``points`` and bounded by ``reference`` (minimization).

    Exact: a sweep in two objectives (``O(m log m)``), recursive slicing along the last
    objective in more (fine for the few hundred points a weight sweep produces). Points that
    do not strictly dominate ``reference`` contribute nothing.

    Parameters
    ----------
    points : array_like, shape (m, k)
        ``m`` points in ``k`` objectives, all minimized; dominated points and duplicates
        are allowed (they add nothing).
    reference : array_like, shape (k,)
        Reference point bounding the dominated region from above.

    Returns
    -------
    float
        The Lebesgue measure of the region dominated by ``points`` and bounded by
        ``reference``; 0.0 if no point strictly dominates ``reference``.

    Raises
    ------
    ValueError
        ``points`` not 2-d, ``reference`` not of shape ``(k,)``, or non-finite entries in
        either.
    TypeError
        ``points`` or ``reference`` complex or not numeric.

    References
    ----------
    .. [1] E. Zitzler, L. Thiele, "Multiobjective optimization using evolutionary
       algorithms -- a comparative case study", PPSN V (1998) (the hypervolume, "size of
       the space covered").

    Examples
    --------
    >>> from solvers.qubo import hypervolume
    >>> hypervolume([[1, 3], [2, 2], [3, 1]], [4, 4])
    6.0
    """
    P = _real_array(points, "points")
    r = _real_array(reference, "reference")
    if P.ndim != 2 or r.shape != (P.shape[1],):
        raise ValueError(f"points must be (m, k) and reference (k,), got {P.shape} and {r.shape}")
    if not (np.all(np.isfinite(P)) and np.all(np.isfinite(r))):
        raise ValueError("points and reference must be finite")
    P = P[np.all(P < r, axis=1)]
    if P.shape[0] == 0:
        return 0.0
    P = P[_nondominated(P)]
    return float(_hv(P, r))


def _hv(P, r):
    k = P.shape[1]
    if k == 1:
        return r[0] - P[:, 0].min()
    if k == 2:
        P = P[np.argsort(P[:, 0])]
        total, best_y = 0.0, r[1]
        for x, y in P:
            if y < best_y:
                total += (r[0] - x) * (best_y - y)
                best_y = y
        return total
    P = P[np.argsort(P[:, -1])]
    total = 0.0
    for i in range(P.shape[0]):
        top = P[i + 1, -1] if i + 1 < P.shape[0] else r[-1]
        height = top - P[i, -1]
        if height > 0:
            S = P[: i + 1, :-1]
            total += height * _hv(S[_nondominated(S)], r[:-1])
    return total


def _weight_vectors(weights, k):
    """The ``(m, k)`` weight vectors: a grid for an int, else checked real, finite, >= 0."""
    if isinstance(weights, (int, np.integer)) and not isinstance(weights, bool):
        return weight_grid(k, check_int(weights, "weights", minimum=1))
    W = _real_array(weights, "weights")
    if W.ndim != 2 or W.shape[1] != k:
        raise ValueError(f"weights must be an int or have shape (m, {k}), got {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("weights must be finite")
    if np.any(W < 0):
        raise ValueError("weights must be >= 0 (every objective is minimized; negate an "
                         "objective to maximize it)")
    return W


def _flip_bound(Q, c):
    """max_i (|a_i| + sum_j |W_ij|): the largest energy change of one flip (binary form)."""
    import scipy.sparse as sps

    if sps.issparse(Q):
        d = Q.diagonal()
        W = abs(Q) + abs(Q.T)
        rows = np.asarray(W.sum(axis=1)).ravel() - 2 * np.abs(d)
    else:
        Q = np.asarray(Q, dtype=np.float64)
        d = np.diag(Q)
        rows = np.abs(Q + Q.T).sum(axis=1) - 2 * np.abs(d)
    return float(np.max(np.abs(d + np.asarray(c)) + rows)) if d.size else 0.0


def weight_grid(n_objectives, n_weights):
    """Evenly spaced weights on the simplex: ``n_weights`` per edge (2 objectives: a line).

    Parameters
    ----------
    n_objectives : int
        Number of objectives ``k >= 1``.
    n_weights : int
        Number of weights along each edge of the simplex, ``>= 1``; the grid step is
        ``1 / (n_weights - 1)``. ``n_weights=1`` gives the single vector of equal weights.

    Returns
    -------
    numpy.ndarray, shape (m, k)
        All vectors with entries in ``{0, 1/h, ..., 1}`` (``h = n_weights - 1``) summing to
        1, in lexicographic order; ``m = C(h + k - 1, k - 1)``.

    Raises
    ------
    TypeError
        ``n_objectives`` or ``n_weights`` not an integer.
    ValueError
        ``n_objectives`` or ``n_weights`` below 1.

    Notes
    -----
    All ``(h + 1)^k`` integer tuples are enumerated and filtered, so this is meant for
    the few objectives of a weight sweep.

    References
    ----------
    .. [1] J. Lee, T. Gerlach, N. Piatkowski, "Standardization of multi-objective QUBOs",
       IEEE QCE 2025, arXiv:2504.12419. (weight sweeps of the scalarized objectives).

    Examples
    --------
    >>> from solvers.qubo.pareto import weight_grid
    >>> weight_grid(2, 3).tolist()
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    >>> weight_grid(3, 3).shape
    (6, 3)
    """
    k = check_int(n_objectives, "n_objectives", minimum=1)
    h = check_int(n_weights, "n_weights", minimum=1) - 1
    if h == 0:
        return np.full((1, k), 1.0 / k)
    rows = [c for c in itertools.product(range(h + 1), repeat=k) if sum(c) == h]
    return np.asarray(sorted(rows), dtype=np.float64) / h


SWEEP_OPTIONS = Options(
    "ParetoSweepOptions",
    Param("scaling", Choice(*METHODS), "variance", "how objectives are scaled"),
    Param("weight", Integer(low=0), None, "fixed Hamming weight of the measure"),
    Param("vartype", VARTYPE, None, "binary or spin variables"),
    Param("penalty_scale", (Choice("relative"), POSITIVE), "relative",
          "penalty multiplier, or relative to the largest flip"),
    Param("min_weight", Real(0.0, 1.0, high_open=True), 1e-3, "floor of every weight"),
    Param("rng", SEED, None, "random numbers"),
    Param("workers", WORKERS, 1, "processes or a map over the weight vectors"),
    Param("progress", FLAG, False, "one progress bar over the weight vectors, on stderr"),
)


@SWEEP_OPTIONS.entry
def pareto_sweep(objectives, weights=11, *, scaling="variance", p=None, weight=None,
                 vartype=None, penalty=None, penalty_scale="relative", min_weight=1e-3,
                 reference=None, rng=None, workers=1, progress=False, **solver_options):
    r"""Solve the weighted sums of scaled objectives over a weight grid; return the front.

    For every weight vector ``w`` the scalarized QUBO ``sum_k w_k f_k / s_k`` (``s_k`` from
    :func:`scale_qubos` with ``method=scaling``) is minimized with
    :func:`minimize_qubo`; its best sample is evaluated on the *unscaled* objectives. The
    non-dominated set of these points and its hypervolume are returned.

    Parameters
    ----------
    objectives : sequence
        As in :func:`scale_qubos`.
    weights : int or array_like, shape (m, k)
        Number of evenly spaced weights per simplex edge (see :func:`weight_grid`), or the
        weight vectors themselves.
    scaling : {"variance", "maxabs", "none"}
        How objectives are scaled before they are weighted.
    p, weight : optional
        Measure for ``scaling="variance"`` (see :func:`qubo_moments`).
    vartype : {"binary", "spin"}, optional
        Domain of the variables, ``{0, 1}`` or ``{-1, +1}``. Default ``"binary"``;
        BinaryQuadraticModels bring their own (a vartype given with them must agree).
    penalty : objective, optional
        A constraint penalty (``Q``, ``(Q, c)`` or ``(Q, c, offset)``), zero on feasible
        points and at least 1 on infeasible ones, e.g. ``(sum(x) - K)^2`` for a
        cardinality constraint. It is added to every scalarized problem, not weighted.
    penalty_scale : "relative" or float
        ``"relative"`` multiplies the penalty, for every weight vector, by the largest
        energy change one flip can cause in the weighted scaled objective,
        ``max_i (|a_i| + sum_j |W_ij|)``, so no single flip gains by leaving the feasible
        set whatever the scaling; a float multiplies it by that constant.
    min_weight : float
        Weights below this value are raised to it before solving (the reported ``weights``
        are unchanged): a minimizer of a sum with strictly positive weights is Pareto
        optimal, while a zero weight yields points that are only weakly Pareto optimal
        (any value of the ignored objective). 0 disables it.
    reference : array_like, shape (k,), optional
        Reference point of the hypervolume. Default: the worst value of each objective
        among the solutions plus 10 % of its range. Pass the same reference to compare
        sweeps.
    rng : None, int or numpy.random.Generator
        Seeds the annealer: weight vector ``i`` is solved with the ``i``-th generator
        spawned from it (``Generator.spawn``, i.e. ``SeedSequence.spawn``), so a fixed
        seed reproduces the whole result whatever ``workers`` is.
    workers : int or map-like callable
        ``1`` solves the weight vectors here, one after another; an int ``k > 1`` (``-1``:
        all cores) in a pool of ``k`` processes (``spawn`` start method: guard scripts
        with ``if __name__ == "__main__":``); a callable such as ``Pool.map`` or dask's
        ``Client.map`` gets one task per weight vector. Same result in every case.
    progress : bool
        Show one progress bar on stderr for the whole sweep, advanced as each weight
        vector is solved (with ``workers`` other than 1 it fills when the pool returns);
        the annealer runs of the individual points show none.
    **solver_options
        Passed to :func:`minimize_qubo` (``n_reads``, ``n_sweeps``, ``backend``, ...).

    Returns
    -------
    OptimizeResult
        ``weights`` (``(m, k)``), ``solutions`` (``(m, n)`` best sample per weight),
        ``objective_values`` (``(m, k)`` unscaled objective values, without the penalty;
        ``values`` is taken by the dict method), ``front`` (its non-dominated unique
        rows), ``front_solutions``, ``hypervolume``, ``reference``,
        ``scales``.

    Raises
    ------
    ValueError
        Unknown ``scaling``; ``weights`` an int below 1, of the wrong width, negative or
        not finite; malformed, differently sized or constant objectives (see
        :func:`scale_qubos`); a ``penalty_scale`` that is neither ``"relative"`` nor a
        positive finite number; ``min_weight`` outside ``[0, 1)``; a ``reference`` of the
        wrong shape or not finite; ``workers`` 0 or below -1; or a bad solver option (see
        :func:`minimize_qubo`).
    TypeError
        ``objectives`` is not a sequence, complex or non-numeric ``weights``, ``workers``
        neither an int nor callable, ``workers`` or ``callback`` in ``solver_options``, or
        an unknown keyword in ``solver_options``.
    RuntimeError
        A worker process died (e.g. ``workers=k`` in a script without a ``__main__``
        guard).

    References
    ----------
    .. [1] J. Lee, T. Gerlach, N. Piatkowski, "Standardization of multi-objective QUBOs",
       IEEE QCE 2025, arXiv:2504.12419.
    .. [2] E. Zitzler, L. Thiele, "Multiobjective optimization using evolutionary
       algorithms -- a comparative case study", PPSN V (1998) (hypervolume).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo import pareto_sweep
    >>> f1 = np.diag([-1.0, -2.0, -3.0])            # wants bits on
    >>> f2 = 100.0 * np.ones((3, 3))                # wants bits off
    >>> res = pareto_sweep([f1, f2], weights=5, n_sweeps=50, rng=0)
    >>> res.front[np.argsort(res.front[:, 0])].tolist()
    [[-6.0, 900.0], [-5.0, 400.0], [-3.0, 100.0], [0.0, 0.0]]
    """
    cfg = SWEEP_OPTIONS.validate(scaling=scaling, weight=weight, vartype=vartype,
                                 penalty_scale=penalty_scale, min_weight=min_weight, rng=rng,
                                 workers=workers, progress=progress)
    scaling, penalty_scale, min_weight = cfg.scaling, cfg.penalty_scale, cfg.min_weight
    parsed = _objectives(objectives, cfg.vartype)
    vartype = parsed[0].vartype
    k = len(parsed)
    W = _weight_vectors(weights, k)
    triples = [(q.Q, q.c, q.offset) for q in parsed]
    scaled, scales = scale_qubos(triples, scaling, p=p, weight=weight, vartype=vartype)
    if penalty is not None:
        penalty = _as_objective(penalty, vartype, "penalty")
        penalty = (penalty.Q, penalty.c, penalty.offset)
    if "workers" in solver_options or "callback" in solver_options:
        raise TypeError("pareto_sweep takes workers itself and no callback; pass them "
                        "neither in solver_options")
    seeds = spawn_generators(rng, W.shape[0])
    tasks = []
    for w, seed in zip(W, seeds):
        Qw, cw, ow = scalarize(scaled, np.maximum(w, min_weight), vartype=vartype)
        if penalty is not None:
            A = (_flip_bound(Qw, cw) if penalty_scale == "relative" else float(penalty_scale))
            Qw, cw, ow = scalarize([(Qw, cw, ow), penalty], [1.0, A], vartype=vartype)
        tasks.append((Qw, cw, ow, vartype, seed, solver_options))
    solutions = _solve_all(tasks, workers, cfg.progress)
    values = [[qubo_energy(t, x, vartype=vartype) for t in triples] for x in solutions]
    solutions = np.asarray(solutions)
    values = np.asarray(values, dtype=np.float64)
    if reference is None:
        hi, lo = values.max(axis=0), values.min(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        reference = hi + 0.1 * span
    reference = np.asarray(reference, dtype=np.float64)
    mask = _nondominated(values)
    return OptimizeResult(weights=W, solutions=solutions, objective_values=values,
                          front=values[mask],
                          front_solutions=solutions[mask],
                          hypervolume=hypervolume(values, reference), reference=reference,
                          scales=scales, scaling=scaling)


def _solve_all(tasks, workers, progress):
    """Best sample of every task, under one progress bar for the whole sweep."""
    with Progress(len(tasks), "pareto_sweep", enabled=progress) as bar:
        if check_workers(workers) is None:
            solutions = []
            for task in tasks:
                solutions.append(_solve_one(task))
                bar.update(1)
            return solutions
        solutions = parallel_map(_solve_one, tasks, workers)
        bar.update(len(tasks))
        return solutions


def _solve_one(task):
    """Best sample (numpy) of one scalarized problem (runs in a worker process)."""
    Q, c, offset, vartype, rng, options = task
    return to_host(minimize_qubo(Q, c, offset, vartype=vartype, rng=rng, **options).x)
