"""The synthetic retrieval protocol for Gaussian memories (after Tankala & Balasubramanian).

Patterns: means uniform on the sphere of radius ``sqrt(d)`` (so the mean part of the
Wasserstein sphere of radius ``sqrt(2 d)`` carries half its mass), covariance eigenvalues
uniform in ``[1, 1.1]``, eigenbases shared (commuting) or independent Haar rotations
(non-commuting). Queries: a pattern moved by exactly ``radius`` in W2, half in the mean and
half in the covariance, ``Omega = (I + E) Sigma (I + E)`` with ``E`` symmetric (so
``x -> (I + E) x`` is the optimal map and ``W2^2 = tr(E Sigma E)`` exactly).

Two variants reproduce the authors' public code (github.com/chandantankala/DDAM,
``utils.py``): ``synthetic_patterns(..., on_sphere=True)`` rescales each spectrum to trace
``d`` so every pattern lies exactly on the W2 sphere of radius ``sqrt(2 d)`` around the
Dirac mass at 0, and ``perturb(..., method="authors")`` moves the mean by ``r/sqrt(2)`` and
adds a small random positive semi-definite matrix to the covariance. Neither enforces a
separation between patterns; ``min_separation`` (ours, not the paper's) does.
"""
import numpy as np

from .._lib.backend import resolve_backend
from .._lib.host import to_host
from .._lib.params import (COUNT, FLAG, NONE, NONNEGATIVE, POSITIVE, SEED, Array, Choice,
                           Options, Param)
from .._lib.rng import check_rng
from ..transport.bures import bures_wasserstein_distance
from ..transport.bures_kernels import check_covariances
from .gaussian import GaussianMemory

PATTERNS_OPTIONS = Options(
    "SyntheticPatternsOptions",
    Param("n_patterns", COUNT, doc="number of patterns N"),
    Param("dim", COUNT, doc="dimension d"),
    Param("commuting", FLAG, True, "one shared eigenbasis"),
    Param("diagonal", FLAG, False, "variances (N, d) instead of matrices"),
    Param("on_sphere", FLAG, False, "rescale each spectrum to trace d"),
    Param("min_separation", (POSITIVE, NONE), None, "least squared W2 between patterns"),
    Param("rng", SEED, None, "random numbers"))

PERTURB_OPTIONS = Options(
    "PerturbOptions",
    Param("means", Array(ndim=2), doc="means (Q, d)"),
    Param("covs", Array(), doc="covariances (Q, d, d) or variances (Q, d)"),
    Param("radius", NONNEGATIVE, doc="W2 length of the move"),
    Param("commuting", FLAG, False, "keep each covariance in its pattern's eigenbasis"),
    Param("method", Choice("exact", "authors"), "exact", "how the Gaussians move"),
    Param("rng", SEED, None, "random numbers"))

RATE_OPTIONS = Options(
    "RetrievalRateOptions",
    Param("atol", (NONNEGATIVE, NONE), None, "W2 tolerance to the source pattern"))


def _check_range(value, name):
    """A pair ``(low, high)`` of positive finite floats with ``low <= high``."""
    try:
        pair = tuple(value)
    except TypeError:
        raise TypeError(f"{name} must be a pair (low, high), got "
                        f"{type(value).__name__}") from None
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (low, high), got {len(pair)} value(s)")
    lo, hi = (POSITIVE.check(v, name) for v in pair)
    if lo > hi:
        raise ValueError(f"{name} must have low <= high, got ({lo}, {hi})")
    return lo, hi


def _check_perturb_input(means, covs):
    """Means (Q, d) and covariances (Q, d, d) or variances (Q, d), validated, as float64
    numpy arrays."""
    means, covs = PERTURB_OPTIONS.arrays(resolve_backend("numpy", np), means=means, covs=covs)
    means = means.astype(np.float64, copy=False)
    diagonal = covs.ndim == 2
    return means, check_covariances(means, covs, np, diagonal=diagonal, dtype=np.float64)


def _haar(rng, d):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


