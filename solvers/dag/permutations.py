r"""Differentiable permutation operators with hand-written backward passes.

A permutation matrix here has rows indexed by *position* and columns by *item*:
``P[k, i] = 1`` when item ``i`` is at position ``k`` (position 0 comes first). Every
operator works on any Array API namespace and on stacks of inputs (leading batch axes).
Each ``*_vjp`` function returns the forward value and a vector-Jacobian product (the
backward pass), written by hand and tested against finite differences; there is no
autodiff anywhere in the stack.

SoftSort (Prillo & Eisenschlos 2020) relaxes the permutation that sorts ``s`` in
descending order:

.. math:: \hat P_{k i} = \operatorname{softmax}_i\big(-|s_{[k]} - s_i| / \tau\big),

with :math:`s_{[k]}` the ``k``-th largest entry. Its rows are the Gibbs weights of the
items around each sorted value; as :math:`\tau \to 0` it tends to the hard permutation.

Gumbel-Top-k (Kool et al. 2019) samples an ordering from the Plackett-Luce model with
log-weights :math:`\theta`: sort :math:`s = \log\operatorname{softmax}(\theta) + g`,
:math:`g` i.i.d. standard Gumbel, in descending order. The forward value is the hard
one-hot permutation; the backward pass is the SoftSort Jacobian (straight-through).

Sinkhorn (Mena et al. 2018) normalises :math:`\exp(X / \tau)` to a doubly stochastic
matrix by alternating row and column normalisations, done in the log domain so nothing
overflows. Hungarian rounding (:func:`scipy.optimize.linear_sum_assignment`, on the host)
gives the hard permutation; row and column normalisations add constants to rows and
columns, so the rounding of the Sinkhorn output equals the maximum-weight matching of
:math:`X` itself.

References
----------
.. [1] Prillo, S. and Eisenschlos, J. "SoftSort: a continuous relaxation for the argsort
   operator." ICML 2020.
.. [2] Kool, W., van Hoof, H. and Welling, M. "Stochastic beams and where to find them:
   the Gumbel-Top-k trick for sampling sequences without replacement." ICML 2019.
.. [3] Mena, G., Belanger, D., Linderman, S. and Snoek, J. "Learning latent permutations
   with Gumbel-Sinkhorn networks." ICLR 2018.
.. [4] Charpentier, B., Kibler, S. and Günnemann, S. "Differentiable DAG sampling."
   ICLR 2022.
"""
import numpy as np

from .._lib.host import to_host
from scipy.optimize import linear_sum_assignment

from .._lib.namespace import array_namespace
from .._lib.rng import Draws
from .._lib.validation import as_float_array, check_positive, check_int, check_finite
from ..lse import log_softmax, softmax
from .._lib.docstrings import fill_doc


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = {}
_DOCS["references_1"] = """
References
----------
.. [1] S. Prillo, J. Eisenschlos, "SoftSort: a continuous relaxation for the argsort
   operator", ICML 2020.
"""
_DOCS["references_2"] = """
References
----------
.. [1] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
   with Gumbel-Sinkhorn networks", ICLR 2018.
.. [2] R. Sinkhorn, "A relationship between arbitrary positive matrices and doubly
   stochastic matrices", Annals of Mathematical Statistics 35(2):876-879, 1964.
"""
_DOCS["references_3"] = """
References
----------
.. [1] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
   with Gumbel-Sinkhorn networks", ICLR 2018.
.. [2] H. W. Kuhn, "The Hungarian method for the assignment problem", Naval Research
   Logistics Quarterly 2:83-97, 1955.
"""

__all__ = ["permutation_matrix", "soft_sort", "soft_sort_vjp", "gumbel_top_k",
           "sinkhorn", "sinkhorn_vjp", "hungarian", "gumbel_sinkhorn"]


