"""``python -m solvers``: demo streaming, name selection, --help, --version, exit codes."""
import io
import json
import subprocess
import sys
import types

import pytest

import solvers
from solvers import _demo
from solvers.__main__ import main


def _fake_modules(monkeypatch, modules):
    """Register fake ``solvers.<area>._demo_<name>`` modules and make them the only ones."""
    names = []
    for name, demo_rows in modules.items():
        module = types.ModuleType(name)
        module.demo_rows = demo_rows
        monkeypatch.setitem(sys.modules, name, module)
        names.append(name)
    monkeypatch.setattr(_demo, "discover_demo_modules", lambda: sorted(names))


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"solvers {solvers.__version__}"


def test_help_lists_every_demo_name(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    names = _demo.demo_names()
    assert {"cbo", "qubo", "lightsb", "dpdag", "cosmo"} <= set(names)
    for name in names:
        assert name in text
    assert len(names) == len(_demo.discover_demo_modules())  # short names are unique


@pytest.mark.parametrize("only", ["foo", "qubo,foo", ",", "solvers.qubo._demo_qubo"])
def test_bad_only_is_an_error(capsys, only):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--only", only])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown demo name" in err
    for name in _demo.demo_names():
        assert name in err


def test_only_selects_names_and_areas():
    mods = _demo.select_modules("qubo,cbo")
    assert mods == ["solvers.optimize._demo_cbo", "solvers.qubo._demo_qubo"]
    assert set(_demo.select_modules("dag")) == {"solvers.dag._demo_cosmo",
                                                "solvers.dag._demo_dpdag"}
    assert _demo.select_modules(None) == _demo.discover_demo_modules()


def test_rows_are_printed_as_they_finish(monkeypatch):
    """The first row is on the stream (flushed) before the second is computed."""
    stream = io.StringIO()

    def rows(quick=True):
        yield {"method": "first", "problem": "p", "quality": "q", "seconds": 0.5}
        assert "first" in stream.getvalue()
        yield {"method": "second", "problem": "p", "quality": "q", "seconds": 0.25}

    def later(quick=True):
        assert "second" in stream.getvalue()
        return [{"method": "third", "problem": "p", "quality": "q", "seconds": 1.0}]

    _fake_modules(monkeypatch, {"solvers.a._demo_one": rows, "solvers.b._demo_two": later})
    assert _demo.run_demo(stream=stream) == 0
    lines = stream.getvalue().splitlines()
    assert [ln.split()[0] for ln in lines[2:5]] == ["first", "second", "third"]
    assert lines[2].split()[-1] == "0.500"
    assert "3 rows, 1.75 s in the timed calls" in lines[-1]


def test_a_failing_demo_gives_exit_1_and_the_others_still_run(monkeypatch):
    def broken(quick=True):
        raise RuntimeError("boom")

    def fine(quick=True):
        return [{"method": "fine", "problem": "p", "quality": "ok", "seconds": 0.0}]

    _fake_modules(monkeypatch, {"solvers.a._demo_broken": broken, "solvers.b._demo_fine": fine})
    stream = io.StringIO()
    assert _demo.run_demo(stream=stream) == 1
    text = stream.getvalue()
    assert "FAILED: RuntimeError('boom')" in text and "fine" in text


@pytest.mark.slow
def test_qubo_demo_end_to_end():
    """The real command in a fresh process: header, the two QUBO rows, exit code 0."""
    out = subprocess.run([sys.executable, "-m", "solvers", "demo", "--only", "qubo"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["method", "problem", "quality", "seconds"]
    assert lines[2].startswith("qubo_moments") and "max rel err" in lines[2]
    assert lines[3].startswith("minimize_qubo") and "optimum 3/3" in lines[3]


def test_modules_whose_quick_rows_compile_nothing_run_first(monkeypatch):
    """``QUICK_COMPILES = False`` modules go first in quick mode (others keep their order);
    ``--full`` keeps the listed order."""
    names = ["solvers.a._demo_one", "solvers.b._demo_two", "solvers.c._demo_three"]
    for name, flag in zip(names, (None, False, None)):
        module = types.ModuleType(name)
        module.demo_rows = lambda quick=True, name=name: [
            {"method": name.rsplit("_", 1)[1], "problem": "p", "quality": "q", "seconds": 0.0}]
        if flag is not None:
            module.QUICK_COMPILES = flag
        monkeypatch.setitem(sys.modules, name, module)
    assert _demo.run_order(names) == [names[1], names[0], names[2]]
    assert _demo.run_order(names, quick=False) == names
    assert [r["method"] for r in _demo.iter_rows(names)] == ["two", "one", "three"]


_QUICK_ROWS = """
import json, sys
from solvers import _demo
cheap = [m for m in _demo.discover_demo_modules()
         if not getattr(__import__(m, fromlist=["_"]), "QUICK_COMPILES", True)]
rows = list(_demo.iter_rows(cheap))
print(json.dumps([cheap, [r["quality"] for r in rows],
                  sorted(m for m in sys.modules if m == "numba" or m.endswith("_numba"))]))
"""


def test_quick_rows_that_declare_no_compilation_import_no_numba():
    """A module's ``QUICK_COMPILES = False`` is a promise: its quick rows run without
    importing Numba (checked in a fresh process), and they succeed."""
    out = subprocess.run([sys.executable, "-c", _QUICK_ROWS], capture_output=True,
                         text=True, check=True)
    cheap, qualities, numba_modules = json.loads(out.stdout.splitlines()[-1])
    assert {"solvers.lse._demo_safe_kl", "solvers.memory._demo_dam"} <= set(cheap)
    assert not any(q.startswith("FAILED") for q in qualities), qualities
    assert numba_modules == []
