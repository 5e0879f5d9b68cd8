"""Bures–Wasserstein geometry of Gaussians: robust matrix square roots and W2 distances.

For Gaussians ``N(m1, S1)`` and ``N(m2, S2)``

.. math:: W_2^2 = \\|m_1 - m_2\\|^2 + \\operatorname{tr}\\big(S_1 + S_2
          - 2 (S_1^{1/2} S_2 S_1^{1/2})^{1/2}\\big).

The trace term is the squared Bures distance. Matrix square roots go through a symmetric
eigendecomposition with eigenvalues clipped at zero, so a ``-1e-16`` rounding eigenvalue
never produces NaN (POT's numpy ``sqrtm`` does).
"""
from numpy import broadcast_shapes

from .._lib.backend import resolve_backend
from .._lib.docstrings import fill_doc
from .._lib.namespace import array_namespace
from .._lib.params import BACKEND, COUNT, FLAG, NONNEGATIVE, Array, Options, Param
from .._lib.validation import as_float_array, check_positive_definite
from .bures_kernels import (roots as _roots, sym as _sym, sqrt_and_inv_sqrt as _sqrt_and_inv_sqrt,
                            sqdist_gram as _sqdist_gram, cdist_full as _cdist_full,
                            weighted_root_sum as _weighted_root_sum,
                            check_covariances as _check_covariances,
                            half_to_single as _half_to_single,
                            generic_backend as _generic_backend,
                            kernel_backend as _kernel_backend)

_BACKEND_DOC = "which kernels run"

SQRTM_OPTIONS = Options(
    "SqrtmPsdOptions",
    Param("S", Array(), doc="symmetric PSD matrices (..., d, d)"),
    Param("inverse", FLAG, False, "return the inverse square root"),
    Param("backend", BACKEND, "auto", _BACKEND_DOC))

DISTANCE_OPTIONS = Options(
    "BuresDistanceOptions",
    Param("m1", Array(), doc="means of the first Gaussians (..., d)"),
    Param("S1", Array(), doc="covariances of the first Gaussians (..., d, d)"),
    Param("m2", Array(), doc="means of the second Gaussians (..., d)"),
    Param("S2", Array(), doc="covariances of the second Gaussians (..., d, d)"),
    Param("squared", FLAG, False, "return the squared distance"))

CDIST_OPTIONS = Options(
    "BuresCdistOptions",
    Param("query_means", Array(ndim=2), doc="query means (Q, d)"),
    Param("query_covs", Array(), doc="query covariances (Q, d, d) or variances (Q, d)"),
    Param("means", Array(ndim=2), doc="means (N, d)"),
    Param("covs", Array(), doc="covariances (N, d, d) or variances (N, d)"),
    Param("diagonal", FLAG, False, "covariances given as variances"),
    Param("squared", FLAG, True, "return squared distances"),
    Param("backend", BACKEND, "auto", _BACKEND_DOC))

MONGE_OPTIONS = Options(
    "MongeMapOptions",
    Param("source_covs", Array(), doc="source covariances (..., d, d) or variances (..., d)"),
    Param("target_covs", Array(), doc="target covariances (..., d, d) or variances (..., d)"),
    Param("diagonal", FLAG, False, "covariances given as variances"))

WEIGHTED_MONGE_OPTIONS = Options(
    "WeightedMongeMapOptions",
    Param("query_covs", Array(ndim=3), doc="query covariances (Q, d, d)"),
    Param("covs", Array(ndim=3), doc="covariances (N, d, d)"),
    Param("weights", Array(ndim=2), doc="nonnegative weights (Q, N)"),
    Param("backend", BACKEND, "auto", _BACKEND_DOC))

BARYCENTER_OPTIONS = Options(
    "BuresBarycenterOptions",
    Param("means", Array(ndim=2), doc="means (N, d)"),
    Param("covs", Array(), doc="covariances (N, d, d) or variances (N, d)"),
    Param("weights", Array(ndim=(1, 2)), None, "nonnegative weights (N,) or (B, N)"),
    Param("maxiter", COUNT, 200, "iteration cap"),
    Param("tol", NONNEGATIVE, 1e-12, "relative W2 length of the last step"),
    Param("diagonal", FLAG, False, "covariances given as variances"),
    Param("return_info", FLAG, False, "also return nit, converged and step"),
    Param("backend", BACKEND, "auto", _BACKEND_DOC))

