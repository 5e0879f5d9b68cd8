"""Kernel tables: the one place where a backend chooses an implementation.

Each area declares its hot inner operations once, in a small module next to the algorithm
(``_cbo_kernels.py``, ``_lse_kernels.py``, ...)::

    KERNELS = KernelTable(__package__,
        consensus_update={"numba": "._cbo_numba:update", "cupy": "._cbo_cupy:update"},
        gibbs_weights={"numba": "._cbo_numba:weights"},      # no cupy entry -> generic
    )

and the algorithm, written once against ``xp``, asks the table::

    update = KERNELS.get("consensus_update", be, generic=_update_xp)

The algorithm never asks which backend it runs on. A kernel is one inner operation (a fused
update, a reduction), never a whole algorithm a second time; its generic twin is the
reference it is tested against (NaN, +-inf, empty and float32 inputs included).

Implementations are named as ``"module:attribute"`` strings (relative to the area's package
when they start with a dot) and imported on first use, so a Numba or CuPy module is never
imported unless its backend runs. A backend without an entry falls back to the generic
implementation.

Small inputs: no compilation
----------------------------
A Numba kernel is compiled the first time it runs on a machine (then loaded from the
on-disk cache); for a small input the compilation costs far more than the computation.
An entry may declare ``generic_below``, a work size under which the generic twin serves
when ``backend="auto"`` chose Numba, and the algorithm passes the size of its call::

    KERNELS = KernelTable(__package__,
        solve_rows={"numba": "._safe_kl_numba:solve_rows", "generic_below": 1 << 16},
    )
    solve = KERNELS.get("solve_rows", be, generic=solve_rows_xp, size=A.size)

- Only ``backend="auto"`` takes the cheap path (:attr:`Backend.auto`); an explicit
  ``backend="numba"`` always runs the Numba kernel, at any size.
- ``size`` is the work of the whole call the kernel serves, in the unit the entry's
  threshold is declared in (elements, pairs x d^3, steps x batch, ...). For a kernel called
  once per iteration of a loop, pass the work of the whole loop, so that a long run of small
  steps still gets the compiled kernel. Without ``size`` the table returns the backend's
  kernel, as without a threshold.
- Choose the threshold where the generic twin takes a few milliseconds: below it, a
  first call answers at once; above it, the compilation pays for itself. The generic twin
  is already the reference the kernel is tested against, so both paths agree within the
  kernel tests' tolerances; the choice depends on the size alone, so a call is
  reproducible from its ``rng`` (a kernel that draws random numbers needs a generic twin
  that draws the same ones).
- A step that hands its arrays on to another entry point (``logsumexp(...,
  backend=backend_arg(be))``) passes ``"auto"`` on (:func:`solvers._lib.backend.backend_arg`),
  so the callee applies its own thresholds; :meth:`Backend.for_size` applies one by hand.

The Numba side of the same goal (one compiled specialization per dtype, one kernel per
operation rather than serial and parallel twins) is described in
:mod:`solvers._lib.numba_config`.
"""
import importlib

__all__ = ["KernelTable"]

#: backend names a table may hold an entry for (``Backend.name`` values)
KERNEL_BACKENDS = ("numba", "cupy", "generic")
#: entry key: the work size under which ``backend="auto"`` runs the generic twin
GENERIC_BELOW = "generic_below"


class KernelTable:
    """Operation name -> implementation per backend, resolved lazily and cached.

    Parameters
    ----------
    package : str
        The area's package (``__package__`` of the table module); relative module paths
        are resolved against it.
    **operations : dict
        ``name={"numba": "module:attr", "cupy": ..., "generic": ...}``; a value may also be
        the callable itself. ``"generic_below": n`` (optional) declares the work size
        under which ``backend="auto"`` serves the operation with the generic twin instead
        of the Numba kernel (see the module docstring).
    """

    def __init__(self, package, **operations):
        for name, entries in operations.items():
            unknown = set(entries) - set(KERNEL_BACKENDS) - {GENERIC_BELOW}
            if unknown:
                raise ValueError(f"kernel {name!r}: unknown backend(s) {sorted(unknown)}; "
                                 f"a table holds {KERNEL_BACKENDS} and {GENERIC_BELOW!r}")
            below = entries.get(GENERIC_BELOW, 0)
            if isinstance(below, bool) or not isinstance(below, (int, float)) or below < 0:
                raise ValueError(f"kernel {name!r}: {GENERIC_BELOW} must be a non-negative "
                                 f"number, got {below!r}")
        self.package = package
        self.operations = {name: dict(entries) for name, entries in operations.items()}
        self._cache = {}

    def __contains__(self, name):
        return name in self.operations

    def names(self):
        """The operation names this table declares."""
        return tuple(self.operations)

    def has(self, name, backend):
        """True when ``backend`` (a :class:`Backend` or its name) has its own kernel."""
        return _backend_name(backend) in self.operations.get(name, {})

    def generic_below(self, name):
        """The declared work size under which ``"auto"`` runs the generic twin (0: none)."""
        return self.operations[name].get(GENERIC_BELOW, 0)

    def backend_for(self, name, backend, size=None):
        """The backend whose implementation :meth:`get` returns for an input of ``size``:
        ``backend`` itself, or its generic counterpart under the entry's
        ``generic_below`` threshold (a resolved :class:`Backend` chosen by ``"auto"``
        only)."""
        if size is None or isinstance(backend, str):
            return backend
        return backend.for_size(size, self.generic_below(name))

    def get(self, name, backend, generic=None, size=None):
        """The implementation of ``name`` for ``backend``.

        Parameters
        ----------
        name : str
            A declared operation.
        backend : Backend or str
            The resolved backend (``Backend.name`` is used).
        generic : callable, optional
            The generic ``xp`` implementation, used when the backend has no entry (and when
            the table declares no ``"generic"`` entry itself).
        size : int or float, optional
            The work of the call, compared with the entry's ``generic_below`` threshold:
            under it, a Numba backend chosen by ``"auto"`` gets the generic
            implementation (nothing to compile). Ignored for explicit backends.

        Raises
        ------
        KeyError
            ``name`` is not declared.
        LookupError
            No entry for the backend and no generic implementation.
        """
        if name not in self.operations:
            raise KeyError(f"no kernel {name!r}; this table declares {self.names()}")
        entries = self.operations[name]
        backend_name = _backend_name(self.backend_for(name, backend, size))
        target = entries.get(backend_name, entries.get("generic", generic))
        if target is None:
            raise LookupError(f"kernel {name!r} has no {backend_name!r} implementation "
                              "and no generic fallback")
        return self._load(target)

    def _load(self, target):
        if callable(target):
            return target
        if target not in self._cache:
            self._cache[target] = self._import(target)
        return self._cache[target]

    def _import(self, target):
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name, self.package)
        return getattr(module, attribute)


def _backend_name(backend):
    return backend if isinstance(backend, str) else backend.name
