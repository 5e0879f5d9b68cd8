"""``workers=``: run independent pieces serially, in a process pool, or through any map.

One helper for every solver that maps independent pieces (QUBO reads, Pareto weights, DAG
restarts and bootstrap fits, CBO runs). Each piece gets its own generator spawned from the
caller's ``rng`` (:func:`spawn_generators`, i.e. ``SeedSequence.spawn``), so serial, a
process pool and a dask cluster give identical results.

``workers=1`` (or None) runs here. An int ``k > 1`` (``-1``: all cores) uses a
``concurrent.futures.ProcessPoolExecutor`` started with the ``spawn`` method: ``fork`` is
unsafe once Numba's OpenMP threads exist (the child aborts), and a pool that cannot start
its workers (a script without an ``if __name__ == "__main__":`` guard) fails at once with a
clear error instead of respawning them forever. A callable is any map-like,
``workers(func, iterable)``: ``multiprocessing.Pool.map``, an executor's ``map`` or dask's
``Client.map`` (whose futures are gathered).
"""
import concurrent.futures
import multiprocessing
import numbers
import pickle

from .rng import check_rng

__all__ = ["check_workers", "collect", "gather", "parallel_map", "spawn_generators"]


def check_workers(workers):
    """None for "run here", else a map-like callable ``(func, iterable) -> iterable``.

    Raises
    ------
    TypeError
        ``workers`` neither an int nor callable.
    ValueError
        An int that is 0 or below -1.
    """
    if workers is None:
        return None
    if callable(workers):
        return workers
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers must be an int or a map-like callable, got {workers!r}")
    if workers == 1:
        return None
    if workers == 0 or workers < -1:
        raise ValueError(f"workers must be a positive int, -1 (all cores) or a map-like "
                         f"callable, got {workers}")
    return _PoolMap(None if workers == -1 else int(workers))


class _PoolMap:
    """``map`` over a spawn-started process pool that lives for one call."""

    def __init__(self, n):
        self.n = n

    def __call__(self, func, iterable):
        tasks = list(iterable)
        context = multiprocessing.get_context("spawn")
        try:
            with concurrent.futures.ProcessPoolExecutor(
                    max_workers=min(self.n or len(tasks), len(tasks)) or 1,
                    mp_context=context) as pool:
                return list(pool.map(func, tasks))
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            if "pickle" not in str(exc):
                raise
            raise TypeError(
                f"workers={self.n or -1} sends the work to other processes, so the objective "
                "(and everything it refers to) must be picklable; a lambda or a function "
                "defined inside another function is not. Define it at module level (or use "
                f"functools.partial), or pass workers=1. ({exc})") from exc
        except concurrent.futures.process.BrokenProcessPool as exc:
            raise RuntimeError(
                "a worker process died before finishing. workers=<int> starts processes "
                "with the 'spawn' method, which re-imports the main script: put the calling "
                "code under `if __name__ == \"__main__\":` (or pass workers=1, or a map-like "
                "callable such as a dask Client.map)") from exc


def collect(pmap, func, tasks):
    """``list(pmap(func, tasks))`` with futures (dask ``Client.map``) resolved in order."""
    return gather(list(pmap(func, tasks)))


def gather(results):
    """Resolve futures in order: dask futures in one ``client.gather`` round trip, other
    futures by ``.result()``; plain values pass through."""
    if not results or not callable(getattr(results[0], "result", None)):
        return list(results)
    client = getattr(results[0], "client", None)
    if client is not None and callable(getattr(client, "gather", None)):
        return list(client.gather(results))
    return [r.result() for r in results]


def parallel_map(func, items, workers=None):
    """``[func(item) for item in items]``, through ``workers`` (see :func:`check_workers`)."""
    items = list(items)
    pmap = check_workers(workers)
    if pmap is None or len(items) <= 1:
        return [func(item) for item in items]
    return collect(pmap, func, items)


def spawn_generators(rng, k):
    """``k`` independent generators spawned from ``rng`` (None, int or Generator)."""
    return check_rng(rng).spawn(int(k))
