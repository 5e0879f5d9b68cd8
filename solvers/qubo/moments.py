r"""Exact mean and variance of a QUBO objective under simple random assignments.

Write ``f(x) = x^T Q x + c^T x + c_0`` over binary ``x`` as

.. math:: f(x) = c_0 + a^T x + \tfrac12 x^T W x, \qquad a = \operatorname{diag}(Q) + c,
          \qquad W = Q + Q^T - 2\operatorname{diag}(Q)

(``x_i^2 = x_i`` moves the diagonal into the linear term; ``W`` is symmetric with a zero
diagonal). Every formula below costs ``O(n^2)`` for a dense ``Q`` and ``O(n + nnz)`` for a
sparse one; the paper that motivated this module (Lee, Gerlach & Piatkowski 2025) used an
``O(n^3)`` algorithm.

Independent Bernoulli(``p``) bits (``p = 1/2``: uniform on ``{0,1}^n``), with
``v = p (1 - p)`` and ``g = a + W p``:

.. math:: \mathbb E f = c_0 + a^T p + \tfrac12 p^T W p, \qquad
          \operatorname{Var} f = \sum_i v_i g_i^2 + \tfrac12 v^T (W \circ W) v.

Uniform over the Hamming slice ``{x : sum(x) = k}``: with ``r = W 1``,
``u = (r - R / (2n - 2)) / (n - 2)`` (``R = 1^T r``), ``M_{ij} = W_{ij} - u_i - u_j``
(``i != j``; ``M`` has zero row sums), ``b = a + (k - 1) u``, ``g = b - \bar b`` and the
falling-factorial ratios ``\pi_m = k^{\underline m} / n^{\underline m}``,

.. math:: \mathbb E f = c_0 + \pi_1 1^T a + \tfrac12 \pi_2 1^T W 1, \qquad
          \operatorname{Var} f = (\pi_1 - \pi_2) \lVert g\rVert^2
          + \tfrac12 (\pi_2 - 2\pi_3 + \pi_4) \lVert M \rVert_F^2 .

Both terms are sums of squares (the harmonic decomposition on the Johnson scheme), so the
variance is never the difference of two large numbers.
"""
from typing import NamedTuple

import numpy as np

from .._lib import Backend, as_float_array, check_finite
from .._lib.params import Integer, Options, Param
from ._input import VARTYPE, parse_qubo, to_binary
from .._lib.docstrings import fill_doc, fill_doc_members
from ._docs import DOCS


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["qubo_moments", "QuboMoments"]


class QuboMoments(NamedTuple):
    """Mean and variance of a QUBO objective, as returned by :func:`qubo_moments`.

    A :class:`typing.NamedTuple`, so ``mean, var = qubo_moments(Q)`` unpacks it.

    Parameters
    ----------
    mean : float or array
        Expected value of the objective (shape ``(k,)`` for a stack of ``k`` objectives).
    var : float or array
        Its variance, same shape as ``mean``.

    Attributes
    ----------
    mean : float or array
        As above.
    var : float or array
        As above.
    std : float or array
        Standard deviation, ``sqrt(var)`` (a property).

    Notes
    -----
    A plain container: the constructor validates nothing and raises nothing. It assumes
    ``var >= 0`` (which :func:`qubo_moments` guarantees), else ``std`` is NaN or complex.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo import qubo_moments
    >>> m = qubo_moments(np.array([[1.0, 2.0], [0.0, -1.0]]))   # f in {0, 1, -1, 2}
    >>> mean, var = m                                             # a named tuple
    >>> round(mean, 12), round(var, 12)
    (0.5, 1.25)
    >>> bool(np.isclose(m.std, np.sqrt(1.25)))
    True
    """

    mean: object
    var: object

    @property
    def std(self):
        """Standard deviation, ``sqrt(var)``."""
        return self.var ** 0.5


OPTIONS = Options(
    "MomentsOptions",
    Param("weight", Integer(low=0), None, "fixed Hamming weight"),
    Param("vartype", VARTYPE, None, "binary or spin variables"),
)