_BURES_REFERENCES = """
References
----------
.. [1] R. Bhatia, T. Jain and Y. Lim, "On the Bures–Wasserstein distance between
   positive definite matrices", Expo. Math. 37 (2019), 165-191.
.. [2] A. Takatsu, "Wasserstein geometry of Gaussian measures", Osaka J. Math. 48
   (2011), 1005-1026.
"""


@SQRTM_OPTIONS.entry
@fill_doc(references=_BURES_REFERENCES)
def sqrtm_psd(S, *, inverse=False, backend="auto"):
    """Square root (or inverse square root) of a stack of symmetric PSD matrices.

    Parameters
    ----------
    S : array, shape (..., d, d)
        Symmetric positive semi-definite matrices (symmetrised before use).
    inverse : bool
        Return ``S^{-1/2}``; eigenvalues are clipped to the float's tiny positive value
        first, so a singular input gives a large but finite result.
    backend : {"auto", "numpy", "numba", "cupy"}
        Where the eigendecomposition runs; ``"auto"`` follows the input (the result is in
        the input's namespace). There is one implementation, ``xp.linalg.eigh``.

    Returns
    -------
    array, shape (..., d, d)
        :math:`U \\operatorname{diag}(\\max(\\lambda, 0)^{\\pm 1/2}) U^\\top` from the
        eigendecomposition :math:`\\tfrac12(S + S^\\top) = U \\operatorname{diag}(\\lambda)
        U^\\top`.

    Raises
    ------
    TypeError
        Complex or non-numeric ``S``.
    ValueError
        ``S`` with fewer than two dimensions, non-square trailing dimensions, or NaN /
        inf entries.

    Notes
    -----
    Symmetry and definiteness are not checked: the input is symmetrised and negative
    eigenvalues are clipped to zero, so an indefinite matrix silently gets the root of its
    PSD part.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import sqrtm_psd
    >>> R = sqrtm_psd(np.diag([4.0, 9.0]))
    >>> np.diag(R).tolist()
    [2.0, 3.0]
    """
    cfg = SQRTM_OPTIONS.validate(inverse=inverse, backend=backend)
    be = resolve_backend(cfg.backend, array_namespace(S))
    xp = be.xp
    (S,) = SQRTM_OPTIONS.arrays(be, S=S)
    S = _half_to_single(S, xp)
    if S.ndim < 2 or S.shape[-1] != S.shape[-2]:
        raise ValueError(f"S must be a stack of square matrices (..., d, d), got shape "
                         f"{tuple(S.shape)}")
    _, R, Rinv = _roots(S, xp)
    return be.to_input(Rinv if cfg.inverse else R)


def _check_gaussian(m, S, xp, mname, sname):
    """Means ``(..., d)`` (already converted and checked finite by the spec) and their
    covariances ``(..., d, d)`` of the same batch shape: finite, symmetric positive
    semi-definite. Errors name ``mname`` / ``sname``."""
    S = _half_to_single(as_float_array(S, xp, sname), xp)
    if m.ndim < 1:
        raise ValueError(f"{mname} must have shape (..., d), got a scalar")
    if S.ndim < 2 or S.shape[-1] != S.shape[-2]:
        raise ValueError(f"{sname} must be square matrices (..., d, d), got shape "
                         f"{tuple(S.shape)}")
    want = tuple(m.shape) + (m.shape[-1],)
    if tuple(S.shape) != want:
        raise ValueError(f"{sname} must have shape {want} to match {mname} with shape "
                         f"{tuple(m.shape)}, got {tuple(S.shape)}")
    check_positive_definite(S, xp, sname, semi=True)
    return S


