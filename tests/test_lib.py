"""The dispatch layer: namespaces, backend resolution, rng, validation, results, router."""
import io

import numpy as np
import pytest

from solvers._lib import (array_namespace, resolve_backend, check_rng, Draws, as_float_array,
                          check_finite, check_shape, check_positive, check_positive_definite,
                          check_choice, check_int, call_callback, Progress)
from solvers._lib.backend import gpu_available
from solvers.optimize import minimize, register_method, available_methods
from conftest import to_numpy


# --- namespaces and backends ---------------------------------------------------------------

def test_namespace_detection():
    import array_api_strict as xs

    assert array_namespace(np.zeros(2)).__name__.endswith("numpy")
    assert array_namespace([1.0, 2.0], None).__name__.endswith("numpy")
    assert array_namespace(xs.asarray([1.0])) is xs
    with pytest.raises(TypeError, match="one array library"):
        array_namespace(np.zeros(2), xs.asarray([1.0]))


def test_backend_resolution():
    import array_api_strict as xs

    xp_np = array_namespace(np.zeros(1))
    assert resolve_backend("auto", xp_np).name == "numba"
    assert resolve_backend("numpy", xp_np).name == "generic"
    assert resolve_backend("numba", xp_np).name == "numba"
    assert resolve_backend("auto", xs).name == "generic"
    with pytest.raises(ValueError, match="numpy arrays"):
        resolve_backend("numba", xs)
    with pytest.raises(ValueError, match="numpy arrays"):
        resolve_backend("numpy", xs)
    with pytest.raises(ValueError, match="backend must be one of"):
        resolve_backend("jax", xp_np)


def test_gpu_probe_is_cached_and_cupy_needs_a_gpu():
    assert gpu_available() is gpu_available()
    if not gpu_available():
        with pytest.raises(ValueError, match="no usable CUDA GPU"):
            resolve_backend("cupy", array_namespace(np.zeros(1)))


