"""Input handling shared by the QUBO functions.

A QUBO objective is ``f(x) = x^T Q x + c^T x + offset`` over ``x`` in ``{0, 1}^n``
(``vartype="binary"``) or ``{-1, +1}^n`` (``vartype="spin"``). It may be given as

- a dense array ``Q`` of shape ``(n, n)`` (any Array API namespace) or a stack
  ``(k, n, n)`` of ``k`` objectives over the same variables;
- a ``scipy.sparse`` matrix or array of shape ``(n, n)``;
- a dict ``{(i, j): w}`` (``w`` added to ``Q[i, j]``; integer keys index the variables
  directly, other hashable labels are numbered in order of first appearance);
- a dimod ``BinaryQuadraticModel`` (duck-typed: dimod itself is never imported), whose
  vartype, linear biases and offset are used (an explicit ``vartype`` must agree with it).

dimod's other models (constrained, integer, discrete, higher-order) are refused with an
error naming the dimod function that converts them to a ``BinaryQuadraticModel``.

:func:`parse_qubo` turns any of these into a :class:`Qubo` record; :func:`to_binary`
rewrites a spin objective as an equivalent binary one (``x = (1 + s) / 2``).
"""
from typing import NamedTuple

import numpy as np
import scipy.sparse as sps

from .._lib import array_namespace, as_float_array, check_finite
from .._lib.params import Constraint

VARTYPES = ("binary", "spin")
_VARTYPE_SETS = {frozenset((0, 1)): "binary", frozenset((-1, 1)): "spin"}


def check_vartype(vartype):
    """Normalize a vartype: ``"binary"``/``"spin"`` in any case (dimod's ``"BINARY"``,
    ``"SPIN"``), a dimod ``Vartype`` member, or the value sets ``{0, 1}`` / ``{-1, +1}``.

    Raises ``ValueError`` naming ``vartype`` for anything else.
    """
    name = getattr(vartype, "name", vartype)  # dimod.Vartype.SPIN -> "SPIN"
    if isinstance(name, str) and name.lower() in VARTYPES:
        return name.lower()
    if isinstance(vartype, (set, frozenset)):
        try:
            found = _VARTYPE_SETS.get(frozenset(vartype))
        except TypeError:
            found = None
        if found is not None:
            return found
    raise ValueError(f"vartype must be 'binary' or 'spin' (dimod's 'BINARY' / 'SPIN' and "
                     f"the sets {{0, 1}} / {{-1, 1}} also work), got {vartype!r}")


class Vartype(Constraint):
    """Option-spec constraint of ``vartype`` (normalized by :func:`check_vartype`)."""

    kind = "str"

    def check(self, value, name):
        return check_vartype(value)

    def invalid_values(self):
        return {"str": "ternary", "int": 3, "set": frozenset((0, 2))}

    def describe(self):
        return '"binary" or "spin"'


#: the ``vartype`` option (``None``: binary, or the vartype of a BinaryQuadraticModel)
VARTYPE = Vartype()


class Qubo(NamedTuple):
    """A parsed QUBO: ``f(x) = x^T Q x + c^T x + offset``.

    ``Q`` is an ``xp`` array (``(n, n)`` or ``(k, n, n)``) or a scipy CSR matrix
    (``sparse=True``); ``c`` is an array (``(n,)`` or ``(k, n)``) or None; ``offset`` a
    Python float or an ``xp`` array of shape ``(k,)``.
    """

    Q: object
    c: object
    offset: object
    vartype: str
    variables: object
    xp: object
    sparse: bool

    @property
    def n(self):
        return self.Q.shape[-1]

    @property
    def batch_shape(self):
        return () if self.sparse else tuple(self.Q.shape[:-2])


#: dimod model classes that are not BQMs -> the conversion to suggest
_DIMOD_CONVERSIONS = {
    "ConstrainedQuadraticModel":
        "dimod.cqm_to_bqm(cqm, lagrange_multiplier=...) (constraints become penalties; it "
        "returns the BQM and an inverter for the samples)",
    "QuadraticModel":
        "dimod.cqm_to_bqm(dimod.CQM.from_quadratic_model(qm)) (integer variables become "
        "binary expansions)",
    "DiscreteQuadraticModel":
        "dimod.cqm_to_bqm(dimod.CQM.from_discrete_quadratic_model(dqm)) (one-hot "
        "constraints become penalties)",
    "BinaryPolynomial":
        "dimod.make_quadratic(poly, strength, vartype) (higher-order terms are reduced "
        "with auxiliary variables)",
}