@PATTERNS_OPTIONS.entry
def synthetic_patterns(n_patterns, dim, *, commuting=True, diagonal=False,
                       eig_range=(1.0, 1.1), on_sphere=False, min_separation=None,
                       rng=None):
    r"""Random Gaussian patterns for retrieval experiments (numpy arrays).

    Means :math:`\mu_i` are uniform on the sphere :math:`\|\mu\| = \sqrt d`; covariances are
    :math:`\Sigma_i = U_i \operatorname{diag}(\lambda_i) U_i^\top` with :math:`\lambda_{ik}`
    uniform in ``eig_range`` and :math:`U_i` Haar distributed (one shared :math:`U` when
    ``commuting``).

    Parameters
    ----------
    n_patterns, dim : int
    commuting : bool
        One shared random eigenbasis for every covariance (True) or one per pattern.
    diagonal : bool
        Return covariances as variances of shape (N, d) (implies commuting).
    eig_range : (float, float)
        Covariance eigenvalues are uniform in this range, ``0 < low <= high``.
    on_sphere : bool
        Rescale each spectrum to :math:`\operatorname{tr}\Sigma_i = d`, as the authors'
        code does, so that :math:`W_2^2(X_i, \delta_0) = \|\mu_i\|^2 + \operatorname{tr}
        \Sigma_i = 2d` exactly: every pattern lies on the Wasserstein sphere of radius
        :math:`\sqrt{2d}`. The eigenvalues then leave ``eig_range`` slightly (about
        [0.95, 1.05] for the default range). Default False: eigenvalues stay in
        ``eig_range``, traces vary by about :math:`\pm 0.5\%`; the two choices retrieve
        alike because the separation between patterns comes almost entirely from the
        means (see Notes).
    min_separation : float, optional
        Ours, not the paper's: draw patterns one at a time and reject any candidate closer
        than ``min_separation`` in *squared* W2 to a pattern already kept (random
        sequential packing), so :math:`\min_{i \ne j} W_2^2(X_i, X_j) \ge` ``min_separation``.
        Default None: no rejection, the paper's setting.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    means : ndarray, shape (N, d)
        On the sphere of radius ``sqrt(d)``.
    covs : ndarray, shape (N, d, d), or (N, d) with ``diagonal=True``
        Symmetric positive definite, eigenvalues in ``eig_range`` (rescaled with
        ``on_sphere``).

    Raises
    ------
    TypeError
        Non-integer ``n_patterns`` or ``dim``, an ``eig_range`` that is not a sequence or
        has non-real entries, a non-real ``min_separation``, or an ``rng`` that is not
        None, an int or a ``numpy.random.Generator``.
    ValueError
        ``n_patterns < 1``, ``dim < 1``, ``eig_range`` entries that are not finite and
        positive, not exactly two of them or in decreasing order, ``min_separation`` not
        finite and positive, or a negative ``rng`` seed.
    RuntimeError
        ``min_separation`` so large that ``n_patterns`` patterns were not placed within
        ``100 n_patterns + 1000`` candidates.

    Notes
    -----
    *Why a separation matters.* For two patterns at squared distance :math:`\Delta` (equal
    covariances, means :math:`\pm a`, :math:`\Delta = 4a^2`) the retrieval map on the line
    through them is :math:`x \mapsto a \tanh(2\beta a x)`; its midpoint is a stable fixed
    point, and the only one, as long as :math:`2\beta a^2 = \beta\Delta/2 < 1`. So a
    pattern whose nearest neighbour is closer than :math:`W_2^2 = 2/\beta` is not a fixed
    point: every query started near it drifts to the mixture. With means uniform on the
    sphere of radius :math:`\sqrt{10}` in :math:`d = 10`, about 7% of N = 1000 patterns
    have such a neighbour at :math:`\beta = 1`, which caps retrieval near 93-95% whatever
    the algorithm. The sufficient condition for the pattern itself to attract (the map's
    Jacobian there, :math:`2\beta\,\mathrm{Cov}_p(\mu)`, below 1) is
    :math:`2\beta\sum_{j} \Delta_{ij} e^{-\beta \Delta_{ij}} < 1`; ``min_separation =
    4/beta`` gives :math:`2 \cdot 4 e^{-4} = 0.15` per neighbour at the minimal gap.

    The authors' commuting sampler draws :math:`d-1` eigenvalues in ``eig_range`` and sets
    the last so the spectrum sums to :math:`d`, rejecting until it also falls in the
    range; with the default range [1, 1.1] that has probability zero (the sum of d values
    each at least 1 equals d only if all are 1), so ``on_sphere`` rescales instead, for
    both the commuting and non-commuting cases.

    References
    ----------
    .. [1] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162 (2025); code at
       github.com/chandantankala/DDAM (``utils.py``).
    .. [2] H. Ramsauer et al., "Hopfield networks is all you need", ICLR 2021 (fixed
       points and separation of modern Hopfield networks).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.memory import synthetic_patterns
    >>> m, S = synthetic_patterns(4, 3, rng=0)
    >>> m.shape, S.shape
    ((4, 3), (4, 3, 3))
    >>> m, S = synthetic_patterns(5, 3, on_sphere=True, rng=0)
    >>> np.allclose((m ** 2).sum(1) + np.trace(S, axis1=1, axis2=2), 6.0)
    True
    >>> m, v = synthetic_patterns(30, 5, diagonal=True, min_separation=2.0, rng=0)
    >>> D = ((m[:, None] - m[None]) ** 2).sum(-1) + ((np.sqrt(v)[:, None]
    ...                                              - np.sqrt(v)[None]) ** 2).sum(-1)
    >>> bool(D[~np.eye(30, dtype=bool)].min() >= 2.0)
    True
    """
    cfg = PATTERNS_OPTIONS.validate(n_patterns=n_patterns, dim=dim, commuting=commuting,
                                    diagonal=diagonal, on_sphere=on_sphere,
                                    min_separation=min_separation, rng=rng)
    n, d = cfg.n_patterns, cfg.dim
    lo, hi = _check_range(eig_range, "eig_range")
    rng = check_rng(cfg.rng)
    if cfg.min_separation is None:
        mu = _sphere_means(rng, n, d)
        lam = _spectra(rng, n, d, lo, hi, cfg.on_sphere)
        if cfg.diagonal:
            return mu, lam
        if cfg.commuting:
            return mu, _rotated(_haar(rng, d), lam)
        return mu, _rotated(np.stack([_haar(rng, d) for _ in range(n)]), lam)
    return _separated(n, d, lo, hi, cfg.commuting or cfg.diagonal, cfg.diagonal,
                      cfg.on_sphere, cfg.min_separation, rng)


