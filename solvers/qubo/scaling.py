r"""Scaling several QUBO objectives to a common scale, and weighted scalarization.

Multi-objective QUBOs are usually solved as one weighted sum
``f_w = sum_k w_k f_k / s_k``. If the objectives live on different scales (a cut size in
the hundreds against a balance penalty in the tens of thousands), equal weights favour one
objective and a weight sweep covers the Pareto front unevenly. ``scale_qubos`` picks
``s_k``:

``"variance"``
    the exact standard deviation of ``f_k`` under uniform random assignments (or the
    measure given by ``p`` / ``weight``), so every scaled objective has unit variance
    (Lee, Gerlach & Piatkowski 2025), computed in ``O(n^2)`` by :func:`qubo_moments`;
``"maxabs"``
    the largest absolute coefficient of the canonical form (linear biases ``diag(Q) + c``
    and pair couplings ``Q_ij + Q_ji``), which is what ``dimod``'s ``normalize()`` does;
``"none"``
    ``s_k = 1``.
"""
import numpy as np
import scipy.sparse as sps

from .._lib import to_host
from .._lib.params import Choice, Integer, Options, Param
from ._input import VARTYPE, parse_qubo
from .moments import qubo_moments
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["scale_qubos", "scalarize", "qubo_energy", "as_objective"]

METHODS = ("variance", "maxabs", "none")

SCALE_OPTIONS = Options(
    "ScaleOptions",
    Param("method", Choice(*METHODS), "variance", "how objectives are scaled"),
    Param("weight", Integer(low=0), None, "fixed Hamming weight of the measure"),
    Param("vartype", VARTYPE, None, "binary or spin variables"),
)
VARTYPE_OPTIONS = Options("VartypeOptions",
                          Param("vartype", VARTYPE, None, "binary or spin variables"))


@fill_doc(**_DOCS)
def as_objective(obj, vartype=None):
    """Parse one objective (``Q``, ``(Q, c)``, ``(Q, c, offset)``, dict or BQM).

    Parameters
    ----------
    obj : array_like, scipy.sparse matrix, dict, dimod.BinaryQuadraticModel or tuple
        ``Q`` (``(n, n)``, not necessarily symmetric), ``(Q, c)`` or ``(Q, c, offset)``,
        a dict ``{(i, j): w}`` or a BinaryQuadraticModel (which brings its own vartype,
        linear biases and offset).
    vartype : {"binary", "spin"}, optional
        Domain of the variables, ``{0, 1}`` or ``{-1, +1}``. Default ``"binary"``; a
        BinaryQuadraticModel brings its own (a vartype given with one must agree with it).

    Returns
    -------
    Qubo
        A named tuple with fields ``Q`` (dense array or CSR matrix), ``c`` (an ``(n,)``
        array, zeros when absent), ``offset``, ``vartype``, ``variables`` (labels for dict
        or BinaryQuadraticModel input, else None), ``xp`` and ``sparse``; ``.n`` is the
        number of variables.

    Raises
    ------
    ValueError
        A tuple of length 0 or above 3, a non-square, stacked or non-finite ``Q``, ``c``
        or ``offset`` of the wrong shape or not finite, or an unknown ``vartype``.
    TypeError
        A dict key that is not a pair ``(i, j)``, or ``c`` given with a
        BinaryQuadraticModel.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo.scaling import as_objective
    >>> q = as_objective((np.eye(2), None, 3.0))
    >>> q.c.tolist(), float(q.offset), q.vartype
    ([0.0, 0.0], 3.0, 'binary')
    >>> as_objective({(0, 1): 2.0}).Q.toarray().tolist()
    [[0.0, 2.0], [0.0, 0.0]]
    """
    return _as_objective(obj, vartype, "obj")