@DISTANCE_OPTIONS.entry
@fill_doc(references=_BURES_REFERENCES)
def bures_wasserstein_distance(m1, S1, m2, S2, *, squared=False):
    """2-Wasserstein distance between Gaussians ``N(m1, S1)`` and ``N(m2, S2)``.

    .. math:: W_2 = \\Big(\\|m_1 - m_2\\|^2 + \\operatorname{tr}\\big(S_1 + S_2
              - 2 (S_1^{1/2} S_2 S_1^{1/2})^{1/2}\\big)\\Big)^{1/2}

    Parameters
    ----------
    m1, m2 : array, shape (..., d)
    S1, S2 : array, shape (..., d, d)
        Finite symmetric positive semi-definite covariances. Each mean has the batch
        shape of its covariance (``m1.shape[:-1] == S1.shape[:-2]``); the two Gaussians
        broadcast against each other (a stack against one Gaussian works).
    squared : bool
        Return :math:`W_2^2` instead of :math:`W_2` (default False: the distance, as
        POT's ``ot.gaussian.bures_wasserstein_distance``).

    Returns
    -------
    array, shape (...)
        :math:`W_2`, or :math:`W_2^2` with ``squared=True``; the square is clipped at zero
        first (rounding can make the Bures term slightly negative).

    Raises
    ------
    TypeError
        Complex or non-numeric input, or arrays from different array libraries.
    ValueError
        Non-finite means or covariances; covariances that are not square, symmetric or
        positive semi-definite; a mean whose shape does not match its covariance; two
        Gaussians of different dimension or batch shapes that do not broadcast. The
        message names the argument.

    Notes
    -----
    Rounding-level negative eigenvalues of a covariance are clipped at zero (see
    :func:`sqrtm_psd`). Use :func:`bures_wasserstein_cdist` for batched all-pairs
    distances.

    For one pair of Gaussians the value equals POT's, whose arguments come in another
    order: ``ot.gaussian.bures_wasserstein_distance(m1, m2, S1, S2)``. For stacks POT
    returns all pairs (like :func:`bures_wasserstein_cdist` with ``squared=False``), this
    function the pairs along the broadcast batch shape (POT's ``paired=True``).

    .. versionchanged:: 0.1.0
       Returns the distance by default, as POT does (the squared distance before); pass
       ``squared=True`` for the square.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import bures_wasserstein_distance
    >>> float(bures_wasserstein_distance(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2)))
    2.0
    >>> float(bures_wasserstein_distance(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2),
    ...                                  squared=True))
    4.0
    """
    cfg = DISTANCE_OPTIONS.validate(squared=squared)
    be = _generic_backend(m1, S1, m2, S2)
    xp = be.xp
    m1, S1, m2, S2 = DISTANCE_OPTIONS.arrays(be, m1=m1, S1=S1, m2=m2, S2=S2)
    S1 = _check_gaussian(m1, S1, xp, "m1", "S1")
    S2 = _check_gaussian(m2, S2, xp, "m2", "S2")
    if m1.shape[-1] != m2.shape[-1]:
        raise ValueError(f"m2 must have the dimension d = {m1.shape[-1]} of m1, got "
                         f"{m2.shape[-1]}")
    try:
        broadcast_shapes(tuple(m1.shape[:-1]), tuple(m2.shape[:-1]))
    except ValueError:
        raise ValueError(f"the stacks m1 / S1 (batch shape {tuple(m1.shape[:-1])}) and "
                         f"m2 / S2 (batch shape {tuple(m2.shape[:-1])}) do not broadcast") from None
    _, R1, _ = _roots(S1, xp)
    _, cross, _ = _roots(R1 @ S2 @ R1, xp)
    trace = (xp.linalg.trace(S1) + xp.linalg.trace(S2) - 2 * xp.linalg.trace(cross))
    d2 = xp.sum((m1 - m2) ** 2, axis=-1) + trace
    d2 = xp.maximum(d2, xp.zeros_like(d2))
    return d2 if cfg.squared else xp.sqrt(d2)


