"""Kernel table of the annealer: which chains run the sweeps on each backend.

A "chains" object holds the reads of one run (states, local fields, one random stream per
read) and exposes ``sweep(betas)``, ``descend()``, ``current()`` and ``finish()``; the
algorithm in :mod:`solvers.qubo.anneal` (schedule, pieces, callback, workers, result) is
written once against that interface. The generic chains are the reference.
"""
import scipy.sparse as sps

from .._lib.kernels import KernelTable

KERNELS = KernelTable(
    __package__,
    chains={"numba": "._anneal_numba:NumbaChains", "cupy": "._anneal_cupy:CupyChains",
            "generic": "._anneal_generic:GenericChains"},
)

#: backends whose chains read a CSR ``W`` directly (the others get it densified)
_SPARSE_OK = ("numba",)


def make_chains(be, a, W, c0, X0, base, first=0, single=False):
    """The chains of backend ``be`` for one run (``W`` densified where CSR is not read)."""
    cls = KERNELS.get("chains", be)
    if be.name not in _SPARSE_OK and sps.issparse(W):
        W = be.xp.asarray(W.toarray())
    return cls(a, W, c0, X0, base, first, single, xp=be.xp)


def parallel_reads_ok(be):
    """True when the reads of a run can be split over processes (host kernels only)."""
    return be.name == "numba"