def _as_objective(obj, vartype, name):
    """:func:`as_objective` with error messages naming ``name`` (the public argument)."""
    if isinstance(obj, tuple):
        if not 1 <= len(obj) <= 3:
            raise ValueError(f"{name} must be Q, (Q, c) or (Q, c, offset), got a tuple "
                             f"of length {len(obj)}")
        q = parse_qubo(*obj, vartype=vartype, allow_stack=False, name=f"Q of {name}",
                       c_name=f"c of {name}", offset_name=f"offset of {name}")
    else:
        q = parse_qubo(obj, vartype=vartype, allow_stack=False, name=name)
    c = q.c
    if c is None:
        c = q.xp.zeros(q.n, dtype=np.float64 if q.sparse else q.Q.dtype)
    return q._replace(c=c)


def _objectives(objectives, vartype):
    if not sps.issparse(objectives) and getattr(objectives, "ndim", None) == 3:
        objectives = [objectives[k, ...] for k in range(objectives.shape[0])]
    if (isinstance(objectives, (str, bytes, dict)) or not hasattr(objectives, "__len__")
            or hasattr(objectives, "shape") or sps.issparse(objectives)):
        raise TypeError("objectives must be a sequence of QUBOs (Q, (Q, c), (Q, c, offset), "
                        "dicts or BinaryQuadraticModels)")
    parsed = [_as_objective(o, vartype, f"objectives[{i}]") for i, o in enumerate(objectives)]
    if not parsed:
        raise ValueError("objectives is empty")
    sizes = {q.n for q in parsed}
    if len(sizes) != 1:
        raise ValueError("all objectives must have the same number of variables, got "
                         f"{sorted(sizes)}")
    vts = {q.vartype for q in parsed}
    if len(vts) != 1:
        raise ValueError("all objectives must have the same vartype")
    return parsed


def _maxabs(q):
    """Largest |coefficient| of the canonical form in the objective's own vartype."""
    if q.sparse:
        Q = q.Q
        off = (Q + Q.T).tocsr()
        off = off - sps.diags(off.diagonal())
        lin = np.asarray(q.c, dtype=np.float64)
        if q.vartype == "binary":
            lin = lin + Q.diagonal()
        quad = np.max(np.abs(off.data)) if off.nnz else 0.0
        return float(max(np.max(np.abs(lin)) if lin.size else 0.0, quad))
    xp = q.xp
    n = q.n
    W = (q.Q + xp.matrix_transpose(q.Q)) * (1.0 - xp.eye(n, dtype=q.Q.dtype))
    lin = q.c + xp.linalg.diagonal(q.Q) if q.vartype == "binary" else q.c
    return float(max(float(xp.max(xp.abs(W))) if n else 0.0,
                     float(xp.max(xp.abs(lin))) if n else 0.0))


