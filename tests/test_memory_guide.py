"""The Gaussian DAM guide page runs top to bottom as a script: its Python blocks, in order,
in one namespace (what a reader pasting them into an interpreter gets)."""
import os
import re

import pytest

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                    "guide", "gaussian_dam.rst")


def python_blocks(text):
    """The bodies of the page's ``.. code-block:: python`` directives, dedented."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n((?:\n|   .*\n)+)", text, re.M):
        lines = match.group(1).splitlines()
        blocks.append("\n".join(line[3:] for line in lines).strip("\n") + "\n")
    return blocks


def test_the_page_has_no_literal_blocks_that_are_not_marked():
    """``::`` literal blocks are highlighted as Python by default: every code fragment of
    the page is an explicit, runnable ``code-block:: python``."""
    text = open(PAGE, encoding="utf-8").read()
    literal = [line for line in text.splitlines()
               if line.rstrip().endswith("::") and not line.lstrip().startswith("..")]
    assert not literal, literal


def test_guide_page_runs_as_a_script(capsys):
    pytest.importorskip("pandas")
    pytest.importorskip("distributed")
    blocks = python_blocks(open(PAGE, encoding="utf-8").read())
    assert len(blocks) >= 3
    namespace = {"__name__": "gaussian_dam_guide"}
    exec(compile("\n".join(blocks), PAGE, "exec"), namespace)
    out = capsys.readouterr().out
    assert "retrieved 100%" in out
    assert namespace["res"].feature_names[:3] == ["x0", "x1", "x2"]
