"""Option specs of the log-sum-exp core (``solvers._lib.params``), shared by
:mod:`solvers.lse.logsumexp` and :mod:`solvers.lse.matmul`.

- :class:`Axis`: ``None``, an int or a tuple of ints; the bounds depend on the array and are
  checked against it later (``check_axis``).
- :func:`validated`: ``Options.validate`` remembered for hashable values. Validation costs a
  few microseconds, a sizeable share of a small reduction that a solver calls in its inner
  loop; the same options recur, so each distinct set is validated once.

The arrays are declared in the specs (their bad-input cells come from there) but converted
by the functions themselves: :func:`logsumexp` follows SciPy's dtype promotion, which the
float64 conversion of ``Array`` would change (an integer ``a`` with float32 ``b`` stays
float32 on torch, for instance).
"""
import functools
import numbers

from .._lib.params import Array, BACKEND, COUNT, Constraint, FLAG, Options, Param

__all__ = ["Axis", "validated", "LSE_OPTIONS", "SOFTMAX_OPTIONS", "LOG_SOFTMAX_OPTIONS",
           "MATMUL_OPTIONS", "PARTIAL_OPTIONS", "MERGE_OPTIONS"]


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class Axis(Constraint):
    """``None``, an int or (with ``tuples``) a tuple / list of ints; returned unchanged."""

    kind = "None, int or tuple of ints"

    def __init__(self, tuples=True):
        self.tuples = tuples
        if not tuples:
            self.kind = "None or int"

    def check(self, value, name):
        if value is None or _is_int(value):
            return value
        if self.tuples and isinstance(value, (tuple, list)) and all(map(_is_int, value)):
            return value
        raise TypeError(f"{name} must be {self.kind}, got {value!r}")

    def invalid_values(self):
        bad = {"float": 0.5, "str": "0", "bool": True}
        if not self.tuples:
            bad["tuple"] = (0,)
        return bad


@functools.lru_cache(maxsize=512)
def _validated(options, items):
    return options.validate(**{name: value for name, _, value in items})


def validated(options, **values):
    """``options.validate(**values)``, remembered per distinct (type, value) set. A value
    that cannot be hashed (a list axis) is validated afresh."""
    try:
        key = tuple((name, type(value), value) for name, value in values.items())
        hash(key)
    except TypeError:
        return options.validate(**values)
    return _validated(options, key)


_REAL = Array(finite=False)      # NaN and inf propagate, as in SciPy

LSE_OPTIONS = Options(
    "LogsumexpOptions",
    Param("a", _REAL, doc="real input"),
    Param("axis", Axis(), None, "axes to reduce (None: all)"),
    Param("b", _REAL, None, "weights broadcastable to a (may be negative)"),
    Param("keepdims", FLAG, False, "keep the reduced axes with length one"),
    Param("return_sign", FLAG, False, "also return the sign of the sum"),
    Param("backend", BACKEND, "auto", "which kernels run"))


def _softmax_options(name):
    return Options(
        name,
        Param("x", _REAL, doc="real input"),
        Param("axis", Axis(), None, "axes along which the weights are normalised (None: all)"),
        Param("backend", BACKEND, "auto", "which kernels run"))


SOFTMAX_OPTIONS = _softmax_options("SoftmaxOptions")
LOG_SOFTMAX_OPTIONS = _softmax_options("LogSoftmaxOptions")

MATMUL_OPTIONS = Options(
    "LogsumexpMatmulOptions",
    Param("A", Array(ndim=2, finite=False), doc="left factor (n, k)"),
    Param("B", Array(ndim=2, finite=False), doc="right factor (k, m)"),
    Param("log_b", Array(ndim=1, finite=False), None, "log-weights of the m columns"),
    Param("block_size", COUNT, None, "tile edge (None: from the CPU caches)"),
    Param("backend", BACKEND, "auto", "which kernels run"))

PARTIAL_OPTIONS = Options(
    "LogsumexpPartialOptions",
    Param("a", _REAL, doc="real input"),
    Param("axis", Axis(), None, "axes to reduce (None: all)"))

MERGE_OPTIONS = Options(
    "LogsumexpMergeOptions",
    Param("maxes", _REAL, doc="chunk maxima, stacked along axis"),
    Param("sums", _REAL, doc="the chunks' scaled sums"),
    Param("axis", Axis(), 0, "the axis along which the chunks are stacked"))
