"""``workers=``: map independent DAG fits over a pool or a cluster, and spawn their seeds.

``workers`` follows SciPy's convention: ``None`` or ``1`` runs serially; an int ``k > 1``
uses a ``concurrent.futures.ProcessPoolExecutor`` with ``k`` processes (``-1``: one per
CPU); a callable is used as ``map(func, iterable)``, e.g. ``multiprocessing.Pool.map``,
``concurrent.futures.Executor.map`` or dask's ``Client.map`` (futures it returns are
resolved with ``.result()``). Each piece gets its own seed spawned from the caller's
``rng`` (``numpy.random.Generator.spawn``), so serial and parallel runs give the same
result.
"""
import os

import numpy as np

from .._lib.rng import check_rng

__all__ = ["parallel_map", "spawn_generators"]


def spawn_generators(rng, k):
    """``k`` independent generators spawned from ``rng`` (None, int or Generator)."""
    return check_rng(rng).spawn(int(k))


def parallel_map(func, items, workers=None):
    """``[func(item) for item in items]`` through ``workers`` (see the module notes).

    Raises
    ------
    ValueError
        ``workers`` is an int below 1 other than -1.
    TypeError
        ``workers`` is neither None, an int nor a callable.
    """
    items = list(items)
    if workers is None:
        return [func(x) for x in items]
    if callable(workers):
        out = list(workers(func, items))
        return [r.result() if hasattr(r, "result") and callable(r.result) else r
                for r in out]
    if isinstance(workers, (bool, np.bool_)) or not isinstance(workers, (int, np.integer)):
        raise TypeError("workers must be None, an int or a map-like callable, got "
                        f"{type(workers).__name__}")
    workers = int(workers)
    if workers == -1:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise ValueError(f"workers must be >= 1 or -1, got {workers}")
    if workers == 1 or len(items) <= 1:
        return [func(x) for x in items]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(func, items))