def refuse_other_dimod_models(obj, name):
    """TypeError naming the conversion to a BQM for dimod's other models."""
    cls = type(obj)
    if not cls.__module__.startswith("dimod"):
        return
    for base in cls.__mro__:
        if base.__name__ in _DIMOD_CONVERSIONS:
            raise TypeError(f"{name} is a dimod {base.__name__}; the QUBO functions take a "
                            "BinaryQuadraticModel, a matrix or a dict. Convert it first with "
                            f"{_DIMOD_CONVERSIONS[base.__name__]}")


def is_bqm(obj):
    """True for a dimod BinaryQuadraticModel (duck-typed; dimod is never imported)."""
    return (hasattr(obj, "to_numpy_vectors") and hasattr(obj, "vartype")
            and hasattr(obj, "quadratic") and hasattr(obj, "linear"))


def _from_bqm(bqm):
    variables = list(bqm.variables)
    n = len(variables)
    ldata, (irow, icol, qdata), off = bqm.to_numpy_vectors(variable_order=variables)
    Q = sps.coo_matrix((np.asarray(qdata, dtype=np.float64),
                        (np.asarray(irow, dtype=np.int64), np.asarray(icol, dtype=np.int64))),
                       shape=(n, n)).tocsr()
    c = np.asarray(ldata, dtype=np.float64)
    return Q, c, float(off), check_vartype(bqm.vartype), variables


