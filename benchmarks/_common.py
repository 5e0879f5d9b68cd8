"""Helpers shared by the asv benchmark modules.

BLAS threads are pinned to one: on 2-core machines multithreaded OpenBLAS made small-matrix
loops up to 30x slower, which would distort every ratio (see design.md).
"""
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pin_blas_threads(user_api="blas"):
    """Limit BLAS (``user_api=None``: every thread pool threadpoolctl knows, OpenMP too) to
    one thread for the rest of the process (threadpoolctl if present)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api)
    except ImportError:
        pass


def best_cpu_seconds(call, repeat):
    """The least CPU time (``time.process_time``) of ``repeat`` calls of ``call()``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best
