r"""The one Adam, and the step-size schedules, used by every area.

Adam (Kingma & Ba, 2015) on a list of arrays of any namespace, bias-corrected:

.. math:: m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t,\quad
          v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2,\quad
          x_t = x_{t-1} - \eta_t\,\frac{m_t/(1-\beta_1^t)}{\sqrt{v_t/(1-\beta_2^t)} + \epsilon}.

The update is written with ``xp`` operations only, so it runs on numpy, cupy and any Array
API namespace; a fused kernel may stand in for :func:`adam_update` through an area's kernel
table and is tested against it.
"""
import math

__all__ = ["Adam", "adam_update", "constant", "cosine_decay", "as_schedule"]


def adam_update(x, g, m, v, lr, beta1, beta2, eps, bias1, bias2, xp):
    """One Adam update of one array; returns ``(x_new, m_new, v_new)``.

    ``bias1 = 1 - beta1**t`` and ``bias2 = 1 - beta2**t`` are passed in so the caller
    computes them once per step for all arrays.
    """
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * (g * g)
    x = x - lr * (m / bias1) / (xp.sqrt(v / bias2) + eps)
    return x, m, v


class Adam:
    """Adam on a list of parameter arrays.

    Parameters
    ----------
    params : list of arrays
        The initial parameters (used for shapes, dtypes and the namespace only).
    lr : float or callable
        Step size, or a schedule ``lr(t)`` of the step count ``t = 0, 1, ...``.
    betas : (float, float)
        Moment decay rates, each in [0, 1).
    eps : float
        Denominator guard.
    xp : module
        The arrays' namespace.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers._lib.optim import Adam
    >>> x = [np.array([3.0])]
    >>> opt = Adam(x, lr=0.1, xp=np)
    >>> for _ in range(500):
    ...     x = opt.step(x, [2.0 * x[0]])
    >>> abs(float(x[0][0])) < 1e-2
    True
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, *, xp):
        beta1, beta2 = betas
        if not (0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0):
            raise ValueError(f"betas must lie in [0, 1), got {betas!r}")
        self.lr = as_schedule(lr, "lr")
        self.beta1, self.beta2, self.eps, self.xp = float(beta1), float(beta2), float(eps), xp
        self.m = [xp.zeros_like(p) for p in params]
        self.v = [xp.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params, grads, lr=None):
        """Return the updated parameters (new arrays); ``lr`` overrides the schedule."""
        step_size = self.lr(self.t) if lr is None else lr
        self.t += 1
        bias1 = 1.0 - self.beta1 ** self.t
        bias2 = 1.0 - self.beta2 ** self.t
        out = []
        for i, (x, g) in enumerate(zip(params, grads)):
            x, self.m[i], self.v[i] = adam_update(x, g, self.m[i], self.v[i], step_size,
                                                  self.beta1, self.beta2, self.eps,
                                                  bias1, bias2, self.xp)
            out.append(x)
        return out


def constant(value):
    """The schedule ``t -> value``."""
    return lambda t: value


def cosine_decay(lr, total, final_fraction=0.0):
    r"""Cosine decay from ``lr`` to ``final_fraction * lr`` over ``total`` steps.

    .. math:: \eta_t = \eta\,\big(f + (1 - f)\,\tfrac12(1 + \cos(\pi\,t/T))\big)
    """
    total = max(int(total), 1)

    def schedule(t):
        frac = min(t / total, 1.0)
        cosine = 0.5 * (1.0 + math.cos(math.pi * frac))
        return lr * (final_fraction + (1.0 - final_fraction) * cosine)

    return schedule


def as_schedule(value, name):
    """A callable ``t -> value``: callables pass through; numbers must be positive."""
    if callable(value):
        return value
    value = float(value)
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number or a schedule, got {value!r}")
    return constant(value)
