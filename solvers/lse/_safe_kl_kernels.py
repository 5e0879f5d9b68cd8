"""Kernel table of the Safe-KL area: one line per hot inner operation.

Each entry names the Numba and CuPy implementations of one operation; the algorithm
modules (``safe_kl.py``, ``_safe_kl_solver.py``, ``_semidual_ot.py``) look an operation up
for their resolved backend and pass the generic ``xp`` twin, which is the reference the
kernels are tested against. The algorithm modules never ask which backend they run on.

Operations
----------
``solve_rows(A, mu, rho, tol, maxiter) -> (s, value)``
    The per-row shift solve of :func:`solvers.safe_logsumexp` (Numba).
``step_terms(values, jac, s, rho) -> (mean(w jac), mean(w), mean(h))``
    The fused minibatch step of :func:`solvers.minimize_logsumexp` (Numba, CuPy).
``terms(values, s, rho) -> (w, h)``
    Capped weights and softplus terms, elementwise (CuPy).
``scatter_add(v, idx, vals) -> v``
    ``v[idx] += vals`` with repeated indices accumulated (numpy / CuPy; the generic twin
    is a one-hot product, ``O(len(v) len(idx))``).
"""
import importlib

__all__ = ["KERNELS"]


class _KernelTable:
    """Operation name -> {backend name: "module:function"}; imported on first use.

    A local stand-in for ``solvers._lib.kernels.kernel_table`` until that lands: the same
    shape (``get(name, backend, generic=...)``), lazily importing the kernel module so
    cupy is imported only when a cupy backend asks for it.
    """

    def __init__(self, **ops):
        self._ops = ops
        self._cache = {}

    def get(self, name, be, generic):
        """The implementation of ``name`` for resolved backend ``be`` (or ``generic``)."""
        spec = self._ops[name].get(be.name)
        if spec is None:
            return generic
        if spec not in self._cache:
            module, func = spec.split(":")
            mod = importlib.import_module(module, package=__package__)
            self._cache[spec] = getattr(mod, func)
        return self._cache[spec]


KERNELS = _KernelTable(
    solve_rows={"numba": "._safe_kl_numba:solve_rows"},
    step_terms={"numba": "._safe_kl_numba:step_terms", "cupy": "._safe_kl_cupy:step_terms"},
    terms={"cupy": "._safe_kl_cupy:terms"},
    scatter_add={"numba": "._safe_kl_numba:scatter_add", "cupy": "._safe_kl_cupy:scatter_add"},
)