def permutation_matrix(order, dtype=None):
    """One-hot permutation matrices from orders.

    Parameters
    ----------
    order : array of int, shape (..., k)
        ``order[..., p]`` is the item at position ``p`` (``k <= d`` positions; ``d`` is
        taken as ``k`` here).
    dtype : dtype, optional
        Floating dtype of the result (float64 by default).

    Returns
    -------
    P : array, shape (..., k, k)
        ``P[..., p, i] = 1`` iff ``order[..., p] == i``.

    Notes
    -----
    No validation, so nothing is raised on bad orders: ``order`` is assumed to hold a
    permutation of ``range(k)`` along its last axis. Repeated items give repeated
    one-hot rows and items outside ``range(k)`` give all-zero rows, silently.

    References
    ----------
    .. [1] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
       with Gumbel-Sinkhorn networks", ICLR 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import permutation_matrix
    >>> permutation_matrix(np.array([2, 0, 1])).astype(int)
    array([[0, 0, 1],
           [1, 0, 0],
           [0, 1, 0]])
    """
    xp = array_namespace(order)
    order = xp.asarray(order)
    return _onehot(order, order.shape[-1], xp, xp.float64 if dtype is None else dtype)


def _onehot(order, d, xp, dtype):
    items = xp.arange(d, dtype=order.dtype)
    return xp.astype(order[..., :, None] == items, dtype)


def _check_scores(s, name, xp, min_ndim=1):
    s = as_float_array(s, xp, name)
    if s.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), "
                         f"got shape {tuple(s.shape)}")
    check_finite(s, xp, name)
    return s


def _soft_sort_forward(s, tau, k, xp):
    """SoftSort of ``s`` (..., d): returns (P_soft (..., k, d), P_hard, diff)."""
    d = s.shape[-1]
    order = xp.argsort(s, axis=-1, descending=True, stable=True)[..., :k]
    P_hard = _onehot(order, d, xp, s.dtype)  # (..., k, d)
    s_sorted = xp.matmul(P_hard, s[..., None])[..., 0]  # (..., k)
    diff = s_sorted[..., :, None] - s[..., None, :]
    P_soft = softmax(-xp.abs(diff) / tau, axis=-1)
    return P_soft, P_hard, diff


def _soft_sort_backward(G, P_soft, P_hard, diff, tau, xp):
    """d loss / d s from d loss / d P_soft (straight-through uses the same formula)."""
    dz = P_soft * (G - xp.sum(P_soft * G, axis=-1, keepdims=True))
    t = dz * xp.sign(diff) / tau  # (..., k, d)
    grad_sorted = -xp.sum(t, axis=-1)  # d loss / d s_sorted, (..., k)
    grad = xp.sum(t, axis=-2)  # direct dependence on s_i
    return grad + xp.matmul(xp.matrix_transpose(P_hard), grad_sorted[..., None])[..., 0]


@fill_doc(**_DOCS)
def soft_sort(s, tau=1.0, *, hard=False, k=None):
    r"""SoftSort relaxation of the descending sort permutation of ``s``.

    Parameters
    ----------
    s : array, shape (..., d)
        Scores; leading axes are a batch.
    tau : float
        Temperature (> 0); smaller is closer to the hard permutation.
    hard : bool
        Return the hard one-hot permutation instead (the forward value of the
        straight-through estimator).
    k : int, optional
        Only the first ``k`` positions (rows); all ``d`` by default.

    Returns
    -------
    P : array, shape (..., k, d)
        ``P[..., p, i]``: weight of item ``i`` at position ``p``; rows sum to one.

    Raises
    ------
    ValueError
        ``tau <= 0``, NaN/inf scores, a 0-d ``s``, or ``k`` out of range
        (``k < 1`` or ``k > d``).
    TypeError
        Non-numeric or complex scores, a non-real ``tau`` or a non-integer ``k``.

    See Also
    --------
    soft_sort_vjp : the same with its backward pass.

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import soft_sort
    >>> soft_sort(np.array([0.0, 3.0, 1.0]), tau=1e-3, hard=True).astype(int)
    array([[0, 1, 0],
           [0, 0, 1],
           [1, 0, 0]])
    >>> P = soft_sort(np.array([0.0, 3.0, 1.0]), tau=1.0)
    >>> np.allclose(P.sum(axis=1), 1.0)
    True
    """
    return soft_sort_vjp(s, tau, hard=hard, k=k)[0]


