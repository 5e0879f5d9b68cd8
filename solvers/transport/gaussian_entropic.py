"""Entropic optimal transport between two Gaussians in closed form (Janati et al. 2020).

For :math:`p_0 = N(a, A)`, :math:`p_1 = N(b, B)`, the quadratic cost
:math:`\\|x - y\\|^2 / 2` and entropy weight :math:`\\varepsilon` (the Schrödinger bridge
with Wiener prior :math:`dX_t = \\sqrt{\\varepsilon}\\, dW_t`), the optimal plan is the
Gaussian

.. math::

   \\pi^* = N\\Big(\\begin{pmatrix} a \\\\ b\\end{pmatrix},
            \\begin{pmatrix} A & C \\\\ C^\\top & B \\end{pmatrix}\\Big), \\qquad
   C = \\tfrac12 A^{1/2} D_\\varepsilon A^{-1/2} - \\tfrac{\\varepsilon}{2} I, \\qquad
   D_\\varepsilon = (4 A^{1/2} B A^{1/2} + \\varepsilon^2 I)^{1/2}.

The conditional law is :math:`\\pi^*(y \\mid x) = N(r^* + S^* x, \\varepsilon S^*)` with
:math:`S^* = C^\\top A^{-1}` (symmetric positive definite) and :math:`r^* = b - S^* a`:
exactly the one-component LightSB model, which is how the LightSB solver is tested.
"""
import numpy as np

from .._lib.docstrings import fill_doc_members, fill_doc
from .._lib.namespace import array_namespace
from .._lib.params import POSITIVE, Array, Options, Param, Real
from .._lib.results import OptimizeResult
from .._lib.validation import check_positive_definite
from .bures_kernels import generic_backend, half_to_single, roots

__all__ = ["entropic_gaussian_plan", "EntropicGaussianPlan"]

OPTIONS = Options(
    "EntropicGaussianPlanOptions",
    Param("a", Array(ndim=1), doc="mean of the source Gaussian (d,)"),
    Param("A", Array(ndim=2), doc="covariance of the source Gaussian (d, d)"),
    Param("b", Array(ndim=1), doc="mean of the target Gaussian (d,)"),
    Param("B", Array(ndim=2), doc="covariance of the target Gaussian (d, d)"),
    Param("epsilon", POSITIVE, doc="entropy weight"))

#: the time of :meth:`EntropicGaussianPlan.bridge_marginal`
TIME_OPTIONS = Options("BridgeMarginalOptions", Param("t", Real(0, 1), doc="time in [0, 1]"))

_REFERENCES = """
References
----------
.. [1] H. Janati, B. Muzellec, G. Peyré, M. Cuturi, "Entropic optimal transport between
   unbalanced Gaussian measures has a closed form", NeurIPS 2020.
"""


class EntropicGaussianPlan(OptimizeResult):
    """The closed-form entropic plan between two Gaussians.

    A :class:`scipy.optimize.OptimizeResult` (a dict with attribute access) returned by
    :func:`entropic_gaussian_plan`; it is not meant to be built by hand.

    Parameters
    ----------
    **fields
        The attributes below, as keyword arguments (stored as given, not validated).

    Attributes
    ----------
    mean : array, shape (2 d,)
        Mean of the plan, ``(a, b)``.
    covariance : array, shape (2 d, 2 d)
        Covariance of the plan, ``[[A, C], [C^T, B]]``.
    cross_covariance : array, shape (d, d)
        ``C = Cov(X, Y)`` under the plan.
    slope : array, shape (d, d)
        :math:`S^* = C^\\top A^{-1}`; the conditional mean is ``intercept + slope @ x``.
    intercept : array, shape (d,)
        :math:`r^* = b - S^* a`.
    conditional_covariance : array, shape (d, d)
        :math:`\\varepsilon S^* = B - C^\\top A^{-1} C`.
    epsilon : float
        Entropy weight of the plan.

    Raises
    ------
    ValueError
        From :meth:`bridge_marginal`, when ``t`` is outside ``[0, 1]``.

    Notes
    -----
    The constructor performs no checks; the fields are assumed consistent, as produced by
    :func:`entropic_gaussian_plan`. A missing field raises ``AttributeError`` on access.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import entropic_gaussian_plan
    >>> plan = entropic_gaussian_plan(np.zeros(1), np.eye(1), np.ones(1), 4 * np.eye(1), 1.0)
    >>> m0, C0 = plan.bridge_marginal(0.0)
    >>> m1, C1 = plan.bridge_marginal(1.0)
    >>> m0.tolist(), C0.tolist(), m1.tolist(), C1.tolist()  # the two end marginals
    ([0.0], [[1.0]], [1.0], [[4.0]])
    """

    def bridge_marginal(self, t):
        """Mean and covariance of :math:`X_t` on the Schrödinger bridge.

        .. math:: X_t \\sim N\\big((1-t) a + t b,\\ (1-t)^2 A + t^2 B + t(1-t)(C + C^\\top)
                  + \\varepsilon t (1-t) I\\big).

        Parameters
        ----------
        t : float in [0, 1]

        Returns
        -------
        mean : array, shape (d,)
        covariance : array, shape (d, d)

        Raises
        ------
        ValueError
            ``t`` outside ``[0, 1]`` or NaN.
        TypeError
            ``t`` not a real number.

        {{references}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.transport import entropic_gaussian_plan
        >>> plan = entropic_gaussian_plan(np.zeros(1), np.eye(1), np.ones(1), 4 * np.eye(1),
        ...                               1.0)
        >>> m, C = plan.bridge_marginal(0.5)
        >>> m.tolist(), bool(C[0, 0] > 0)
        ([0.5], True)
        """
        t = TIME_OPTIONS.validate(t=t).t
        xp = array_namespace(self.cross_covariance)
        d = self.cross_covariance.shape[0]
        a, b = self.mean[:d], self.mean[d:]
        A, B, C = self.covariance[:d, :d], self.covariance[d:, d:], self.cross_covariance
        eye = xp.eye(d, dtype=C.dtype)
        cov = ((1 - t) ** 2 * A + t ** 2 * B + t * (1 - t) * (C + xp.matrix_transpose(C))
               + self.epsilon * t * (1 - t) * eye)
        return (1 - t) * a + t * b, cov


