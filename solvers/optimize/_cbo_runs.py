"""Independent CBO runs mapped over ``workers`` (a process pool or a dask cluster).

With ``n_runs > 1`` and ``workers`` other than 1, each run is one piece: a full
:func:`~solvers.optimize.cbo.minimize_cbo` call (its own restarts and polish) with
``n_runs=1``, its share of ``maxfev`` and its own generator spawned from ``rng``
(``numpy.random.Generator.spawn``, i.e. ``SeedSequence.spawn``). The pieces do not depend on
one another or on how they are scheduled, so serial (``workers=map``), a process pool and a
dask ``Client.map`` give identical answers.
"""
import numpy as np

from .._lib.parallel import collect, spawn_generators
from ._cbo_eval import make_pool, parse_workers

__all__ = ["map_runs"]


def _run_piece(job):
    """One independent run (top level, so process pools can pickle it)."""
    from .cbo import minimize_cbo

    fun, kwargs = job
    return minimize_cbo(fun, **kwargs)


def map_runs(fun, kwargs, n_runs, maxfev, workers, rng):
    """Run ``n_runs`` pieces through ``workers``; returns the combined OptimizeResult."""
    from .._lib.results import OptimizeResult  # the pieces' results follow the contract

    children = spawn_generators(rng, n_runs)
    budgets = [None] * n_runs
    if maxfev is not None:
        base, extra = divmod(maxfev, n_runs)
        budgets = [base + (i < extra) for i in range(n_runs)]
    jobs = [(fun, dict(kwargs, n_runs=1, workers=1, maxfev=budgets[i], rng=children[i]))
            for i in range(n_runs)]
    mapper, n = parse_workers(workers)
    pool = None
    try:
        if mapper is None:
            pool = make_pool(n)
            mapper = pool.map
        results = collect(mapper, _run_piece, jobs)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    funs = np.asarray([r.fun for r in results], dtype=np.float64)
    best = results[int(np.argmin(funs))]
    res = OptimizeResult(best)
    res.update(
        nfev=sum(r.nfev for r in results), nit=sum(r.nit for r in results),
        n_restarts=sum(r.n_restarts for r in results),
        n_nonfinite=sum(r.n_nonfinite for r in results),
        x_runs=np.stack([np.asarray(r.x) for r in results]),
        fun_runs=funs, success=all(r.success for r in results) or best.success)
    return res
