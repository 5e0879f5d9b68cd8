"""Groups of reads: the constants and the host-side bookkeeping every chains class shares.

Reads are taken in groups of :data:`GROUP` consecutive reads. With a target energy a group
stops at the end of the first sweep at which one of its reads is at or below it
(``stops[g]`` is then the number of sweeps the group ran), and a group that sees a
lower-numbered group stop may give up (``stops[g] = ABANDONED``: it will be discarded).
This module imports nothing of the area, so the kernel modules and the table both use it.
"""
import numpy as np

#: reads per group (the Numba CSR kernel runs a group in lockstep, one SIMD lane per read)
GROUP = 8
#: ``stops`` entries: still running, or given up because a lower group reached the target
RUNNING, ABANDONED = -1, -2


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
