"""The one place Numba options are set.

``FASTMATH`` enables the reassociation/contraction flags that let loops vectorise, but not
``nnan``/``ninf``: NaN and inf checks inside kernels must keep working. Kernels are
compiled with ``cache=True`` so the compile cost is paid once per machine.

Import :func:`jit` from here instead of ``numba.njit``; importing this module imports numba,
so solver areas import their ``_*_numba`` modules lazily, on first use.
"""
import functools

import numba

FASTMATH = frozenset({"nsz", "arcp", "contract", "afn", "reassoc"})

#: decorator for serial kernels
jit = functools.partial(numba.njit, cache=True, fastmath=set(FASTMATH), nogil=True)

#: decorator for kernels with a ``prange`` loop (use only where it was measured to help)
jit_parallel = functools.partial(numba.njit, cache=True, fastmath=set(FASTMATH), nogil=True,
                                 parallel=True)

prange = numba.prange