@CDIST_OPTIONS.entry
@fill_doc(references=_BURES_REFERENCES)
def bures_wasserstein_cdist(query_means, query_covs, means, covs, *, diagonal=False,
                            squared=True, backend="auto"):
    """Pairwise 2-Wasserstein distances from ``Q`` query Gaussians to ``N`` Gaussians.

    .. math:: D_{qi} = \\|m_q - \\mu_i\\|^2 + \\operatorname{tr}\\big(\\Omega_q + \\Sigma_i
              - 2(\\Omega_q^{1/2}\\Sigma_i\\Omega_q^{1/2})^{1/2}\\big)

    Parameters
    ----------
    query_means : array, shape (Q, d)
    query_covs : array, shape (Q, d, d), or (Q, d) variances with ``diagonal=True``
    means : array, shape (N, d)
    covs : array, shape (N, d, d), or (N, d) variances with ``diagonal=True``
    diagonal : bool
        Covariances are given as their diagonals; then
        :math:`D_{qi} = \\|m_q - \\mu_i\\|^2 + \\|\\sqrt{\\omega_q} - \\sqrt{\\sigma_i}\\|^2`,
        one matrix product for all pairs.
    squared : bool
        Return :math:`W_2^2` (default) or :math:`W_2`.
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"auto"``: Numba kernels (parallel over queries) for numpy input, CuPy for cupy
        input, generic Array API code otherwise.

    Returns
    -------
    array, shape (Q, N)

    Raises
    ------
    ValueError
        Shape mismatch, non-finite input, non-symmetric or non-positive-definite
        covariances, non-positive variances with ``diagonal=True``, or an unknown
        ``backend``.
    TypeError
        Complex or non-numeric input.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import bures_wasserstein_cdist
    >>> D = bures_wasserstein_cdist(np.zeros((1, 2)), np.eye(2)[None],
    ...                             np.ones((2, 2)), np.stack([np.eye(2), 4 * np.eye(2)]))
    >>> D.round(12).tolist()
    [[2.0, 4.0]]
    """
    cfg = CDIST_OPTIONS.validate(diagonal=diagonal, squared=squared, backend=backend)
    be = resolve_backend(cfg.backend, array_namespace(query_means, query_covs, means, covs))
    xpc = be.xp
    qm, qS, m, S = CDIST_OPTIONS.arrays(be, query_means=query_means,
                                        query_covs=query_covs, means=means, covs=covs)
    qS = _check_covariances(qm, qS, xpc, diagonal=cfg.diagonal,
                            names=("query_means", "query_covs"))
    S = _check_covariances(m, S, xpc, diagonal=cfg.diagonal)
    if qm.shape[1] != m.shape[1]:
        raise ValueError(f"query_means have dimension {qm.shape[1]} but means have "
                         f"dimension {m.shape[1]}")
    dtype = xpc.result_type(qm.dtype, qS.dtype, m.dtype, S.dtype)
    qm, qS, m, S = (xpc.astype(a, dtype) for a in (qm, qS, m, S))
    if cfg.diagonal:
        zq = xpc.concat([qm, xpc.sqrt(qS)], axis=1)
        z = xpc.concat([m, xpc.sqrt(S)], axis=1)
        D = _sqdist_gram(zq, z, xpc)
    else:
        D = _cdist_full(qm, qS, m, S, _kernel_backend(be, qm.shape[0], m.shape[0], m.shape[1]))
    if not cfg.squared:
        D = xpc.sqrt(D)
    return be.to_input(D)


