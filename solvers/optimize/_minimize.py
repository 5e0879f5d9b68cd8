"""``solvers.minimize``: one router for every minimizer in the library, like SciPy's.

Methods live in their areas and register themselves with :func:`register_method` when
their module is imported. The router knows which module provides each method name
(``_METHOD_MODULES``) so it can import it on demand; package import stays light.

Options are checked against the solver's signature: an unknown option is a ``TypeError``
naming the method and listing the options it accepts, never silently ignored.
"""
import importlib

from .._lib.options import check_options

# method name -> module that registers it on import
_METHOD_MODULES = {
    "cbo": "solvers.optimize.cbo",
    "safe-kl": "solvers.lse.safe_kl",
    "anneal": "solvers.qubo.anneal",
}

_REGISTRY = {}


def register_method(name, func, *, takes_x0=True):
    """Register ``func(fun, x0, **options)`` under ``name`` (lower case).

    ``takes_x0=False`` marks solvers whose start is optional (``x0=None`` is allowed).
    """
    _REGISTRY[name.lower()] = (func, takes_x0)
    return func


def available_methods():
    """Names accepted by :func:`minimize` (those whose module imports)."""
    for name in _METHOD_MODULES:
        _load(name)
    return sorted(_REGISTRY)


def _load(name):
    if name in _REGISTRY:
        return _REGISTRY[name]
    module = _METHOD_MODULES.get(name)
    if module is not None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real import error inside the module: surface it
                raise
    return _REGISTRY.get(name)


def minimize(fun, x0=None, method="cbo", *, bounds=None, callback=None, options=None, **kwargs):
    """Minimize a scalar function with one of the library's solvers.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float`` (or the method's own contract, e.g. vectorized).
    x0 : array_like, optional
        Starting point; some methods (``"cbo"``) accept ``None`` and start from ``bounds``.
    method : str
        Name of a registered method; see :func:`available_methods`.
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
        An option the method does not accept.

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
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    name = method.lower()
    entry = _load(name)
    if entry is None:
        raise ValueError(f"unknown method {method!r}; available: {available_methods()}")
    func, takes_x0 = entry
    opts = dict(options or {})
    overlap = set(opts) & set(kwargs)
    if overlap:
        raise TypeError(f"option(s) {sorted(overlap)} given both in options and as keywords")
    opts.update(kwargs)
    if bounds is not None:
        opts["bounds"] = bounds
    if callback is not None:
        opts["callback"] = callback
    check_options(name, func, opts, positional=("fun", "x0"))
    if x0 is None and takes_x0:
        raise ValueError(f"method {method!r} needs a starting point x0")
    return func(fun, x0, **opts)
