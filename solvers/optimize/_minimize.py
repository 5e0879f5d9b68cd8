"""``solvers.minimize``: one router for every minimizer in the library, like SciPy's.

:data:`METHODS` is the one table of methods: each name, the public solver that runs it (a
``"module:function"`` string imported on first use, so package import stays light) and
whether its start ``x0`` is optional. Areas do not register themselves; a user may add a
method of their own with :func:`register_method`.

Options are checked against the solver's signature: an unknown option is a ``TypeError``
naming the method and listing the options it accepts, never silently ignored.
"""
import inspect

from .._lib.router import Router
from .._lib.validation import check_callback

#: method name -> (the solver, ``x0`` optional). Each solver is called as
#: ``solver(fun, x0=x0, **options)``; its first parameter receives ``fun``.
METHODS = {
    "cbo": ("solvers.optimize.cbo:minimize_cbo", True),
    "safe-kl": ("solvers.lse.safe_kl:minimize_logsumexp", False),
    "anneal": ("solvers.qubo.anneal:minimize_qubo", True),
}

_ROUTER = Router("minimize", {name: target for name, (target, _) in METHODS.items()},
                 positional=("fun", "x0"))

#: methods whose start is optional (``x0=None`` allowed)
_OPTIONAL_X0 = {name for name, (_, optional) in METHODS.items() if optional}


def register_method(name, func, *, takes_x0=True):
    """Register ``func(fun, x0, **options)`` under ``name`` (lower case).

    ``takes_x0=False`` marks solvers whose start is optional (``x0=None`` is allowed).

    Raises
    ------
    TypeError
        ``name`` not a string, or ``func`` not callable.
    ValueError
        An empty ``name``.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    _ROUTER.register(name, func)
    if not takes_x0:
        _OPTIONAL_X0.add(name.lower())
    return func


def available_methods():
    """Names accepted by :func:`minimize` (those whose module imports)."""
    return _ROUTER.available()


def minimize(fun, x0=None, method="cbo", *, bounds=None, callback=None, options=None, **kwargs):
    """Minimize a scalar function with one of the library's solvers.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float`` (or the method's own contract, e.g. vectorized).
    x0 : array_like, optional
        Starting point; some methods (``"cbo"``) accept ``None`` and start from ``bounds``.
    method : str
        Name of a registered method; see :func:`solvers.optimize.available_methods`.
    bounds : scipy.optimize.Bounds or sequence of (low, high), optional
    callback : callable, optional
        ``callback(intermediate_result)``; raise ``StopIteration`` to stop.
    options : dict, optional
        Method-specific options (as in :func:`scipy.optimize.minimize`).
    **kwargs
        Merged into ``options`` (``rng=0`` reads better than ``options={"rng": 0}``).

    Returns
    -------
    scipy.optimize.OptimizeResult

    Raises
    ------
    ValueError
        Unknown method.
    TypeError
        An option the method does not accept, or a ``callback`` that is not callable.

    See Also
    --------
    scipy.optimize.minimize : the interface this router follows.

    References
    ----------
    .. [1] P. Virtanen et al., "SciPy 1.0: fundamental algorithms for scientific computing
       in Python", Nature Methods 17, 2020 (the ``minimize`` conventions followed here).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize
    >>> res = minimize(lambda x: float(np.sum((x - 1.0) ** 2)), None, method="cbo",
    ...                bounds=[(-3, 3)] * 2, maxiter=300, rng=0)
    >>> bool(np.allclose(res.x, 1.0, atol=1e-2))
    True
    """
    check_callback(callback)
    func = _ROUTER.solver(method)
    opts = _ROUTER.options(method, options, kwargs, bounds=bounds, callback=callback)
    if x0 is None and method.lower() not in _OPTIONAL_X0:
        raise ValueError(f"method {method!r} needs a starting point x0")
    if "x0" in inspect.signature(func).parameters:
        return func(fun, x0=x0, **opts)
    return func(fun, x0, **opts)  # a registered method may name its start otherwise