def _from_dict(d, name="Q"):
    labels = {}
    ints = all(isinstance(k, tuple) and len(k) == 2
               and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0
                       for v in k) for k in d)
    rows, cols, vals = [], [], []
    for key, w in d.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            more = (" (a higher-order term: reduce the polynomial to a quadratic one first, "
                    "e.g. with dimod.make_quadratic)"
                    if isinstance(key, tuple) and len(key) > 2 else "")
            raise TypeError(f"{name} as a dict needs keys (i, j), got key {key!r}{more}")
        if ints:
            i, j = int(key[0]), int(key[1])
        else:
            i = labels.setdefault(key[0], len(labels))
            j = labels.setdefault(key[1], len(labels))
        rows.append(i)
        cols.append(j)
        vals.append(float(w))
    if ints:
        n = (max(max(rows), max(cols)) + 1) if rows else 0
        variables = None
    else:
        n = len(labels)
        variables = list(labels)
    Q = sps.coo_matrix((np.asarray(vals, dtype=np.float64),
                        (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
                       shape=(n, n)).tocsr()
    return Q, variables


def parse_qubo(Q, c=None, offset=0.0, vartype=None, *, allow_stack=True, name="Q",
               c_name="c", offset_name="offset"):
    """Validate a QUBO given in any supported form and return a :class:`Qubo`.

    ``name``, ``c_name`` and ``offset_name`` are the public names of ``Q``, ``c`` and
    ``offset`` used in error messages (e.g. ``"objectives[1]"``). ``vartype=None`` means
    binary, or the vartype of a BinaryQuadraticModel; a given vartype must agree with it.

    Raises
    ------
    ValueError
        Non-square ``Q``, NaN or inf entries, ``c`` of the wrong length, unknown vartype, a
        vartype that contradicts a BinaryQuadraticModel's.
    TypeError
        A BinaryQuadraticModel together with ``c``, another dimod model, or an unsupported
        type.
    """
    given = None if vartype is None else check_vartype(vartype)
    vartype = "binary" if given is None else given
    variables = None
    refuse_other_dimod_models(Q, name)
    if is_bqm(Q):
        if c is not None:
            raise TypeError(f"{c_name} cannot be given with a BinaryQuadraticModel (its "
                            "linear biases are used)")
        Q, c, bqm_offset, vartype, variables = _from_bqm(Q)
        if given is not None and given != vartype:
            other = "BINARY" if vartype == "binary" else "SPIN"
            raise ValueError(f"vartype={given!r} contradicts the BinaryQuadraticModel "
                             f"{name}, whose vartype is {other}: a BQM brings its own. Drop "
                             f"vartype, or convert the model first with "
                             f"bqm.change_vartype({given.upper()!r}, inplace=False)")
        offset = bqm_offset + float(offset)
    elif isinstance(Q, dict):
        Q, variables = _from_dict(Q, name)

    if sps.issparse(Q):
        if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
            raise ValueError(f"{name} must be a square matrix, got shape {Q.shape}")
        Q = sps.csr_matrix(Q, dtype=np.float64)
        if not np.all(np.isfinite(Q.data)):
            raise ValueError(f"{name} must be finite; it holds NaN or inf entries")
        xp = array_namespace(np.empty(0))
        n = Q.shape[0]
        if c is not None:
            if sps.issparse(c):
                c = c.toarray().ravel()
            c = as_float_array(c, xp, c_name, ndim=1)
            if c.shape[0] != n:
                raise ValueError(f"{c_name} must have shape ({n},) to match {name}, "
                                 f"got {tuple(c.shape)}")
            check_finite(c, xp, c_name)
        offset = _check_offset(offset, xp, (), name=offset_name)
        return Qubo(Q, c, offset, vartype, variables, xp, True)

    xp = array_namespace(Q, c)
    Q = as_float_array(Q, xp, name, ndim=(2, 3) if allow_stack else 2)
    if Q.shape[-1] != Q.shape[-2]:
        stack = " or a stack (k, n, n)" if allow_stack else ""
        raise ValueError(f"{name} must be square (n, n){stack}, got shape {tuple(Q.shape)}")
    check_finite(Q, xp, name)
    n = Q.shape[-1]
    batch = tuple(Q.shape[:-2])
    if c is not None:
        c = as_float_array(c, xp, c_name, ndim=(1, 2) if batch else 1)
        if c.shape[-1] != n or (c.ndim == 2 and tuple(c.shape[:-1]) != batch):
            want = f"({n},)" + (f" or {batch + (n,)}" if batch else "")
            raise ValueError(f"{c_name} must have shape {want} to match {name}, "
                             f"got {tuple(c.shape)}")
        check_finite(c, xp, c_name)
        if c.dtype != Q.dtype:
            dt = xp.result_type(c, Q)
            Q, c = xp.astype(Q, dt), xp.astype(c, dt)
    offset = _check_offset(offset, xp, batch, Q.dtype, name=offset_name)
    return Qubo(Q, c, offset, vartype, variables, xp, False)


def _check_offset(offset, xp, batch, dtype=None, *, name="offset"):
    if isinstance(offset, (int, float, np.integer, np.floating)) and not isinstance(offset, bool):
        value = float(offset)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} must be finite, got {value}")
        return value
    off = as_float_array(offset, xp, name, ndim=(0, 1))
    check_finite(off, xp, name)
    if off.ndim == 0:
        return float(off)
    if tuple(off.shape) != batch:
        raise ValueError(f"{name} must be a scalar or have shape {batch}, "
                         f"got {tuple(off.shape)}")
    return xp.astype(off, dtype) if dtype is not None else off


def to_binary(q):
    """The binary QUBO equal to the spin QUBO ``q`` under ``s = 2 x - 1``.

    ``s^T Q s + c^T s + c0 = x^T (4Q) x + (2c - 2 (Q + Q^T) 1)^T x + (c0 + 1^T Q 1 - 1^T c)``.
    """
    if q.vartype == "binary":
        return q
    xp = q.xp
    Q, c = q.Q, q.c
    if q.sparse:
        rowcol = np.asarray(Q.sum(axis=1)).ravel() + np.asarray(Q.sum(axis=0)).ravel()
        total = float(Q.sum())
        cb = -2.0 * rowcol
        c0 = q.offset + total
        if c is not None:
            cb = cb + 2.0 * c
            c0 = c0 - float(np.sum(c))
        return Qubo((4.0 * Q).tocsr(), cb, c0, "binary", q.variables, xp, True)
    rowcol = xp.sum(Q, axis=-1) + xp.sum(Q, axis=-2)
    total = xp.sum(rowcol, axis=-1) / 2
    cb = -2.0 * rowcol
    c0 = q.offset + total
    if c is not None:
        cb = cb + 2.0 * c
        c0 = c0 - xp.sum(c, axis=-1)
    if Q.ndim == 2:
        c0 = float(c0)
    return Qubo(4.0 * Q, cb, c0, "binary", q.variables, xp, False)
