"""Kernel table of the annealer: which chains run the sweeps on each backend.

A "chains" object holds the reads of one run (states, local fields, energies, one random
stream per read) and exposes ``sweep(betas, target)``, ``descend()``, ``current()``,
``finish()`` and ``stops``; the algorithm in :mod:`solvers.qubo.anneal` (schedule,
batches, callback, workers, result) is written once against that interface. The generic
chains are the reference.

Conventions every backend follows, so that a read gives the same samples everywhere:

- reads are taken in groups of :data:`GROUP` consecutive reads; with a target energy, a
  group stops at the end of the first sweep at which one of its reads is at or below it
  (``stops[g]`` is then the number of sweeps the group ran), and a group that sees a
  lower-numbered group stop may give up (``stops[g] = ABANDONED``: it will be discarded);
- the uniform that decides the proposal of bit ``i`` in sweep ``t`` (counted over the
  whole schedule) of read ``r`` is the output number ``t * n + i`` of stream ``r`` of the
  library's counter-based generator (:mod:`solvers._lib._prng`), so it does not depend on
  which proposals were accepted, on the number of threads or on how reads are batched.
"""
import numpy as np
import scipy.sparse as sps

from .._lib.kernels import KernelTable

#: reads per group (the Numba CSR kernel runs a group in lockstep, one SIMD lane per read)
GROUP = 8
#: ``stops`` entries: still running, or given up because a lower group reached the target
RUNNING, ABANDONED = -1, -2

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


def batch_groups(be, mixed=False):
    """Groups a backend runs at once when reads may stop early (more only wastes work);
    ``mixed``: groups with schedules of different lengths (only Numba runs those in one
    call)."""
    if be.name == "numba":
        import numba

        return numba.get_num_threads()
    return 1 if be.name == "generic" or mixed else 1 << 30


def update_stops(stops, hit, t):
    """Group bookkeeping after sweep number ``t`` (host side, generic and CuPy chains):
    running groups with a read in ``hit`` (bool per read) stop at ``t``; running groups
    above the lowest stopped group are abandoned."""
    for g in np.nonzero(stops == RUNNING)[0]:
        if hit[g * GROUP:(g + 1) * GROUP].any():
            stops[g] = t
    stopped = np.nonzero(stops >= 0)[0]
    if stopped.size:
        above = np.arange(stops.shape[0]) > stopped[0]
        stops[above & (stops == RUNNING)] = ABANDONED


def first_stop(stops):
    """Index of the lowest group that reached the target, or None."""
    stopped = np.nonzero(np.asarray(stops) >= 0)[0]
    return int(stopped[0]) if stopped.size else None