@fill_doc(**_DOCS)
def soft_sort_vjp(s, tau=1.0, *, hard=False, k=None):
    r"""SoftSort and its vector-Jacobian product.

    With ``hard=True`` the forward value is the hard permutation and the backward pass is
    the SoftSort Jacobian (the straight-through estimator,
    :math:`P = P_{hard} + \hat P - \operatorname{stop\_grad}(\hat P)`).

    Parameters
    ----------
    s, tau, hard, k
        As in :func:`soft_sort`.

    Returns
    -------
    P : array, shape (..., k, d)
    vjp : callable
        ``vjp(G)`` with ``G`` of the shape of ``P`` returns ``d <G, P> / d s``, of the
        shape of ``s``.

    Raises
    ------
    ValueError
        As in :func:`soft_sort`; ``vjp(G)`` raises it when ``G`` does not have the shape
        of ``P``.
    TypeError
        Non-numeric or complex scores, a non-real ``tau`` or a non-integer ``k``.

    Notes
    -----
    With :math:`z_{pi} = -|s_{[p]} - s_i|/\tau` and :math:`\hat P = \operatorname{softmax}(z)`
    row-wise, :math:`\partial L/\partial z_{pi} = \hat P_{pi}(G_{pi} - \sum_m \hat P_{pm}
    G_{pm})`; the chain rule through :math:`|\cdot|` (subgradient 0 at 0, which is what
    central differences give) and through the sorted values
    :math:`s_{[p]} = (P_{hard} s)_p` gives the gradient.

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import soft_sort_vjp
    >>> P, vjp = soft_sort_vjp(np.array([0.3, -1.0, 2.0]), tau=0.5)
    >>> vjp(np.ones_like(P)).round(12) + 0.0  # rows sum to one: no gradient
    array([0., 0., 0.])
    """
    xp = array_namespace(s)
    s = _check_scores(s, "s", xp)
    tau = check_positive(tau, "tau")
    d = s.shape[-1]
    k = d if k is None else check_int(k, "k", minimum=1)
    if k > d:
        raise ValueError(f"k must be <= d = {d}, got {k}")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        P_soft, P_hard, diff = _soft_sort_forward(s, tau, k, xp)

    def vjp(G):
        G = xp.asarray(G)
        if tuple(G.shape) != tuple(P_soft.shape):
            raise ValueError(f"G must have shape {tuple(P_soft.shape)}, got {tuple(G.shape)}")
        return _soft_sort_backward(G, P_soft, P_hard, diff, tau, xp)

    return (P_hard if hard else P_soft), vjp


