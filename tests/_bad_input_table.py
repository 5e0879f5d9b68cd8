"""Kinds of bad input, per argument category, for ``tests/test_bad_input.py``.

A category names what an argument is ("data" matrix, "spd" covariance, "scale" parameter,
"objective" callable, ...). Each category has its kinds of bad input; each kind is a
function ``mutate(valid_value) -> bad_value`` and a default expectation:

``RAISE``
    A ``ValueError`` or ``TypeError`` whose message names the argument.
``EITHER``
    ``RAISE``, or the call works and its result is finite (and, for a kind that keeps the
    values, e.g. a list or an object array, equal to the valid call's result).
``PROPAGATE``
    ``RAISE``, or the call works and the special value propagates (SciPy's ``logsumexp``
    semantics: NaN in, NaN out; ``+inf`` in, ``+inf`` out). A row with a ``reference``
    compares against it instead.
``RUN_FAILS``
    Objectives only: ``RAISE``, or a result with ``success=False`` and a message (a
    numerical failure inside a run), never a non-finite answer with ``success=True``.
``EITHER_RUN``
    Objectives only: ``RUN_FAILS``, or a finite result.
``USER_ERROR``
    Objectives only: the objective's own exception reaches the caller unchanged.
"""
import numpy as np

from solvers._lib.backend import gpu_available

RAISE = "raise"
EITHER = "either"
PROPAGATE = "propagate"
RUN_FAILS = "run_fails"
EITHER_RUN = "either_run"
USER_ERROR = "user_error"
#: kinds that only change the container or dtype: a result must match the call on the same
#: numbers as float64 (to float16 precision for "float16")
CAST_KINDS = {"int", "bool", "float16", "object", "list"}


class UserObjectiveError(Exception):
    """Raised by the "raises" objective: it must reach the caller unchanged."""


# ---------------------------------------------------------------------------- arrays
def _float(v):
    return np.array(v, dtype=np.float64, copy=True)


def _put(value):
    def mutate(v):
        v = _float(v)
        if v.size == 0:
            return np.full(1, value)
        v.flat[0] = value
        return v
    return mutate


def _empty(v):
    v = np.asarray(v)
    return v[:0] if v.ndim else np.zeros(0)


def _ndim_up(v):
    return np.asarray(v)[None]


def _ndim_down(v):
    v = np.asarray(v)
    return v[0] if v.ndim else v.reshape(1, 1)


def _shape(v):
    """One fewer entry along the last axis (a mismatch with a partner argument)."""
    v = np.asarray(v)
    return v[..., :-1] if v.ndim else np.zeros(2)


def _as_int(v):
    return np.round(4 * np.asarray(v, dtype=float)).astype(np.int64)


def _as_bool(v):
    v = np.asarray(v, dtype=float)
    return v > np.median(v) if v.size else v.astype(bool)


def _as_complex(v):
    return np.asarray(v, dtype=float) + 0.5j


def _as_object(v):
    return np.asarray(v, dtype=float).astype(object)


def _as_list(v):
    return np.asarray(v).tolist()


def _as_f16(v):
    return np.asarray(v, dtype=float).astype(np.float16)


_DTYPES = {
    "int": (_as_int, EITHER), "bool": (_as_bool, EITHER), "float16": (_as_f16, EITHER),
    "complex": (_as_complex, RAISE), "object": (_as_object, EITHER),
    "list": (_as_list, EITHER),
}

# -------------------------------------------------------------------- matrices
def _nonsym(v):
    v = _float(v)
    v[..., 0, -1] += 0.5
    return v


def _nonspd(v):
    v = _float(v)
    d = v.shape[-1]
    return v - 3.0 * np.abs(v).max() * np.eye(d)


def _nonsquare(v):
    return np.asarray(v)[..., :-1]


def _nonbinary(v):
    v = _float(v)
    v.flat[0] = 0.5
    return v


def _cyclic(v):
    v = _float(v)
    d = v.shape[-1]
    v[..., np.arange(d), (np.arange(d) + 1) % d] = 1.0
    return v


def _neg_entry(v):
    v = _float(v)
    v.flat[0] = -abs(v.flat[0]) - 1.0
    return v


def _zero_sum(v):
    return np.zeros_like(_float(v))


def _few_rows(v):
    v = np.asarray(v)
    return v[: max(v.shape[1] - 1, 1)]


def _dup_col(v):
    v = _float(v)
    v[:, -1] = v[:, 0]
    return v


def _const_col(v):
    v = _float(v)
    v[:, 0] = 1.0
    return v


def _dup_entry(v):
    v = np.array(v, copy=True)
    v[-1] = v[0]
    return v


