"""Input validation with messages that name the argument and say what was expected."""
import math
import numbers

import numpy as np

from .namespace import is_numpy_namespace


def as_float_array(x, xp, name, *, ndim=None, dtype=None):
    """Return ``x`` as a floating array of namespace ``xp``.

    float32 and float64 inputs keep their dtype; integer, boolean and Python inputs become
    float64 (or ``dtype`` when given). Complex input is rejected.

    Raises
    ------
    TypeError
        Complex or non-numeric input.
    ValueError
        Wrong number of dimensions.
    """
    if is_numpy_namespace(xp) and not hasattr(x, "__array_namespace__"):
        x = np.asarray(x)
    else:
        x = xp.asarray(x)
    if xp.isdtype(x.dtype, "complex floating"):
        raise TypeError(f"{name} must be real, got complex dtype {x.dtype}")
    if dtype is not None:
        x = xp.astype(x, dtype, copy=False)
    elif not xp.isdtype(x.dtype, "real floating"):
        if not xp.isdtype(x.dtype, ("integral", "bool")):
            raise TypeError(f"{name} must be numeric, got dtype {x.dtype}")
        x = xp.astype(x, xp.float64)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), "
                             f"got shape {tuple(x.shape)}")
    return x


def check_finite(x, xp, name):
    """Raise ``ValueError`` if ``x`` holds NaN or inf."""
    if not bool(xp.all(xp.isfinite(x))):
        n_nan = int(xp.sum(xp.astype(xp.isnan(x), xp.int64)))
        raise ValueError(f"{name} must be finite; it holds {n_nan} NaN value(s) "
                         f"and {int(xp.sum(xp.astype(xp.isinf(x), xp.int64)))} inf value(s)")
    return x


def check_shape(x, shape, name):
    """Raise ``ValueError`` unless ``x.shape`` matches ``shape`` (``None`` entries are free)."""
    actual = tuple(x.shape)
    ok = len(actual) == len(shape) and all(s is None or s == a for s, a in zip(shape, actual))
    if not ok:
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got {actual}")
    return x


def check_positive(value, name, *, strict=True, finite=True):
    """Check a real scalar is > 0 (or >= 0 with ``strict=False``) and return it as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if value != value or (finite and value in (float("inf"), float("-inf"))):
        raise ValueError(f"{name} must be finite, got {value}")
    if (strict and value <= 0) or (not strict and value < 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value}")
    return value


def check_int(value, name, *, minimum=None):
    """Check ``value`` is an integer (not bool) >= ``minimum`` and return it as int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_choice(value, choices, name):
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_positive_definite(S, xp, name, *, semi=False, rtol=None):
    """Check a (stack of) symmetric matrices is positive (semi-)definite.

    Symmetry is checked to ``rtol`` relative to the largest entry; definiteness by the
    smallest eigenvalue (``> 0``, or ``>= -rtol * largest`` with ``semi=True``).

    Raises
    ------
    ValueError
        Naming the first offending matrix in a stack.
    """
    if S.ndim < 2 or S.shape[-1] != S.shape[-2]:
        raise ValueError(f"{name} must be square matrices (..., d, d), got shape {tuple(S.shape)}")
    check_finite(S, xp, name)
    if math.prod(S.shape) == 0:
        return S  # an empty stack holds no matrix to check
    if rtol is None:
        rtol = 1e-5 if S.dtype == xp.float32 else 1e-10
    scale = float(xp.max(xp.abs(S)))
    scale = scale if scale > 0 else 1.0
    asym = xp.max(xp.abs(S - xp.matrix_transpose(S)))
    if float(asym) > 100 * rtol * scale:
        raise ValueError(f"{name} must be symmetric (max |S - S^T| = {float(asym):.3g})")
    eig = xp.linalg.eigvalsh(S)
    smallest = eig[..., 0]
    bound = -rtol * scale if semi else 0.0
    bad = smallest <= bound if not semi else smallest < bound
    if bool(xp.any(bad)):
        flat = xp.reshape(smallest, (-1,))
        idx = int(xp.argmin(flat))
        where = f" (matrix {idx} of the stack)" if S.ndim > 2 else ""
        kind = "positive semi-definite" if semi else "positive definite"
        raise ValueError(f"{name} must be {kind}; smallest eigenvalue "
                         f"{float(flat[idx]):.3g}{where}")
    return S


def check_callback(callback, name="callback"):
    """Check an optional callback is ``None`` or callable and return it.

    Raises
    ------
    TypeError
        ``callback`` is neither ``None`` nor callable.
    """
    if callback is not None and not callable(callback):
        raise TypeError(f"{name} must be callable or None, got {type(callback).__name__}")
    return callback


def check_axis(axis, ndim, name="axis", *, allow_tuple=True):
    """Normalize ``axis`` (``None``, an int or a tuple of ints) to a sorted tuple of
    non-negative axes of an ``ndim``-dimensional array (``None``: all axes).

    Raises
    ------
    TypeError
        ``axis`` is not ``None``, an int or (with ``allow_tuple``) a tuple of ints.
    ValueError
        An axis out of bounds, or repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    what = "None, an int or a tuple of ints" if allow_tuple else "None or an int"
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        axes = (axis,)
    elif allow_tuple and isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(f"{name} must be {what}, got {axis!r}")
    out = []
    for ax in axes:
        if isinstance(ax, bool) or not isinstance(ax, numbers.Integral):
            raise TypeError(f"{name} must be {what}, got {axis!r}")
        if not -ndim <= ax < ndim:
            raise ValueError(f"{name} {ax} is out of bounds for an array of dimension {ndim}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {name}={axis!r}")
    return tuple(sorted(out))


def promote_float16(x, xp=None):
    """Return ``x`` with a float16 dtype promoted to float32 (anything else unchanged).

    The float16 policy: Numba kernels cannot take float16, so float16 input is computed in
    float32. The log-sum-exp primitives cast their result back to float16 (as SciPy); the
    solvers (CBO, COSMO, DP-DAG, ...) return float32 results.
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return x
    if xp is None:
        return x.astype(np.float32) if dtype == np.float16 else x
    f16 = getattr(xp, "float16", None)
    return xp.astype(x, xp.float32) if f16 is not None and dtype == f16 else x