def gumbel_top_k(theta, n=None, *, tau=1.0, k=None, rng=None, hard=True, return_vjp=False,
                 return_orders=False):
    r"""Sample orderings from the Plackett-Luce model by the Gumbel-Top-k trick.

    :math:`s = \log\operatorname{softmax}(\theta) + g` with i.i.d. standard Gumbel
    :math:`g`; the descending sort of :math:`s` is an ordering with probability

    .. math:: p(\pi) = \prod_{p=1}^{d} \frac{e^{\theta_{\pi_p}}}{\sum_{q \ge p} e^{\theta_{\pi_q}}}.

    Parameters
    ----------
    theta : array, shape (d,)
        Log-weights of the items (defined up to an additive constant).
    n : int, optional
        Number of samples; ``None`` draws one and drops the batch axis.
    tau : float
        SoftSort temperature of the backward pass (and of the forward with ``hard=False``).
    k : int, optional
        Only the first ``k`` positions (sampling without replacement of ``k`` items).
    rng : None, int or numpy.random.Generator
    hard : bool
        Forward value hard (straight-through) or soft.
    return_vjp : bool
        Also return ``vjp(G) -> d <G, P> / d theta`` (summed over the samples).
    return_orders : bool
        Also return the sampled orders ``(n, k)`` (item at each position).

    Returns
    -------
    P : array, shape (n, k, d) (or (k, d) when ``n`` is None)
    orders : array of int, only with ``return_orders``
    vjp : callable, only with ``return_vjp``

    Raises
    ------
    ValueError
        ``theta`` not 1-D or not finite, ``tau <= 0``, ``n < 1``, ``k`` out of range, or
        a negative integer seed.
    TypeError
        Non-numeric or complex ``theta``, a non-integer ``n``/``k``, or an ``rng`` that
        is not None, an int or a ``numpy.random.Generator``.

    References
    ----------
    .. [1] W. Kool, H. van Hoof, M. Welling, "Stochastic beams and where to find them: the
       Gumbel-Top-k trick for sampling sequences without replacement", ICML 2019.
    .. [2] S. Prillo, J. Eisenschlos, "SoftSort: a continuous relaxation for the argsort
       operator", ICML 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import gumbel_top_k
    >>> P = gumbel_top_k(np.zeros(4), n=3, rng=0)
    >>> P.shape, bool(np.all(P.sum(axis=1) == 1) and np.all(P.sum(axis=2) == 1))
    ((3, 4, 4), True)
    """
    xp = array_namespace(theta)
    theta = _check_scores(theta, "theta", xp)
    if theta.ndim != 1:
        raise ValueError(f"theta must have shape (d,), got {tuple(theta.shape)}")
    d = theta.shape[0]
    m = 1 if n is None else check_int(n, "n", minimum=1)
    g = Draws(rng, xp).gumbel((m, d), dtype=theta.dtype)
    logp = log_softmax(theta)
    s = logp[None, :] + g
    P, vjp_s = soft_sort_vjp(s, tau, hard=hard, k=k)
    outs = [P[0, ...] if n is None else P]
    if return_orders:
        orders = xp.argsort(s, axis=-1, descending=True, stable=True)[:, :P.shape[-2]]
        outs.append(orders[0, :] if n is None else orders)
    if return_vjp:
        def vjp(G):
            G = xp.asarray(G)
            if n is None:
                G = G[None, ...]
            gs = xp.sum(vjp_s(G), axis=0)
            # back through log_softmax: d/dtheta = gs - softmax(theta) * sum(gs)
            return gs - xp.exp(logp) * xp.sum(gs)

        outs.append(vjp)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _sinkhorn_forward(log_alpha, n_iter, tau, xp):
    L = log_alpha / tau
    outs = []
    for _ in range(n_iter):
        L = log_softmax(L, axis=-1)
        outs.append(L)
        L = log_softmax(L, axis=-2)
        outs.append(L)
    return L, outs


def _sinkhorn_backward(G_L, outs, tau, xp):
    """Backward through the alternating log-normalisations; G_L = d loss / d log P."""
    g = G_L
    for step in range(len(outs) - 1, -1, -1):
        axis = -1 if step % 2 == 0 else -2
        # y = log_softmax(x): dx = dy - softmax(x) * sum(dy), softmax(x) = exp(y)
        g = g - xp.exp(outs[step]) * xp.sum(g, axis=axis, keepdims=True)
    return g / tau


