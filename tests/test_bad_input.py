"""The bad-input matrix (issue 17): every public entry point x the kinds of bad input.

One row per entry point (a public function, a class constructor, a public method): a
builder of a small valid call and the category of each argument it tests. The kinds of bad
input come from the category (categories and rows: ``tests/_bad_input_table.py``). Each
cell is one test, ``<entry>-<argument>-<kind>``, plus ``<entry>-valid-ok``.

A cell passes when the call raises ``ValueError``/``TypeError`` naming the argument, or
(where the kind allows it) works and gives a finite, checked result. Any other exception,
a non-finite answer presented as a success, or a wrong value fails. Cells that fail today
are listed in ``KNOWN_FAILURES`` (strict xfail): fix the library, then delete the entry.
"""
import importlib
import inspect
import re
import warnings

import numpy as np
import pytest
from _bad_input_spec import assign_spec_cells
from _bad_input_table import (
    CAST_KINDS,
    EITHER,
    EITHER_RUN,
    JOINT_KINDS,
    PROPAGATE,
    RAISE,
    ROWS,
    RUN_FAILS,
    SAME,
    USER_ERROR,
    UserObjectiveError,
    kinds,
)

# =========================================================================================
# KNOWN_FAILURES: cells that fail today, "entry-arg-kind": "what happens today".
# Fix the library, then delete the entry (strict xfail: a fixed cell fails until deleted).
# The cells failing now, with reasons: PYTHONPATH=. python tests/test_bad_input.py
# =========================================================================================
KNOWN_FAILURES = {}
# =========================================================================================


def _names_arg(message, names):
    return any(re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", message)
               for n in names)


def _numbers(res):
    """The numeric arrays of a result, for finiteness checks and comparisons."""
    if res is None or isinstance(res, (str, bool, type)) or inspect.ismodule(res):
        return []
    if isinstance(res, dict):
        keys = [k for k in ("x", "fun") if k in res] or [k for k in res if k[:1] != "_"]
        return [a for k in keys for a in _numbers(res[k])]
    if isinstance(res, list) or (isinstance(res, tuple) and not hasattr(res, "_fields")):
        try:
            arr = np.asarray(res)
        except (TypeError, ValueError):  # ragged
            arr = np.asarray(None)
        if arr.dtype.kind in "biufc":
            return [arr]
        return [a for r in res for a in _numbers(r)]
    if isinstance(res, tuple):  # a named tuple
        return [a for r in res for a in _numbers(r)]
    if hasattr(res, "__array__") or isinstance(res, (int, float, complex, np.number)):
        a = np.asarray(res)
        return [a.astype(float) if a.dtype == object else a] if a.dtype.kind in "biufcO" else []
    if hasattr(res, "__dict__"):
        return [a for k, v in vars(res).items() if k[:1] != "_" for a in _numbers(v)]
    return []


def _finite(arrays):
    arrays = [np.asarray(a) for a in arrays]
    return all(np.all(np.isfinite(a)) for a in arrays if a.dtype.kind in "fc")


def _same(got, want, rtol):
    assert len(got) == len(want), f"{len(got)} result arrays, expected {len(want)}"
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, dtype=complex), np.asarray(w, dtype=complex),
                                   rtol=rtol, atol=rtol, equal_nan=True)


assign_spec_cells(ROWS)


def _row_kinds(row, arg):
    """``{kind: (mutate, expectation)}`` of one argument: written by hand in the table
    (``row.args``) or generated from the entry point's option spec (``row.spec_args``)."""
    written = kinds(row.args[arg]) if arg in row.args else {}
    return {**row.spec_args.get(arg, {}), **written}


def _cells():
    out = []
    for row in ROWS:
        out.append(pytest.param(row, None, None, id=f"{row.id}-valid-ok"))
        for arg in dict.fromkeys([*row.args, *row.spec_args]):
            for kind in _row_kinds(row, arg):
                if (arg, kind) in row.skip:
                    continue
                cid = f"{row.id}-{arg}-{kind}"
                marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[cid])]
                         if cid in KNOWN_FAILURES else [])
                out.append(pytest.param(row, arg, kind, id=cid, marks=marks))
        for group in row.together:
            for kind in JOINT_KINDS:
                cid = f"{row.id}-{'+'.join(group)}-{kind}"
                marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[cid])]
                         if cid in KNOWN_FAILURES else [])
                out.append(pytest.param(row, "+".join(group), kind, id=cid, marks=marks))
    return out