@fill_doc(**_DOCS)
@OPTIONS.entry
def qubo_moments(Q, c=None, offset=0.0, *, p=None, weight=None, vartype=None):
    r"""Exact mean and variance of ``f(x) = x^T Q x + c^T x + offset`` for random ``x``.

    Parameters
    ----------
    Q : array_like, scipy.sparse matrix, dict or dimod.BinaryQuadraticModel
        ``(n, n)`` matrix (not necessarily symmetric), a ``(k, n, n)`` stack of ``k``
        objectives, a dict ``{(i, j): w}``, or a BinaryQuadraticModel (its vartype, linear
        biases and offset are used).
    c : array_like, optional
        Linear coefficients, ``(n,)`` (or ``(k, n)`` for a stack).
    offset : float or array_like, optional
        Constant term (a ``(k,)`` array for a stack).
    p : float or array_like, optional
        Probability that each variable is 1 (binary) or +1 (spin); a scalar or an
        ``(n,)`` vector of independent per-variable probabilities (``(k, n)`` for a dense
        stack). Default: 1/2 (uniform on all ``2^n`` assignments).
    weight : int, optional
        Instead of independent bits, ``x`` is uniform over the assignments with exactly
        ``weight`` ones (binary) or ``+1`` spins (spin). Cannot be combined with ``p``.
    vartype : {"binary", "spin"}, optional
        Domain of the variables: ``{0, 1}`` or ``{-1, +1}``. Default ``"binary"``; a
        BinaryQuadraticModel brings its own (a vartype given with one must agree with it).

    Returns
    -------
    QuboMoments
        ``(mean, var)`` named tuple (``.std`` gives the standard deviation). Python floats
        for a single numpy or sparse objective, arrays of shape ``(k,)`` for a stack, 0-d
        arrays for other namespaces.

    Raises
    ------
    ValueError
        Non-square or non-finite ``Q``, ``c`` or ``offset`` of the wrong shape or not
        finite, unknown ``vartype``, ``p`` outside ``[0, 1]`` or of the wrong shape,
        ``weight`` outside ``[0, n]``, or both ``p`` and ``weight`` given.
    TypeError
        ``weight`` not an integer, a dict key that is not a pair ``(i, j)``, or ``c``
        given together with a BinaryQuadraticModel.

    Notes
    -----
    Spin objectives are rewritten in binary variables, ``s = 2x - 1``; then the closed forms
    in the module docstring apply (:mod:`solvers.qubo.moments`). Cost: ``O(k n^2)`` for a
    dense stack, ``O(n + nnz)`` for a sparse matrix, a dict or a BinaryQuadraticModel.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import qubo_moments
    >>> Q = np.array([[1.0, 2.0], [0.0, -1.0]])
    >>> m = qubo_moments(Q)             # f over {00, 10, 01, 11} = 0, 1, -1, 2
    >>> round(m.mean, 12), round(m.var, 12)
    (0.5, 1.25)
    >>> round(qubo_moments(Q, weight=1).var, 12)   # f in {1, -1}
    1.0
    """
    cfg = OPTIONS.validate(weight=weight, vartype=vartype)
    q = to_binary(parse_qubo(Q, c, offset, cfg.vartype))
    if p is not None and weight is not None:
        raise ValueError("give either p (independent bits) or weight (fixed Hamming weight), "
                         "not both")
    n = q.n
    if weight is not None:
        k = cfg.weight
        if k > n:
            raise ValueError(f"weight must be in [0, n] = [0, {n}], got {k}")
        out = _slice_sparse(q, k) if q.sparse else _slice_dense(q, k)
    else:
        pv = _check_p(p, q)
        out = _bernoulli_sparse(q, pv) if q.sparse else _bernoulli_dense(q, pv)
    mean, var = out
    if q.sparse or (Backend("generic", q.xp, q.xp).on_host and q.Q.ndim == 2):
        mean, var = float(mean), float(var)  # one objective on the host: Python floats
    return QuboMoments(mean, var)


