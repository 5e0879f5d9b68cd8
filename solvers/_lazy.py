"""Lazy public names for a package: ``name -> module`` resolved on first access.

Keeps ``import solvers`` (and each area) light: numba kernels, scipy.sparse machinery and
cupy are imported only when a name that needs them is used. A name whose module is missing
raises ``AttributeError`` saying so, which also keeps ``hasattr`` honest.
"""
import importlib


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
    namespace = importlib.import_module(package).__dict__
    submodules = tuple(submodules)

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