@MONGE_OPTIONS.entry
@fill_doc(references=_BURES_REFERENCES)
def monge_map(source_covs, target_covs, *, diagonal=False):
    """Matrix of the optimal transport map between centred Gaussians.

    The Monge map from :math:`N(m_s, \\Sigma_s)` to :math:`N(m_t, \\Sigma_t)` is
    :math:`T(x) = m_t + A (x - m_s)` with

    .. math:: A = \\Sigma_s^{-1/2} (\\Sigma_s^{1/2} \\Sigma_t \\Sigma_s^{1/2})^{1/2}
              \\Sigma_s^{-1/2},

    symmetric positive definite, so that :math:`A \\Sigma_s A = \\Sigma_t`.

    Parameters
    ----------
    source_covs : array, shape (..., d, d), or (..., d) with ``diagonal=True``
        Positive definite source covariances.
    target_covs : array, shape (..., d, d), or (..., d) with ``diagonal=True``
        Target covariances; leading dimensions broadcast against ``source_covs``.
    diagonal : bool
        Covariances given as variances; then ``A = sqrt(target / source)`` elementwise.

    Returns
    -------
    A : array, shape (..., d, d), or (..., d) with ``diagonal=True``

    Raises
    ------
    TypeError
        Complex or non-numeric input.
    ValueError
        Non-finite, non-square, non-symmetric or non-positive-definite source covariances
        (non-positive variances with ``diagonal=True``), or target covariances that are not
        symmetric positive semi-definite (full case).

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import monge_map
    >>> S0, S1 = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[1.0, -0.3], [-0.3, 3.0]])
    >>> A = monge_map(S0, S1)
    >>> bool(np.allclose(A @ S0 @ A, S1)), bool(np.allclose(A, A.T))
    (True, True)
    """
    cfg = MONGE_OPTIONS.validate(diagonal=diagonal)
    be = _generic_backend(source_covs, target_covs)
    xp = be.xp
    S0, S1 = MONGE_OPTIONS.arrays(be, source_covs=source_covs, target_covs=target_covs)
    S0, S1 = _half_to_single(S0, xp), _half_to_single(S1, xp)
    try:
        broadcast_shapes(tuple(S0.shape), tuple(S1.shape))
    except ValueError:
        raise ValueError(f"target_covs with shape {tuple(S1.shape)} does not broadcast "
                         f"against source_covs with shape {tuple(S0.shape)}") from None
    if cfg.diagonal:
        if bool(xp.any(S0 <= 0)):
            raise ValueError("source_covs must be positive variances (diagonal=True)")
        return xp.sqrt(xp.maximum(S1, xp.zeros_like(S1)) / S0)
    check_positive_definite(S0, xp, "source_covs")
    check_positive_definite(S1, xp, "target_covs", semi=True)
    R, Rinv = _sqrt_and_inv_sqrt(S0, xp)
    _, root, _ = _roots(R @ S1 @ R, xp)
    return _sym(Rinv @ root @ Rinv, xp)


@WEIGHTED_MONGE_OPTIONS.entry
def weighted_monge_map(query_covs, covs, weights, *, backend="auto"):
    """Gibbs-weighted average of the Monge maps from each query to ``N`` Gaussians.

    .. math:: A_q = \\sum_i w_{qi} A_{qi}, \\qquad A_{qi} = \\Omega_q^{-1/2}
              (\\Omega_q^{1/2}\\Sigma_i\\Omega_q^{1/2})^{1/2}\\Omega_q^{-1/2}

    :math:`A_q \\Omega_q A_q` is one Álvarez-Esteban step towards the ``w``-barycenter and
    the covariance update of one Gaussian DAM retrieval step.

    Parameters
    ----------
    query_covs : array, shape (Q, d, d)
        Positive definite.
    covs : array, shape (N, d, d)
    weights : array, shape (Q, N)
        Nonnegative weights (rows usually sum to one). Pairs with zero weight are skipped
        by the Numba kernel.
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"auto"``: Numba kernel for numpy input, CuPy for cupy input, generic Array API
        code otherwise.

    Returns
    -------
    array, shape (Q, d, d)
        Symmetric positive definite when some weight in each row is positive.

    Raises
    ------
    ValueError
        Wrong number of dimensions, shape mismatch, non-finite or negative weights,
        non-positive-definite ``query_covs`` or non-PSD ``covs``, or an unknown
        ``backend``.
    TypeError
        Complex or non-numeric input.

    References
    ----------
    .. [1] P. C. Álvarez-Esteban, E. del Barrio, J. A. Cuesta-Albertos and C. Matrán, "A
       fixed-point approach to barycenters in Wasserstein space", J. Math. Anal. Appl.
       441 (2016), 744-762.
    .. [2] C. Tankala and K. Balasubramanian, "Dense associative memory on the
       Bures-Wasserstein space", arXiv:2509.23162, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import weighted_monge_map, monge_map
    >>> O = np.eye(2)[None]
    >>> S = np.stack([np.diag([4.0, 1.0]), np.diag([1.0, 9.0])])
    >>> A = weighted_monge_map(O, S, np.array([[0.5, 0.5]]))
    >>> np.diag(A[0]).tolist()
    [1.5, 2.0]
    """
    cfg = WEIGHTED_MONGE_OPTIONS.validate(backend=backend)
    be = resolve_backend(cfg.backend, array_namespace(query_covs, covs, weights))
    xpc = be.xp
    qS, S, W = WEIGHTED_MONGE_OPTIONS.arrays(be, query_covs=query_covs, covs=covs,
                                             weights=weights)
    qS, S = _half_to_single(qS, xpc), _half_to_single(S, xpc)
    if qS.shape[1:] != S.shape[1:] or tuple(W.shape) != (qS.shape[0], S.shape[0]):
        raise ValueError(f"expected query_covs (Q, d, d), covs (N, d, d), weights (Q, N); got "
                         f"{tuple(qS.shape)}, {tuple(S.shape)}, {tuple(W.shape)}")
    check_positive_definite(qS, xpc, "query_covs")
    check_positive_definite(S, xpc, "covs", semi=True)
    if bool(xpc.any(W < 0)):
        raise ValueError("weights must be nonnegative")
    dtype = xpc.result_type(qS.dtype, S.dtype, W.dtype)
    qS, S, W = (xpc.astype(a, dtype) for a in (qS, S, W))
    R, Rinv = _sqrt_and_inv_sqrt(qS, xpc)
    M = _weighted_root_sum(R, S, W, _kernel_backend(be, *W.shape, S.shape[-1]))
    return be.to_input(_sym(Rinv @ M @ Rinv, xpc))


