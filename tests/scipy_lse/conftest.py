"""Run SciPy's own ``logsumexp`` / ``softmax`` / ``log_softmax`` test suite against ours.

The suite ships in the scipy wheel (``scipy/special/tests/test_logsumexp.py``). This plugin

1. switches SciPy's array API mode on (``SCIPY_ARRAY_API=1``; set on the module globals too
   when scipy was imported before this file), so the suite runs on numpy,
   array_api_strict, torch and dask where they are installed;
2. replaces ``scipy.special.logsumexp`` / ``softmax`` / ``log_softmax`` by the functions of
   :mod:`solvers` *before* the suite is imported, and gives them SciPy's
   ``xp_capabilities_table`` entries (which backends to skip, which to test lazily);
3. re-exports SciPy's own ``xp`` / ``devices`` fixtures and test hooks.

Cases that test complex input are skipped by name (complex input is a documented
``TypeError`` of :func:`solvers.logsumexp`), see ``COMPLEX_CASES``.
"""
import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest  # noqa: E402

pytest.importorskip("array_api_strict")

import scipy._lib._array_api as _scipy_xp  # noqa: E402
import scipy._lib._array_api_override as _scipy_override  # noqa: E402

if not _scipy_override.SCIPY_ARRAY_API:     # scipy was imported before this conftest
    _scipy_override.SCIPY_ARRAY_API = _scipy_xp.SCIPY_ARRAY_API = "1"

import scipy.special  # noqa: E402

import solvers  # noqa: E402

PATCHED = ("logsumexp", "softmax", "log_softmax")
SCIPY_FUNCTIONS = {name: getattr(scipy.special, name) for name in PATCHED}
for _name in PATCHED:
    _ours = getattr(solvers, _name)
    _scipy_xp.xp_capabilities_table[_ours] = \
        _scipy_xp.xp_capabilities_table[SCIPY_FUNCTIONS[_name]]
    setattr(scipy.special, _name, _ours)

from scipy.conftest import (  # noqa: E402,F401  (fixtures and hooks SciPy's suite needs)
    xp, devices, pytest_configure, pytest_runtest_setup, num_parallel_threads,
)

#: complex-valued cases of the suite: complex input is a documented TypeError here
COMPLEX_CASES = (
    "test_logsumexp_complex_sign",
    "test_gh21709_small_imaginary",
    "complex64",
    "complex128",
    "j)",            # test_gh22601_infinite_elements with a complex infinity
    "-1j]",          # test_device with a complex input
)


def pytest_collection_modifyitems(items):
    skip = pytest.mark.skip(reason="complex input is a documented TypeError of "
                                   "solvers.logsumexp")
    for item in items:
        if any(case in item.nodeid for case in COMPLEX_CASES):
            item.add_marker(skip)
