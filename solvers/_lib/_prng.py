"""The one in-kernel random number generator, for Numba and CUDA kernels alike.

A counter-based SplitMix64 stream (Steele, Lea & Flood, 2014): the state is a 64-bit
counter advanced by the golden-ratio increment, and each output is the counter passed
through a bijective mixing function. Stream ``k`` of a run starts at
``mix(base + k * GOLDEN)``, so every sample / read / particle owns an independent stream
and a ``prange`` loop or a GPU grid gives the same numbers whatever the number of threads.
``base`` comes from the user's ``rng`` (one ``integers`` draw), so results are reproducible
from ``rng``.

The Numba functions (:func:`stream_start`, :func:`next_u64`, :func:`next_uniform`,
:func:`uniform_at`) and the CUDA device functions in :data:`CUDA_SOURCE` produce the same
bits; the plain-Python :func:`reference_uniforms` is the slow obvious version both are
tested against.

Importing this module imports numba: kernel modules import it, algorithm modules do not.
"""
import numpy as np

from .numba_config import jit

__all__ = ["GOLDEN", "stream_start", "next_u64", "next_uniform", "uniform_at", "CUDA_SOURCE",
           "reference_uniforms", "seed_from_rng"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO53_INV = 1.0 / 9007199254740992.0
_MASK = (1 << 64) - 1


@jit
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit
def stream_start(base, index):
    """The starting state of stream ``index`` of a run seeded with ``base`` (uint64)."""
    return _mix(np.uint64(base) + np.uint64(index) * GOLDEN)


@jit
def next_u64(state):
    """Advance ``state``; return ``(new_state, 64 random bits)``."""
    state = state + GOLDEN
    return state, _mix(state)


@jit(inline='always')
def _to_uniform(z):
    """The top 53 bits of ``z`` as a uniform on the open (0, 1)."""
    return (np.float64(z >> _S11) + 0.5) * _TWO53_INV


@jit
def next_uniform(state):
    """Advance ``state``; return ``(new_state, u)`` with ``u`` uniform on the open (0, 1)."""
    state, z = next_u64(state)
    return state, _to_uniform(z)


@jit
def uniform_at(start, counter):
    """Output number ``counter`` (0-based) of the stream that starts at ``start``: the
    uniform :func:`next_uniform` returns after ``counter + 1`` steps, computed directly
    (counter-based access, and one compiled function less than stepping)."""
    return _to_uniform(_mix(start + (np.uint64(counter) + np.uint64(1)) * GOLDEN))


#: the same generator as CUDA device functions (paste into a RawKernel / RawModule source)
CUDA_SOURCE = r"""
__device__ __forceinline__ unsigned long long prng_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
__device__ __forceinline__ unsigned long long prng_stream_start(unsigned long long base,
                                                                unsigned long long index) {
    return prng_mix(base + index * 0x9E3779B97F4A7C15ULL);
}
__device__ __forceinline__ double prng_next_uniform(unsigned long long* state) {
    *state += 0x9E3779B97F4A7C15ULL;
    return ((double)(prng_mix(*state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
"""


def seed_from_rng(rng):
    """One uint64 ``base`` for :func:`stream_start`, drawn from a numpy Generator."""
    return np.uint64(rng.integers(0, 2**63, dtype=np.int64))


def reference_uniforms(base, index, n):
    """The first ``n`` uniforms of stream ``index`` in plain Python integers (for tests)."""
    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    state = mix((int(base) + int(index) * 0x9E3779B97F4A7C15) & _MASK)
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        out.append(((mix(state) >> 11) + 0.5) / 9007199254740992.0)
    return np.array(out)