@fill_doc(**_DOCS)
def sinkhorn(log_alpha, n_iter=20, tau=1.0, *, log=False):
    r"""Log-domain Sinkhorn normalisation of :math:`\exp(X/\tau)`.

    Parameters
    ----------
    log_alpha : array, shape (..., d, d)
        Scores :math:`X`.
    n_iter : int
        Number of (row, column) normalisation pairs; 20 as in Gumbel-Sinkhorn.
    tau : float
        Temperature (> 0).
    log : bool
        Return :math:`\log P` instead of :math:`P`.

    Returns
    -------
    P : array, shape (..., d, d)
        Column sums are exactly one; row sums approach one as ``n_iter`` grows.

    Raises
    ------
    ValueError
        ``log_alpha`` not at least 2-D, not square in its last two axes, or not finite;
        ``n_iter < 1`` or ``tau <= 0``.
    TypeError
        Non-numeric or complex scores, a non-real ``tau`` or a non-integer ``n_iter``.

    {{references_2}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import sinkhorn
    >>> P = sinkhorn(np.random.default_rng(0).normal(size=(4, 4)), n_iter=50)
    >>> bool(np.allclose(P.sum(axis=0), 1) and np.allclose(P.sum(axis=1), 1))
    True
    """
    return sinkhorn_vjp(log_alpha, n_iter, tau, log=log)[0]


@fill_doc(**_DOCS)
def sinkhorn_vjp(log_alpha, n_iter=20, tau=1.0, *, log=False):
    r"""Sinkhorn normalisation and its vector-Jacobian product.

    Parameters
    ----------
    log_alpha, n_iter, tau, log
        As in :func:`sinkhorn`.

    Returns
    -------
    P : array, shape (..., d, d)
    vjp : callable
        ``vjp(G)`` returns ``d <G, P> / d log_alpha`` (or ``d <G, log P> / d log_alpha``
        with ``log=True``).

    Raises
    ------
    ValueError
        ``log_alpha`` not at least 2-D, not square in its last two axes, or not finite;
        ``n_iter < 1`` or ``tau <= 0``; ``vjp(G)`` with ``G`` not of the
        shape of ``P``.
    TypeError
        Non-numeric or complex scores, a non-real ``tau`` or a non-integer ``n_iter``.

    Notes
    -----
    Each half-step is a log-softmax :math:`y = x - \operatorname{LSE}(x)` along rows or
    columns, whose backward pass is :math:`\bar x = \bar y - e^{y} \sum \bar y`; the
    iterates :math:`y` are kept (``2 n_iter`` arrays of the input's size).

    {{references_2}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import sinkhorn_vjp
    >>> P, vjp = sinkhorn_vjp(np.eye(3), n_iter=5)
    >>> vjp(np.ones((3, 3))).shape
    (3, 3)
    """
    xp = array_namespace(log_alpha)
    log_alpha = _check_scores(log_alpha, "log_alpha", xp, min_ndim=2)
    if log_alpha.shape[-1] != log_alpha.shape[-2]:
        raise ValueError(f"log_alpha must be square (..., d, d), got {tuple(log_alpha.shape)}")
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    tau = check_positive(tau, "tau")
    L, outs = _sinkhorn_forward(log_alpha, n_iter, tau, xp)
    P = xp.exp(L)

    def vjp(G):
        G = xp.asarray(G)
        if tuple(G.shape) != tuple(L.shape):
            raise ValueError(f"G must have shape {tuple(L.shape)}, got {tuple(G.shape)}")
        return _sinkhorn_backward(G if log else G * P, outs, tau, xp)

    return (L if log else P), vjp


@fill_doc(**_DOCS)
def hungarian(log_alpha):
    """Hard permutation maximising ``sum_p log_alpha[p, order[p]]`` (Hungarian rounding).

    Runs :func:`scipy.optimize.linear_sum_assignment` on the host (device arrays are
    copied explicitly) and returns one-hot matrices in the input's namespace.

    Parameters
    ----------
    log_alpha : array, shape (..., d, d)

    Returns
    -------
    P : array, shape (..., d, d)
        One-hot; ``P[..., p, i] = 1`` when item ``i`` is assigned to position ``p``.

    Raises
    ------
    ValueError
        ``log_alpha`` not at least 2-D, not square in its last two axes, or not finite.
    TypeError
        Non-numeric or complex ``log_alpha``.

    {{references_3}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import hungarian
    >>> hungarian(np.array([[0.0, 5.0], [1.0, 4.0]])).astype(int)
    array([[0, 1],
           [1, 0]])
    """
    xp = array_namespace(log_alpha)
    log_alpha = _check_scores(log_alpha, "log_alpha", xp, min_ndim=2)
    d = log_alpha.shape[-1]
    if log_alpha.shape[-2] != d:
        raise ValueError(f"log_alpha must be square (..., d, d), got {tuple(log_alpha.shape)}")
    host = to_host(log_alpha).reshape(-1, d, d)
    orders = np.empty((host.shape[0], d), dtype=np.int64)
    for b in range(host.shape[0]):
        _, cols = linear_sum_assignment(host[b], maximize=True)
        orders[b] = cols
    orders = xp.asarray(orders.reshape(tuple(log_alpha.shape[:-1])))
    return _onehot(orders, d, xp, log_alpha.dtype)