def _check_p(p, q):
    xp = q.xp
    dtype = np.float64 if q.sparse else q.Q.dtype
    if p is None:
        return 0.5
    if isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, bool):
        value = float(p)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise ValueError(f"p must be in [0, 1], got {value}")
        return value
    ndim = (0, 1, 2) if q.batch_shape else (0, 1)
    pv = as_float_array(p, xp, "p", ndim=ndim, dtype=None if q.sparse else dtype)
    check_finite(pv, xp, "p")
    if pv.ndim == 0:
        value = float(pv)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {value}")
        return value
    if pv.shape[-1] != q.n or (pv.ndim == 2 and tuple(pv.shape[:-1]) != q.batch_shape):
        raise ValueError(f"p must be a scalar or have shape ({q.n},), got {tuple(pv.shape)}")
    if bool(xp.any(pv < 0)) or bool(xp.any(pv > 1)):
        raise ValueError(f"p must be in [0, 1]; got values in [{float(xp.min(pv))}, "
                         f"{float(xp.max(pv))}]")
    return pv


# ---------------------------------------------------------------------------- dense (xp)

def _dense_parts(q):
    """(a, W) of the canonical form, batched over leading axes."""
    xp, Q = q.xp, q.Q
    n = Q.shape[-1]
    d = xp.linalg.diagonal(Q)
    a = d if q.c is None else d + q.c
    off_diag = 1.0 - xp.eye(n, dtype=Q.dtype)
    W = (Q + xp.matrix_transpose(Q)) * off_diag
    return a, W, off_diag


def _matvec(xp, W, v):
    return xp.matmul(W, v[..., None])[..., 0]


def _bernoulli_dense(q, p):
    xp = q.xp
    a, W, _ = _dense_parts(q)
    if isinstance(p, float):
        pv = xp.full(a.shape, p, dtype=a.dtype)
    else:
        pv = xp.broadcast_to(p, a.shape)
    v = pv * (1.0 - pv)
    Wp = _matvec(xp, W, pv)
    g = a + Wp
    mean = q.offset + xp.sum(a * pv, axis=-1) + 0.5 * xp.sum(pv * Wp, axis=-1)
    var = xp.sum(v * g * g, axis=-1) + 0.5 * xp.sum(v * _matvec(xp, W * W, v), axis=-1)
    return mean, var


def _falling_ratio(k, n, m):
    """k (k-1) ... (k-m+1) / (n (n-1) ... (n-m+1)); 0 when k < m."""
    if k < m:
        return 0.0
    out = 1.0
    for j in range(m):
        out *= (k - j) / (n - j)
    return out


def _slice_coefs(k, n):
    p1, p2, p3, p4 = (_falling_ratio(k, n, m) for m in (1, 2, 3, 4))
    return p1, p2, p1 - p2, p2 - 2.0 * p3 + p4


def _slice_dense(q, k):
    xp = q.xp
    a, W, off_diag = _dense_parts(q)
    n = a.shape[-1]
    p1, p2, c1, c2 = _slice_coefs(k, n)
    r = xp.sum(W, axis=-1)
    R = xp.sum(r, axis=-1)
    mean = q.offset + p1 * xp.sum(a, axis=-1) + 0.5 * p2 * R
    if n > 2:
        u = (r - (R / (2 * n - 2))[..., None]) / (n - 2)
        M = (W - u[..., :, None] - u[..., None, :]) * off_diag
        m_term = 0.5 * c2 * xp.sum(M * M, axis=(-2, -1))
    else:
        u = xp.zeros_like(a)
        m_term = 0.0
    b = a + (k - 1) * u
    g = b - xp.mean(b, axis=-1, keepdims=True)
    var = c1 * xp.sum(g * g, axis=-1) + m_term
    return mean, var


# ---------------------------------------------------------------------------- sparse

