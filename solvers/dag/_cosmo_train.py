"""COSMO's gradient search: the smooth orientation, the closed-form loss gradients and the
annealed training loop (the algorithm of :mod:`solvers.dag.cosmo`, written once against
``xp``; the fused Numba / CuPy steps stand in through the kernel table).
"""
import math

import numpy as np

from .._lib.host import to_host
from .._lib.namespace import array_namespace
from .._lib.optim import adam_update
from .._lib.results import Progress, call_callback
from ._dag_kernels import KERNELS
from .graph import order_mask
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["orientation", "cosmo_loss_grad", "train", "plain_graph", "order_from_priorities"]


def _sigmoid_xp(xp, z):
    # stable for both signs, no overflow warnings
    e = xp.exp(-xp.abs(z))
    return xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@fill_doc(**_DOCS)
def orientation(p, t, eps=1e-2):
    """The smooth orientation ``S_ij = sigmoid((p_j - p_i - eps) / t)`` with ``S_ii = 0``.

    Parameters
    ----------
    p : array, shape (d,)
        Priorities (any Array API namespace).
    t : float
        Temperature (> 0).
    eps : float
        Margin: two nodes closer than ``eps`` in priority orient neither way.

    Returns
    -------
    S : array, shape (d, d)

    Notes
    -----
    No input is validated, so nothing is raised on purpose: ``p`` is assumed to be a 1-D
    array (not a list) of a floating dtype and ``t > 0`` (``t = 0`` gives ``nan``/``inf``
    entries rather than an error).

    {{ref_cosmo}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cosmo import orientation
    >>> np.round(orientation(np.array([0.0, 1.0]), t=1e-3), 3)
    array([[0., 1.],
           [0., 0.]])
    """
    xp = array_namespace(p)
    d = p.shape[0]
    z = (p[None, :] - p[:, None] - eps) / t
    off = 1.0 - xp.eye(d, dtype=p.dtype)
    return _sigmoid_xp(xp, z) * off


@fill_doc(**_DOCS)
def cosmo_loss_grad(H, p, X, t, eps=1e-2, lambda1=0.0, lambda2=0.0, lambda_p=0.0):
    """COSMO loss and its closed-form gradients with respect to ``H`` and ``p``.

    Parameters
    ----------
    H : array, shape (d, d)
    p : array, shape (d,)
    X : array, shape (n, d)
        Data (used as given: center it first to match :func:`learn_cosmo`).
    t, eps : float
        Temperature and margin of the orientation.
    lambda1, lambda2, lambda_p : float
        Penalty weights (``l1 |H|_1 + l2 |H|_F^2 + lp |p|^2``).

    Returns
    -------
    loss : float
    grad_H : array, shape (d, d)
    grad_p : array, shape (d,)

    Notes
    -----
    No input is validated, so nothing is raised on purpose: the arrays are assumed to be
    of one namespace and floating dtype with matching shapes (a mismatch surfaces as the
    namespace's own matmul error) and ``t > 0``. The gradients are exact (closed form),
    not autodiff; ``sign(0) = 0`` is used as the subgradient of the L1 term.

    {{ref_cosmo}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cosmo import cosmo_loss_grad
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> loss, gH, gp = cosmo_loss_grad(np.ones((3, 3)), np.arange(3.0), X, t=0.5)
    >>> gH.shape, gp.shape
    ((3, 3), (3,))
    """
    xp = array_namespace(H, p, X)
    n = X.shape[0]
    S = orientation(p, t, eps)
    W = H * S
    R = X @ W - X
    G = (X.T @ R) / n
    loss = float(xp.sum(R * R)) / (2 * n)
    off = 1.0 - xp.eye(H.shape[0], dtype=H.dtype)
    Ho = H * off
    loss += lambda1 * float(xp.sum(xp.abs(Ho))) + lambda2 * float(xp.sum(Ho * Ho))
    loss += lambda_p * float(xp.sum(p * p))
    gH = (G * S + lambda1 * xp.sign(Ho) + 2.0 * lambda2 * Ho)
    M = G * H * S * (1.0 - S) / t
    gp = xp.sum(M, axis=0) - xp.sum(M, axis=1) + 2.0 * lambda_p * p
    return loss, gH, gp


# ---------------------------------------------------------------------------------------
# one optimisation step, generic (xp) version; the Numba path fuses the same arithmetic

def _step_xp(xp, G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
             state, off):
    Ho = H * off
    pen = l1 * xp.sum(xp.abs(Ho)) + l2 * xp.sum(Ho * Ho) + lp * xp.sum(p * p)
    gH = (G * S + l1 * xp.sign(Ho) + 2.0 * l2 * Ho) * off
    M = G * H * S * (1.0 - S) * inv_t
    gp = xp.sum(M, axis=0) - xp.sum(M, axis=1) + 2.0 * lp * p
    if adam:  # the shared _lib Adam update (the Numba kernel fuses the same arithmetic)
        mH, vH, mp, vp = state
        H, mH, vH = adam_update(H, gH, mH, vH, lr, b1, b2, adam_eps, bc1, bc2, xp)
        p, mp, vp = adam_update(p, gp, mp, vp, lr, b1, b2, adam_eps, bc1, bc2, xp)
        state = (mH, vH, mp, vp)
    else:
        H = H - lr * gH
        p = p - lr * gp
    return H, p, state, pen