# ------------------------------------------------------------ objectives
def _nanify(out):
    if isinstance(out, tuple):
        return tuple(_nanify(o) for o in out)
    return np.full(np.shape(out), np.nan) if np.ndim(out) else np.nan


def _wrong_shape(out):
    if isinstance(out, tuple):
        return (_wrong_shape(out[0]),) + out[1:]
    return np.append(np.ravel(out), 0.0)


def _obj_nan(f):
    return lambda *a, **k: _nanify(f(*a, **k))


def _obj_nan_late(f):
    calls = [0]

    def g(*a, **k):
        calls[0] += 1
        out = f(*a, **k)
        return _nanify(out) if calls[0] > 3 else out
    return g


def _obj_raises(f):
    def g(*a, **k):
        raise UserObjectiveError("objective failed")
    return g


def _obj_shape(f):
    return lambda *a, **k: _wrong_shape(f(*a, **k))


# --------------------------------------------------------------- categories
def _const(value):
    return lambda v: value


_ARRAY = {"nan": (_put(np.nan), PROPAGATE), "inf": (_put(np.inf), PROPAGATE),
          "empty": (_empty, EITHER), **_DTYPES}
_DATA = {"nan": (_put(np.nan), RAISE), "inf": (_put(np.inf), RAISE),
         "empty": (_empty, EITHER), "ndim": (_ndim_up, RAISE), **_DTYPES}

