"""Shared plumbing: array namespaces, backend choice, random numbers, validation, results.

Everything in here is private API used by the solver areas; it changes only with tests for
every user. The pieces:

- :mod:`.namespace` -- array namespace detection (array-api-compat) and small helpers the
  standard lacks;
- :mod:`.backend` -- ``backend="auto" | "numpy" | "numba" | "cupy"`` resolution and the cached
  usable-GPU probe;
- :mod:`.rng` -- ``rng`` normalisation and draws that are identical on every namespace;
- :mod:`.validation` -- argument checks with clear messages;
- :mod:`.params` -- option specs: each solver declares its options once (constraint,
  default, doc) and reads a frozen config; the bad-input tests are generated from them;
- :mod:`.frames` -- pandas DataFrame / Series input unwrapped once at the boundary;
- :mod:`.results` -- the result contract (:class:`Status`, :func:`make_result`), callbacks
  with ``StopIteration``, progress bars;
- :mod:`.kernels` -- :class:`KernelTable`, the per-area table that picks a kernel per backend;
- :mod:`.optim` -- the one Adam and the step-size schedules;
- :mod:`.host` -- :func:`to_host` / :func:`to_float`, the one explicit device -> host copy;
- :mod:`.router` -- the method router behind ``minimize`` and ``learn_dag``;
- :mod:`._prng` -- the one in-kernel counter-based PRNG (Numba and CUDA; imports numba);
- :mod:`.numba_config` -- the one place where Numba flags are set.
"""
from .namespace import array_namespace, is_numpy_namespace, is_cupy_namespace, to_numpy_scalar
from .backend import resolve_backend, gpu_available, Backend, BACKENDS
from .rng import check_rng, Draws
from .validation import (
    as_float_array,
    check_finite,
    check_shape,
    check_positive,
    check_positive_definite,
    check_choice,
    check_int,
)
from .kernels import KernelTable
from .optim import Adam
from .host import to_host, to_float

#: names of :mod:`.results` served on first use: the result contract imports
#: scipy.optimize (~0.35 s), which a call that returns no OptimizeResult (logsumexp,
#: softmax, ...) never needs
_FROM_RESULTS = ("OptimizeResult", "Status", "make_result", "call_callback", "Progress")


def __getattr__(name):
    if name in _FROM_RESULTS:
        from . import results

        value = getattr(results, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "array_namespace", "is_numpy_namespace", "is_cupy_namespace", "to_numpy_scalar",
    "resolve_backend", "gpu_available", "Backend", "BACKENDS",
    "check_rng", "Draws",
    "as_float_array", "check_finite", "check_shape", "check_positive",
    "check_positive_definite", "check_choice", "check_int",
    "OptimizeResult", "Status", "make_result", "call_callback", "Progress",
    "KernelTable", "Adam", "to_host", "to_float",
]