@fill_doc(**_DOCS)
def gumbel_sinkhorn(log_alpha, n=None, *, tau=1.0, n_iter=20, rng=None, hard=True,
                    return_vjp=False, noise=True):
    r"""Gumbel-Sinkhorn permutation samples with Hungarian rounding (straight-through).

    :math:`X = \log\alpha + g` with i.i.d. standard Gumbel :math:`g` (``d x d``); the soft
    sample is :func:`sinkhorn` of :math:`X`, the hard sample its Hungarian rounding (equal
    to the maximum-weight matching of :math:`X`, since the normalisations only add row and
    column constants).

    Parameters
    ----------
    log_alpha : array, shape (d, d)
        Position-by-item scores.
    n : int, optional
        Number of samples; ``None`` draws one and drops the batch axis.
    tau, n_iter
        Sinkhorn temperature and number of normalisation pairs.
    rng : None, int or numpy.random.Generator
    hard : bool
        Hard forward value (straight-through backward) or the soft matrix.
    return_vjp : bool
        Also return ``vjp(G) -> d <G, P> / d log_alpha`` (summed over the samples).
    noise : bool
        Add the Gumbel noise (``False`` gives the deterministic Sinkhorn / matching).

    Returns
    -------
    P : array, shape (n, d, d) (or (d, d) when ``n`` is None)
    vjp : callable, only with ``return_vjp``

    Raises
    ------
    ValueError
        ``log_alpha`` not of shape ``(d, d)`` or not finite, ``n < 1``, ``n_iter < 1``,
        ``tau <= 0``, or a negative integer seed.
    TypeError
        Non-numeric or complex ``log_alpha``, a non-integer ``n``/``n_iter``, or an
        ``rng`` that is not None, an int or a ``numpy.random.Generator``.

    {{references_3}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.permutations import gumbel_sinkhorn
    >>> P = gumbel_sinkhorn(np.zeros((3, 3)), n=2, rng=0)
    >>> P.shape, bool(np.all(P.sum(axis=1) == 1))
    ((2, 3, 3), True)
    """
    xp = array_namespace(log_alpha)
    log_alpha = _check_scores(log_alpha, "log_alpha", xp, min_ndim=2)
    if log_alpha.ndim != 2 or log_alpha.shape[0] != log_alpha.shape[1]:
        raise ValueError(f"log_alpha must have shape (d, d), got {tuple(log_alpha.shape)}")
    d = log_alpha.shape[0]
    m = 1 if n is None else check_int(n, "n", minimum=1)
    X = log_alpha[None, ...]
    if noise:
        X = X + Draws(rng, xp).gumbel((m, d, d), dtype=log_alpha.dtype)
    else:
        X = xp.broadcast_to(X, (m, d, d))
    P_soft, vjp_x = sinkhorn_vjp(X, n_iter, tau)
    P = hungarian(X) if hard else P_soft
    if n is None:
        P = P[0, ...]
    if not return_vjp:
        return P

    def vjp(G):
        G = xp.asarray(G)
        if n is None:
            G = G[None, ...]
        return xp.sum(vjp_x(G), axis=0)

    return P, vjp