@OPTIONS.entry
@fill_doc(references=_REFERENCES)
def entropic_gaussian_plan(a, A, b, B, epsilon):
    """Entropic OT plan between ``N(a, A)`` and ``N(b, B)`` in closed form.

    Cost :math:`\\|x-y\\|^2/2`, entropy weight ``epsilon`` (the plan of the Schrödinger bridge
    with Wiener prior of variance ``epsilon``; Janati et al. 2020 with
    :math:`\\sigma^2 = \\varepsilon`).

    Parameters
    ----------
    a, b : array, shape (d,)
        Means.
    A, B : array, shape (d, d)
        Covariances; ``A`` must be positive definite, ``B`` positive semi-definite.
    epsilon : float
        Entropy weight, > 0.

    Returns
    -------
    EntropicGaussianPlan
        With ``mean``, ``covariance``, ``cross_covariance``, ``slope`` (:math:`S^*`),
        ``intercept`` (:math:`r^*`), ``conditional_covariance`` and the method
        ``bridge_marginal(t)``.

    Raises
    ------
    ValueError
        ``epsilon <= 0``, shapes that do not match, NaN input, or a covariance that is not
        positive (semi-)definite.

    Notes
    -----
    .. math::

       D_\\varepsilon = (4 A^{1/2} B A^{1/2} + \\varepsilon^2 I)^{1/2}, \\quad
       C = \\tfrac12 A^{1/2} D_\\varepsilon A^{-1/2} - \\tfrac{\\varepsilon}{2} I, \\quad
       S^* = C^\\top A^{-1}, \\quad r^* = b - S^* a.

    As :math:`\\varepsilon \\to 0`, :math:`S^*` tends to the Monge map's matrix
    :math:`A^{-1/2} (A^{1/2} B A^{1/2})^{1/2} A^{-1/2}`. Square roots use eigenvalue clipping
    (:func:`solvers.transport.sqrtm_psd`).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.transport import entropic_gaussian_plan
    >>> plan = entropic_gaussian_plan(np.zeros(1), np.eye(1), np.zeros(1), 4 * np.eye(1), 1.0)
    >>> round(float(plan.slope[0, 0]), 6)  # (sqrt(4*1*4 + 1) - 1) / 2
    1.561553
    >>> round(float(plan.conditional_covariance[0, 0]), 6)
    1.561553

    {{references}}
    """
    epsilon = OPTIONS.validate(epsilon=epsilon).epsilon
    be = generic_backend(a, A, b, B)
    xp = be.xp
    a, A, b, B = OPTIONS.arrays(be, a=a, A=A, b=b, B=B)
    A, B = half_to_single(A, xp), half_to_single(B, xp)
    d = a.shape[0]
    for name, v in (("b", b),):
        if v.shape[0] != d:
            raise ValueError(f"{name} must have shape ({d},) like a, got {tuple(v.shape)}")
    for name, M in (("A", A), ("B", B)):
        if tuple(M.shape) != (d, d):
            raise ValueError(f"{name} must have shape ({d}, {d}), got {tuple(M.shape)}")
    check_positive_definite(A, xp, "A")
    check_positive_definite(B, xp, "B", semi=True)
    dtype = xp.result_type(a.dtype, A.dtype, b.dtype, B.dtype)
    a, A, b, B = (xp.astype(v, dtype) for v in (a, A, b, B))
    eye = xp.eye(d, dtype=dtype)
    A = 0.5 * (A + xp.matrix_transpose(A))
    B = 0.5 * (B + xp.matrix_transpose(B))
    lam, U = xp.linalg.eigh(A)
    lam = xp.maximum(lam, xp.asarray(np.finfo(np.float64).tiny, dtype=dtype))
    A_half = (U * xp.sqrt(lam)) @ xp.matrix_transpose(U)
    A_mhalf = (U * (1.0 / xp.sqrt(lam))) @ xp.matrix_transpose(U)
    A_inv = (U * (1.0 / lam)) @ xp.matrix_transpose(U)
    _, D, _ = roots(4.0 * (A_half @ B @ A_half) + epsilon ** 2 * eye, xp)
    C = 0.5 * (A_half @ D @ A_mhalf) - 0.5 * epsilon * eye
    S = xp.matrix_transpose(C) @ A_inv
    S = 0.5 * (S + xp.matrix_transpose(S))  # symmetric in exact arithmetic
    r = b - S @ a
    top = xp.concat([A, C], axis=1)
    bottom = xp.concat([xp.matrix_transpose(C), B], axis=1)
    return EntropicGaussianPlan(
        mean=xp.concat([a, b]), covariance=xp.concat([top, bottom], axis=0),
        cross_covariance=C, slope=S, intercept=r, conditional_covariance=epsilon * S,
        epsilon=epsilon)


fill_doc_members(EntropicGaussianPlan, references=_REFERENCES)
