"""CBO's small runs compile nothing: the backend is chosen once per run from its size.

Under ``backend="auto"`` a run of size ``maxfev * d`` below ``GENERIC_BELOW`` runs the
generic twins of every kernel (the swarm's and the refinement's weights); above it, and
whenever ``backend="numba"`` is asked for, the Numba kernels run. Both choices depend on
the size alone, so a run is reproducible from its ``rng``.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from solvers import minimize_cbo
from solvers._lib.backend import resolve_backend
from solvers.optimize import _cbo_generic as generic
from solvers.optimize._cbo_config import OPTIONS, configure
from solvers.optimize._cbo_kernels import GENERIC_BELOW, KERNELS, run_size


def sphere(x):
    return np.sum((x - 0.5) ** 2, axis=0)


def test_run_size_chooses_the_backend_once():
    be = resolve_backend("auto", np)
    small = configure(OPTIONS.validate(fun=sphere, maxfev=3000), 5)
    large = configure(OPTIONS.validate(fun=sphere), 20)  # default maxfev: 80 000
    assert run_size(small, 5) == 15_000 < GENERIC_BELOW <= run_size(large, 20)
    assert KERNELS.backend_for("move", be, run_size(small, 5)).name == "generic"
    assert KERNELS.backend_for("move", be, run_size(large, 20)).name == "numba"
    explicit = resolve_backend("numba", np)
    assert KERNELS.backend_for("move", explicit, run_size(small, 5)).name == "numba"
    capped = configure(OPTIONS.validate(fun=sphere, maxiter=10, n_particles=8, n_runs=2), 3)
    assert capped.maxfev is None and run_size(capped, 3) == 10 * 8 * 2 * 3


_SMALL_RUN = """
import json, sys
import numpy as np
from solvers import minimize_cbo
from solvers.optimize.cbo import consensus
minimize_cbo(lambda x: float(np.sum((x - 0.5) ** 2)), bounds=[(-3, 3)] * 5, maxfev=3000,
             rng=0)
minimize_cbo(lambda x: np.sum(x ** 2, axis=0), bounds=[(-3, 3)] * 4, maxfev=2000,
             vectorized=True, n_runs=2, noise="anisotropic", rng=0)
consensus(np.zeros((10, 3)), np.arange(10.0), 2.0)
print(json.dumps(sorted(m for m in sys.modules if m == "numba" or m.endswith("_numba"))))
"""


def test_small_runs_import_no_numba():
    out = subprocess.run([sys.executable, "-c", _SMALL_RUN], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("maxfev", [3000, 40_000])  # below and above GENERIC_BELOW at d = 5
def test_auto_runs_are_reproducible_and_follow_the_size(maxfev):
    kw = dict(bounds=[(-3, 3)] * 5, vectorized=True, maxfev=maxfev, rng=3)
    auto = [minimize_cbo(sphere, **kw) for _ in range(2)]
    same = minimize_cbo(sphere, backend="numpy" if maxfev * 5 < GENERIC_BELOW else "numba",
                        **kw)
    for res in (auto[1], same):
        np.testing.assert_array_equal(res.x, auto[0].x)
        assert res.fun == auto[0].fun and res.nfev == auto[0].nfev and res.nit == auto[0].nit
        assert res.message == auto[0].message


def test_explicit_numba_runs_the_kernels_at_any_size():
    from solvers.optimize import _cbo_numba

    res = minimize_cbo(sphere, bounds=[(-3, 3)] * 3, vectorized=True, maxfev=600, rng=0,
                       backend="numba")
    assert res.nfev <= 600
    for kernel in (_cbo_numba._weights_kernel, _cbo_numba._move_kernel,
                   _cbo_numba._reflect_kernel, _cbo_numba._track_kernel,
                   _cbo_numba._consensus_of, _cbo_numba._consensus_move_kernel):
        assert kernel.signatures, kernel  # compiled (or loaded from the cache) and run


@pytest.mark.parametrize("ess", [0.1, 0.3, 0.5, 0.9])
def test_sectioned_bisection_gives_the_kernels_alpha(ess):
    from solvers.optimize import _cbo_numba

    rng = np.random.default_rng(int(ess * 10))
    E = rng.random((4, 12)) * 10.0 ** rng.uniform(-4, 4, (4, 1))
    E[1, 3:] = np.inf  # excluded particles
    E[2, :] = E[2, 0]  # all tied: the ESS is N whatever alpha
    for alpha_max in (1e5, 1e300):
        W, a = generic.gibbs_weights(E, None, 2.0, ess, alpha_max, np)
        Wn, an = _cbo_numba.gibbs_weights(E, None, 2.0, ess, alpha_max, np)
        np.testing.assert_allclose(a, an, rtol=1e-14)
        np.testing.assert_allclose(W, Wn, rtol=1e-12, atol=1e-300)
        assert np.all(a <= alpha_max * (1 + 1e-12))
        # the effective sample size is on target where the target is reachable
        ok = np.isfinite(E).sum(axis=1) * ess
        got = 1.0 / np.sum(W * W, axis=1)
        reachable = (np.arange(4) != 2) & (a < 0.99 * alpha_max)
        np.testing.assert_allclose(got[reachable], ok[reachable], rtol=1e-4)


def test_full_effective_sample_size_gives_uniform_weights_on_both_paths():
    from solvers.optimize import _cbo_numba

    E = np.random.default_rng(0).random((2, 9))
    E[1, 5:] = np.inf
    for weights in (generic.gibbs_weights, _cbo_numba.gibbs_weights):
        W, _ = weights(E, None, 2.0, 1.0, 1e300, np)  # ESS = N only as alpha -> 0
        np.testing.assert_allclose(W[0], 1 / 9, rtol=1e-6)
        np.testing.assert_allclose(W[1], [0.2] * 5 + [0.0] * 4, rtol=1e-6)
