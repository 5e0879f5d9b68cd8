"""Examples run from any working directory: output paths come from ``__file__`` or ``--out``.

The docs build runs every example in quick mode (sphinx-gallery, from the examples'
folder; ``tests/test_docs.py`` checks their gallery titles and ``--quick``). This checks
how each one resolves its output path (cheap) and runs the fastest one end to end from a
temporary working directory, as a user would from anywhere.
"""
import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
ALL = sorted(p.name for p in EXAMPLES.glob("*.py"))
#: examples with a ``figure_path(out=None)`` helper and a ``--out`` option
WITH_FIGURE_PATH = {"cbo_rastrigin.py": "cbo_rastrigin.png",
                    "dpdag_sampling.py": "dpdag_sampling.png",
                    "qubo_multiobjective.py": "qubo_multiobjective.png"}


def _load(name, monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)  # the module must not depend on the working directory
    spec = importlib.util.spec_from_file_location(f"_example_{name[:-3]}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _code_strings(tree):
    """String constants of a module that are not docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docstrings]


@pytest.mark.parametrize("name", ALL)
def test_no_path_relative_to_the_working_directory(name):
    tree = ast.parse((EXAMPLES / name).read_text())
    bad = [s for s in _code_strings(tree) if s.replace("\\", "/").startswith("examples/")]
    assert not bad, f"{name} uses cwd-relative paths {bad}"
    guarded = any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
                  for n in tree.body)
    assert guarded, f"{name} has no `if __name__ == '__main__':` guard"


@pytest.mark.parametrize("name", sorted(WITH_FIGURE_PATH))
def test_figure_path_from_file_or_out(name, monkeypatch, tmp_path):
    module = _load(name, monkeypatch, tmp_path)
    figure = WITH_FIGURE_PATH[name]
    default = module.figure_path()
    assert os.path.isabs(default)
    assert pathlib.Path(default) == EXAMPLES / "figures" / figure
    assert module.figure_path(str(tmp_path / "x.png")) == str(tmp_path / "x.png")
    assert module.figure_path("rel.pdf") == str(tmp_path / "rel.pdf")
    assert module.figure_path(str(tmp_path)) == str(tmp_path / figure)  # a folder
    assert module.figure_path("sub") == str(tmp_path / "sub" / figure)  # no suffix: folder


@pytest.mark.parametrize("name", sorted(WITH_FIGURE_PATH) + ["quick_tour.py"])
def test_cli_takes_quick_and_out(name, monkeypatch, tmp_path, capsys):
    module = _load(name, monkeypatch, tmp_path)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--quick" in text and "--out" in text


@pytest.mark.slow
def test_fastest_example_runs_from_another_directory(tmp_path):
    """dpdag_sampling --quick from a temporary cwd writes only where --out says."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "figs" / "dp.png"
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent), MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, str(EXAMPLES / "dpdag_sampling.py"), "--quick",
                          "--out", str(out)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert out.is_file() and out.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figs"]
