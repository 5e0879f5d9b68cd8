"""Shared docstring fragments: a section written once, used by every function it fits.

A docstring holds a placeholder line ``{{name}}`` (alone on its line, indented as the text
should be); :func:`fill_doc` replaces it with the fragment, re-indented. Plain text
replacement, not ``str.format``, so the braces of LaTeX math in docstrings are safe.

Example::

    X_RAISES = '''
    Raises
    ------
    ValueError
        ``x`` of the wrong shape.
    '''

    @fill_doc(raises=X_RAISES)
    def f(x):
        '''One line.

        {{raises}}
        '''
"""
import re
import textwrap

__all__ = ["fill_doc"]


def fill_doc(**fragments):
    """Decorator filling ``{{name}}`` placeholder lines of ``__doc__`` with ``fragments``.

    Raises
    ------
    KeyError
        A placeholder with no fragment (a typo would otherwise ship a raw placeholder).
    """
    blocks = {name: textwrap.dedent(text).strip("\n") for name, text in fragments.items()}

    def replace(match):
        indent, name = match.group(1), match.group(2)
        if name not in blocks:
            raise KeyError(f"docstring placeholder {{{{{name}}}}} has no fragment")
        return textwrap.indent(blocks[name], indent)

    def decorate(obj):
        if obj.__doc__:
            obj.__doc__ = re.sub(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", replace, obj.__doc__,
                                 flags=re.M)
        return obj

    return decorate


def fill_doc_members(cls, **fragments):
    """:func:`fill_doc` on a class's docstring and every function or property it defines."""
    fill = fill_doc(**fragments)
    fill(cls)
    for member in vars(cls).values():
        target = member.fget if isinstance(member, property) else member
        target = getattr(target, "__func__", target)  # staticmethod / classmethod
        if callable(target) and getattr(target, "__doc__", None):
            fill(target)
    return cls
