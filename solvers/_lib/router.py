"""The router helper behind ``minimize`` and ``learn_dag``: SciPy-style method dispatch.

A :class:`Router` maps method names to solvers imported on demand (package import stays
light), merges ``options`` with keyword options, and checks them against the solver's
signature: an unknown option is a ``TypeError`` naming the method and listing the options
it accepts, never silently ignored.
"""
import importlib
import inspect

from .options import check_options

__all__ = ["Router"]


class Router:
    """Method name -> solver, loaded lazily from ``"module:function"`` strings.

    Parameters
    ----------
    kind : str
        What the router picks, for messages (``"minimize"``, ``"learn_dag"``).
    methods : dict
        ``name -> "module:function"``; names are matched case-insensitively. A module may
        instead call :meth:`register` for its name when imported.
    positional : tuple of str
        Parameters the router passes itself (``fun``, ``x0``, ``X``): not options. The
        solver's first parameter is always the router's own, whatever its name (``Q``
        for ``minimize_qubo``).
    """

    def __init__(self, kind, methods, positional):
        self.kind = kind
        self.methods = {name.lower(): target for name, target in methods.items()}
        self.positional = tuple(positional)
        self._solvers = {}

    def register(self, name, target):
        """Add (or replace) a method: ``target`` is a callable or ``"module:function"``.

        Raises
        ------
        TypeError
            ``name`` not a string, or ``target`` neither callable nor a string.
        ValueError
            An empty ``name``.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a non-empty string, got {type(name).__name__}")
        if not name.strip():
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not (callable(target) or isinstance(target, str)):
            raise TypeError(f"func must be callable, got {type(target).__name__}")
        name = name.lower()
        self.methods.setdefault(name, target)
        self._solvers.pop(name, None)
        if callable(target):
            self._solvers[name] = target

    def available(self):
        """Names whose module imports (a missing optional dependency leaves one out)."""
        names = []
        for name in self.methods:
            try:
                self.solver(name)
            except ModuleNotFoundError:
                continue
            names.append(name)
        return sorted(names)

    def solver(self, method):
        """The solver function for ``method``.

        Raises
        ------
        TypeError
            ``method`` is not a string.
        ValueError
            Unknown method.
        """
        if not isinstance(method, str):
            raise TypeError(f"method must be a string, got {type(method).__name__}")
        name = method.lower()
        if name not in self.methods:
            raise ValueError(f"unknown method {method!r} for {self.kind}; choose from "
                             f"{sorted(self.methods)}")
        if name not in self._solvers:
            target = self.methods[name]
            if isinstance(target, str):
                module, _, attribute = target.partition(":")
                module = importlib.import_module(module)
                # a module may register the method itself on import (register())
                target = self._solvers.get(name) or getattr(module, attribute)
            self._solvers[name] = target
        return self._solvers[name]

    def options(self, method, options, kwargs, **fixed):
        """Merge ``options`` and ``kwargs`` (plus non-None ``fixed`` ones) and check them.

        Raises
        ------
        TypeError
            An option given both ways, or one the solver does not accept.
        """
        opts = dict(options or {})
        overlap = set(opts) & set(kwargs)
        if overlap:
            raise TypeError(f"option(s) {sorted(overlap)} given both in options and as "
                            "keywords")
        opts.update(kwargs)
        opts.update({key: value for key, value in fixed.items() if value is not None})
        solver = self.solver(method)
        first = next(iter(inspect.signature(solver).parameters), None)
        positional = self.positional + ((first,) if first else ())
        check_options(method.lower(), solver, opts, positional=positional)
        return opts
