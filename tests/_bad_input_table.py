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
``SAME``
    Documented as equivalent to the valid input: works and gives the valid call's result.

A row may override a cell's expectation, with one of these or with a check of a documented
behaviour (a callable given the result arrays, the result and the arguments).
"""
import importlib
import inspect

import numpy as np
import scipy.special

from solvers import (
    kl_dro,
    learn_dag,
    log_softmax,
    logsumexp,
    logsumexp_matmul,
    logsumexp_merge,
    logsumexp_partial,
    minimize,
    minimize_cbo,
    minimize_logsumexp,
    minimize_qubo,
    qubo_moments,
    safe_logsumexp,
    scale_qubos,
    schrodinger_bridge,
    semidual_ot,
    softmax,
)
from solvers._lib.backend import gpu_available
from solvers.dag import (
    DAGResult,
    SEMData,
    auroc,
    check_data,
    count_accuracy,
    f1_score,
    fdr,
    from_networkx,
    is_dag,
    nhd,
    order_mask,
    shd,
    simulate_dag,
    simulate_data,
    simulate_linear_sem,
    simulate_weights,
    to_networkx,
    topological_order,
    tpr,
)
from solvers.dag import available_methods as available_methods_dag
from solvers.lse import (
    dro_dataset,
    kl_dro_losses,
    kl_dro_objective,
    safe_kl_terms,
    semidual_ot_objective,
)
from solvers.memory import (
    GaussianMemory,
    VectorMemory,
    perturb,
    retrieval_rate,
    synthetic_patterns,
)
from solvers.optimize import available_methods as available_methods_opt
from solvers.optimize import register_method
from solvers.qubo import (
    QuboMoments,
    hypervolume,
    pareto_front,
    pareto_sweep,
    qubo_energy,
    scalarize,
)
from solvers.transport import (
    SchrodingerBridgeResult,
    bridge_from_parameters,
    bures_wasserstein_barycenter,
    bures_wasserstein_cdist,
    bures_wasserstein_distance,
    entropic_gaussian_plan,
    monge_map,
    sqrtm_psd,
    weighted_monge_map,
)
from solvers.transport.benchmark import (
    BenchmarkPair,
    bw2_squared,
    bw_uvp,
    cbw_uvp,
    make_pair,
)

RAISE = "raise"
EITHER = "either"
PROPAGATE = "propagate"
RUN_FAILS = "run_fails"
EITHER_RUN = "either_run"
USER_ERROR = "user_error"
SAME = "same"
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


def _singular(v):
    """Positive semi-definite with a zero eigenvalue (rank d - 1)."""
    v = _float(v)
    w, U = np.linalg.eigh(v)
    w[..., 0] = 0.0
    return (U * w[..., None, :]) @ np.swapaxes(U, -1, -2)


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


def _obj_inf(f):
    """+inf where the first coordinate is positive (an infeasible region)."""
    def g(x, *a, **k):
        out = f(x, *a, **k)
        bad = np.asarray(x)[0] > 0
        if isinstance(out, tuple):
            return (np.where(bad, np.inf, out[0]),) + out[1:]
        return np.where(bad, np.inf, out) if np.ndim(out) else (np.inf if bad else out)
    return g


def _obj_none(f):
    return lambda *a, **k: None


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
    # an array whose checks come from its option spec but whose shape must match a partner
    "shape": {"shape": (_shape, RAISE)},
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
            "singular": (_singular, EITHER),
            "nonsquare": (_nonsquare, RAISE), "ndim": (_ndim_up, RAISE),
            "list": (_as_list, EITHER), "complex": (_as_complex, RAISE)},
    # covariances whose array checks (NaN, inf, dtypes) come from an option spec: what
    # a spec cannot say; "spd_values" where the spec also fixes the number of dimensions
    "spd_spec": {"nonsym": (_nonsym, RAISE), "nonspd": (_nonspd, RAISE),
                 "singular": (_singular, EITHER), "nonsquare": (_nonsquare, RAISE),
                 "ndim": (_ndim_up, RAISE)},
    "spd_values": {"nonsym": (_nonsym, RAISE), "nonspd": (_nonspd, RAISE),
                   "singular": (_singular, EITHER), "nonsquare": (_nonsquare, RAISE)},
    # positive variances whose array checks come from an option spec
    "variances_spec": {"neg": (_neg_entry, RAISE), "zero": (_zero_sum, RAISE),
                       "shape": (_shape, RAISE)},
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
    # non-negative weights whose other checks (NaN, dtype, ndim) come from an option spec
    "weights": {"neg": (_neg_entry, RAISE), "zero": (_zero_sum, RAISE),
                "shape": (_shape, RAISE)},
    # non-negative weights summing to one, shape (..., N)
    "simplex": {"nan": (_put(np.nan), RAISE), "neg": (_neg_entry, RAISE),
                "zero": (_zero_sum, RAISE), "shape": (_shape, RAISE),
                "list": (_as_list, EITHER)},
    # simplex weights whose array checks come from an option spec: what it cannot say
    # (positivity, a partner's length, summing to one)
    "simplex_spec": {"neg": (_neg_entry, RAISE), "zero": (_zero_sum, RAISE),
                "shape": (_shape, RAISE), "unnormalised": (lambda v: 2.0 * _float(v), RAISE)},
    # real weights of any sign, one per item
    "real_weights": {"nan": (_put(np.nan), RAISE), "inf": (_put(np.inf), RAISE),
                     "shape": (_shape, RAISE), "complex": (_as_complex, RAISE),
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
                  "inf": (_obj_inf, EITHER_RUN), "none": (_obj_none, RAISE),
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


#: kinds applied to several arguments at once (Row(together=...)): zero patterns, zero
#: queries, zero samples (issue 17 item 8), where one empty argument alone is a mismatch
JOINT_KINDS = {"empty": (_empty, EITHER)}


def kinds(category):
    """The bad-input kinds of a category: {kind: (mutate, expectation)}."""
    return CATEGORIES[category]


# ------------------------------------------------------------------------------ rows
class Row:
    """One entry point: ``call(**valid())`` works; ``args`` maps argument -> category.

    ``specs`` names further (possibly private) functions the call delegates to with the
    same argument names: their option specs generate cells for this row too.
    """

    def __init__(self, id, call, valid, args=None, *, covers, out=None, reference=None,
                 check=None, overrides=None, names=None, skip=(), cast_rtol=None, backend=False,
                 together=(), specs=()):
        self.id, self.call, self.valid, self.args = id, call, valid, dict(args or {})
        if backend:  # the entry point takes backend=: test it too
            self.valid = lambda: {**valid(), "backend": "auto"}
            self.args["backend"] = "backend"
        self.covers = (covers,) if isinstance(covers, str) else tuple(covers)
        self.specs = (specs,) if isinstance(specs, str) else tuple(specs)
        self.out, self.reference, self.check = out, reference, check
        self.overrides, self.names = dict(overrides or {}), dict(names or {})
        self.skip, self.cast_rtol, self.together = set(skip), cast_rtol, tuple(together)

    def __repr__(self):
        return self.id


_R = np.random.default_rng(20261201)
_A = _R.standard_normal((3, 4))
_B = _R.uniform(0.5, 2.0, (3, 4))
_X = _R.standard_normal((16, 3))
_Y = _R.standard_normal((12, 3)) + 1.0
_M = _R.standard_normal((4, 3))
_Q2 = _R.standard_normal((2, 3))


def _spd(n, d, shift):
    G = _R.standard_normal((n, d, d))
    return G @ np.swapaxes(G, -1, -2) / d + shift * np.eye(d)


_C, _CQ = _spd(4, 3, 0.5), _spd(2, 3, 0.5)
_VAR = _R.uniform(0.5, 1.5, (2, 3))
_W4 = np.array([0.1, 0.2, 0.3, 0.4])
_QUBO = _R.standard_normal((5, 5))
_QUBO = (_QUBO + _QUBO.T) / 2
_QUBO2 = np.triu(_R.standard_normal((5, 5)))
_STATES = (_R.random((4, 5)) < 0.5).astype(float)
_DAG_W = np.array([[0, 1.5, 0, -1.0], [0, 0, 0.8, 0], [0, 0, 0, 1.2], [0, 0, 0, 0]])
_DAG_B = (_DAG_W != 0).astype(float)
_DAG_X = (np.linalg.solve(np.eye(4) - _DAG_W.T, _R.standard_normal((4, 40)))).T
_LABELS = ["a", "b", "c", "d"]


def _sphere(x):
    return float(np.sum((np.asarray(x) - 0.5) ** 2))


def _sphere_vec(x):
    return np.sum((np.asarray(x) - 0.5) ** 2, axis=0)


def _phi(x, batch):
    diff = x - batch
    return 0.5 * np.sum(diff ** 2, axis=1), diff


def _scipy_lse(a, axis=None, b=None, keepdims=False, return_sign=False, backend=None):
    with np.errstate(all="ignore"):
        if np.size(a) == 0 and b is None:
            # the empty sum is 0, its log -inf (SciPy 1.17 raises IndexError on 2-d empties)
            return [np.asarray(np.log(np.sum(np.exp(np.asarray(a, float)), axis=axis)))]
        return [np.asarray(scipy.special.logsumexp(a, axis=axis, b=b))]


def _dense_matmul(A, B, log_b=None, block_size=None, backend=None):
    with np.errstate(all="ignore"):
        Z = np.asarray(A) @ np.asarray(B)
        if log_b is not None:
            Z = Z + np.asarray(log_b)
        return [np.asarray(scipy.special.logsumexp(Z, axis=1))]


def _naive_merge(maxes, sums, axis=0):
    with np.errstate(all="ignore"):
        m, s = np.asarray(maxes), np.asarray(sums)
        return [np.log(np.sum(s * np.exp(m), axis=axis))]


def _empty_sum(nums, res, kw):
    """The log of an empty sum is -inf (SciPy's logsumexp of an empty array)."""
    assert len(nums) == 1 and np.all(np.isneginf(nums[0])), f"expected -inf, got {nums}"


def _stored(nums, res, kw):
    """A documented plain container (a named tuple that validates nothing) keeps its input."""
    assert all(getattr(res, k) is v for k, v in kw.items()), "the fields are not the input"


def _stores(args):
    return {(arg, kind): _stored for arg, cat in args.items() for kind in kinds(cat)}


_SEM_ARGS = {"X": "data+shape", "W": "square", "B": "adjacency"}


def _lse_partial_out(res):
    m, s = res
    with np.errstate(all="ignore"):
        return [np.log(np.asarray(s)) + np.asarray(m)]


def _registered(name, func, **kw):
    """``register_method``, then every registry of the router restored (no leftover name)."""
    module = importlib.import_module("solvers.optimize._minimize")
    holders = [vars(module)] + [vars(v) for v in vars(module).values()
                                if type(v).__name__ == "Router"]
    saved = [(h, k, v.copy()) for h in holders for k, v in list(h.items())
             if isinstance(v, (dict, set)) and not k.startswith("__")]
    try:
        return register_method(name, func, **kw)
    finally:
        for holder, key, value in saved:
            holder[key].clear()
            holder[key].update(value)


_BRIDGE = {}


def _bridge():
    if "b" not in _BRIDGE:
        _BRIDGE["b"] = bridge_from_parameters(np.zeros(2), _M[:2].copy(), _VAR.copy(), 0.5)
    return _BRIDGE["b"]


def _pair():
    if "p" not in _BRIDGE:
        _BRIDGE["p"] = make_pair(2, 1.0, n_components=2, rng=0)
    return _BRIDGE["p"]


def _gmem():
    return GaussianMemory(_M.copy(), _C.copy(), 1.0)


def _vmem():
    return VectorMemory(_M.copy(), 1.0)


def _dag_result():
    if "d" not in _BRIDGE:
        _BRIDGE["d"] = learn_dag(_DAG_X.copy(), method="cosmo", maxiter=20, refine=False,
                                 rng=0)
    return _BRIDGE["d"]


def _c(a):
    return np.array(a, copy=True)


def _bridge_out(res):
    return [np.asarray(res[k]) for k in ("log_alpha", "r", "S")]


def _dag_out(res):
    return [np.asarray(res["W"], dtype=float), np.asarray(res["adjacency"], dtype=float)]


def _memory_out(m):
    return [np.asarray(m.distances(_Q2.copy(), _CQ.copy()))]


def _vmemory_out(m):
    return [np.asarray(m.energy(_Q2.copy()))]


def _methods(row_id, make, cover, specs):
    """Rows for the public methods of an object built by ``make()``."""
    rows = []
    for name, valid, args, extra in specs:
        rows.append(Row(f"{row_id}.{name}", _method_call(make, name), valid, args,
                        covers=f"{cover}.{name}", **extra))
    return rows


def _qubo_sampler():
    from solvers.qubo import QUBOSampler  # imports dimod: only when these rows run

    return QUBOSampler


def _spin_bqm():
    import dimod

    return dimod.BinaryQuadraticModel({0: 0.5, 1: -1.0}, {(0, 1): 1.5, (1, 2): -2.0}, 0.0,
                                      "SPIN")


def _method_call(make, name):
    return lambda **kw: getattr(make(), name)(**kw)


def _dpdag_iter_name():
    """DP-DAG's iteration cap: ``max_iter`` today, ``maxiter`` once issue 17 item 12 lands."""
    try:
        from solvers.dag.dpdag import _learn_dpdag
        return "maxiter" if "maxiter" in inspect.signature(_learn_dpdag).parameters else "max_iter"
    except (ImportError, AttributeError):
        return "maxiter"


_DP_ITER = _dpdag_iter_name()
_QA = {"means": "shape", "covs": "spd_spec"}
# the memory methods call their queries query_means / query_covs / queries
_QNAMES = {"means": ("means", "query_means", "covs"), "covs": ("covs", "query_covs")}
_XNAMES = {"x": ("x", "queries")}


def _q_valid():
    return {"means": _c(_Q2), "covs": _c(_CQ)}


ROWS = [
    # ------------------------------------------------------------------------ lse
    # lse core: the array, flag, block_size and backend cells come from the option specs
    Row("logsumexp", logsumexp, lambda: {"a": _c(_A), "b": _c(_B), "axis": 1},
        {"axis": "axis"}, covers="solvers.lse.logsumexp", backend=True, reference=_scipy_lse),
    Row("logsumexp_plain", logsumexp, lambda: {"a": _c(_A)}, {"a": "array"},
        covers="solvers.lse.logsumexp", reference=_scipy_lse),
    Row("softmax", softmax, lambda: {"x": _c(_A), "axis": 1}, {"axis": "axis"},
        covers="solvers.lse.softmax", backend=True,
        reference=lambda x, axis=None, backend=None: [scipy.special.softmax(x, axis=axis)]),
    Row("log_softmax", log_softmax, lambda: {"x": _c(_A), "axis": 1},
        {"axis": "axis"}, covers="solvers.lse.log_softmax", backend=True,
        reference=lambda x, axis=None, backend=None: [scipy.special.log_softmax(x, axis=axis)]),
    Row("logsumexp_matmul", logsumexp_matmul,
        lambda: {"A": _c(_A), "B": _c(_B.T), "log_b": np.log(_B[:, 0]), "block_size": 2},
        {"A": "shape", "B": "shape", "log_b": "shape"},
        covers="solvers.lse.logsumexp_matmul", backend=True, reference=_dense_matmul,
        names={"B": ("B", "log_b")}),
    Row("logsumexp_partial", logsumexp_partial, lambda: {"a": _c(_A), "axis": 1},
        {"axis": "axis"}, covers="solvers.lse.logsumexp_partial",
        out=_lse_partial_out, reference=_scipy_lse),
    Row("logsumexp_merge", logsumexp_merge,
        lambda: {"maxes": _c(_A), "sums": _c(_B), "axis": 0},
        {"axis": "axis"},
        covers="solvers.lse.logsumexp_merge", reference=_naive_merge, out=_lse_partial_out),
    # --------------------------------------------------------------------- Safe-KL
    # (scalar options and arrays come from the option specs; the rows keep what a spec
    # cannot say: partner shapes, simplex weights, +-1 labels, objectives, data sources)
    Row("safe_logsumexp", safe_logsumexp,
        lambda: {"a": _c(_A), "rho": 0.1, "b": _c(_B), "axis": 1, "tol": 1e-8, "maxiter": 50},
        {"axis": "axis"}, covers="solvers.lse.safe_logsumexp", backend=True),
    Row("safe_logsumexp_plain", safe_logsumexp, lambda: {"a": _c(_A), "rho": 0.1},
        {"a": "array"}, covers="solvers.lse.safe_logsumexp",
        overrides={("a", "empty"): _empty_sum}),
    Row("safe_kl_terms", safe_kl_terms, lambda: {"values": _c(_A), "s": 0.5, "rho": 0.1},
        covers="solvers.lse.safe_kl_terms", backend=True),
    Row("minimize_logsumexp", minimize_logsumexp,
        lambda: {"phi": _phi, "x0": np.zeros(3), "data": _c(_X), "rho": 0.1, "batch_size": 4,
                 "maxiter": 10, "lr": 0.01, "estimator": "safe-kl", "optimizer": "adam",
                 "rng": 0, "callback": None},
        {"phi": "objective", "data": "data"},
        covers="solvers.lse.minimize_logsumexp", backend=True, skip={("data", "ndim")},
        names={"x0": ("x0", "phi"), "data": ("data", "phi")},
        overrides={("data", "nan"): EITHER_RUN, ("data", "inf"): EITHER_RUN}),
    Row("kl_dro", kl_dro,
        lambda: {"X": _c(_X), "y": _c(_X[:, 0]), "lam": 1.0, "l2": 0.1, "rho": 0.1,
                 "lr": 0.05, "batch_size": 4, "epochs": 1, "loss": "squared",
                 "method": "safe-kl", "x0": np.zeros(3), "rng": 0},
        {"X": "shape", "y": "shape", "x0": "shape"},
        covers="solvers.lse.kl_dro", backend=True, together=[("X", "y")],
        names={"X": ("X", "x0", "y"), "x0": ("x0", "X")}),
    Row("kl_dro_logistic", kl_dro,
        lambda: {"X": _c(_X), "y": np.where(_X[:, 0] > 0, 1.0, -1.0), "lam": 1.0,
                 "loss": "logistic", "batch_size": 4, "epochs": 1, "rng": 0},
        {"y": "pm_labels"}, covers="solvers.lse.kl_dro",
        overrides={("y", "zero_one"): SAME}),
    Row("kl_dro_objective", kl_dro_objective,
        lambda: {"theta": np.full(3, 0.2), "X": _c(_X), "y": _c(_X[:, 0]), "lam": 1.0,
                 "loss": "squared", "l2": 0.1},
        {"theta": "shape", "X": "shape", "y": "shape"},
        covers="solvers.lse.kl_dro_objective", together=[("X", "y")],
        names={"X": ("X", "theta", "y")}),
    Row("kl_dro_losses", kl_dro_losses,
        lambda: {"theta": np.full(3, 0.2), "X": _c(_X), "y": _c(_X[:, 0]), "loss": "logistic"},
        {"theta": "shape", "X": "shape", "y": "shape"},
        covers="solvers.lse.kl_dro_losses", together=[("X", "y")],
        names={"X": ("X", "theta", "y")},
        # an infinite coefficient gives margins of +inf: zero logistic loss, finite
        overrides={("theta", "inf"): EITHER}),
    Row("dro_dataset", dro_dataset, lambda: {"n": 50, "d": 2, "loss": "squared", "rng": 0},
        covers="solvers.lse.dro_dataset"),
    Row("semidual_ot", semidual_ot,
        lambda: {"X": _c(_X), "Y": _c(_Y), "epsilon": 0.5, "a": np.full(16, 1 / 16),
                 "b": np.full(12, 1 / 12), "rho": 0.1, "lr": 1.0, "method": "safe-kl",
                 "batch_size": 4, "target_batch_size": 4, "maxiter": 10, "rng": 0,
                 "x0": np.zeros(12)},
        {"X": "shape", "Y": "shape", "a": "simplex_spec", "b": "simplex_spec", "x0": "shape"},
        covers="solvers.lse.semidual_ot", backend=True, together=[("X", "a"), ("Y", "b")],
        names={"X": ("X", "Y", "a"), "Y": ("Y", "X", "b", "x0")}),
    Row("semidual_ot_objective", semidual_ot_objective,
        lambda: {"v": np.linspace(-1.0, 1.0, 12), "X": _c(_X), "Y": _c(_Y), "epsilon": 0.5,
                 "a": np.full(16, 1 / 16), "b": np.full(12, 1 / 12), "block_size": 5},
        {"v": "shape", "X": "shape", "Y": "shape", "a": "simplex_spec", "b": "simplex_spec"},
        covers="solvers.lse.semidual_ot_objective", together=[("X", "a"), ("Y", "b", "v")],
        names={"X": ("X", "Y", "a"), "Y": ("Y", "X", "b", "v")}),
    # ------------------------------------------------------------------- optimize
    Row("minimize", minimize,
        lambda: {"fun": _sphere, "x0": np.zeros(2), "method": "cbo",
                 "bounds": [(-2.0, 2.0)] * 2, "maxiter": 15, "n_particles": 10, "rng": 0,
                 "callback": None},
        {"fun": "objective", "x0": "shape", "method": "choice", "bounds": "bounds"},
        covers="solvers.optimize.minimize", specs="solvers.minimize_cbo",
        names={"x0": ("x0", "bounds"), "bounds": ("bounds", "x0")}),
    Row("minimize_anneal", minimize,
        lambda: {"fun": _c(_QUBO), "method": "anneal", "n_reads": 2, "n_sweeps": 20, "rng": 0},
        {"fun": "square", "method": "choice"}, covers="solvers.optimize.minimize",
        names={"fun": ("fun", "Q")}),
    Row("minimize_safe_kl", minimize,
        lambda: {"fun": _phi, "x0": np.zeros(3), "method": "safe-kl", "data": _c(_X),
                 "rho": 0.1, "batch_size": 4, "maxiter": 10, "rng": 0},
        {"fun": "objective"}, covers="solvers.optimize.minimize",
        specs="solvers.lse.minimize_logsumexp", names={"fun": ("fun", "phi")}),
    # minimize_cbo's options come from its spec (solvers/optimize/_cbo_config.py); written
    # here: the objective, the bounds and x0's length against them
    Row("minimize_cbo", minimize_cbo,
        lambda: {"fun": _sphere, "bounds": [(-2.0, 2.0)] * 2, "x0": np.zeros(2),
                 "n_particles": 10, "maxiter": 15, "alpha": 30.0, "sigma": 1.0, "lam": 0.4,
                 "dt": 0.01, "ess": 0.5, "noise": "anisotropic", "n_runs": 1, "rng": 0,
                 "callback": None},
        {"fun": "objective", "bounds": "bounds", "x0": "shape"},
        covers="solvers.minimize_cbo", backend=True, together=[("bounds", "x0")],
        names={"x0": ("x0", "bounds"), "bounds": ("bounds", "x0")}),
    Row("minimize_cbo_vectorized", minimize_cbo,
        lambda: {"fun": _sphere_vec, "bounds": [(-2.0, 2.0)] * 2, "vectorized": True,
                 "n_particles": 10, "maxiter": 15, "rng": 0},
        {"fun": "objective"}, covers="solvers.minimize_cbo"),
    Row("register_method", _registered,
        lambda: {"name": "bad-input-test", "func": lambda fun, x0, **o: None},
        {"name": "name", "func": "callable"}, covers="solvers.optimize.register_method"),
    Row("optimize.available_methods", available_methods_opt, dict,
        covers="solvers.optimize.available_methods",
        check=lambda res, kw: None),
    # ------------------------------------------------------------------ transport
    Row("schrodinger_bridge", schrodinger_bridge,
        lambda: {"x0": _c(_X), "x1": _c(_Y), "epsilon": 0.5, "n_components": 2,
                 "covariance": "diag", "optimizer": "lbfgs", "batch_size": 8, "maxiter": 5,
                 "validation_fraction": 0.1, "rng": 0, "callback": None},
        {"x0": "shape", "x1": "shape"},
        covers="solvers.transport.schrodinger_bridge", backend=True, together=[("x0", "x1")],
        out=_bridge_out,
        names={"x0": ("x0", "x1"), "x1": ("x1", "x0")}),
    Row("bridge_from_parameters", bridge_from_parameters,
        lambda: {"log_alpha": np.zeros(2), "r": _c(_M[:2]), "S": _c(_VAR), "epsilon": 0.5},
        {"log_alpha": "shape", "r": "shape", "S": "variances_spec"},
        covers="solvers.transport.bridge_from_parameters", backend=True,
        together=[("log_alpha", "r", "S")], out=_bridge_out,
        names={"log_alpha": ("log_alpha", "r"), "r": ("r", "S", "log_alpha")}),
    Row("bridge_from_parameters_full", bridge_from_parameters,
        lambda: {"log_alpha": np.zeros(2), "r": _c(_M[:2]), "S": _c(_CQ), "epsilon": 0.5},
        {"S": "spd"}, covers="solvers.transport.bridge_from_parameters", out=_bridge_out),
    Row("SchrodingerBridgeResult", lambda **kw: SchrodingerBridgeResult(**kw),
        lambda: {"x": np.zeros(2), "fun": 0.0}, covers="solvers.transport.SchrodingerBridgeResult"),
    *_methods("SchrodingerBridgeResult", _bridge, "solvers.transport.SchrodingerBridgeResult", [
        # the option specs of the methods say the rest (x's dtype, NaN, ndim; n_samples, t, rng)
        ("log_weights", lambda: {"x": _c(_Q2)}, {"x": "shape"}, {}),
        ("conditional_moments", lambda: {"x": _c(_Q2)}, {"x": "shape"}, {}),
        ("sample", lambda: {"x": _c(_Q2), "n_samples": 2, "rng": 0}, {"x": "shape"}, {}),
        ("drift", lambda: {"x": _c(_Q2), "t": 0.5}, {"x": "shape"}, {}),
        ("simulate", lambda: {"x": _c(_Q2), "n_steps": 4, "rng": 0}, {"x": "shape"}, {}),
        ("bridge", lambda: {"x": _c(_Q2), "t": 0.5, "rng": 0}, {"x": "shape"}, {}),
    ]),
    Row("bures_wasserstein_barycenter", bures_wasserstein_barycenter,
        lambda: {"means": _c(_M), "covs": _c(_C), "weights": _c(_W4), "maxiter": 50,
                 "tol": 1e-10},
        {"means": "shape", "covs": "spd_spec", "weights": "weights"},
        covers="solvers.transport.bures_wasserstein_barycenter", backend=True,
        together=[("means", "covs", "weights")],
        names={"means": ("means", "covs", "weights")}),
    Row("bures_wasserstein_cdist", bures_wasserstein_cdist,
        lambda: {"query_means": _c(_Q2), "query_covs": _c(_CQ), "means": _c(_M),
                 "covs": _c(_C)},
        {"query_means": "shape", "query_covs": "spd_spec", "means": "shape",
         "covs": "spd_spec"},
        covers="solvers.transport.bures_wasserstein_cdist", backend=True,
        together=[("query_means", "query_covs"), ("means", "covs")]),
    Row("bures_wasserstein_distance", bures_wasserstein_distance,
        lambda: {"m1": _c(_M[0]), "S1": _c(_C[0]), "m2": _c(_M[1]), "S2": _c(_C[1])},
        {"m1": "shape", "S1": "spd_spec", "m2": "shape", "S2": "spd_spec"},
        covers="solvers.transport.bures_wasserstein_distance"),
    Row("entropic_gaussian_plan", entropic_gaussian_plan,
        lambda: {"a": _c(_M[0]), "A": _c(_C[0]), "b": _c(_M[1]), "B": _c(_C[1]),
                 "epsilon": 0.5},
        {"a": "shape", "A": "spd_values", "b": "shape", "B": "spd_values"},
        covers="solvers.transport.entropic_gaussian_plan"),
    Row("monge_map", monge_map, lambda: {"source_covs": _c(_C), "target_covs": _c(_C[::-1])},
        {"source_covs": "spd_spec", "target_covs": "spd_spec"},
        covers="solvers.transport.monge_map",
        together=[("source_covs", "target_covs")],
        overrides={("source_covs", "ndim"): EITHER, ("target_covs", "ndim"): EITHER}),
    # sqrtm_psd is documented to symmetrise S and clip negative eigenvalues
    Row("sqrtm_psd", sqrtm_psd, lambda: {"S": _c(_C)}, {"S": "spd_spec"},
        covers="solvers.transport.sqrtm_psd", backend=True,
        overrides={("S", "nonsym"): EITHER, ("S", "nonspd"): EITHER, ("S", "ndim"): EITHER}),
    Row("weighted_monge_map", weighted_monge_map,
        lambda: {"query_covs": _c(_CQ), "covs": _c(_C), "weights": np.tile(_W4, (2, 1))},
        {"query_covs": "spd_values", "covs": "spd_values", "weights": "weights"},
        covers="solvers.transport.weighted_monge_map", backend=True,
        together=[("query_covs", "weights")],
        overrides={("weights", "zero"): EITHER}),  # documented: non-negative, sum not fixed
    # ---------------------------------------------------------- transport.benchmark
    Row("BenchmarkPair", BenchmarkPair,
        lambda: {"weights": _c(_W4), "means": _c(_M), "covariances": _c(_C), "epsilon": 1.0},
        {"weights": "weights", "means": "shape", "covariances": "spd_values"},
        covers="solvers.transport.benchmark.BenchmarkPair",
        together=[("weights", "means", "covariances")],
        out=lambda p: [p.Lambda, p.S, p.r, p.log_alpha],
        names={"means": ("means", "covariances", "weights")}),
    *_methods("BenchmarkPair", _pair, "solvers.transport.benchmark.BenchmarkPair", [
        ("bridge", dict, {}, {"out": _bridge_out}),
        ("sample_x0", lambda: {"n": 3, "rng": 0}, {"n": "count", "rng": "rng"}, {}),
        ("sample_x1", lambda: {"n": 3, "rng": 0}, {"n": "count", "rng": "rng"}, {}),
        ("sample", lambda: {"x": _c(_Q2[:, :2]), "n_samples": 2, "rng": 0}, {"x": "shape"},
         {"specs": "solvers.transport.SchrodingerBridgeResult.sample"}),
        ("conditional_moments", lambda: {"x": _c(_Q2[:, :2])}, {"x": "shape"},
         {"specs": "solvers.transport.SchrodingerBridgeResult.conditional_moments"}),
    ]),
    Row("make_pair", make_pair,
        lambda: {"dim": 2, "epsilon": 1.0, "n_components": 2, "rng": 0},
        {"rng": "rng"}, covers="solvers.transport.benchmark.make_pair",
        out=lambda p: [p.Lambda, p.S]),
    Row("bw2_squared", bw2_squared,
        lambda: {"m1": _c(_M[0]), "S1": _c(_C[0]), "m2": _c(_M[1]), "S2": _c(_C[1])},
        {"m1": "shape", "S1": "spd_spec", "m2": "shape", "S2": "spd_spec"},
        covers="solvers.transport.benchmark.bw2_squared",
        specs="solvers.transport.bures_wasserstein_distance"),
    Row("bw_uvp", bw_uvp,
        lambda: {"model": _pair().bridge(), "pair": _pair(), "n_samples": 200, "rng": 0},
        {"model": "object", "pair": "object", "n_samples": "count", "rng": "rng"},
        covers="solvers.transport.benchmark.bw_uvp"),
    Row("cbw_uvp", cbw_uvp,
        lambda: {"model": _pair().bridge(), "pair": _pair(), "x": _c(_X[:5, :2]),
                 "n_samples": 20, "rng": 0, "chunk": 2},
        {"model": "object", "pair": "object", "x": "shape"},
        covers="solvers.transport.benchmark.cbw_uvp"),
    # --------------------------------------------------------------------- memory
    Row("GaussianMemory", GaussianMemory,
        lambda: {"means": _c(_M), "covs": _c(_C), "beta": 1.0, "path": "auto", "screen": 50.0},
        {"means": "shape", "covs": "spd_spec"},
        covers="solvers.memory.GaussianMemory", backend=True, together=[("means", "covs")],
        out=_memory_out, names={"means": ("means", "covs")}),
    *_methods("GaussianMemory", _gmem, "solvers.memory.GaussianMemory", [
        (m, _q_valid, _QA, {"names": _QNAMES, "together": [("means", "covs")]})
        for m in ("distances", "energy", "weights", "nearest", "step")]),
    Row("GaussianMemory.retrieve", lambda **kw: _gmem().retrieve(**kw),
        lambda: {**_q_valid(), "maxiter": 5, "tol": 1e-9, "callback": None},
        _QA, covers="solvers.memory.GaussianMemory.retrieve", together=[("means", "covs")],
        out=lambda r: [np.asarray(r["means"]), np.asarray(r["covs"])],
        names=_QNAMES),
    Row("VectorMemory", VectorMemory,
        lambda: {"patterns": _c(_M), "beta": 1.0, "similarity": "euclidean"},
        covers="solvers.memory.VectorMemory", backend=True, out=_vmemory_out),
    *_methods("VectorMemory", _vmem, "solvers.memory.VectorMemory", [
        (m, lambda: {"x": _c(_Q2)}, {"x": "shape"}, {"names": _XNAMES})
        for m in ("energy", "weights", "step")]),
    Row("VectorMemory.retrieve", lambda **kw: _vmem().retrieve(**kw),
        lambda: {"x": _c(_Q2), "maxiter": 5, "tol": 1e-10, "callback": None},
        {"x": "shape"}, covers="solvers.memory.VectorMemory.retrieve", names=_XNAMES),
    Row("synthetic_patterns", synthetic_patterns,
        lambda: {"n_patterns": 4, "dim": 3, "eig_range": (1.0, 1.1), "rng": 0},
        {"eig_range": "range"}, covers="solvers.memory.synthetic_patterns"),
    Row("perturb", perturb,
        lambda: {"means": _c(_M), "covs": _c(_C), "radius": 0.1, "method": "exact", "rng": 0},
        {"means": "shape", "covs": "spd_spec"}, covers="solvers.memory.perturb",
        together=[("means", "covs")],
        names={"means": ("means", "covs")}),
    Row("retrieval_rate", retrieval_rate,
        lambda: {"memory": _gmem(), "result": _gmem().retrieve(_c(_M), _c(_C), maxiter=2),
                 "true_index": np.arange(4)},
        {"memory": "object", "result": "object", "true_index": "indices"},
        covers="solvers.memory.retrieval_rate", skip={("true_index", "dup")}),
    # ------------------------------------------------------------------------ dag
    Row("learn_dag_cosmo", learn_dag,
        lambda: {"X": _c(_DAG_X), "method": "cosmo", "maxiter": 20, "refine": False,
                 "lambda1": 1e-3, "rng": 0, "callback": None},
        {"X": "dagdata", "method": "choice"},
        covers="solvers.dag.learn_dag", specs="solvers.dag.cosmo.learn_cosmo",
        backend=True, out=_dag_out),
    Row("learn_dag_dpdag", learn_dag,
        lambda: {"X": _c(_DAG_X), "method": "dpdag", _DP_ITER: 10, "n_samples": 4,
                 "lr": 0.1, "prior_p": 0.1, "tau": 1.0, "rng": 0},
        {"X": "dagdata"},
        covers="solvers.dag.learn_dag", specs="solvers.dag._dpdag_learn._learn_dpdag",
        backend=True, out=_dag_out),
    Row("DAGResult", lambda **kw: DAGResult(**kw), lambda: dict(_dag_result()),
        covers="solvers.dag.DAGResult", out=_dag_out),
    Row("DAGResult.to_networkx", lambda **kw: _dag_result().to_networkx(**kw),
        lambda: {"labels": list(_LABELS)}, {"labels": "labels"},
        covers="solvers.dag.DAGResult.to_networkx", out=lambda g: [g.number_of_nodes()]),
    Row("DAGResult.is_dag", lambda: _dag_result().is_dag(), dict,
        covers="solvers.dag.DAGResult.is_dag"),
    Row("SEMData", SEMData, lambda: {"X": _c(_DAG_X), "W": _c(_DAG_W), "B": _DAG_B != 0},
        _SEM_ARGS, covers="solvers.dag.SEMData", overrides=_stores(_SEM_ARGS)),
    *[Row(name, func, lambda: {"B_true": _c(_DAG_B), "B_est": _c(_DAG_B.T)},
          {"B_true": "adjacency", "B_est": "adjacency"}, covers=f"solvers.dag.{name}",
          skip={("B_est", "cyclic"), ("B_true", "cyclic")})
      for name, func in [("count_accuracy", count_accuracy), ("f1_score", f1_score),
                         ("fdr", fdr), ("nhd", nhd), ("shd", shd), ("tpr", tpr)]],
    Row("auroc", auroc, lambda: {"B_true": _c(_DAG_B), "W_score": np.abs(_DAG_W.T) + 0.1},
        {"B_true": "adjacency", "W_score": "square"}, covers="solvers.dag.auroc",
        skip={("B_true", "cyclic")}),
    Row("check_data", check_data, lambda: {"X": _c(_DAG_X), "name": "X"}, {"X": "dagdata"},
        covers="solvers.dag.check_data"),
    Row("from_networkx", from_networkx,
        lambda: {"G": _dag_result().to_networkx(), "nodelist": [0, 1, 2, 3]},
        {"G": "object", "nodelist": "labels"}, covers="solvers.dag.from_networkx",
        overrides={("nodelist", "length"): EITHER}),  # a sub-graph, as in networkx
    Row("is_dag", is_dag, lambda: {"B": _c(_DAG_B)}, {"B": "adjacency"},
        covers="solvers.dag.is_dag",
        overrides={("B", "cyclic"): EITHER, ("B", "nonbinary"): EITHER},
        check=lambda res, kw: None),
    Row("topological_order", topological_order, lambda: {"B": _c(_DAG_B)},
        {"B": "adjacency"}, covers="solvers.dag.topological_order",  # None if cyclic
        overrides={("B", "cyclic"): EITHER, ("B", "nonbinary"): EITHER}),
    Row("order_mask", order_mask, lambda: {"order": np.array([2, 0, 3, 1])},
        {"order": "indices"}, covers="solvers.dag.order_mask"),
    Row("simulate_dag", simulate_dag, lambda: {"d": 4, "k": 1, "graph_type": "ER", "rng": 0},
        {"d": "count", "k": "count", "graph_type": "choice", "rng": "rng"},
        covers="solvers.dag.simulate_dag",
        overrides={("k", "zero"): EITHER, ("k", "float"): EITHER}),
    Row("simulate_data", simulate_data,
        lambda: {"d": 4, "n": 10, "k": 1, "graph_type": "ER", "noise_type": "gauss",
                 "noise_scale": 1.0, "rng": 0},
        {"d": "count", "n": "count", "k": "count", "graph_type": "choice",
         "noise_type": "choice", "noise_scale": "scale", "rng": "rng"},
        covers="solvers.dag.simulate_data",
        overrides={("k", "zero"): EITHER, ("k", "float"): EITHER}),
    Row("simulate_linear_sem", simulate_linear_sem,
        lambda: {"W": _c(_DAG_W), "n": 10, "noise_type": "gauss", "noise_scale": 1.0,
                 "rng": 0},
        {"W": "adjacency", "n": "count", "noise_type": "choice", "noise_scale": "scale",
         "rng": "rng"}, covers="solvers.dag.simulate_linear_sem",
        overrides={("W", "nonbinary"): EITHER}),
    Row("simulate_weights", simulate_weights, lambda: {"B": _c(_DAG_B), "rng": 0},
        {"B": "adjacency", "rng": "rng"}, covers="solvers.dag.simulate_weights"),
    Row("to_networkx", to_networkx,
        lambda: {"W": _c(_DAG_W), "threshold": 0.0, "labels": list(_LABELS)},
        {"W": "square", "threshold": "nonneg", "labels": "labels"},
        covers="solvers.dag.to_networkx", out=lambda g: [g.number_of_edges()],
        overrides={("threshold", "inf"): EITHER}),
    Row("dag.available_methods", available_methods_dag, dict,
        covers="solvers.dag.available_methods"),
    # ----------------------------------------------------------------------- qubo
    Row("QUBOSampler", lambda: _qubo_sampler()(), dict, covers="solvers.qubo.QUBOSampler"),
    Row("QUBOSampler.sample", lambda **kw: _qubo_sampler()().sample(**kw),
        lambda: {"bqm": _spin_bqm(), "num_reads": 2, "num_sweeps": 20, "seed": 0},
        covers="solvers.qubo.QUBOSampler.sample",  # the options: from the spec
        out=lambda ss: [np.asarray(ss.record.energy, dtype=float)]),
    Row("QuboMoments", QuboMoments, lambda: {"mean": 1.0, "var": 2.0},
        {"var": "nonneg"}, covers="solvers.qubo.QuboMoments",
        overrides=_stores({"var": "nonneg"})),
    Row("hypervolume", hypervolume,
        lambda: {"points": np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]),
                 "reference": np.array([2.0, 2.0])},
        {"points": "data+shape", "reference": "data+shape"},
        covers="solvers.qubo.hypervolume", names={"points": ("points", "reference")}),
    Row("minimize_qubo", minimize_qubo,
        lambda: {"Q": _c(_QUBO), "c": np.zeros(5), "n_reads": 2, "n_sweeps": 20,
                 "beta_range": (0.1, 5.0), "vartype": "binary", "method": "anneal",
                 "beta_schedule": "geometric", "x0": _c(_STATES[0]), "rng": 0},
        {"Q": "square", "c": "data+shape", "x0": "binary"},  # the options: from the spec
        covers="solvers.qubo.minimize_qubo", backend=True),
    Row("pareto_front", pareto_front,
        lambda: {"points": np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 1.0]])},
        {"points": "data"}, covers="solvers.qubo.pareto_front"),
    Row("pareto_sweep", pareto_sweep,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "weights": 3, "scaling": "variance",
                 "n_reads": 2, "n_sweeps": 20, "rng": 0},
        {"objectives": "qubos", "weights": "count"},  # the options: from the spec
        covers="solvers.qubo.pareto_sweep", overrides={("weights", "zero"): RAISE}),
    Row("qubo_energy", qubo_energy,
        lambda: {"objective": _c(_QUBO), "X": _c(_STATES), "vartype": "binary"},
        {"objective": "square", "X": "binary"}, covers="solvers.qubo.qubo_energy"),
    Row("qubo_moments", qubo_moments,
        lambda: {"Q": _c(_QUBO), "c": np.ones(5), "p": 0.3, "vartype": "binary"},
        {"Q": "square", "c": "data+shape", "p": "prob"},
        covers="solvers.qubo.qubo_moments", overrides={("Q", "ndim"): EITHER},
        out=lambda m: [np.asarray(m.mean),
                                                           np.asarray(m.var)]),
    Row("scalarize", scalarize,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "weights": np.array([0.3, 0.7])},
        {"objectives": "qubos", "weights": "real_weights"},  # documented: any sign
        covers="solvers.qubo.scalarize"),
    Row("scale_qubos", scale_qubos,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "method": "variance", "p": 0.3},
        {"objectives": "qubos", "p": "prob"}, covers="solvers.qubo.scale_qubos"),
]