@BARYCENTER_OPTIONS.entry
def bures_wasserstein_barycenter(means, covs, weights=None, *, cov_init=None, maxiter=200,
                                 tol=1e-12, diagonal=False, return_info=False,
                                 backend="auto"):
    """Wasserstein barycenter of Gaussians by the Álvarez-Esteban fixed point.

    The barycenter of :math:`N(\\mu_i, \\Sigma_i)` with weights :math:`w_i` is Gaussian with
    mean :math:`\\sum_i w_i \\mu_i` and the covariance :math:`S` solving
    :math:`S = \\sum_i w_i (S^{1/2}\\Sigma_i S^{1/2})^{1/2}`. The iteration

    .. math:: S_{k+1} = S_k^{-1/2}\\Big(\\sum_i w_i (S_k^{1/2}\\Sigma_i S_k^{1/2})^{1/2}\\Big)^2
              S_k^{-1/2}

    (Álvarez-Esteban, del Barrio, Cuesta-Albertos & Matrán 2016) decreases the barycentric
    cost at every step and converges in a handful of iterations, against tens for the
    plain fixed point. With ``diagonal=True`` the barycenter is exact in closed form:
    :math:`\\sqrt{s} = \\sum_i w_i \\sqrt{\\sigma_i}`.

    Parameters
    ----------
    means : array, shape (N, d)
    covs : array, shape (N, d, d), or (N, d) variances with ``diagonal=True``
    weights : array, shape (N,) or (B, N), optional
        Nonnegative, normalised to sum to one per row; uniform by default. A 2-D array
        computes ``B`` barycenters at once.
    cov_init : array, shape (d, d) or (B, d, d), optional
        Starting covariance; default: the weighted arithmetic mean of ``covs``.
    maxiter : int
    tol : float
        Stop when the W2 length of a step is below ``tol`` times ``sqrt(tr S)``.
    diagonal : bool
    return_info : bool
        Also return a dict with ``nit``, ``converged`` and the last relative ``step``.
    backend : {"auto", "numpy", "numba", "cupy"}

    Returns
    -------
    mean : array, shape (d,) or (B, d)
    cov : array, shape (d, d) or (B, d, d), or variances with ``diagonal=True``
    info : dict
        Only with ``return_info=True``.

    Raises
    ------
    ValueError
        Shape mismatch, no Gaussian (``N = 0``), negative or all-zero weights,
        non-positive-definite covariances.

    References
    ----------
    .. [1] P. C. Álvarez-Esteban, E. del Barrio, J. A. Cuesta-Albertos and C. Matrán, "A
       fixed-point approach to barycenters in Wasserstein space", J. Math. Anal. Appl.
       441 (2016), 744-762.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import bures_wasserstein_barycenter
    >>> mb, Sb = bures_wasserstein_barycenter(np.zeros((2, 2)),
    ...                                       np.stack([np.eye(2), 9 * np.eye(2)]))
    >>> np.diag(Sb).round(12).tolist()
    [4.0, 4.0]
    """
    cfg = BARYCENTER_OPTIONS.validate(maxiter=maxiter, tol=tol, diagonal=diagonal,
                                      return_info=return_info, backend=backend)
    be = resolve_backend(cfg.backend, array_namespace(means, covs, weights, cov_init))
    xpc = be.xp
    m, S, W = BARYCENTER_OPTIONS.arrays(be, means=means, covs=covs, weights=weights)
    S = _check_covariances(m, S, xpc, diagonal=cfg.diagonal)
    N, d = m.shape
    if N == 0:
        raise ValueError("means and covs must hold at least one Gaussian (the barycenter "
                         "of none is undefined), got N = 0")
    dtype = xpc.result_type(m.dtype, S.dtype)
    single = W is None or W.ndim == 1
    if W is None:
        W = xpc.full((1, N), 1.0 / N, dtype=dtype)
    else:
        W, total = _weight_rows(W, N, xpc)
        dtype = xpc.result_type(dtype, W.dtype)
        W = xpc.astype(W, dtype) / xpc.astype(total, dtype)
    m, S = xpc.astype(m, dtype), xpc.astype(S, dtype)
    mb = W @ m
    info = {"nit": 0, "converged": True, "step": 0.0}
    if cfg.diagonal:
        Sb = (W @ xpc.sqrt(S)) ** 2
    else:
        if cov_init is None:
            Sb = xpc.reshape(W @ xpc.reshape(S, (N, d * d)), (-1, d, d))
        else:
            Sb = as_float_array(be.to_device(cov_init), xpc, "cov_init", ndim=(2, 3))
            Sb = xpc.astype(xpc.reshape(Sb, (-1, d, d)), dtype)
            check_positive_definite(Sb, xpc, "cov_init")
            if Sb.shape[0] != W.shape[0]:
                Sb = xpc.broadcast_to(Sb, (W.shape[0], d, d))
        converged = False
        step = float("inf")
        kbe = _kernel_backend(be, W.shape[0], N, d, calls=cfg.maxiter)
        for it in range(1, cfg.maxiter + 1):
            R, Rinv = _sqrt_and_inv_sqrt(Sb, xpc)
            M = _weighted_root_sum(R, S, W, kbe)
            # exact W2 length of the step: ||(M - S) S^{-1/2}||_F (A = Rinv M Rinv is the map)
            G = (M - Sb) @ Rinv
            rel = xpc.sqrt(xpc.sum(G * G, axis=(-2, -1)) / xpc.linalg.trace(Sb))
            Sb = _sym(Rinv @ M @ M @ Rinv, xpc)
            step = float(xpc.max(rel))
            if step <= cfg.tol:
                converged = True
                break
        info = {"nit": it, "converged": converged, "step": step}
    if single:
        mb, Sb = mb[0, ...], Sb[0, ...]
    out = (be.to_input(mb), be.to_input(Sb))
    return out + (info,) if cfg.return_info else out


def _weight_rows(W, N, xp):
    """Barycentric weights (N,) or (B, N) as rows (B, N) and their sums (B, 1): ``N``
    nonnegative entries per row with a positive sum (finiteness is the spec's)."""
    if W.ndim == 1:
        W = xp.reshape(W, (1, W.shape[0]))
    if W.shape[1] != N:
        raise ValueError(f"weights must have {N} entries per row (one per Gaussian), "
                         f"got shape {tuple(W.shape)}")
    if bool(xp.any(W < 0)):
        raise ValueError("weights must be nonnegative")
    total = xp.sum(W, axis=1, keepdims=True)
    if bool(xp.any(total <= 0)):
        raise ValueError("weights must have a positive sum")
    return W, total
