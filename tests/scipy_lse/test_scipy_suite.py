"""SciPy's logsumexp / softmax / log_softmax tests, run against :mod:`solvers` (see
``conftest.py``: the names in ``scipy.special`` are ours while the suite is imported)."""
import scipy.special
import scipy.special.tests.test_logsumexp as suite
from scipy.special.tests.test_logsumexp import (  # noqa: F401  (collected by pytest)
    TestLogSumExp, TestSoftmax, TestLogSoftmax,
)

from .conftest import SCIPY_FUNCTIONS, restore_scipy_names

restore_scipy_names()

# patch_lazy_xp_functions looks for the tested functions in these modules' globals: the
# suite's module is where the tests look them up (dask: no compute() inside our calls)
lazy_xp_modules = [suite]


def test_suite_runs_our_functions():
    import solvers

    assert suite.logsumexp is solvers.logsumexp
    assert suite.softmax is solvers.softmax
    assert suite.log_softmax is solvers.log_softmax
    for name, function in SCIPY_FUNCTIONS.items():     # the rest of the session: SciPy's
        assert getattr(scipy.special, name) is function
