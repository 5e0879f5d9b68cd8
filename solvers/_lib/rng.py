"""Random numbers: SciPy's ``rng`` convention on every namespace.

Every stochastic solver takes ``rng``: ``None`` (fresh OS entropy), an ``int`` seed, or a
``numpy.random.Generator``. The global ``np.random`` state is never touched.

:class:`Draws` gives the same draws API for every namespace. By default the numbers are
drawn on the host with the user's Generator and moved to the computing namespace, so a
numpy run, an array-api-strict run and a cupy run with the same seed see *identical*
numbers (that is what lets the tests compare backends draw for draw).

On cupy the continuous draws (normal, uniform, Gumbel) are made on the device by default,
with a cupy Generator seeded from the user's Generator: not the same numbers as on the host,
but reproducible from ``rng`` and without a host-to-device copy per draw, which would
otherwise dominate a GPU step. The environment variable ``SOLVERS_HOST_DRAWS=1`` (the test
suite sets it) restores host draws, so a cupy run can be compared draw for draw with numpy.
Integer draws (indices, permutations) stay on the host stream in every mode.
"""
import os

import numpy as np

from .namespace import is_numpy_namespace, is_cupy_namespace


def check_rng(rng):
    """Normalise ``rng`` to a ``numpy.random.Generator``.

    Raises
    ------
    TypeError
        For anything but None, an int, or a Generator (``RandomState`` included: it has a
        different stream and would make results irreproducible across versions).
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng seed must be non-negative, got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")


class Draws:
    """Random draws in namespace ``xp`` from a host ``numpy.random.Generator``.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    xp : module
        Namespace the draws are returned in.
    on_device : bool, optional
        cupy only: draw on the GPU with a cupy Generator seeded from ``rng``. Default: yes,
        unless the environment sets ``SOLVERS_HOST_DRAWS=1``.
    """

    def __init__(self, rng, xp, on_device=None):
        self.rng = check_rng(rng)
        self.xp = xp
        self._host = is_numpy_namespace(xp)
        self._device_gen = None
        if on_device is None:
            on_device = os.environ.get("SOLVERS_HOST_DRAWS") != "1"
        if on_device and is_cupy_namespace(xp):
            import cupy

            self._device_gen = cupy.random.default_rng(int(self.rng.integers(2**63)))

    def _out(self, host_array, dtype):
        if self._host:
            return host_array.astype(dtype, copy=False) if dtype is not None else host_array
        arr = self.xp.asarray(host_array)
        return self.xp.astype(arr, dtype) if dtype is not None else arr

    def _np_dtype(self, dtype):
        if dtype is None:
            return np.float64
        return np.float32 if dtype == self.xp.float32 else np.float64

    def normal(self, shape, dtype=None):
        """Standard normal draws of the given shape."""
        if self._device_gen is not None:
            return self._device_gen.standard_normal(shape, dtype=self._np_dtype(dtype))
        return self._out(self.rng.standard_normal(shape), dtype)

    def uniform(self, low=0.0, high=1.0, shape=(), dtype=None):
        """Uniform draws on [low, high) (low/high may be host arrays that broadcast)."""
        if self._device_gen is not None:
            u = self._device_gen.random(shape, dtype=self._np_dtype(dtype))
            return self.xp.asarray(low) + (self.xp.asarray(high) - self.xp.asarray(low)) * u
        return self._out(self.rng.uniform(low, high, size=shape), dtype)

    def gumbel(self, shape, dtype=None):
        """Standard Gumbel draws."""
        if self._device_gen is not None:
            u = self._device_gen.random(shape, dtype=self._np_dtype(dtype))
            return -self.xp.log(-self.xp.log(u))
        return self._out(self.rng.gumbel(size=shape), dtype)

    def integers(self, low, high=None, shape=()):
        """Integer draws (host stream in every mode, so index sequences match)."""
        return self._out(self.rng.integers(low, high, size=shape), None)

    def permutation(self, n):
        """A random permutation of ``range(n)`` (host stream in every mode)."""
        return self._out(self.rng.permutation(n), None)

    def choice(self, n, size, replace=False):
        """Indices drawn from ``range(n)`` (host stream in every mode)."""
        return self._out(self.rng.choice(n, size=size, replace=replace), None)

    def spawn_seed(self):
        """An int seed derived from the stream (for sub-solvers and worker processes)."""
        return int(self.rng.integers(2**63))
