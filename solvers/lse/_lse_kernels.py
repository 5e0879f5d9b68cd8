"""Kernel table of the log-sum-exp area: one line per hot inner operation.

``logsumexp.py`` and ``matmul.py`` ask this table for an implementation and never test which
backend runs. Numba kernels serve numpy input; any other namespace gets the generic ``xp``
code passed in by the caller; dask arrays get lazy tree reductions (``_lse_dask.py``,
imported only when a dask array arrives) where the generic code would compute eagerly, and
the generic code itself for operations without a ``DASK`` entry (softmax: lazy as written).

Under ``backend="auto"`` numpy input below an operation's threshold runs the generic code
(no compilation): a first small call answers at once, and a small call in a loop stays
within about 2x (or about 50 us) of the Numba kernel. The thresholds come from
``benchmarks/peers/lse_small_calls.py``, which prints both paths side by side.
"""
import math

from .._lib.kernels import KernelTable
from .._lib.namespace import is_dask_array

__all__ = ["KERNELS", "kernel", "reduce_work", "matmul_work", "LSE_GENERIC_BELOW",
           "SOFTMAX_GENERIC_BELOW", "MATMUL_GENERIC_BELOW"]

# Small inputs under backend="auto" run the generic code, which needs no compilation (see
# solvers._lib.kernels). Each threshold is where the warm generic call stops being within
# about 2x (or about 50 us) of the warm Numba call, measured by
# benchmarks/peers/lse_small_calls.py on one thread (below each: at most 1.9x / 2.3x and
# 50 us for reductions without / with weights, 1.3x for softmax, 1.3x for matmul):
#: elements read (``a``, and ``b`` when given) under which "auto" reduces generically
LSE_GENERIC_BELOW = 1 << 12
#: elements under which "auto" computes softmax / log_softmax generically
SOFTMAX_GENERIC_BELOW = 1 << 16
#: work ``n * m * max(k, MATMUL_MIN_DEPTH)`` under which "auto" runs the generic blocks
MATMUL_GENERIC_BELOW = 1 << 23
#: each entry of ``A @ B`` counts as at least this many multiply-adds: with a short inner
#: dimension the generic fold of an entry, not the product, is what the kernel saves
MATMUL_MIN_DEPTH = 64

KERNELS = KernelTable(
    __package__,
    # (a, b, axes, return_sign, xp) -> keepdims (out, sign)
    lse_reduce={"numba": "._lse_numba:lse_reduce", "generic_below": LSE_GENERIC_BELOW},
    # (x, axes, log, xp) -> softmax or log_softmax of x over axes
    softmax={"numba": "._lse_numba:softmax_numba", "generic_below": SOFTMAX_GENERIC_BELOW},
    # (A, B, log_b, block_size, xp) -> row-wise logsumexp(A @ B + log_b)
    lse_matmul={"numba": "._matmul_numba:lse_matmul_numba",
                "generic_below": MATMUL_GENERIC_BELOW},
)


def reduce_work(a, b):
    """The size of a reduction in the unit of ``LSE_GENERIC_BELOW``: the elements read.
    (From the shape: ``size`` is a method on some namespaces' arrays.)"""
    size = math.prod(a.shape)
    return size if b is None else 2 * size


def matmul_work(n, k, m):
    """The size of ``logsumexp_matmul`` in the unit of ``MATMUL_GENERIC_BELOW``."""
    return n * m * max(k, MATMUL_MIN_DEPTH)


#: lazy implementations for dask arrays (same signatures)
DASK = KernelTable(
    __package__,
    lse_reduce={"generic": "._lse_dask:lse_reduce"},
    lse_matmul={"generic": "._lse_dask:lse_matmul"},
)


def is_dask_namespace(xp):
    """True for dask.array (through array-api-compat); never imports dask."""
    import array_api_compat

    return array_api_compat.is_dask_namespace(xp)


def kernel(name, be, generic, size=None):
    """The implementation of operation ``name`` for the resolved backend ``be`` (the
    generic one under the entry's threshold when ``"auto"`` chose Numba and ``size``, in
    the entry's unit, is below it)."""
    if is_dask_namespace(be.xp):
        return DASK.get(name, "generic") if name in DASK else generic
    return KERNELS.get(name, be, generic=generic, size=size)


def join_lazy(*arrays):
    """When any input is a dask array, wrap the numpy / list inputs as (one-chunk) dask
    arrays too, so that a dask ``A`` can meet a numpy ``B``; otherwise return them as is.
    Imports dask only when a dask array is present."""
    if not any(is_dask_array(x) for x in arrays if x is not None):
        return arrays
    import dask.array as da

    return tuple(x if x is None or is_dask_array(x) else da.asarray(x) for x in arrays)
