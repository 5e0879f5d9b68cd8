"""The Safe-KL guide page runs: its Python blocks, top to bottom, as one script."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = os.path.join(ROOT, "docs", "guide", "safe_kl.rst")


def python_blocks(path):
    """The bodies of the ``.. code-block:: python`` directives of an rst page, dedented."""
    lines = open(path, encoding="utf-8").read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if re.match(r"\s*\.\. code-block:: python\s*$", lines[i]):
            indent = len(lines[i]) - len(lines[i].lstrip()) + 3
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or
                                      len(lines[i]) - len(lines[i].lstrip()) >= indent):
                body.append(lines[i][indent:])
                i += 1
            blocks.append("\n".join(body).strip("\n"))
        else:
            i += 1
    return blocks


def test_the_guide_has_python_blocks():
    assert len(python_blocks(GUIDE)) >= 5


def test_the_guide_runs_as_a_script(tmp_path):
    for module in ("pandas", "dask", "distributed"):
        pytest.importorskip(module)
    script = tmp_path / "safe_kl_guide.py"
    script.write_text("\n\n".join(python_blocks(GUIDE)) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
