"""The Python code of a docs page, in order, as one script (used by tests/test_docs.py).

What counts as Python is what the built page shows as Python:

- ``.. code-block:: python`` (also ``code``/``sourcecode``, languages python, python3,
  py, pycon, ipython);
- ``::`` literal blocks under the page's highlight language (``.. highlight::``, else
  conf.py's ``highlight_language``, else Sphinx's ``"default"``). With ``"default"``, Sphinx
  highlights a block as Python when it is Python, so a ``::`` block counts when it parses
  as Python (shell commands, printed output and formulas do not parse and are skipped);
- doctest blocks (``>>>`` lines, inside or outside the above): their source lines run,
  their expected output is not compared.

Text that is not meant to run (a fragment, a formula that happens to parse) is written as
``.. code-block:: text`` (or ``none``, ``bash``, ``console``).

Run by hand to see or run one page's script::

    python tests/_doc_pages.py docs/guide/lse.rst          # print the script
    python tests/_doc_pages.py docs/guide/lse.rst --run    # run it, say which block failed
    python tests/_doc_pages.py docs/guide/*.rst --run --timed  # and how long each block took
"""
import ast
import doctest
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import docutils.core
from docutils import nodes
from docutils.parsers.rst import Directive, directives

ROOT = Path(__file__).resolve().parent.parent
PYTHON = {"python", "python3", "py", "py3", "pycon", "ipython", "ipython3"}
DEFAULT = {"default"}  # Python when it parses, as Sphinx's lexer choice
#: Sphinx directives docutils does not know; their content is parsed as reST so a code
#: block inside one is still found
SPHINX_DIRECTIVES = (
    "toctree", "autosummary", "autofunction", "autoclass", "automodule", "automethod",
    "autoattribute", "autodata", "autoexception", "currentmodule", "module", "function",
    "class", "method", "attribute", "data", "exception", "literalinclude", "versionadded",
    "versionchanged", "deprecated", "versionremoved", "seealso", "only", "glossary", "index",
    "tabularcolumns", "centered", "hlist", "productionlist", "plot", "minigallery",
    "testsetup", "testcleanup", "testoutput", "doctest", "testcode",
)


class _AnyOption(dict):
    """An option spec that accepts every option (we only need the block's text)."""

    def __getitem__(self, name):
        return directives.unchanged


class _CodeBlock(Directive):
    optional_arguments = 1
    has_content = True
    option_spec = _AnyOption()

    def run(self):
        text = "\n".join(self.content)
        node = nodes.literal_block(text, text)
        node["language"] = self.arguments[0].lower() if self.arguments else None
        node.line = self.lineno
        return [node]


class _Highlight(Directive):
    required_arguments = 1
    option_spec = _AnyOption()

    def run(self):
        marker = nodes.comment()
        marker["highlight"] = self.arguments[0].lower()
        return [marker]


class _Container(Directive):
    optional_arguments = 20
    final_argument_whitespace = True
    has_content = True
    option_spec = _AnyOption()

    def run(self):
        node = nodes.container()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def _register():
    for name in ("code-block", "sourcecode", "code"):
        directives.register_directive(name, _CodeBlock)
    directives.register_directive("highlight", _Highlight)
    for name in SPHINX_DIRECTIVES:
        directives.register_directive(name, _Container)


def conf_highlight_language():
    text = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    found = re.search(r"^highlight_language\s*=\s*['\"](\w+)['\"]", text, re.M)
    return found.group(1).lower() if found else "default"


@dataclass
class Block:
    line: int      # first line of the block's text in the page (1-based; 0 if unknown)
    language: str  # as the page marks it
    code: str      # what runs (the source lines of a doctest block)


def _doctest_source(text):
    return "".join(example.source for example in doctest.DocTestParser().get_examples(text))


def _parses(code):
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _as_python(language, text):
    """The code a block runs, or None when the page does not show it as Python."""
    is_doctest = text.lstrip().startswith(">>>")
    if language in PYTHON or (language in DEFAULT and (is_doctest or _parses(text))):
        return _doctest_source(text) if is_doctest else text + "\n"
    return None


def _line_of(text, page_lines, start):
    """First line (1-based) at or after ``start`` where the block's first line appears."""
    first = next((s.strip() for s in text.splitlines() if s.strip()), "")
    for i in range(start, len(page_lines)):
        if first and page_lines[i].strip() == first:
            return i + 1
    return 0