def _check_result(row, arg, kind, expect, kw, res):
    nums = row.out(res) if row.out else _numbers(res)
    success = res.get("success") if isinstance(res, dict) else None
    if callable(expect):  # documented behaviour: the row's own check
        expect(nums, res, kw)
        return
    if expect == SAME:
        _same(nums, (row.out or _numbers)(row.call(**row.valid())), 1e-9)
        return
    if expect == RAISE:
        pytest.fail(f"no ValueError/TypeError naming {arg!r}; returned {res!r:.300}")
    if expect == USER_ERROR:
        pytest.fail("the objective's exception was swallowed")
    if row.reference is not None and kind is not None:
        try:
            want = row.reference(**kw)
        except (TypeError, ValueError):  # the reference refuses it: finite is the bar
            want = None
        if want is not None:
            _same(nums, want, 1e-2 if kind == "float16" else 1e-6)
            return
    if expect == PROPAGATE and kind in ("nan", "inf"):
        test = np.isnan if kind == "nan" else np.isposinf
        assert any(np.any(test(a)) for a in nums), f"{kind} did not propagate: {nums}"
        return
    if expect in (RUN_FAILS, EITHER_RUN) and success is False:
        assert isinstance(res.get("message"), str) and res["message"], "no message"
        return
    assert expect != RUN_FAILS, f"success={success!r} on a failed run: {res!r:.300}"
    assert _finite(nums), f"non-finite result: {nums!r:.300}"
    if row.check is not None:
        row.check(res, kw)
    if kind in CAST_KINDS:
        dtype = np.asarray(row.valid()[arg]).dtype
        dtype = dtype if dtype.kind in "iu" else np.float64  # indices stay integers
        as_float = {**kw, arg: np.asarray(kw[arg], dtype=dtype)}
        rtol = 1e-2 if kind == "float16" else (row.cast_rtol or 1e-9)
        _same(nums, (row.out or _numbers)(row.call(**as_float)), rtol)


@pytest.mark.parametrize("row, arg, kind", _cells())
def test_bad_input(row, arg, kind):
    kw = row.valid()
    expect = EITHER
    if kind is not None and "+" in arg:  # several arguments changed together
        mutate, expect = JOINT_KINDS[kind]
        kw.update({a: mutate(kw[a]) for a in arg.split("+")})
    elif kind is not None:
        mutate, expect = _row_kinds(row, arg)[kind]
        expect = row.overrides.get((arg, kind), expect)
        kw[arg] = mutate(kw.get(arg))
    try:
        with warnings.catch_warnings():
            # the valid call uses no deprecated spelling; bad ones may meet deprecated paths
            warnings.simplefilter("error" if kind is None else "ignore", DeprecationWarning)
            res = row.call(**kw)
    except UserObjectiveError:
        assert expect == USER_ERROR, "the objective's own exception escaped"
        return
    except (ValueError, TypeError) as exc:
        assert kind is not None, f"the valid call raised {exc!r}"
        assert not callable(expect) and expect != SAME, f"documented to work: {exc!r}"
        assert expect != USER_ERROR, f"the objective's exception became {exc!r}"
        names = row.names.get(arg, tuple(arg.split("+")))
        assert _names_arg(str(exc), names), f"message does not name {names}: {exc!r}"
        return
    _check_result(row, arg, kind, expect, kw, res)


_MODULES = ("solvers.lse", "solvers.optimize", "solvers.transport",
            "solvers.transport.benchmark", "solvers.memory", "solvers.dag", "solvers.qubo",
            "solvers")


def public_names():
    """Qualified public callables: each module's ``__all__`` and classes' public methods."""
    names, seen = set(), set()
    for modname in _MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            names.add(f"{modname}.{name}")
            if inspect.isclass(obj):
                names.update(f"{modname}.{name}.{m}" for m, v in vars(obj).items()
                             if m[:1] != "_" and inspect.isfunction(v))
    return names


def test_every_public_name_has_a_row():
    covered = {name for row in ROWS for name in row.covers}
    missing = public_names() - covered
    assert not missing, f"public names without a bad-input row: {sorted(missing)}"
    stale = covered - public_names()
    assert not stale, f"rows for names that are not public: {sorted(stale)}"


def test_known_failures_are_cells():
    ids = {p.id for p in _cells()}
    assert not set(KNOWN_FAILURES) - ids, sorted(set(KNOWN_FAILURES) - ids)


def _reason(exc):
    """One line saying what a failing cell does today (for KNOWN_FAILURES)."""
    text = re.sub(r"\s+", " ", str(getattr(exc, "msg", None) or exc))
    m = re.match(r"message does not name \(.*?\): (\w+)\((['\"])(.*?)\2?\)?$", text)
    if m:
        return f"{m.group(1)} not naming it: {m.group(3)}"
    m = re.match(r"no ValueError/TypeError naming '\w+'; returned (.*)", text)
    if m:
        run = re.search(r"message: (.*?) success: (\w+)", m.group(1))
        return (f"accepted: success={run.group(2)}, {run.group(1)}" if run else
                "accepted: returns " + m.group(1))
    if isinstance(exc, AssertionError):
        return text
    return f"{type(exc).__name__}: {text}"


if __name__ == "__main__":
    # PYTHONPATH=. python tests/test_bad_input.py: a fresh KNOWN_FAILURES body, all cells
    warnings.filterwarnings("error", category=RuntimeWarning, module="solvers.*")
    for param in _cells():
        row, arg, kind = param.values
        try:
            test_bad_input(row, arg, kind)
        except (Exception, pytest.fail.Exception) as exc:  # noqa: BLE001 - any failure
            reason = _reason(exc).replace("\\", "").replace('"', "'")
            print(f'    "{param.id}":\n        "{reason[:88]}",')
