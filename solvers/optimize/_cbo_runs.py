"""Independent CBO runs (``independent_runs=True``), mapped over ``workers``.

Each of the ``n_runs`` runs is one piece: a :class:`~._cbo_solver.CBOSolver` on the
validated configuration of one run (:meth:`~._cbo_config.CBOConfig.piece`: ``n_runs=1``,
its share of ``maxfev``) with its own generator spawned from ``rng``
(``numpy.random.Generator.spawn``, i.e. ``SeedSequence.spawn``). The pieces do not depend
on one another or on how they are scheduled, so serial evaluation, a process pool and a
dask ``Client.map`` give identical answers.
"""
from dataclasses import replace

from .._lib.namespace import array_namespace
from .._lib.parallel import collect, spawn_generators
from .._lib.results import OptimizeResult
from .._lib.rng import Draws
from ._cbo_config import prepare
from ._cbo_eval import make_pool, parse_workers
from ._cbo_solver import CBOSolver

__all__ = ["map_runs", "run_piece"]


def run_piece(job):
    """One independent run (top level, so process pools can pickle it)."""
    fun, cfg, bounds, x0, x0_spread, rng = job
    problem = prepare(bounds, x0, x0_spread, cfg.backend)
    return CBOSolver(fun, cfg, problem, Draws(rng, problem.be.xp)).solve()


def _combine(results):
    """One OptimizeResult of the pieces: the best run's point, status and message, the
    counts summed, each run's best in ``x_runs`` / ``fun_runs``."""
    funs = [float(r.fun) for r in results]
    best = results[min(range(len(funs)), key=funs.__getitem__)]
    xp = array_namespace(best.x)
    res = OptimizeResult(best)
    nfev = sum(r.nfev for r in results)
    res.update(
        nfev=nfev, nit=sum(r.nit for r in results),
        n_restarts=sum(r.n_restarts for r in results),
        n_nonfinite=sum(r.n_nonfinite for r in results),
        x_runs=xp.stack([r.x for r in results]),
        fun_runs=xp.asarray(funs, dtype=xp.float64),
        message=f"{best.message} (the best of {len(results)} independent runs; "
                f"{nfev} evaluations in all)")
    return res


def map_runs(fun, cfg, bounds, x0, x0_spread, rng):
    """Run the ``cfg.n_runs`` pieces through ``cfg.workers``; the combined result."""
    n_runs = cfg.n_runs
    children = spawn_generators(rng, n_runs)
    budgets = [None] * n_runs
    if cfg.maxfev is not None:
        base, extra = divmod(cfg.maxfev, n_runs)
        budgets = [base + (i < extra) for i in range(n_runs)]
    jobs = [(fun, replace(cfg.piece(budgets[i]), workers=1), bounds, x0, x0_spread,
             children[i]) for i in range(n_runs)]
    mapper, n = parse_workers(cfg.workers)
    pool = None
    try:
        if mapper is None:
            pool = make_pool(n)
            mapper = pool.map
        results = collect(mapper, run_piece, jobs)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return _combine(results)