def _sphere_means(rng, k, d):
    """k means uniform on the sphere of radius sqrt(d)."""
    mu = rng.standard_normal((k, d))
    return mu * (np.sqrt(d) / np.linalg.norm(mu, axis=1, keepdims=True))


def _spectra(rng, k, d, lo, hi, on_sphere):
    """k spectra uniform in [lo, hi], rescaled to trace d with ``on_sphere``."""
    lam = rng.uniform(lo, hi, size=(k, d))
    return lam * (d / lam.sum(axis=1, keepdims=True)) if on_sphere else lam


def _rotated(U, lam):
    """Symmetrised ``U diag(lam) U^T`` for one shared basis (d, d) or one per row."""
    covs = (U * lam[..., None, :]) @ np.swapaxes(U, -1, -2)
    return 0.5 * (covs + np.swapaxes(covs, -1, -2))


def _separated(n, d, lo, hi, shared, diagonal, on_sphere, gap, rng):
    """Random sequential packing: keep a candidate only if its squared W2 distance to every
    kept pattern is at least ``gap`` (the mean part alone decides most pairs, since
    ``W2^2 >= |mu - mu'|^2``; the Bures term is computed only for the rest)."""
    U = _haar(rng, d) if shared and not diagonal else None
    mu, lam = np.empty((n, d)), np.empty((n, d))
    covs = None if shared else np.empty((n, d, d))
    kept, tried, budget = 0, 0, 100 * n + 1000
    while kept < n:
        if tried >= budget:
            raise RuntimeError(f"min_separation={gap}: placed only {kept} of {n} patterns "
                               f"in dimension {d} after {tried} candidates")
        tried += 1
        m = _sphere_means(rng, 1, d)[0]
        l = _spectra(rng, 1, d, lo, hi, on_sphere)[0]
        S = None if shared else _rotated(_haar(rng, d), l)
        dm2 = np.sum((mu[:kept] - m) ** 2, axis=1)
        close = np.flatnonzero(dm2 < gap)
        if close.size:
            if shared:
                w2 = dm2[close] + np.sum((np.sqrt(lam[close]) - np.sqrt(l)) ** 2, axis=1)
            else:
                w2 = bures_wasserstein_distance(m, S, mu[close], covs[close], squared=True)
            if np.any(w2 < gap):
                continue
        mu[kept], lam[kept] = m, l
        if not shared:
            covs[kept] = S
        kept += 1
    if diagonal:
        return mu, lam
    return mu, (_rotated(U, lam) if shared else covs)


