"""Kernel table of the annealer: which chains run the sweeps on each backend.

A "chains" object holds the reads of one run (states, local fields, energies, one random
stream per read) and exposes ``sweep(betas, target)``, ``descend()``, ``current()``,
``finish()`` and ``stops``; the algorithm in :mod:`solvers.qubo.anneal` (schedule,
batches, callback, workers, result) is written once against that interface. The generic
chains are the reference.

Conventions every backend follows, so that a read gives the same samples everywhere:

- reads are taken in groups (see :mod:`._anneal_groups`);
- the uniform that decides the proposal of bit ``i`` in sweep ``t`` (counted over the
  whole schedule) of read ``r`` is the output number ``t * n + i`` of stream ``r`` of the
  library's counter-based generator (:mod:`solvers._lib._prng`), so it does not depend on
  which proposals were accepted, on the number of threads or on how reads are batched.
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


def make_chains(be, a, W, c0, X0, base, first=0, single=False, prepared=None):
    """The chains of backend ``be`` for one batch of reads (``W`` densified where CSR is
    not read); ``prepared``: the output of :func:`prepare` for the same problem."""
    cls = KERNELS.get("chains", be)
    if prepared is None and be.name not in _SPARSE_OK and sps.issparse(W):
        W = be.xp.asarray(W.toarray())
    return cls(a, W, c0, X0, base, first, single, xp=be.xp, prepared=prepared)


def prepare(be, a, W, single=False):
    """The couplings of one problem in backend ``be``'s formats, made once per run and
    passed to every batch's :func:`make_chains`."""
    cls = KERNELS.get("chains", be)
    if be.name not in _SPARSE_OK and sps.issparse(W):
        W = be.xp.asarray(W.toarray())
    return cls.prepare(a, W, single, xp=be.xp)


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
