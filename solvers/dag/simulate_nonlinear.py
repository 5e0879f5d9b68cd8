r"""Nonlinear SEMs (NOTEARS / GraN-DAG style benchmarks) and the varsortability diagnostic.

Every node is ``x_j = f_j(x_pa(j)) + s_j z_j`` with ``z_j`` standard noise. The mechanism
families (``sem_type``):

- ``"mlp"``: one hidden layer of 100 sigmoid units, weights U([-2,-0.5] u [0.5,2])
  (NOTEARS, Zheng et al. 2020);
- ``"gp"``: a draw of a Gaussian process with an RBF kernel (unit length scale) on all
  parents jointly (not additive);
- ``"gp-add"``: a sum of one GP draw per parent (additive);
- ``"quadratic"``: :math:`\sum_i a_i x_i + b_i x_i^2` over the parents (additive);
- ``"additive"``: a sum over parents of ``w tanh(x)``, ``w sigmoid(2 x)`` or
  ``w x^2 / 2`` (one randomly chosen per edge; the "tanh / sigmoid / quadratic" case).

To keep every node's signal comparable to its noise whatever the depth, parents enter each
mechanism standardized (mean 0, variance 1) and ``f_j`` is rescaled to unit variance before
the noise is added (signal-to-noise 1 at ``noise_scale=1``).

References
----------
.. [1] X. Zheng, C. Dan, B. Aragam, P. Ravikumar, E. P. Xing, "Learning sparse
   nonparametric DAGs", AISTATS 2020.
.. [2] S. Lachapelle, P. Brouillard, T. Deleu, S. Lacoste-Julien, "Gradient-based neural
   DAG learning", ICLR 2020.
.. [3] A. G. Reisach, C. Seiler, S. Weichwald, "Beware of the simulated DAG! Causal
   discovery benchmarks may be easy to game", NeurIPS 2021.
"""
import numpy as np

from .._lib.rng import check_rng
from .._lib.validation import check_choice, check_int
from ._checks import NOISE_TYPES
from .graph import to_host, topological_order
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["simulate_nonlinear_sem", "varsortability", "SEM_TYPES"]

SEM_TYPES = ("mlp", "gp", "gp-add", "quadratic", "additive")


def _standardize(x):
    x = x - x.mean(axis=0)
    sd = x.std(axis=0)
    return x / np.where(sd > 0, sd, 1.0)


def _weights(rng, shape):
    return rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _gp_draw(Z, rng):
    """One draw of a zero-mean GP with RBF kernel (length 1) at the rows of ``Z``."""
    sq = np.sum(Z * Z, axis=1)
    K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T, 0.0))
    K[np.diag_indices_from(K)] += 1e-6
    return np.linalg.cholesky(K) @ rng.standard_normal(Z.shape[0])


def _mechanism(Z, sem_type, rng):
    """``f_j`` at the standardized parent values ``Z`` (n x k)."""
    n, k = Z.shape
    if sem_type == "mlp":
        W1 = _weights(rng, (k, 100))
        W2 = _weights(rng, 100)
        return (1.0 / (1.0 + np.exp(-(Z @ W1)))) @ W2
    if sem_type == "gp":
        return _gp_draw(Z, rng)
    if sem_type == "gp-add":
        return sum(_gp_draw(Z[:, [i]], rng) for i in range(k))
    if sem_type == "quadratic":
        a, b = _weights(rng, k), _weights(rng, k)
        return Z @ a + (Z * Z) @ b
    kind = rng.integers(3, size=k)
    w = _weights(rng, k)
    parts = np.where(kind == 0, np.tanh(Z), np.where(kind == 1, 1.0 / (1.0 + np.exp(-2 * Z)),
                                                      0.5 * Z * Z))
    return parts @ w


