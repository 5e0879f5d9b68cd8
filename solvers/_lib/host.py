"""The one explicit device -> host copy.

The library never converts a user's GPU array to numpy behind their back. Some steps do
need host values on purpose: a scalar for a stopping test, a small d x d graph for a
topological sort, a Hungarian assignment. They call :func:`to_host` (arrays) or
:func:`to_float` (scalars), so every such copy is visible and greppable.

``array_api_compat.to_device(x, "cpu")`` is not enough: it returns an array of the same
library (e.g. array_api_strict), not numpy; DLPack is the portable route.
"""
import numpy as np

__all__ = ["to_host", "to_float"]


def to_host(x):
    """A numpy array holding the values of ``x`` (any Array API array, or array_like).

    numpy input is returned as is (no copy); cupy copies through ``.get()``; torch, JAX,
    array_api_strict and other DLPack producers through ``numpy.from_dlpack`` (a zero-copy
    view when the data already lives on the CPU).
    """
    if x is None or isinstance(x, np.ndarray):
        return x
    if isinstance(x, (int, float, bool, complex, list, tuple, np.generic)):
        return np.asarray(x)
    get = getattr(x, "get", None)
    if callable(get) and type(x).__module__.startswith("cupy"):
        return get()
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError):
            pass  # e.g. a read-only or non-CPU producer: fall through to asarray
    if hasattr(x, "compute") and type(x).__module__.startswith("dask"):
        raise TypeError("to_host got a lazy dask array; compute it explicitly first")
    return np.asarray(x)


def to_float(x):
    """A Python float from a 0-d array of any namespace (one device sync on a GPU)."""
    return float(to_host(x)) if not isinstance(x, (int, float)) else float(x)