def python_blocks(path):
    """Python blocks of a reST page, in page order."""
    _register()
    source = Path(path).read_text(encoding="utf-8")
    document = docutils.core.publish_doctree(
        source, source_path=str(path),
        settings_overrides={"report_level": 5, "halt_level": 5, "file_insertion_enabled": False,
                            "raw_enabled": False, "warning_stream": False})
    page_lines = source.splitlines()
    language, blocks, cursor = conf_highlight_language(), [], 0

    def wanted(node):
        return (isinstance(node, (nodes.literal_block, nodes.doctest_block))
                or (isinstance(node, nodes.comment) and "highlight" in node.attributes))

    for node in document.findall(wanted):
        if isinstance(node, nodes.comment):
            language = node["highlight"]
            continue
        if any(isinstance(parent, nodes.system_message) for parent in _parents(node)):
            continue  # a directive docutils could not parse, shown as an error
        text = node.astext()
        if isinstance(node, nodes.doctest_block):
            code = _doctest_source(text)
            block_language = "pycon"
        else:
            block_language = node.get("language") or language
            code = _as_python(block_language, text)
        if code is None:
            continue
        line = _line_of(text, page_lines, cursor)
        cursor = max(cursor, line)
        blocks.append(Block(line, block_language, code))
    return blocks


def _parents(node):
    while node.parent is not None:
        node = node.parent
        yield node


def page_script(path, timed=False):
    """One script of every Python block of the page; a comment marks each block's line.

    ``timed``: each block also prints its wall time to stderr when it ends.
    """
    path = Path(path).resolve()
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    parts = [f"# the Python blocks of {rel}, in order\n"]
    if timed:
        parts.append("import sys as _sys, time as _time\n_start = _time.perf_counter()\n")
    for number, block in enumerate(python_blocks(path), 1):
        parts.append(f"# --- block {number}, {rel}:{block.line}\n{block.code}")
        if timed:
            parts.append(f"print(f'block {number} ({rel}:{block.line}) ended after "
                         "{_time.perf_counter() - _start:.1f} s', file=_sys.stderr)\n"
                         "_start = _time.perf_counter()\n")
    return "\n".join(parts)


@dataclass
class Run:
    ok: bool
    seconds: float
    blocks: int
    report: str  # where and why it failed; when ok, empty (or the block times if timed)


def _failing_block(script, stderr, script_name):
    """'block N, page:line' of the last traceback line that points into the script."""
    lines = [int(m) for m in re.findall(rf'File ".*{re.escape(script_name)}", line (\d+)',
                                         stderr)]
    if not lines:
        return "before any block"
    marker = None
    for text in script.splitlines()[:lines[-1]]:
        if text.startswith("# --- block "):
            marker = text[len("# --- "):]
    return marker or "before any block"


def run_page(path, workdir, timeout=120, timed=False):
    """Run the page's script in a fresh interpreter from ``workdir``.

    On a timeout the script gets SIGINT first, so its traceback says which block ran.
    """
    script = page_script(path, timed)
    blocks = script.count("\n# --- block ")
    name = Path(path).stem + "_page.py"
    (Path(workdir) / name).write_text(script, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, name], cwd=workdir, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timed_out = False
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.send_signal(signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
    seconds = time.perf_counter() - start
    if proc.returncode == 0 and not timed_out:
        return Run(True, seconds, blocks, stderr if timed else "")
    where = _failing_block(script, stderr, name)
    if timed_out:
        error = f"still running after {timeout:.0f} s"
    else:
        error = (stderr.strip().splitlines() or ["(no output)"])[-1]
    times = "".join(line + "\n" for line in stderr.splitlines() if " ended after " in line)
    return Run(False, seconds, blocks, f"{where}: {error}\n{times}\n{stderr[-3000:]}")


def main(argv=None):
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="print or run the Python of a docs page")
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--run", action="store_true", help="run each page's script")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--timed", action="store_true", help="print each block's time")
    args = parser.parse_args(argv)
    failed = 0
    for page in args.pages:
        if not args.run:
            print(page_script(page))
            continue
        with tempfile.TemporaryDirectory() as workdir:
            run = run_page(page, workdir, args.timeout, args.timed)
        state = "ok" if run.ok else "FAILED"
        print(f"{page}: {state}, {run.blocks} blocks, {run.seconds:.1f} s")
        if not run.ok:
            failed += 1
            print(run.report)
        elif args.timed:
            print("\n".join(line for line in run.report.splitlines() if line.startswith("block ")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