@fill_doc(**_DOCS)
@SCALE_OPTIONS.entry
def scale_qubos(objectives, method="variance", *, p=None, weight=None, vartype=None):
    r"""Scale QUBO objectives to a common scale.

    Parameters
    ----------
    objectives : sequence
        Each entry is ``Q``, ``(Q, c)`` or ``(Q, c, offset)`` (dense or scipy.sparse ``Q``),
        a dict ``{(i, j): w}`` or a dimod BinaryQuadraticModel; a ``(k, n, n)`` array is
        read as ``k`` matrices. All share the same ``n`` variables.
    method : {"variance", "maxabs", "none"}
        ``"variance"`` divides each objective by its exact standard deviation under the
        measure below; ``"maxabs"`` by its largest absolute coefficient (dimod's
        ``normalize``); ``"none"`` leaves it.
    p, weight : optional
        Measure for ``"variance"``: independent Bernoulli(``p``) bits, or uniform over
        Hamming weight ``weight`` (see :func:`qubo_moments`). Default: uniform.
    vartype : {"binary", "spin"}, optional
        Domain of the variables, ``{0, 1}`` or ``{-1, +1}``. Default ``"binary"``; a
        BinaryQuadraticModel brings its own (a vartype given with one must agree with it).

    Returns
    -------
    scaled : list of tuple
        ``(Q / s, c / s, offset / s)`` for every objective (``Q`` stays dense or sparse).
    scales : numpy.ndarray
        The divisors ``s_k``.

    Raises
    ------
    ValueError
        Unknown method, an empty sequence, a malformed objective (see
        :func:`~solvers.qubo.scaling.as_objective`), objectives of different sizes or
        vartypes, a bad ``p`` or ``weight`` (see :func:`qubo_moments`), or an objective
        that is constant (zero variance or all-zero coefficients), which cannot be scaled.
    TypeError
        ``objectives`` is not a sequence (e.g. a string or a single 2-d array), or a
        malformed dict objective.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import scale_qubos, qubo_moments
    >>> f1 = np.array([[1.0, 2.0], [0.0, -1.0]])
    >>> f2 = 1000.0 * np.eye(2)
    >>> scaled, s = scale_qubos([f1, f2])
    >>> s.round(4).tolist()
    [1.118, 707.1068]
    >>> round(qubo_moments(*scaled[1]).var, 12)
    1.0
    """
    cfg = SCALE_OPTIONS.validate(method=method, weight=weight, vartype=vartype)
    method, vartype = cfg.method, cfg.vartype
    parsed = _objectives(objectives, vartype)
    scales = []
    for k, q in enumerate(parsed):
        if method == "variance":
            s = float(qubo_moments(q.Q, q.c, q.offset, p=p, weight=weight,
                                   vartype=q.vartype).var) ** 0.5
        elif method == "maxabs":
            s = _maxabs(q)
        else:
            s = 1.0
        if not s > 0:
            raise ValueError(f"objective {k} is constant under the chosen measure "
                             f"(scale {s}); it cannot be scaled by method={method!r}")
        scales.append(s)
    scaled = [(q.Q / s if not q.sparse else (q.Q / s).tocsr(), q.c / s, q.offset / s)
              for q, s in zip(parsed, scales)]
    return scaled, np.asarray(scales)


