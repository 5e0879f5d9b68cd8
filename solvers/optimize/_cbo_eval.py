"""Objective evaluation for CBO: vectorized, serial, a process pool, or any map-like.

A process pool uses the ``fork`` start method where the platform has it (Linux: what
SciPy's ``workers=`` users get), so a script without an ``if __name__ == "__main__":``
guard works. Where only ``spawn`` exists, a pool started while the main module is being
re-imported in a child (the guard is missing) fails fast with a message instead of
respawning workers forever.
"""
import multiprocessing
import numbers

import numpy as np

from .._lib.host import to_host
from .._lib.parallel import check_workers, collect
from .._lib.validation import check_int

__all__ = ["Evaluator", "Objective", "check_cbo_workers", "make_pool", "real_scalar"]


class Objective:
    """``fun(x, *args)`` as a picklable one-argument callable (for worker pools)."""

    def __init__(self, fun, args):
        self.fun = fun
        self.args = tuple(args)

    def __call__(self, x):
        return self.fun(x, *self.args)


def make_pool(n):
    """A ``multiprocessing`` pool of ``n`` workers (``None``: all cores)."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods:
        return multiprocessing.get_context("fork").Pool(n)
    if multiprocessing.parent_process() is not None:
        raise RuntimeError(
            "workers > 1 started a process pool from a worker process: the script that "
            "calls minimize_cbo needs an `if __name__ == '__main__':` guard on this "
            "platform (spawn start method)")
    return multiprocessing.get_context("spawn").Pool(n)


def check_cbo_workers(workers):
    """:func:`~solvers._lib.parallel.check_workers` (None: serial) after ``check_int``'s
    TypeError for a ``workers`` that is neither None, callable nor an integer."""
    if workers is not None and not callable(workers):
        workers = check_int(workers, "workers")
    return check_workers(workers)


def parse_workers(workers):
    """``workers`` -> (map callable, pool size or None for a user map / serial)."""
    if check_cbo_workers(workers) is None:
        return map, None
    if callable(workers):
        return workers, None
    n = int(workers)
    return None, (None if n == -1 else n)


class Evaluator:
    """Evaluates a (K, d) population: vectorized, serially, or through a map-like."""

    def __init__(self, fun, args, vectorized, workers, be, dtype):
        self.obj = Objective(fun, args)
        self.vectorized = vectorized
        self.be, self.xp = be, be.xp
        self.dtype = dtype
        self.pool = None
        self.map, n = parse_workers(workers)
        if self.map is None:
            self.pool = make_pool(n)
            self.map = self.pool.map

    def close(self):
        if self.pool is not None:
            self.pool.close()
            self.pool.join()
            self.pool = None

    def _vectorized(self, X):
        xp, K = self.xp, X.shape[0]
        out = self.obj(X.T)
        if hasattr(out, "__array_namespace__") and not isinstance(out, np.ndarray):
            if not xp.isdtype(out.dtype, ("real floating", "integral", "bool")):
                raise TypeError(_VECTOR_TYPE.format(f"dtype {out.dtype}"))
            out = xp.astype(xp.asarray(out), self.dtype)
        else:
            host = np.asarray(out)
            if host.dtype.kind not in "biuf":
                raise TypeError(_VECTOR_TYPE.format(f"dtype {host.dtype}"))
            out = host.astype(self.dtype) if self.be.on_host else \
                xp.asarray(host.astype(np.float64).tolist(), dtype=self.dtype)
        if tuple(out.shape) != (K,):
            raise ValueError(f"a vectorized fun must map x of shape (d, S) to shape (S,); "
                             f"got shape {tuple(out.shape)} for S = {K}")
        return out

    def __call__(self, X):
        if self.vectorized:
            return self._vectorized(X)
        rows = [X[i, :] for i in range(X.shape[0])]
        results = collect(self.map, self.obj, rows)  # dask futures: one round trip
        return self.be.asarray([real_scalar(v) for v in results], dtype=self.dtype)


_VECTOR_TYPE = "a vectorized fun must return real numbers of shape (S,), got {}"


def real_scalar(value):
    """``value`` as a float if it is a real number (or a one-element real array).

    Raises
    ------
    TypeError
        Strings, complex numbers, None, arrays of several values or of another dtype:
        ``float()`` would accept ``"1.0"`` and mask a bug in the objective.
    """
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "__array_namespace__"):
        host = np.asarray(to_host(value))
        if host.size == 1 and host.dtype.kind in "biuf":
            return float(host.reshape(()))
    raise TypeError(f"fun must return a real scalar, got {type(value).__name__} {value!r:.60}"
                    " (use vectorized=True for an objective that takes the whole population)")
