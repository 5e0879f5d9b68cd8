"""The one place Numba options are set, and the rules that keep first calls cheap.

``FASTMATH`` enables the reassociation/contraction flags that let loops vectorise, but not
``nnan``/``ninf``: NaN and inf checks inside kernels must keep working. Kernels are
compiled with ``cache=True`` so the compile cost is paid once per machine.

Import :func:`jit` from here instead of ``numba.njit``; importing this module imports numba,
so solver areas import their ``_*_numba`` modules lazily, on first use.

Compile only what is used
-------------------------
Every distinct argument type signature of a kernel is a separate compilation (and a
separate cache entry), and compiling costs a fraction of a second to seconds per kernel.
So:

- **One specialization per dtype actually used.** No eager signature lists (they compile
  float32 and float64 when a user needs one). The public wrapper of a kernel converts its
  arrays with :func:`kernel_array` to the one float dtype the computation runs in, chosen
  once (:func:`kernel_float`: float32 stays float32 where the kernel computes in it,
  everything else, integer and boolean inputs included, becomes float64), so an int64 or
  a read-only or strided input never compiles a second version. Scalars go in as Python
  ``float``/``int``/``bool`` (``float(x)``), never as numpy scalars of varying types.
  Inside kernels the same holds for helper functions: a helper called with a ``prange``
  index (unsigned, uint64) and with a ``range`` index (int64), or once with a literal
  ``False`` and once with a bool variable, is compiled twice.
- **One kernel per operation.** Numba's cache index ignores ``parallel=True``, so serial
  and parallel versions must be two functions, and a call that uses both compiles both
  (parallel compilation being the slowest). Prefer one ``jit_parallel`` kernel whose
  ``prange`` runs over chunks of the work, and run a small input on one thread
  (:func:`threads_for`): a parallel region on a busy machine costs milliseconds to wake
  its threads, one thread costs microseconds. Inputs small enough for a serial kernel to
  matter usually belong to the generic twin under ``backend="auto"`` anyway (the
  ``generic_below`` threshold of :mod:`solvers._lib.kernels`).
- ``cache=True`` everywhere, and tunables as arguments, not globals (globals are frozen
  into the cache).
"""
import contextlib
import functools

import numba
import numpy as np

__all__ = ["FASTMATH", "jit", "jit_parallel", "prange", "kernel_array", "kernel_float",
           "single_thread", "threads_for"]

FASTMATH = frozenset({"nsz", "arcp", "contract", "afn", "reassoc"})

#: decorator for serial kernels
jit = functools.partial(numba.njit, cache=True, fastmath=set(FASTMATH), nogil=True)

#: decorator for kernels with a ``prange`` loop (use only where it was measured to help)
jit_parallel = functools.partial(numba.njit, cache=True, fastmath=set(FASTMATH), nogil=True,
                                 parallel=True)

prange = numba.prange


def kernel_float(*arrays, single=True):
    """The one float dtype a kernel runs in for ``arrays``: float32 when every floating
    input is float32 (or float16) and ``single`` (the kernel has a float32 version worth
    compiling), float64 otherwise; integer and boolean inputs count as float64 unless
    every floating input is single precision."""
    dtypes = [np.asarray(a).dtype for a in arrays if a is not None]
    floats = [t for t in dtypes if np.issubdtype(t, np.floating)]
    if single and floats and all(t.itemsize <= 4 for t in floats):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def kernel_array(x, dtype=np.float64):
    """``x`` as a C-contiguous, writeable array of ``dtype``: the one layout the kernels
    are compiled for (a read-only or strided array would compile another signature).

    Copies only when needed (another dtype or layout, or a read-only buffer).
    """
    a = np.ascontiguousarray(x, dtype=dtype)
    return a if a.flags.writeable else a.copy()


@contextlib.contextmanager
def single_thread():
    """Run the enclosed parallel kernels on the calling thread alone (Numba's thread count
    is a per-thread setting; restored on exit)."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def threads_for(work, parallel_work):
    """A context for one parallel kernel call: every Numba thread when ``work`` is at least
    ``parallel_work``, the calling thread alone otherwise (:func:`single_thread`)."""
    return contextlib.nullcontext() if work >= parallel_work else single_thread()
