"""Kernel table of the log-sum-exp area: one line per hot inner operation.

``logsumexp.py`` and ``matmul.py`` ask this table for an implementation and never test which
backend runs. Numba kernels serve numpy input; any other namespace gets the generic ``xp``
code passed in by the caller; dask arrays get lazy tree reductions (``_lse_dask.py``,
imported only when a dask array arrives) where the generic code would compute eagerly, and
the generic code itself for operations without a ``DASK`` entry (softmax: lazy as written).
"""
from .._lib.kernels import KernelTable
from .._lib.namespace import is_dask_array

__all__ = ["KERNELS", "kernel"]

KERNELS = KernelTable(
    __package__,
    # (a, b, axes, return_sign, xp) -> keepdims (out, sign)
    lse_reduce={"numba": "._lse_numba:lse_reduce"},
    # (x, axes, log, xp) -> softmax or log_softmax of x over axes
    softmax={"numba": "._lse_numba:softmax_numba"},
    # (A, B, log_b, block_size, xp) -> row-wise logsumexp(A @ B + log_b)
    lse_matmul={"numba": "._matmul_numba:lse_matmul_numba"},
)

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


def kernel(name, be, generic):
    """The implementation of operation ``name`` for the resolved backend ``be``."""
    if is_dask_namespace(be.xp):
        return DASK.get(name, "generic") if name in DASK else generic
    return KERNELS.get(name, be, generic=generic)


def join_lazy(*arrays):
    """When any input is a dask array, wrap the numpy / list inputs as (one-chunk) dask
    arrays too, so that a dask ``A`` can meet a numpy ``B``; otherwise return them as is.
    Imports dask only when a dask array is present."""
    if not any(is_dask_array(x) for x in arrays if x is not None):
        return arrays
    import dask.array as da

    return tuple(x if x is None or is_dask_array(x) else da.asarray(x) for x in arrays)