class _SparseParts:
    """Quantities of the canonical form computed straight from a CSR ``Q`` in ``O(nnz)``.

    ``W = Q + Q^T - 2 diag(Q)`` is never built: ``W v = Q v + Q^T v - 2 d v`` and
    ``sum_{i<j} W_ij^2 v_i v_j = sum_{i!=j} Q_ij^2 v_i v_j + sum_{i!=j} Q_ij Q_ji v_i v_j``,
    where the last sum vanishes for a triangular ``Q`` (the usual QUBO convention) and
    equals the one before it for a symmetric ``Q``; only a general ``Q`` pays for
    ``Q o Q^T``.
    """

    def __init__(self, q):
        Q = q.Q
        if not Q.has_canonical_format:
            Q = Q.copy()
            Q.sum_duplicates()
        self.Q = Q
        self.n = n = Q.shape[0]
        self.d = Q.diagonal()
        self.a = self.d if q.c is None else self.d + np.asarray(q.c, dtype=np.float64)
        rows = np.repeat(np.arange(n), np.diff(Q.indptr))
        cols = Q.indices
        self.rows, self.cols = rows, cols
        self.triangular = bool(np.all(cols >= rows) or np.all(cols <= rows))
        self._cross = None

    def matvec(self, v):
        """W v."""
        return self.Q @ v + self.Q.T @ v - 2.0 * self.d * v

    def quad(self, v):
        """v^T Q_off v = (1/2) v^T W v."""
        return float(v @ (self.Q @ v) - np.sum(self.d * v * v))

    def _pair_weights(self):
        """Per-entry weights ``Q_ij^2 + Q_ij Q_ji`` on the off-diagonal entries (cached),
        or None when ``Q`` needs the general ``Q o Q^T`` product."""
        if self._cross is None:
            data = np.where(self.rows != self.cols, self.Q.data, 0.0)
            if self.triangular:
                self._cross = (data * data, None)
            else:
                T = self.Q.T.tocsr()
                T.sort_indices()
                if (np.array_equal(T.indptr, self.Q.indptr)
                        and np.array_equal(T.indices, self.Q.indices)):
                    self._cross = (data * (data + T.data), None)  # same pattern
                else:
                    self._cross = (data * data, self.Q.multiply(T).tocsr())
        return self._cross

    def w2(self, v):
        """sum_{i<j} W_ij^2 v_i v_j for a vector ``v`` or a scalar (same v everywhere)."""
        weights, C = self._pair_weights()
        if np.ndim(v) == 0:
            total = float(v) ** 2 * float(np.sum(weights))
            if C is not None:
                total += float(v) ** 2 * (float(C.sum()) - float(np.sum(self.d ** 2)))
            return total
        total = float(np.dot(weights, v[self.rows] * v[self.cols]))
        if C is not None:
            total += float(v @ (C @ v)) - float(np.sum(self.d ** 2 * v * v))
        return total


def _bernoulli_sparse(q, p):
    sp = _SparseParts(q)
    n = sp.n
    pv = np.full(n, p) if isinstance(p, float) else np.asarray(p, dtype=np.float64)
    v = pv * (1.0 - pv)
    g = sp.a + sp.matvec(pv)
    mean = q.offset + sp.a @ pv + sp.quad(pv)
    var = np.sum(v * g * g) + sp.w2(p * (1.0 - p) if isinstance(p, float) else v)
    return mean, var


def _slice_sparse(q, k):
    sp = _SparseParts(q)
    n = sp.n
    p1, p2, c1, c2 = _slice_coefs(k, n)
    ones = np.ones(n)
    r = sp.matvec(ones)
    R = float(r.sum())
    mean = q.offset + p1 * sp.a.sum() + 0.5 * p2 * R
    if n > 2:
        u = (r - R / (2 * n - 2)) / (n - 2)
        # ||M||_F^2 = sum_{i != j} (W_ij - u_i - u_j)^2
        #           = 2 sum_{i<j} W_ij^2 - 4 u^T r + 2 (n - 2) |u|^2 + 2 (1^T u)^2
        m_sq = 2.0 * sp.w2(1.0) - 4.0 * (u @ r) + 2.0 * (n - 2) * (u @ u) + 2.0 * u.sum() ** 2
        m_term = 0.5 * c2 * max(m_sq, 0.0)
    else:
        u = np.zeros(n)
        m_term = 0.0
    b = sp.a + (k - 1) * u
    g = b - b.mean()
    var = c1 * (g @ g) + m_term
    return mean, var


fill_doc_members(QuboMoments, **_DOCS)