@fill_doc(**_DOCS)
@VARTYPE_OPTIONS.entry
def scalarize(objectives, weights, *, vartype=None):
    """The weighted sum ``sum_k w_k f_k`` as one ``(Q, c, offset)`` triple.

    Parameters
    ----------
    objectives : sequence
        As in :func:`scale_qubos` (pass its ``scaled`` output to scalarize scaled
        objectives).
    weights : array_like
        One real weight per objective (any sign; no normalization is applied).
    vartype : {"binary", "spin"}, optional
        Domain of the variables, ``{0, 1}`` or ``{-1, +1}``. Default ``"binary"``; a
        BinaryQuadraticModel brings its own (a vartype given with one must agree with it).

    Returns
    -------
    tuple
        ``(Q, c, offset)``; ``Q`` is sparse if every objective is sparse, dense otherwise.

    Raises
    ------
    ValueError
        ``weights`` not of shape ``(k,)`` for ``k`` objectives or not finite, an empty
        sequence, a malformed objective, or objectives of different sizes or vartypes.
    TypeError
        ``objectives`` is not a sequence, complex or non-numeric ``weights``, or a
        malformed dict objective.

    Notes
    -----
    ``weights`` are used as given; combine with :func:`scale_qubos` for the
    unit-variance scalarization of the reference.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo import scalarize
    >>> Q, c, off = scalarize([(np.eye(2), np.ones(2), 1.0), np.ones((2, 2))], [0.5, 2.0])
    >>> Q.tolist(), c.tolist(), off
    ([[2.5, 2.0], [2.0, 2.5]], [0.5, 0.5], 0.5)
    """
    vartype = VARTYPE_OPTIONS.validate(vartype=vartype).vartype
    parsed = _objectives(objectives, vartype)
    w = np.asarray(weights)
    if np.iscomplexobj(w) or w.dtype.kind not in "biuf":
        raise TypeError(f"weights must be real numbers, got dtype {w.dtype}")
    w = w.astype(np.float64)
    if w.shape != (len(parsed),):
        raise ValueError(f"weights must have shape ({len(parsed)},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    all_sparse = all(q.sparse for q in parsed)
    xp = parsed[0].xp if not any(q.sparse for q in parsed) else None
    Q = c = None
    offset = 0.0
    for wk, q in zip(w, parsed):
        wk = float(wk)
        if all_sparse:
            term = q.Q * wk
        elif q.sparse:
            term = wk * q.Q.toarray()
        else:
            term = wk * q.Q
        Q = term if Q is None else Q + term
        ck = wk * (np.asarray(q.c) if xp is None else q.c)
        c = ck if c is None else c + ck
        offset = offset + wk * q.offset
    if all_sparse:
        Q = Q.tocsr()
    return Q, c, offset


def _check_states(X, n, vartype, name="X"):
    """``X`` as a float64 host array of shape ``(n,)`` or ``(m, n)`` with entries in the
    domain of ``vartype`` (``{0, 1}`` or ``{-1, +1}``)."""
    arr = np.asarray(to_host(X))
    if arr.dtype.kind not in "biufO":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    try:
        Xf = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold real numbers") from None
    if Xf.ndim not in (1, 2) or Xf.shape[-1] != n:
        raise ValueError(f"{name} must have shape ({n},) or (m, {n}) to match the objective, "
                         f"got {Xf.shape}")
    domain = (0.0, 1.0) if vartype == "binary" else (-1.0, 1.0)
    if not np.all((Xf == domain[0]) | (Xf == domain[1])):
        bad = Xf[(Xf != domain[0]) & (Xf != domain[1])].flat[0]
        raise ValueError(f"{name} must hold {vartype} values {{{domain[0]:g}, {domain[1]:g}}}, "
                         f"got {bad}")
    return Xf


@fill_doc(**_DOCS)
@VARTYPE_OPTIONS.entry
def qubo_energy(objective, X, *, vartype=None):
    """Evaluate one objective on samples ``X`` (``(m, n)`` or ``(n,)``) in its vartype.

    Parameters
    ----------
    objective : array_like, scipy.sparse matrix, dict, dimod.BinaryQuadraticModel or tuple
        ``Q``, ``(Q, c)`` or ``(Q, c, offset)``, a dict or a BinaryQuadraticModel (see
        :func:`~solvers.qubo.scaling.as_objective`).
    X : array_like, shape (m, n) or (n,)
        Samples, with entries in ``{0, 1}`` (binary) or ``{-1, +1}`` (spin).
    vartype : {"binary", "spin"}, optional
        Domain of the variables of ``objective``. Default ``"binary"``; a
        BinaryQuadraticModel brings its own (a vartype given with one must agree with it).

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``x^T Q x + c^T x + offset`` for every row: shape ``(m,)``, or a scalar for a
        1-d ``X``.

    Raises
    ------
    ValueError
        A malformed objective (see :func:`~solvers.qubo.scaling.as_objective`), or ``X``
        whose last axis is not ``n``, with more than 2 dimensions, or with an entry
        outside the objective's domain (``{0, 1}`` binary, ``{-1, +1}`` spin; NaN
        included).
    TypeError
        A malformed dict objective, ``c`` given with a BinaryQuadraticModel, or ``X``
        complex or not numeric.

    Notes
    -----
    Computed on the host in float64 (device arrays are copied explicitly).

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo import qubo_energy
    >>> qubo_energy((np.array([[1.0, 2.0], [0.0, -1.0]]), np.zeros(2), 3.0), [[1, 1], [0, 1]])
    array([5., 2.])
    """
    vartype = VARTYPE_OPTIONS.validate(vartype=vartype).vartype
    q = _as_objective(objective, vartype, "objective")
    Xf = _check_states(X, q.n, q.vartype)
    single = Xf.ndim == 1
    Xf = np.atleast_2d(Xf)
    if q.sparse:
        Q = q.Q
        quad = np.sum(np.asarray((Q @ Xf.T).T) * Xf, axis=1)
    else:
        Q = np.asarray(q.Q, dtype=np.float64)
        quad = np.einsum("si,ij,sj->s", Xf, Q, Xf)
    out = quad + Xf @ np.asarray(q.c, dtype=np.float64) + float(q.offset)
    return out[0] if single else out
