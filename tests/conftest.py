"""Shared fixtures.

``xp`` runs a test on numpy and array_api_strict always, and on cupy only where the GPU
probe passes (or where SOLVERS_TEST_CUPY=1 forces it, as gpu/check.py does). The strict
namespace stands in for a GPU in CI: it rejects implicit numpy conversion and numpy scalars,
the bugs a GPU run would find.
"""
import os

import numpy as np
import pytest

from solvers._lib.backend import gpu_available

# cupy runs draw on the host in the tests, so they can be compared draw for draw with numpy
# (the library's default on cupy is device draws: tests/test_lib_plumbing.py checks them)
os.environ.setdefault("SOLVERS_HOST_DRAWS", "1")


def _namespaces():
    import array_api_strict

    params = [pytest.param(np, id="numpy"), pytest.param(array_api_strict, id="strict")]
    if os.environ.get("SOLVERS_TEST_CUPY") == "1" or gpu_available():
        import cupy

        params.append(pytest.param(cupy, id="cupy", marks=pytest.mark.gpu))
    return params


def _backends():
    names = ["numpy", "numba"]
    if os.environ.get("SOLVERS_TEST_CUPY") == "1" or gpu_available():
        names.append(pytest.param("cupy", marks=pytest.mark.gpu))
    return names


@pytest.fixture(params=_namespaces())
def xp(request):
    """An array namespace: numpy, array_api_strict, and cupy where a GPU is usable."""
    return request.param


@pytest.fixture(params=_backends())
def backend(request):
    """A backend name for numpy input: "numpy" (generic code), "numba", and "cupy" on a GPU."""
    return request.param


@pytest.fixture(params=["float64", "float32"])
def dtype_name(request):
    """Floating dtype name; tests look it up in their namespace (``getattr(xp, name)``)."""
    return request.param


def to_numpy(x):
    """Bring any namespace's array to numpy for comparisons in tests (explicit, test-only)."""
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def tol(dtype_name, f64=1e-12, f32=1e-5):
    """Relative tolerance for a dtype: float32 results are checked at float32 precision."""
    return f64 if dtype_name == "float64" else f32
