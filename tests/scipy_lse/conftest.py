"""Run SciPy's own ``logsumexp`` / ``softmax`` / ``log_softmax`` test suite against ours.

The suite ships in the scipy wheel (``scipy/special/tests/test_logsumexp.py``). This plugin

1. switches SciPy's array API mode on (``SCIPY_ARRAY_API=1``) while SciPy's test fixtures
   are imported and around each of the suite's tests only, so the suite runs on numpy,
   array_api_strict, torch and dask where they are installed, and the rest of the session
   is unaffected;
2. replaces ``scipy.special.logsumexp`` / ``softmax`` / ``log_softmax`` by the functions of
   :mod:`solvers` while the suite is imported (restored right after, so other tests still
   compare against SciPy's), and gives them SciPy's ``xp_capabilities_table`` entries
   (which backends to skip, which to test lazily);
3. re-exports SciPy's own ``xp`` / ``devices`` fixtures and test hooks.

Cases that test complex input are skipped by name (complex input is a documented
``TypeError`` of :func:`solvers.logsumexp`), see ``COMPLEX_CASES``.
"""
import os

import pytest

pytest.importorskip("array_api_strict")

_USER_FLAG = os.environ.get("SCIPY_ARRAY_API")
os.environ["SCIPY_ARRAY_API"] = "1"

import scipy._lib._array_api as _scipy_xp  # noqa: E402
import scipy._lib._array_api_override as _scipy_override  # noqa: E402

_FLAG_MODULES = (_scipy_xp, _scipy_override)
_scipy_override.SCIPY_ARRAY_API = _scipy_xp.SCIPY_ARRAY_API = "1"   # scipy imported before

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

# Outside this folder the session runs as the user started it: SciPy's array API flag and
# environment are restored here, and switched on only around the suite's tests (fixture
# below); the scipy.special names are restored once the suite is imported.
if _USER_FLAG is None:
    del os.environ["SCIPY_ARRAY_API"]
else:
    os.environ["SCIPY_ARRAY_API"] = _USER_FLAG
for _module in _FLAG_MODULES:
    _module.SCIPY_ARRAY_API = _USER_FLAG or False


def restore_scipy_names():
    """Give ``scipy.special`` its own functions back (the suite keeps ours)."""
    for name, function in SCIPY_FUNCTIONS.items():
        setattr(scipy.special, name, function)


@pytest.fixture(autouse=True)
def _scipy_array_api_mode():
    """SciPy's array API mode, for the suite's tests only."""
    for module in _FLAG_MODULES:
        module.SCIPY_ARRAY_API = "1"
    yield
    for module in _FLAG_MODULES:
        module.SCIPY_ARRAY_API = _USER_FLAG or False


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