def _init_state_xp(H, p):
    """Generic run state: the off-diagonal mask and the Adam moments."""
    xp = array_namespace(H, p)
    off = 1.0 - xp.eye(p.shape[0], dtype=H.dtype)
    return {"off": off, "adam": (xp.zeros_like(H), xp.zeros_like(H), xp.zeros_like(p),
                                 xp.zeros_like(p))}


def _orient_xp(H, p, inv_t, eps, state):
    xp = array_namespace(H, p)
    S = _sigmoid_xp(xp, (p[None, :] - p[:, None] - eps) * inv_t) * state["off"]
    return S, H * S


def _step_generic(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
                  state):
    xp = array_namespace(H, p)
    H, p, state["adam"], pen = _step_xp(xp, G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1,
                                        bc2, adam_eps, adam, state["adam"], state["off"])
    return H, p, state, pen


def _temperature(k, total, t_max, t_min):
    """Cosine annealing from t_max (k = 0) to t_min (k = total - 1)."""
    if total <= 1:
        return t_min
    c = 0.5 * (1.0 + math.cos(math.pi * k / (total - 1)))
    return t_min + (t_max - t_min) * c


def train(Xc, C, H, p, *, be, batch_size, maxiter, t_max, t_min, eps, l1, l2, lp, lr,
          optimizer, rng, callback, progress, record_every):
    """Run the COSMO optimisation from ``(H, p)``.

    ``C`` is the Gram matrix of the (centered) training data ``Xc``: full-batch steps use
    ``C`` only, minibatch steps (``batch_size`` not None) rows of ``Xc``. Returns
    ``(H, p, history, nit, stop)`` with ``stop`` None (schedule completed),
    ``"nonfinite"`` or ``"callback"``.
    """
    xp = be.xp
    adam = optimizer == "adam"
    b1, b2, adam_eps = 0.9, 0.999, 1e-8
    history = []
    half_trC = 0.5 * float(xp.sum(xp.linalg.diagonal(C)))
    state = KERNELS.get("cosmo_state", be, generic=_init_state_xp)(H, p)
    orient_k = KERNELS.get("cosmo_orient", be, generic=_orient_xp)
    step_k = KERNELS.get("cosmo_step", be, generic=_step_generic)
    batches = _Batches(Xc, batch_size, rng, xp)
    with Progress(maxiter, desc="cosmo", enabled=progress) as bar:
        for k in range(maxiter):
            t = _temperature(k, maxiter, t_max, t_min)
            S, W = orient_k(H, p, 1.0 / t, eps, state)
            G, data_loss = batches.gradient(C, W, half_trC)
            H, p, state, pen = step_k(G, H, p, S, 1.0 / t, l1, l2, lp, lr, b1, b2,
                                      1.0 - b1 ** (k + 1), 1.0 - b2 ** (k + 1), adam_eps,
                                      adam, state)
            if (k % record_every == 0) or k == maxiter - 1 or callback is not None:
                loss = data_loss() + float(pen)
                if not math.isfinite(loss):
                    history.append(loss)
                    return H, p, history, k + 1, "nonfinite"
                if (k % record_every == 0) or k == maxiter - 1:
                    history.append(loss)
                    bar.update(k + 1 - bar.count, loss=loss, t=t)  # ends at maxiter
                if call_callback(callback, x=p, H=H, priorities=p, fun=loss, nit=k + 1,
                                 temperature=t):
                    return H, p, history, k + 1, "callback"
    return H, p, history, maxiter, None


class _Batches:
    """The data term's gradient ``dL/dW``: full batch on the Gram matrix, or minibatches
    of rows drawn without replacement (a new permutation per pass)."""

    def __init__(self, Xc, batch_size, rng, xp):
        self.Xc, self.b, self.rng, self.xp = Xc, batch_size, rng, xp
        self.perm, self.pos = None, Xc.shape[0]

    def gradient(self, C, W, half_trC):
        """``(G, data_loss)``: the gradient and a callable giving the data term."""
        xp = self.xp
        if self.b is None:
            CW = C @ W
            return CW - C, lambda: (half_trC - float(xp.sum(C * W))
                                    + 0.5 * float(xp.sum(W * CW)))
        n = self.Xc.shape[0]
        if self.pos + self.b > n:
            self.perm = xp.asarray(self.rng.permutation(n))
            self.pos = 0
        Xb = xp.take(self.Xc, self.perm[self.pos:self.pos + self.b], axis=0)
        self.pos += self.b
        R = Xb @ W - Xb
        return (Xb.T @ R) / self.b, lambda: 0.5 * float(xp.sum(R * R)) / self.b


def order_from_priorities(p_host):
    """Ascending priorities, ties broken by node index (explicit and deterministic)."""
    return np.argsort(p_host, kind="stable")


def plain_graph(H, p, t_min, eps, threshold):
    """The paper's graph: |H * S(t_min)| > threshold, restricted to the priority order."""
    Hh = np.asarray(to_host(H), dtype=float)
    ph = np.asarray(to_host(p), dtype=float)
    S = np.asarray(to_host(orientation(ph, t_min, eps)))
    order = order_from_priorities(ph)
    W = Hh * S * order_mask(order)
    W[np.abs(W) <= threshold] = 0.0
    return W, order
