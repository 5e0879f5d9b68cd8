"""Bures–Wasserstein geometry of Gaussians: robust matrix square roots and W2 distances.

For Gaussians ``N(m1, S1)`` and ``N(m2, S2)``

.. math:: W_2^2 = \\|m_1 - m_2\\|^2 + \\operatorname{tr}\\big(S_1 + S_2
          - 2 (S_1^{1/2} S_2 S_1^{1/2})^{1/2}\\big).

The trace term is the squared Bures distance. Matrix square roots go through a symmetric
eigendecomposition with eigenvalues clipped at zero, so a ``-1e-16`` rounding eigenvalue
never produces NaN (POT's numpy ``sqrtm`` does).
"""
import numpy as np

from .._lib.namespace import array_namespace
from .._lib.validation import as_float_array


def _sym(S, xp):
    return 0.5 * (S + xp.matrix_transpose(S))


def sqrtm_psd(S, *, inverse=False, xp=None):
    """Square root (or inverse square root) of a stack of symmetric PSD matrices.

    Parameters
    ----------
    S : array, shape (..., d, d)
        Symmetric positive semi-definite matrices (symmetrised before use).
    inverse : bool
        Return ``S^{-1/2}``; eigenvalues are clipped to the float's tiny positive value
        first, so a singular input gives a large but finite result.

    Returns
    -------
    array, shape (..., d, d)

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import sqrtm_psd
    >>> R = sqrtm_psd(np.diag([4.0, 9.0]))
    >>> np.diag(R).tolist()
    [2.0, 3.0]
    """
    xp = array_namespace(S) if xp is None else xp
    S = as_float_array(S, xp, "S")
    lam, U = xp.linalg.eigh(_sym(S, xp))
    if inverse:
        tiny = np.finfo(np.float32 if S.dtype == xp.float32 else np.float64).tiny
        lam = xp.maximum(lam, xp.asarray(tiny, dtype=lam.dtype)) ** -0.5
    else:
        lam = xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))
    return (U * lam[..., None, :]) @ xp.matrix_transpose(U)


def bures_wasserstein_distance(m1, S1, m2, S2, *, squared=True):
    """2-Wasserstein distance between Gaussians ``N(m1, S1)`` and ``N(m2, S2)``.

    Parameters
    ----------
    m1, m2 : array, shape (..., d)
    S1, S2 : array, shape (..., d, d)
        Broadcast against each other (a stack against one Gaussian works).
    squared : bool
        Return :math:`W_2^2` (default) or :math:`W_2`.

    Returns
    -------
    array, shape (...)
        Clipped at zero (rounding can make the Bures term slightly negative).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import bures_wasserstein_distance
    >>> float(bures_wasserstein_distance(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2)))
    4.0
    """
    xp = array_namespace(m1, S1, m2, S2)
    m1, m2 = as_float_array(m1, xp, "m1"), as_float_array(m2, xp, "m2")
    S1, S2 = as_float_array(S1, xp, "S1"), as_float_array(S2, xp, "S2")
    R1 = sqrtm_psd(S1, xp=xp)
    cross = sqrtm_psd(R1 @ S2 @ R1, xp=xp)
    trace = (xp.linalg.trace(S1) + xp.linalg.trace(S2) - 2 * xp.linalg.trace(cross))
    d2 = xp.sum((m1 - m2) ** 2, axis=-1) + trace
    d2 = xp.maximum(d2, xp.zeros_like(d2))
    return d2 if squared else xp.sqrt(d2)