@PERTURB_OPTIONS.entry
def perturb(means, covs, radius, *, commuting=False, method="exact", rng=None):
    """Move each Gaussian by exactly ``radius`` in W2 (half the squared length each in the
    mean and in the covariance), or as the authors' code does (``method="authors"``).

    Parameters
    ----------
    means : ndarray, shape (Q, d)
    covs : ndarray, shape (Q, d, d), or (Q, d) variances
    radius : float
    commuting : bool
        Keep each perturbed covariance in its pattern's eigenbasis (needed to stay on the
        commuting fast path; variances always stay diagonal).
    method : {"exact", "authors"}
        ``"exact"`` (default): W2 distance exactly ``radius`` (see Notes). ``"authors"``:
        the perturbation of the authors' code (``perturb_gaussian`` in ``utils.py``): the
        mean moves by ``radius / sqrt(2)`` in a uniform random direction, and the
        covariance becomes :math:`\\Sigma + 0.1\\,P` with :math:`P = G G^\\top` scaled to
        :math:`\\operatorname{tr} P = r^2/2` (:math:`G` standard Gaussian; with
        ``commuting`` or variances, :math:`P` is diagonal in the pattern's eigenbasis
        with entries :math:`g_k^2`, to stay on the fast path). Its W2 length is below
        ``radius``: the mean part is :math:`r/\\sqrt2` and the covariance part at most
        :math:`\\|0.1 P\\|_F / (2\\sqrt{\\lambda_{\\min}(\\Sigma)}) \\le 0.025\\, r^2 /
        \\sqrt{\\lambda_{\\min}}` (along :math:`\\Sigma + tP` the smallest eigenvalue only
        grows, so the derivative of the matrix square root has Frobenius gain at most
        :math:`1/(2\\sqrt{\\lambda_{\\min}})`, and
        :math:`B(\\Sigma_1, \\Sigma_2) \\le \\|\\Sigma_1^{1/2} - \\Sigma_2^{1/2}\\|_F`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    means, covs : ndarray
        Same shapes as the input; with ``method="exact"`` each perturbed Gaussian lies at
        W2 distance exactly ``radius`` from its source.

    Raises
    ------
    ValueError
        ``radius`` negative or not finite; ``radius`` so large that a perturbed covariance
        would not be positive definite (the map ``I + E`` must stay positive definite);
        ``means`` that is not 2-D or not finite; ``covs`` not of shape (Q, d, d) or
        (Q, d), not finite, or not symmetric positive definite (positive variances); an
        unknown ``method``; a negative ``rng`` seed. The message names the argument.
    TypeError
        Non-real ``radius``, complex or non-numeric ``means`` / ``covs``, or an ``rng``
        that is not None, an int or a ``numpy.random.Generator``.

    Notes
    -----
    The query covariance is :math:`(I + E)\\Sigma(I + E)` with :math:`E`
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
    cfg = PERTURB_OPTIONS.validate(radius=radius, commuting=commuting, method=method,
                                   rng=rng)
    rng, radius, commuting = check_rng(cfg.rng), cfg.radius, cfg.commuting
    means, covs = _check_perturb_input(means, covs)
    Q, d = means.shape
    step = rng.standard_normal((Q, d))
    step *= radius / np.sqrt(2) / np.linalg.norm(step, axis=1, keepdims=True)
    half2 = radius ** 2 / 2
    if cfg.method == "authors":
        return means + step, _authors_cov_perturbation(covs, half2, commuting, rng)
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


def _authors_cov_perturbation(covs, half2, commuting, rng):
    """``Sigma + 0.1 P`` with ``P`` positive semi-definite of trace ``half2`` (random
    ``G G^T``, or ``diag(g^2)`` in the pattern's eigenbasis for variances / commuting)."""
    Q, d = covs.shape[0], covs.shape[1]
    if covs.ndim == 2:
        g2 = rng.standard_normal((Q, d)) ** 2
        return covs + 0.1 * half2 * g2 / g2.sum(axis=1, keepdims=True)
    if commuting:
        _, V = np.linalg.eigh(covs)
        g2 = rng.standard_normal((Q, d)) ** 2
        P = (V * (g2 / g2.sum(axis=1, keepdims=True))[:, None, :]) @ V.transpose(0, 2, 1)
    else:
        G = rng.standard_normal((Q, d, d))
        P = G @ G.transpose(0, 2, 1)
        P /= np.trace(P, axis1=1, axis2=2)[:, None, None]
    new = covs + 0.1 * half2 * P
    return 0.5 * (new + new.transpose(0, 2, 1))


def _check_retrieval(memory, result, true_index):
    """``true_index`` as a host int array, after checking ``memory`` and ``result``."""
    if not isinstance(memory, GaussianMemory):
        raise TypeError(f"memory must be a GaussianMemory, got {type(memory).__name__}")
    if not all(hasattr(result, k) for k in ("means", "covs", "index")):
        raise TypeError("result must be the output of memory.retrieve (with means, covs "
                        f"and index), got {type(result).__name__}")
    idx = np.asarray(to_host(true_index))
    if idx.dtype.kind not in "iu" and not (idx.dtype.kind == "O" and all(
            isinstance(v, (int, np.integer)) for v in idx.flat)):
        raise TypeError(f"true_index must hold integers, got dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    want = np.shape(to_host(result.index))
    if idx.shape != want:
        raise ValueError(f"true_index must have shape {want} (one per query of result), "
                         f"got {idx.shape}")
    n = memory.means.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"true_index entries must be pattern indices in [0, {n}), got "
                         f"range [{idx.min()}, {idx.max()}]")
    return idx


@RATE_OPTIONS.entry
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
    TypeError
        ``memory`` not a :class:`~solvers.memory.GaussianMemory`, ``result`` without
        ``means`` / ``covs`` / ``index``, or a ``true_index`` that does not hold integers.
    ValueError
        ``true_index`` not of the shape of ``result.index``, or with an entry outside
        ``[0, N)``.

    Notes
    -----
    Arrays on the GPU (CuPy) are copied to the host. ``result`` is assumed to come from
    ``memory.retrieve`` on ``memory``.

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
    atol = RATE_OPTIONS.validate(atol=atol).atol
    idx = _check_retrieval(memory, result, true_index)
    m = to_host(memory.means)[idx]
    S = to_host(memory.covs)[idx]
    rm, rS = to_host(result.means), to_host(result.covs)
    if memory.diagonal_storage:
        z = np.concatenate([rm - m, np.sqrt(rS) - np.sqrt(S)], axis=-1)
        w2 = np.sqrt(np.sum(z * z, axis=-1))
    else:
        w2 = bures_wasserstein_distance(rm, rS, m, S, squared=False)
    ok = to_host(result.index) == idx
    if atol is not None:
        ok &= w2 <= atol
    return float(np.mean(ok)), w2
