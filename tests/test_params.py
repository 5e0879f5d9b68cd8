"""The option specs of ``solvers._lib.params``, and every public entry point's spec."""
import inspect
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from _bad_input_spec import spec_of
from _bad_input_table import ROWS
from solvers._lib.backend import resolve_backend
from solvers._lib.params import (BACKEND, CALLBACK, FLAG, NONE, POSITIVE, PROBABILITY, SEED,
                                 WORKERS, Array, Choice, Integer, Options, Param, Real)

SPEC = Options(
    "ToyOptions",
    Param("x", Array(ndim=2), doc="data"),
    Param("eps", POSITIVE, 1.0, "regularisation"),
    Param("p", PROBABILITY, 0.5, "a probability"),
    Param("k", Integer(low=1, high=10), 3, "count"),
    Param("maxiter", Integer(low=0), None, "cap; None: chosen by the solver"),
    Param("how", Choice("a", "b"), "a", "method"),
    Param("screen", (POSITIVE, NONE), 2.0, "margin or None"),
    Param("rng", SEED, None, "random numbers"),
    Param("backend", BACKEND, "auto", "kernels"),
    Param("callback", CALLBACK, None, "callback"),
    Param("workers", WORKERS, 1, "parallel map"),
    Param("polish", FLAG, True, "finish locally"),
)


def test_validate_fills_defaults_and_freezes():
    cfg = SPEC.validate(eps=2, k=np.int64(4))
    assert (cfg.eps, cfg.k, cfg.maxiter, cfg.how, cfg.polish) == (2.0, 4, None, "a", True)
    assert type(cfg.eps) is float and type(cfg.k) is int
    with pytest.raises(AttributeError):
        cfg.eps = 3.0
    assert cfg.replace(maxiter=7).maxiter == 7 and cfg.maxiter is None
    assert cfg.as_dict()["k"] == 4
    assert SPEC.validate(screen=None).screen is None


def test_unknown_and_array_names_are_programming_errors():
    with pytest.raises(TypeError, match="no option"):
        SPEC.validate(nope=1)
    with pytest.raises(TypeError, match="arrays"):
        SPEC.validate(x=np.zeros((2, 2)))


@pytest.mark.parametrize("param", list(SPEC), ids=lambda p: p.name)
def test_every_invalid_value_is_rejected_naming_the_option(param):
    for kind, value in param.invalid_values().items():
        with pytest.raises((TypeError, ValueError), match=param.name):
            SPEC.validate(**{param.name: value})


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_real_interval_matches_its_description(v):
    p = Real(0, 1, low_open=True)
    inside = not math.isnan(v) and 0 < v <= 1
    try:
        assert p.check(v, "v") == v and inside
    except ValueError as exc:
        assert not inside and "v must be" in str(exc)


def test_arrays_convert_once_the_backend_is_known():
    be = resolve_backend("auto", np)
    (x,) = SPEC.arrays(be, x=[[1, 2], [3, 4]])
    assert x.dtype == np.float64 and x.shape == (2, 2)
    with pytest.raises(ValueError, match="x must be finite"):
        SPEC.arrays(be, x=[[np.nan, 0.0]])
    with pytest.raises(ValueError, match="x must have 2"):
        SPEC.arrays(be, x=[1.0, 2.0])
    with pytest.raises(TypeError, match="x must be real"):
        SPEC.arrays(be, x=np.ones((1, 1)) * 1j)


def test_doc_lines_state_type_constraint_and_default():
    text = SPEC.doc("eps", "k", "maxiter", "how")
    assert "eps : float, > 0, default 1.0" in text
    assert "k : int, in [1, 10], default 3" in text
    assert "maxiter : int, >= 0, optional" in text
    assert "how : str, {'a', 'b'}, default 'a'" in text


def _entry_points():
    seen = {}
    for row in ROWS:
        for name in row.covers:
            spec = spec_of(name)
            if spec is not None:
                seen.setdefault(name, spec)
    return sorted(seen.items())


@pytest.mark.parametrize("name, spec", _entry_points(), ids=[n for n, _ in _entry_points()])
def test_spec_defaults_are_the_signature_defaults(name, spec):
    from _bad_input_spec import _resolve

    obj = _resolve(name)
    params = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
    for param in spec:
        assert param.name in params, f"{name} has no parameter {param.name!r}"
        default = params[param.name].default
        if param.required:
            assert default is inspect.Parameter.empty, f"{param.name} is required"
        else:
            assert default == param.default, \
                f"{name}({param.name}=...): signature {default!r}, spec {param.default!r}"
