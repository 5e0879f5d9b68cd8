"""The synthetic retrieval protocol for Gaussian memories (after Tankala & Balasubramanian).

Patterns: means uniform on the sphere of radius ``sqrt(d)`` (so the mean part of the
Wasserstein sphere of radius ``sqrt(2 d)`` carries half its mass), covariance eigenvalues
uniform in ``[1, 1.1]``, eigenbases shared (commuting) or independent Haar rotations
(non-commuting). Queries: a pattern moved by exactly ``radius`` in W2, half in the mean and
half in the covariance, ``Omega = (I + E) Sigma (I + E)`` with ``E`` symmetric (so
``x -> (I + E) x`` is the optimal map and ``W2^2 = tr(E Sigma E)`` exactly).
"""
import numpy as np

from .._lib.rng import check_rng
from .._lib.validation import check_int, check_positive


def _haar(rng, d):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def synthetic_patterns(n_patterns, dim, *, commuting=True, diagonal=False,
                       eig_range=(1.0, 1.1), rng=None):
    """Random Gaussian patterns for retrieval experiments (numpy arrays).

    Parameters
    ----------
    n_patterns, dim : int
    commuting : bool
        One shared random eigenbasis for every covariance (True) or one per pattern.
    diagonal : bool
        Return covariances as variances of shape (N, d) (implies commuting).
    eig_range : (float, float)
        Covariance eigenvalues are uniform in this range.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    means : ndarray, shape (N, d)
    covs : ndarray, shape (N, d, d), or (N, d) with ``diagonal=True``

    Examples
    --------
    >>> from solvers.memory import synthetic_patterns
    >>> m, S = synthetic_patterns(4, 3, rng=0)
    >>> m.shape, S.shape
    ((4, 3), (4, 3, 3))
    """
    n = check_int(n_patterns, "n_patterns", minimum=1)
    d = check_int(dim, "dim", minimum=1)
    lo, hi = (check_positive(v, "eig_range") for v in eig_range)
    rng = check_rng(rng)
    mu = rng.standard_normal((n, d))
    mu *= np.sqrt(d) / np.linalg.norm(mu, axis=1, keepdims=True)
    lam = rng.uniform(lo, hi, size=(n, d))
    if diagonal:
        return mu, lam
    if commuting:
        U = _haar(rng, d)
        covs = (U * lam[:, None, :]) @ U.T
    else:
        U = np.stack([_haar(rng, d) for _ in range(n)])
        covs = (U * lam[:, None, :]) @ U.transpose(0, 2, 1)
    return mu, 0.5 * (covs + covs.transpose(0, 2, 1))


def perturb(means, covs, radius, *, commuting=False, rng=None):
    """Move each Gaussian by exactly ``radius`` in W2 (half the squared length each in the
    mean and in the covariance).

    Parameters
    ----------
    means : ndarray, shape (Q, d)
    covs : ndarray, shape (Q, d, d), or (Q, d) variances
    radius : float
    commuting : bool
        Keep each perturbed covariance in its pattern's eigenbasis (needed to stay on the
        commuting fast path; variances always stay diagonal).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    means, covs : ndarray
        Same shapes as the input.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.memory import synthetic_patterns, perturb
    >>> from solvers.transport import bures_wasserstein_distance
    >>> m, S = synthetic_patterns(3, 4, commuting=False, rng=0)
    >>> qm, qS = perturb(m, S, 0.5, rng=1)
    >>> np.round(bures_wasserstein_distance(qm, qS, m, S, squared=False), 10).tolist()
    [0.5, 0.5, 0.5]
    """
    rng = check_rng(rng)
    radius = check_positive(radius, "radius", strict=False)
    means, covs = np.asarray(means, dtype=float), np.asarray(covs, dtype=float)
    Q, d = means.shape
    step = rng.standard_normal((Q, d))
    step *= radius / np.sqrt(2) / np.linalg.norm(step, axis=1, keepdims=True)
    half2 = radius ** 2 / 2
    if covs.ndim == 2:
        e = rng.standard_normal((Q, d))
        e *= np.sqrt(half2 / np.sum(e * e * covs, axis=1, keepdims=True))
        if np.any(e <= -1):
            raise ValueError(f"radius {radius} is too large to perturb these variances")
        return means + step, (1 + e) ** 2 * covs
    if commuting:
        _, V = np.linalg.eigh(covs)
        E = (V * rng.standard_normal((Q, 1, d))) @ V.transpose(0, 2, 1)
    else:
        G = rng.standard_normal((Q, d, d))
        E = 0.5 * (G + G.transpose(0, 2, 1))
    scale = np.sqrt(half2 / np.einsum("qij,qjk,qki->q", E, covs, E))
    E *= scale[:, None, None]
    if np.any(np.linalg.eigvalsh(E)[:, 0] <= -1):
        raise ValueError(f"radius {radius} is too large to perturb these covariances")
    A = np.eye(d) + E
    new = A @ covs @ A
    return means + step, 0.5 * (new + new.transpose(0, 2, 1))


def retrieval_rate(memory, result, true_index, *, atol=None):
    """Fraction of queries retrieved: the stored pattern nearest (in W2) to the final state
    is the query's source pattern (and, with ``atol``, it lies within ``atol`` in W2).

    Returns
    -------
    rate : float
    w2 : ndarray, shape (Q,)
        W2 distance from each retrieved state to its source pattern.
    """
    from ..transport.bures import bures_wasserstein_distance

    def host(x):   # cupy arrays come back to the host explicitly
        return x.get() if hasattr(x, "get") else np.asarray(x)

    idx = host(true_index)
    m = host(memory.means)[idx]
    S = host(memory.covs)[idx]
    rm, rS = host(result.means), host(result.covs)
    if memory.diagonal_storage:
        z = np.concatenate([rm - m, np.sqrt(rS) - np.sqrt(S)], axis=-1)
        w2 = np.sqrt(np.sum(z * z, axis=-1))
    else:
        w2 = bures_wasserstein_distance(rm, rS, m, S, squared=False)
    ok = host(result.index) == idx
    if atol is not None:
        ok &= w2 <= atol
    return float(np.mean(ok)), w2
