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
        On the sphere of radius ``sqrt(d)``.
    covs : ndarray, shape (N, d, d), or (N, d) with ``diagonal=True``
        Symmetric positive definite, eigenvalues in ``eig_range``.

    Raises
    ------
    TypeError
        Non-integer ``n_patterns`` or ``dim``, non-real ``eig_range`` entries, or an
        ``rng`` that is not None, an int or a ``numpy.random.Generator``.
    ValueError
        ``n_patterns < 1``, ``dim < 1``, ``eig_range`` entries that are not finite and
        positive or not exactly two of them, or a negative ``rng`` seed.

    Notes
    -----
    ``eig_range`` is not required to be increasing; ``numpy.random.Generator.uniform``
    accepts either order.

    References
    ----------
    .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162 (2025).

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
        Same shapes as the input; each perturbed Gaussian lies at W2 distance exactly
        ``radius`` from its source.

    Raises
    ------
    ValueError
        ``radius`` negative or not finite; ``radius`` so large that a perturbed covariance
        would not be positive definite (the map ``I + E`` must stay positive definite);
        ``means`` that is not 2-D; a negative ``rng`` seed.
    TypeError
        Non-real ``radius``, or an ``rng`` that is not None, an int or a
        ``numpy.random.Generator``.

    Notes
    -----
    ``covs`` are assumed symmetric positive definite and shaped like ``means``; this is not
    checked. The query covariance is :math:`(I + E)\\Sigma(I + E)` with :math:`E`
    symmetric, so :math:`x \\mapsto (I + E)x` is the optimal map and the covariance part
    of :math:`W_2^2` is exactly :math:`\\operatorname{tr}(E \\Sigma E) = r^2/2` [1]_.

    References
    ----------
    .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162 (2025).
    .. [2] A. Takatsu, "Wasserstein geometry of Gaussian measures", Osaka J. Math. 48
       (2011), 1005-1026.

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

    Parameters
    ----------
    memory : GaussianMemory
        The memory queried (its ``means``, ``covs`` and ``diagonal_storage`` are read).
    result : OptimizeResult
        The output of ``memory.retrieve`` for ``Q`` queries: ``means``, ``covs`` (final
        states) and ``index`` (nearest stored pattern of each final state).
    true_index : array of int, shape (Q,)
        Source pattern of each query.
    atol : float, optional
        Also require the final state to lie within ``atol`` (W2) of its source pattern.

    Returns
    -------
    rate : float
        Fraction in [0, 1].
    w2 : ndarray, shape (Q,)
        W2 distance from each retrieved state to its source pattern.

    Raises
    ------
    IndexError
        An entry of ``true_index`` that is not a valid pattern index.

    Notes
    -----
    Arrays on the GPU (CuPy) are copied to the host. ``result`` is assumed to come from
    ``memory.retrieve`` for a batch of queries; shapes are not checked beyond what numpy
    indexing and broadcasting enforce.

    References
    ----------
    .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162 (2025).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import GaussianMemory
    >>> from solvers.memory import synthetic_patterns, perturb, retrieval_rate
    >>> m, S = synthetic_patterns(4, 3, rng=0)
    >>> qm, qS = perturb(m, S, 0.3, rng=1)
    >>> mem = GaussianMemory(m, S, beta=5.0)
    >>> rate, w2 = retrieval_rate(mem, mem.retrieve(qm, qS), np.arange(4), atol=1e-2)
    >>> rate, w2.shape
    (1.0, (4,))
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