def test_package_import_does_not_import_cupy_or_numba_kernels():
    import subprocess
    import sys

    code = ("import sys, solvers; solvers.logsumexp; "
            "print('cupy' in sys.modules, 'solvers.lse._lse_numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- rng -----------------------------------------------------------------------------------

def test_check_rng_conventions():
    g = np.random.default_rng(5)
    assert check_rng(g) is g
    assert check_rng(3).random() == np.random.default_rng(3).random()
    assert isinstance(check_rng(None), np.random.Generator)
    with pytest.raises(TypeError, match="rng must be"):
        check_rng(np.random.RandomState(0))
    with pytest.raises(TypeError):
        check_rng(1.5)
    with pytest.raises(ValueError):
        check_rng(-1)


def test_draws_identical_across_namespaces(xp):
    a = Draws(7, np)
    b = Draws(7, xp)
    for method, args in [("normal", ((3, 4),)), ("uniform", (-1.0, 2.0, (5,))),
                         ("gumbel", ((6,),))]:
        x, y = getattr(a, method)(*args), getattr(b, method)(*args)
        np.testing.assert_array_equal(to_numpy(x), to_numpy(y))
    np.testing.assert_array_equal(to_numpy(a.permutation(9)), to_numpy(b.permutation(9)))


def test_draws_respect_dtype(xp):
    d = Draws(0, xp)
    assert d.normal((3,), dtype=xp.float32).dtype == xp.float32
    assert d.uniform(0.0, 1.0, (3,), dtype=xp.float64).dtype == xp.float64


# --- validation ----------------------------------------------------------------------------

def test_as_float_array_keeps_float32_and_promotes_ints(xp):
    assert as_float_array(xp.asarray([1, 2]), xp, "x").dtype == xp.float64
    assert as_float_array(xp.asarray([1.0], dtype=xp.float32), xp, "x").dtype == xp.float32
    with pytest.raises(ValueError, match="x must have 2 dimension"):
        as_float_array(xp.asarray([1.0]), xp, "x", ndim=2)


def test_validation_messages_name_the_argument():
    xp = array_namespace(np.zeros(1))
    with pytest.raises(ValueError, match="data must be finite; it holds 1 NaN"):
        check_finite(np.array([1.0, np.nan]), xp, "data")
    with pytest.raises(ValueError, match=r"X must have shape \(\*, 3\), got \(2, 2\)"):
        check_shape(np.zeros((2, 2)), (None, 3), "X")
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        check_positive(0.0, "epsilon")
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        check_positive("1", "epsilon")
    with pytest.raises(ValueError, match="noise must be one of"):
        check_choice("x", ("a", "b"), "noise")
    with pytest.raises(TypeError, match="maxiter must be an integer"):
        check_int(1.5, "maxiter")
    with pytest.raises(ValueError, match="maxiter must be >= 1"):
        check_int(0, "maxiter", minimum=1)


def test_positive_definite_check(xp):
    good = xp.asarray(np.stack([np.eye(3), np.diag([1.0, 2.0, 3.0])]))
    check_positive_definite(good, xp, "covs")
    bad = np.stack([np.eye(3), np.diag([1.0, -2.0, 3.0])])
    with pytest.raises(ValueError, match=r"covs must be positive definite.*matrix 1"):
        check_positive_definite(xp.asarray(bad), xp, "covs")
    asym = np.eye(2)
    asym[0, 1] = 0.5
    with pytest.raises(ValueError, match="symmetric"):
        check_positive_definite(xp.asarray(asym), xp, "S")
    psd = xp.asarray(np.diag([1.0, 0.0]))
    check_positive_definite(psd, xp, "S", semi=True)
    with pytest.raises(ValueError, match="positive definite"):
        check_positive_definite(psd, xp, "S")


# --- results, callbacks, progress ----------------------------------------------------------

def test_callback_stop_conventions():
    seen = []

    def cb(res):
        seen.append(res.nit)
        if res.nit == 2:
            raise StopIteration

    assert not call_callback(cb, nit=1, x=np.zeros(1))
    assert call_callback(cb, nit=2, x=np.zeros(1))
    assert call_callback(lambda r: True, nit=0)
    assert not call_callback(None, nit=0)
    assert seen == [1, 2]


def test_progress_prints_only_when_enabled():
    quiet, loud = io.StringIO(), io.StringIO()
    with Progress(10, "x", enabled=False, stream=quiet) as bar:
        for _ in range(10):
            bar.update(1, loss=0.5)
    with Progress(10, "fit", enabled=True, stream=loud) as bar:
        for _ in range(10):
            bar.update(1, loss=0.5)
    assert quiet.getvalue() == ""
    assert "fit" in loud.getvalue() and "10/10" in loud.getvalue()


# --- minimize router -----------------------------------------------------------------------

def _toy_minimizer(fun, x0, *, bounds=None, maxiter=10, callback=None):
    from scipy.optimize import OptimizeResult

    x = np.asarray(x0, dtype=float)
    for it in range(maxiter):
        x = x - 0.5 * x  # contracts to 0, the minimiser of the test objective
        if call_callback(callback, x=x, fun=fun(x), nit=it + 1):
            return OptimizeResult(x=x, fun=fun(x), nit=it + 1, success=False, status=99)
    return OptimizeResult(x=x, fun=fun(x), nit=maxiter, success=True, status=0)


def test_router_registration_options_and_errors():
    register_method("_toy", _toy_minimizer)
    assert "_toy" in available_methods()
    res = minimize(lambda x: float(x @ x), np.ones(2), method="_TOY", options={"maxiter": 60})
    assert res.success and res.fun < 1e-30
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['step'\] for method '_toy'"):
        minimize(lambda x: 0.0, np.ones(2), method="_toy", step=1)
    with pytest.raises(TypeError, match="both in options and as keywords"):
        minimize(lambda x: 0.0, np.ones(2), method="_toy", options={"maxiter": 1}, maxiter=2)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        minimize(lambda x: 0.0, np.ones(2), method="nope")
    with pytest.raises(ValueError, match="needs a starting point"):
        minimize(lambda x: 0.0, None, method="_toy")
    def stop_now(intermediate_result):
        raise StopIteration

    stopped = minimize(lambda x: float(x @ x), np.ones(2), method="_toy", callback=stop_now)
    assert stopped.status == 99 and stopped.nit == 1


def test_demo_table_and_cli(capsys):
    from solvers.__main__ import main
    from solvers._demo import collect_rows, format_table

    rows = collect_rows(quick=True, only="lse._demo_core")
    assert rows and all(set(r) >= {"method", "problem", "quality", "seconds"} for r in rows)
    assert "logsumexp_matmul" in format_table(rows)
    assert main(["info"]) == 0
    assert "backends usable: numpy" in capsys.readouterr().out
