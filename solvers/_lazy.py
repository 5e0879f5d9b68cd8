"""Lazy public names for a package: ``name -> module`` resolved on first access.

Keeps ``import solvers`` (and each area) light: numba kernels, scipy.sparse machinery and
cupy are imported only when a name that needs them is used. A name whose module is missing
raises ``AttributeError`` saying so, which also keeps ``hasattr`` honest.
"""
import importlib
import sys
import types


def lazy_exports(package, exports, submodules=()):
    """Return ``(__getattr__, __dir__)`` for a package's module namespace.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict
        Public name -> absolute module name defining it.
    submodules : iterable of str
        Subpackage names reachable as attributes (imported on access).
    """
    module = importlib.import_module(package)
    namespace = module.__dict__
    submodules = tuple(submodules)
    _bind_same_named_exports(module, exports)

    def __getattr__(name):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            value = getattr(importlib.import_module(module), name)
        except (ModuleNotFoundError, AttributeError) as exc:
            raise AttributeError(f"{package}.{name} is not available ({exc})") from None
        namespace[name] = value  # cache: later lookups skip __getattr__
        return value

    def __dir__():
        return sorted(set(namespace.get("__all__", ())) | set(exports) | set(submodules))

    return __getattr__, __dir__


class _LazyPackage(types.ModuleType):
    """A package whose exported name may equal the name of the submodule defining it
    (``solvers.lse.logsumexp``, the function, lives in ``solvers/lse/logsumexp.py``).

    Importing a submodule makes the import system set it as an attribute of its package,
    which would hide the lazily exported function of the same name. This class binds the
    function instead, as ``from .logsumexp import logsumexp`` in an eager ``__init__``
    would have done.
    """

    def __setattr__(self, name, value):
        exports = self.__dict__.get("_LAZY_SAME_NAMED", {})
        if isinstance(value, types.ModuleType) and exports.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


def _bind_same_named_exports(module, exports):
    same = {name: target for name, target in exports.items()
            if target.rpartition(".")[2] == name}
    if not same:
        return
    module._LAZY_SAME_NAMED = same
    if not isinstance(module, _LazyPackage):
        module.__class__ = _LazyPackage
    for name, target in same.items():  # a submodule imported before this call
        loaded = sys.modules.get(target)
        if loaded is not None and module.__dict__.get(name) is loaded:
            module.__dict__[name] = getattr(loaded, name)

