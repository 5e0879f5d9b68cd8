"""Per-core cache sizes and the thread budget of the log-sum-exp kernels.

Block sizes of the Numba kernels derive from the L1 data and L2 cache sizes of the host,
read once: from ``/sys/devices/system/cpu`` on Linux (divided among the CPUs that share a
cache), from ``sysctl`` on macOS, from ``os.sysconf`` where Python exposes the names, and
otherwise a conservative 32 KiB / 1 MiB. Nothing here imports Numba.
"""
import functools
import os
import subprocess
import sys
from pathlib import Path

_FALLBACK = {1: 32 * 1024, 2: 1024 * 1024}
# sanity bounds: a value outside them is a misread, and the fallback serves instead
_BOUNDS = {1: (8 * 1024, 4 * 1024 * 1024), 2: (64 * 1024, 256 * 1024 * 1024)}


def _parse_size(text):
    """'48K' / '2048K' / '2M' / '32768' -> bytes."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    return int(text.rstrip("KMGB") or 0) * scale


def _cpu_count_in(cpu_list):
    """Number of CPUs in a /sys list such as '0-3,8'."""
    count = 0
    for part in cpu_list.strip().split(","):
        lo, _, hi = part.partition("-")
        count += int(hi) - int(lo) + 1 if hi else 1
    return count


def _linux_sizes():
    sizes = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text())
            shared = _cpu_count_in((index / "shared_cpu_list").read_text())
        except (OSError, ValueError):
            continue
        if level in (1, 2) and kind in ("Data", "Unified"):
            sizes[level] = size // max(shared, 1)
    return sizes


def _sysconf_sizes():
    names = {1: "SC_LEVEL1_DCACHE_SIZE", 2: "SC_LEVEL2_CACHE_SIZE"}
    sizes = {}
    for level, name in names.items():
        if name in os.sysconf_names:
            try:
                sizes[level] = int(os.sysconf(name))
            except (OSError, ValueError):
                pass
    return sizes


def _macos_sizes():
    sizes = {}
    for level, key in ((1, "hw.l1dcachesize"), (2, "hw.l2cachesize")):
        try:
            out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True,
                                 timeout=2).stdout
            sizes[level] = int(out.strip())
        except (OSError, ValueError, subprocess.SubprocessError):
            pass
    return sizes


@functools.cache
def cache_sizes():
    """``(l1d, l2)``: bytes of L1 data and L2 cache available to one core."""
    readers = [_linux_sizes, _sysconf_sizes]
    if sys.platform == "darwin":
        readers.append(_macos_sizes)
    found = {}
    for reader in readers:
        for level, size in reader().items():
            lo, hi = _BOUNDS[level]
            if level not in found and lo <= size <= hi:
                found[level] = size
    return found.get(1, _FALLBACK[1]), found.get(2, _FALLBACK[2])


def floor_pow2(x):
    """The largest power of two <= max(x, 1)."""
    return 1 << (max(int(x), 1).bit_length() - 1)
