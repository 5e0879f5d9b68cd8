"""``learn_dag``: one router for every DAG learner (the result class they share lives in
:mod:`solvers.dag._results` and is exported here).

Methods live in their own modules and are imported on first use (``_METHOD_MODULES``), so
``import solvers.dag`` stays light. Options are checked against the method's signature:
an unknown option is a ``TypeError`` that names the method and lists what it accepts.
"""
from .._lib.frames import unwrap_frame
from .._lib.router import Router
from ._results import DAGResult, check_data
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["learn_dag", "DAGResult", "available_methods", "check_data"]

# method name -> "module:function"; the function is called as func(X, **options)
_METHOD_MODULES = {
    "cosmo": "solvers.dag.cosmo:_learn_cosmo",
    "dpdag": "solvers.dag._dpdag_learn:_learn_dpdag",
}
_ROUTER = Router("learn_dag", _METHOD_MODULES, positional=("X",))


@fill_doc(**_DOCS)
def available_methods():
    """Method names accepted by :func:`learn_dag` (whose module is importable).

    Returns
    -------
    list of str
        A subset of ``["cosmo", "dpdag"]``, in that order; a method whose module cannot
        be imported (missing optional dependency) is left out.

    Notes
    -----
    Takes no input and raises nothing for a missing method; it assumes each method
    module either imports or fails with ``ModuleNotFoundError`` (any other import error
    of a broken installation propagates).

    {{ref_cosmo}}
    .. [2] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.

    Examples
    --------
    >>> from solvers.dag import available_methods
    >>> set(available_methods()) <= {"cosmo", "dpdag"}
    True
    >>> "cosmo" in available_methods()
    True
    """
    return [name for name in _METHOD_MODULES if name in _ROUTER.available()]


@fill_doc(**_DOCS)
def learn_dag(X, method="cosmo", *, options=None, **kwargs):
    """Learn a DAG from observational data.

    Parameters
    ----------
    X : array_like, shape (n, d)
        n samples of d variables (numpy, cupy, any Array API array, or a pandas
        DataFrame: its columns become the result's ``labels``, the node names of
        ``to_networkx()``).
    method : {"cosmo", "dpdag"}
        ``"cosmo"``: smooth acyclic orientations (Massidda et al. 2024), see
        :func:`solvers.dag.cosmo.learn_cosmo`; ``"dpdag"``: differentiable DAG sampling
        (Charpentier et al. 2022).
    options : dict, optional
        Method options (as in :func:`scipy.optimize.minimize`).
    **kwargs
        Merged into ``options``.

    Returns
    -------
    DAGResult
        ``W``, ``adjacency`` (always acyclic), ``order``, ``to_networkx()``, ...

    Raises
    ------
    ValueError
        Unknown method, or bad data (see :func:`check_data`).
    TypeError
        An option the method does not accept, an option given both in ``options`` and
        as a keyword, or a non-string ``method``.

    {{ref_cosmo}}
    .. [2] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.

    Examples
    --------
    >>> from solvers.dag import learn_dag, simulate_data, shd
    >>> X, W, B = simulate_data(d=5, n=500, k=1, rng=0)
    >>> res = learn_dag(X, method="cosmo", rng=0)
    >>> res.is_dag(), shd(B, res.adjacency) <= 1
    (True, True)
    """
    func = _ROUTER.solver(method)
    X, labels = unwrap_frame(X, "X")
    res = func(X, **_ROUTER.options(method, options, kwargs))
    if labels is not None:
        res.labels = labels
    return res
