"""sphinx-gallery hooks for the examples (named in ``sphinx_gallery_conf`` of conf.py).

The examples are command-line scripts first: they parse ``sys.argv`` (``--quick`` makes
each one small enough for a docs build), write their figure next to themselves using
``__file__`` and take their ``--help`` text from ``__doc__``. sphinx-gallery runs them
without ``__file__`` and with an empty ``__doc__``, so the hook gives both back before the
script runs, as ``python examples/NAME.py --quick`` would see them.
"""
import ast

QUICK = ["--quick"]


def quick_argv(gallery_conf, script_vars):
    """``sys.argv[1:]`` for each example; also restores the script's ``__file__``/``__doc__``."""
    src_file = script_vars["src_file"]
    example_globals = script_vars.get("example_globals")
    if example_globals is None:  # the namespace is created before reset_argv is called
        raise RuntimeError("sphinx-gallery did not pass the example's namespace to "
                           "reset_argv; gallery_hooks.quick_argv needs updating")
    with open(src_file, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=src_file)
    example_globals["__file__"] = src_file
    example_globals["__doc__"] = ast.get_docstring(tree, clean=False)
    return list(QUICK)


def check_figures(app, exception):
    """After the build: every example that saves a figure has one in the gallery.

    A figure can go missing without an error, e.g. if an example closes it before
    sphinx-gallery collects it; the gallery would then show text only. With ``-W`` the
    warning fails the build.
    """
    from pathlib import Path

    from sphinx.util import logging

    if exception is not None or str(app.config.plot_gallery).lower() in ("0", "false"):
        return
    conf = app.config.sphinx_gallery_conf
    examples = Path(app.confdir, conf["examples_dirs"]).resolve()
    images = Path(app.srcdir, conf["gallery_dirs"], "images")
    missing = [path.name for path in sorted(examples.glob("*.py"))
               if "savefig(" in path.read_text(encoding="utf-8")
               and not list(images.glob(f"sphx_glr_{path.stem}_*.png"))]
    if missing:
        logging.getLogger(__name__).warning(
            "gallery: no figure collected from %s (each saves one when run as a script)",
            ", ".join(missing))
