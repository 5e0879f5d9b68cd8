r"""Bounds for CBO: parsing (SciPy's forms), the start box, and reflection into the box.

Bounds are hard constraints: every point CBO evaluates lies in ``[lb, ub]``. A particle
that a step moves outside is *reflected* back, coordinate by coordinate:

.. math::

   y = (x - l) \bmod 2(u - l), \qquad
   x \leftarrow l + \begin{cases} y & y \le u - l \\ 2(u - l) - y & y > u - l \end{cases}

(mirror images in a finite interval; a one-sided bound mirrors once), then clipped, so that
round-off never leaves the box. Reflection keeps the spread of the particles (projection
would pile them on the faces). ``scipy.optimize.Bounds(keep_feasible=...)`` is accepted:
since every evaluated point is feasible, ``keep_feasible=True`` is always honoured.
"""
import numpy as np

__all__ = ["parse_bounds", "reflect"]


def _from_sequence(bounds):
    if hasattr(bounds, "__array_namespace__") and not isinstance(bounds, np.ndarray):
        shape = tuple(bounds.shape)
        if len(shape) != 2 or shape[1] != 2:
            raise ValueError(f"bounds must be a sequence of (low, high) pairs, shape (d, 2), "
                             f"got shape {shape}")
        b = np.asarray([[float(bounds[i, k]) for k in range(2)] for i in range(shape[0])])
    else:
        try:
            b = np.asarray([[-np.inf if lo is None else lo, np.inf if hi is None else hi]
                            for lo, hi in bounds], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("bounds must be scipy.optimize.Bounds or a sequence of "
                             "(low, high) pairs") from None
    if b.ndim != 2 or b.shape[1] != 2:
        raise ValueError(f"bounds must be a sequence of (low, high) pairs, shape (d, 2), "
                         f"got shape {b.shape}")
    return b[:, 0], b[:, 1]


def parse_bounds(bounds, d=None):
    """``bounds`` -> ``(lb, ub)`` host float64 arrays of length ``d``, or None.

    Accepts :class:`scipy.optimize.Bounds` (scalar ``lb``/``ub`` broadcast to ``d``, the
    dimension of ``x0``, as :func:`scipy.optimize.minimize` does) or a sequence of
    ``(low, high)`` pairs (``None`` for an open side).

    Raises
    ------
    ValueError
        Malformed bounds, NaN, ``low > high``, a length other than ``d``, or infinite
        bounds without ``x0`` (the start box must be finite).
    """
    if bounds is None:
        return None
    from scipy.optimize import Bounds

    if isinstance(bounds, Bounds):
        lb = np.atleast_1d(np.asarray(bounds.lb, dtype=np.float64))
        ub = np.atleast_1d(np.asarray(bounds.ub, dtype=np.float64))
        if d is not None:
            try:
                lb, ub = np.broadcast_to(lb, (d,)), np.broadcast_to(ub, (d,))
            except ValueError:
                raise ValueError(f"bounds describe {max(lb.size, ub.size)} dimension(s) but "
                                 f"x0 has {d}") from None
        lb, ub = np.broadcast_arrays(lb, ub)
    else:
        lb, ub = _from_sequence(bounds)
    if lb.size == 0:
        raise ValueError("bounds must describe at least one dimension")
    if d is not None and lb.shape[0] != d:
        raise ValueError(f"bounds describe {lb.shape[0]} dimension(s) but x0 has {d}")
    if np.any(np.isnan(lb)) or np.any(np.isnan(ub)):
        raise ValueError("bounds must not contain NaN")
    if np.any(lb > ub) or np.any(lb == ub):
        k = int(np.argmax(lb >= ub))
        raise ValueError(f"bounds must have low < high in every dimension; dimension {k} "
                         f"has ({lb[k]}, {ub[k]})")
    if d is None and not (np.all(np.isfinite(lb)) and np.all(np.isfinite(ub))):
        raise ValueError("bounds must be finite unless x0 is given: CBO draws its start "
                         "uniformly in them")
    return np.ascontiguousarray(lb, dtype=np.float64), np.ascontiguousarray(ub, dtype=np.float64)


def reflect(X, lb, ub, xp):
    """Reflect the points ``X`` (..., d) into the box ``[lb, ub]`` (arrays of shape (d,)).

    Finite intervals use the periodic mirror above; a one-sided bound mirrors once; the
    result is clipped, so it is inside the box exactly.
    """
    width = ub - lb
    finite = xp.isfinite(width)
    one = xp.ones_like(width)
    w = xp.where(finite, width, one)
    lo = xp.where(xp.isfinite(lb), lb, xp.zeros_like(lb))
    y = xp.remainder(X - lo, 2.0 * w)
    y = xp.where(y > w, 2.0 * w - y, y)
    X = xp.where(finite, lo + y, X)
    X = xp.where(X < lb, 2.0 * lb - X, X)
    X = xp.where(X > ub, 2.0 * ub - X, X)
    return xp.minimum(xp.maximum(X, lb), ub)