@fill_doc(**_DOCS)
def simulate_nonlinear_sem(B, n, sem_type="mlp", noise_type="gauss", noise_scale=1.0,
                           standardize=False, rng=None):
    """Samples of a nonlinear SEM ``x_j = f_j(x_pa(j)) + noise`` on the DAG ``B``.

    Parameters
    ----------
    B : array_like, shape (d, d)
        Adjacency of a DAG (nonzero ``B[i, j]`` is the edge ``i -> j``).
    n : int
        Number of samples (>= 1; ``"gp"``/``"gp-add"`` factor an n x n kernel matrix).
    sem_type : {"mlp", "gp", "gp-add", "quadratic", "additive"}
        Mechanism family, see the module notes.
    noise_type : {"gauss", "exp", "gumbel"}
        As in :func:`solvers.dag.simulate_linear_sem`.
    noise_scale : float or array_like of shape (d,)
        Noise scale per node (the mechanism output has unit variance).
    standardize : bool
        Rescale every column to mean 0, variance 1 at the end.
    {{rng_returns_x}}

    Raises
    ------
    ValueError
        ``B`` not square or cyclic, ``n < 1``, an unknown ``sem_type``/``noise_type``, or
        a negative / non-finite ``noise_scale``.
    TypeError
        ``n`` not an integer, or a bad ``rng``.

    References
    ----------
    .. [1] X. Zheng, C. Dan, B. Aragam, P. Ravikumar, E. P. Xing, "Learning sparse
       nonparametric DAGs", AISTATS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import simulate_dag
    >>> from solvers.dag.simulate_nonlinear import simulate_nonlinear_sem
    >>> B = simulate_dag(5, k=1, rng=0)
    >>> X = simulate_nonlinear_sem(B, 200, sem_type="additive", rng=0)
    >>> X.shape, bool(np.isfinite(X).all())
    ((200, 5), True)
    """
    B = np.asarray(to_host(B)) != 0
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"B must be a square matrix, got shape {B.shape}")
    order = topological_order(B)
    if order is None:
        raise ValueError("B must be the adjacency of a DAG (it has a cycle)")
    n = check_int(n, "n", minimum=1)
    sem_type = check_choice(sem_type, SEM_TYPES, "sem_type")
    noise_type = check_choice(noise_type, NOISE_TYPES, "noise_type")
    rng = check_rng(rng)
    d = B.shape[0]
    scale = np.broadcast_to(np.asarray(noise_scale, dtype=float), (d,))
    if np.any(scale < 0) or not np.all(np.isfinite(scale)):
        raise ValueError("noise_scale must be finite and >= 0")
    draw = {"gauss": rng.standard_normal, "exp": rng.exponential, "gumbel": rng.gumbel}
    N = draw[noise_type](size=(n, d)) * scale
    X = np.zeros((n, d))
    for j in order:
        pa = np.flatnonzero(B[:, j])
        if pa.size:
            f = _mechanism(_standardize(X[:, pa]), sem_type, rng)
            sd = f.std()
            X[:, j] = (f - f.mean()) / (sd if sd > 0 else 1.0)
        X[:, j] += N[:, j]
    return _standardize(X) if standardize else X


def varsortability(X, B, tol=1e-9):
    """Fraction of directed paths along which the marginal variance increases.

    For every directed path ``i -> ... -> j`` of ``B`` (counted with multiplicity, all
    lengths), compare ``var(x_i)`` with ``var(x_j)``: an increase counts 1, a tie (within
    relative ``tol``) 1/2. A value near 1 means that sorting the variables by variance
    nearly recovers the causal order, which is what least-squares / equal-variance methods
    exploit on raw simulated data; standardized or real data are usually near 0.5.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data.
    B : array_like, shape (d, d)
        Adjacency of the (true) DAG, nonzero ``B[i, j]`` the edge ``i -> j``.
    tol : float
        Relative tolerance of a tie.

    Returns
    -------
    float
        In [0, 1]; ``nan`` if ``B`` has no edge.

    Raises
    ------
    ValueError
        ``X`` not 2-D, ``B`` not square, or sizes that disagree.

    References
    ----------
    .. [1] A. G. Reisach, C. Seiler, S. Weichwald, "Beware of the simulated DAG! Causal
       discovery benchmarks may be easy to game", NeurIPS 2021.

    Examples
    --------
    >>> from solvers.dag import simulate_data
    >>> from solvers.dag.simulate_nonlinear import varsortability
    >>> X, W, B = simulate_data(d=10, n=1000, k=2, rng=0)
    >>> bool(varsortability(X, B) > 0.9)
    True
    >>> Xs = simulate_data(d=10, n=1000, k=2, rng=0, standardize=True).X
    >>> float(varsortability(Xs, B))
    0.5
    """
    X = np.asarray(to_host(X), dtype=float)
    E = (np.asarray(to_host(B)) != 0).astype(float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if E.ndim != 2 or E.shape[0] != E.shape[1] or E.shape[0] != X.shape[1]:
        raise ValueError(f"B must be square with one row per column of X, got {E.shape}")
    var = X.var(axis=0)
    ratio = var[None, :] / np.where(var > 0, var, 1e-300)[:, None]    # var_j / var_i
    up = (ratio > 1 + tol).astype(float)
    tie = (np.abs(ratio - 1) <= tol).astype(float)
    Ek, paths, good = E.copy(), 0.0, 0.0
    for _ in range(E.shape[0] - 1):
        if not Ek.any():
            break
        paths += Ek.sum()
        good += (Ek * up).sum() + 0.5 * (Ek * tie).sum()
        Ek = Ek @ E
    return float(good / paths) if paths else float("nan")
