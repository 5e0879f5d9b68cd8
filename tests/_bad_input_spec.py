"""Bad-input cells generated from the option specs (``solvers._lib.params``).

A public entry point whose options are declared in an ``Options`` spec carries it as
``__options__``. For every declared option the spec says what is invalid:

- a scalar option: :meth:`Param.invalid_values` (below or above its interval, NaN, a
  string, an unknown choice, ``None`` where ``None`` is not allowed): each must raise a
  ``ValueError`` / ``TypeError`` naming the option;
- an array option (``Array``): NaN / inf (errors, or propagated when ``finite=False``), an
  extra dimension when ``ndim`` is fixed, complex input, an empty array, and the casts
  (int, bool, float16, object, list) that must give the float64 call's result.

Each option gets its cells in one row: the first row covering the entry point whose valid
call holds the option (scalar options: the first row covering it at all). A kind the row
writes by hand for the same argument (in ``Row.args``) wins over the generated one, so a
row keeps only what a spec cannot say (shapes that must match, SPD matrices, objectives).
"""
import importlib

import numpy as np

from _bad_input_table import (
    _DTYPES,
    EITHER,
    PROPAGATE,
    RAISE,
    _empty,
    _ndim_up,
    _put,
    kinds,
)
from solvers._lib.params import Array


def _const(value):
    return lambda v: value


def _resolve(qualified):
    """The object a row's ``covers`` name points to (module attribute, class member)."""
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def spec_of(qualified):
    """The ``Options`` spec of a public entry point, or ``None``."""
    return getattr(_resolve(qualified), "__options__", None)


def _array_kinds(constraint, valid_value):
    special = RAISE if constraint.finite else PROPAGATE
    out = {"nan": (_put(np.nan), special), "inf": (_put(np.inf), special),
           "empty": (_empty, EITHER if constraint.empty else RAISE), **_DTYPES}
    allowed = constraint.ndim
    if allowed is not None:
        allowed = (allowed,) if isinstance(allowed, int) else tuple(allowed)
        if np.ndim(valid_value) + 1 not in allowed:
            out["ndim"] = (_ndim_up, RAISE)
    return out


def param_kinds(param, valid_value=None):
    """``{kind: (mutate, expectation)}`` of one declared option."""
    arrays = [c for c in param.constraints if isinstance(c, Array)]
    if arrays:
        return _array_kinds(arrays[0], valid_value)
    return {kind: (_const(value), RAISE) for kind, value in param.invalid_values().items()}


def assign_spec_cells(rows):
    """Set ``row.spec_args = {option: {kind: (mutate, expectation)}}`` on every row."""
    placed = set()
    for row in rows:
        row.spec_args = {}
        valid = row.valid()
        # a delegate's spec (row.specs) is tested again through each row that reaches it
        for name in (*row.covers, *row.specs):
            spec = spec_of(name)
            if spec is None:
                continue
            for param in spec:
                key = (id(spec), param.name, row.id if name in row.specs else None)
                is_array = any(isinstance(c, Array) for c in param.constraints)
                if key in placed or (is_array and param.name not in valid):
                    continue
                written = kinds(row.args[param.name]) if param.name in row.args else {}
                generated = {k: v for k, v in
                             param_kinds(param, valid.get(param.name)).items()
                             if k not in written and (param.name, k) not in row.skip}
                placed.add(key)
                if generated:
                    row.spec_args[param.name] = generated