#: category -> {kind: (mutate, default expectation)}
CATEGORIES = {
    # any-ndim real array of a log-sum-exp primitive: special values propagate
    "array": _ARRAY,
    # a 2-d (or 1-d) real array of a log-sum-exp primitive, with a partner to match
    "array2": {**_ARRAY, "ndim": (_ndim_up, RAISE), "shape": (_shape, RAISE)},
    # an axis argument
    "axis": {"out": (_const(5), RAISE), "float": (_const(0.5), RAISE)},
    # a shaped float array (data matrix, vector, stack of means)
    "data": _DATA,
    # the same, with a partner argument whose shape must match
    "data+shape": {**_DATA, "shape": (_shape, RAISE)},
    # DAG data: issue 17 item 6 (fewer rows than columns, a duplicated or constant column)
    "dagdata": {**_DATA, "fewrows": (_few_rows, EITHER), "dupcol": (_dup_col, EITHER),
                "constcol": (_const_col, EITHER)},
    # a symmetric positive-definite matrix or a stack of them, shape (..., d, d)
    "spd": {"nan": (_put(np.nan), RAISE), "inf": (_put(np.inf), RAISE),
            "nonsym": (_nonsym, RAISE), "nonspd": (_nonspd, RAISE),
            "nonsquare": (_nonsquare, RAISE), "ndim": (_ndim_up, RAISE),
            "list": (_as_list, EITHER), "complex": (_as_complex, RAISE)},
    # positive variances (diagonal covariances), shape (..., d)
    "variances": {"nan": (_put(np.nan), RAISE), "neg": (_neg_entry, RAISE),
                  "zero": (_zero_sum, RAISE), "shape": (_shape, RAISE),
                  "list": (_as_list, EITHER)},
    # a square real matrix (QUBO, weighted adjacency)
    "square": {"nan": (_put(np.nan), RAISE), "inf": (_put(np.inf), RAISE),
               "nonsquare": (_nonsquare, RAISE), "ndim": (_ndim_up, RAISE),
               **_DTYPES},
    # a 0/1 adjacency matrix of a DAG
    "adjacency": {"nan": (_put(np.nan), RAISE), "nonsquare": (_nonsquare, RAISE),
                  "nonbinary": (_nonbinary, RAISE), "cyclic": (_cyclic, RAISE),
                  "ndim": (_ndim_up, RAISE), "list": (_as_list, EITHER),
                  "float": (lambda v: _float(v), EITHER)},
    # a 0/1 matrix of states or a 0/1 adjacency that may be cyclic
    "binary": {"nan": (_put(np.nan), RAISE), "nonbinary": (_nonbinary, RAISE),
               "shape": (_shape, RAISE), "list": (_as_list, EITHER)},
    # non-negative weights summing to one, shape (..., N)
    "simplex": {"nan": (_put(np.nan), RAISE), "neg": (_neg_entry, RAISE),
                "zero": (_zero_sum, RAISE), "shape": (_shape, RAISE),
                "list": (_as_list, EITHER)},
    # a permutation of range(d) or int indices
    "indices": {"float": (lambda v: np.asarray(v) + 0.5, RAISE),
                "neg": (_neg_entry, RAISE), "dup": (_dup_entry, RAISE),
                "shape": (_shape, RAISE), "list": (_as_list, EITHER)},
    # a strictly positive float parameter
    "scale": {"zero": (_const(0.0), RAISE), "neg": (_const(-1.0), RAISE),
              "nan": (_const(np.nan), RAISE), "inf": (_const(np.inf), EITHER),
              "str": (_const("1"), RAISE)},
    # a tolerance (0 runs to maxiter)
    "tol": {"neg": (_const(-1.0), RAISE), "nan": (_const(np.nan), RAISE),
            "str": (_const("1e-8"), RAISE)},
    # an iteration cap (0: no iteration, as in SciPy)
    "maxiter": {"zero": (_const(0), EITHER), "neg": (_const(-2), RAISE),
                "float": (_const(2.5), RAISE), "str": (_const("3"), RAISE)},
    # a non-negative float parameter
    "nonneg": {"neg": (_const(-1.0), RAISE), "nan": (_const(np.nan), RAISE),
               "inf": (_const(np.inf), RAISE)},
    # a probability in (0, 1)
    "prob": {"neg": (_const(-0.1), RAISE), "over": (_const(1.5), RAISE),
             "nan": (_const(np.nan), RAISE)},
    # a time in [0, 1]
    "time": {"neg": (_const(-0.5), RAISE), "over": (_const(1.5), RAISE),
             "nan": (_const(np.nan), RAISE)},
    # a positive integer
    "count": {"zero": (_const(0), RAISE), "neg": (_const(-2), RAISE),
              "float": (_const(2.5), RAISE), "str": (_const("3"), RAISE)},
    # an interval (low, high)
    "range": {"reversed": (lambda v: tuple(v)[::-1], RAISE),
              "nan": (lambda v: (np.nan, tuple(v)[1]), RAISE),
              "length": (lambda v: tuple(v)[:1], RAISE)},
    # a sequence of (low, high) pairs, one per variable
    "bounds": {"length": (lambda v: list(v)[:-1], RAISE),
               "reversed": (lambda v: [(h, lo) for lo, h in v], RAISE),
               "nan": (lambda v: [(np.nan, h) for lo, h in v], RAISE),
               "inf": (lambda v: [(-np.inf, np.inf) for _ in v], EITHER),
               "flat": (lambda v: [lo for lo, h in v], RAISE)},
    # +-1 class labels (issue 17 item 2: 0/1, {1, 2} or continuous labels)
    "pm_labels": {"zero_one": (lambda v: (np.asarray(v) > 0).astype(float), RAISE),
                  "one_two": (lambda v: (np.asarray(v) > 0) + 1.0, RAISE),
                  "continuous": (lambda v: 0.7 * np.asarray(v), RAISE),
                  "nan": (_put(np.nan), RAISE), "shape": (_shape, RAISE)},
    # a list of node labels, one per node
    "labels": {"length": (lambda v: list(v)[:-1], RAISE),
               "dup": (lambda v: list(v)[:-1] + list(v)[:1], RAISE),
               "str": (_const("abcd"), EITHER)},
    # a registry name
    "name": {"int": (_const(3), RAISE), "empty": (_const(""), RAISE)},
    # backend= (asking for cupy without a usable GPU is an error, never a silent fallback)
    "backend": {"unknown": (_const("no-such-backend"), RAISE),
                **({} if gpu_available() else {"cupy": (_const("cupy"), RAISE)})},
    # a string option
    "choice": {"unknown": (_const("no-such-option"), RAISE), "int": (_const(3), RAISE)},
    # the user's objective
    "objective": {"nan": (_obj_nan, RUN_FAILS), "nanlate": (_obj_nan_late, EITHER_RUN),
                  "raises": (_obj_raises, USER_ERROR), "shape": (_obj_shape, RAISE),
                  "notcallable": (_const(3.0), RAISE)},
    # an optional callable (callback)
    "callable": {"notcallable": (_const(3.0), RAISE)},
    # rng: None, int seed or Generator
    "rng": {"str": (_const("seed"), RAISE), "neg": (_const(-1), RAISE)},
    # an object of a given type (a model, a graph)
    "object": {"none": (_const(None), RAISE), "wrong": (_const(np.zeros(3)), RAISE)},
    # a sequence of QUBO objectives
    "qubos": {"empty": (_const([]), RAISE),
              "mismatch": (lambda v: [v[0], np.asarray(v[1])[:-1, :-1]], RAISE),
              "nan": (lambda v: [_put(np.nan)(v[0])] + list(v[1:]), RAISE),
              "ndim": (lambda v: [np.asarray(v[0])[None]] + list(v[1:]), RAISE)},
}


def kinds(category):
    """The bad-input kinds of a category: {kind: (mutate, expectation)}."""
    return CATEGORIES[category]
