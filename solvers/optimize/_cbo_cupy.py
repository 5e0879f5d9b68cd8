"""CuPy kernel of CBO (imported lazily, only when ``backend`` resolves to cupy).

:func:`move` is the twin of the generic ``_cbo_generic.move``: the particle update
``X - lam dt (X - c) + sigma sqrt(dt) D xi`` plus ``|X - c|`` in one ``ElementwiseKernel``
(anisotropic), or a norm reduction and one ``ElementwiseKernel`` (isotropic), then a max
reduction for the spread. :func:`consensus_move` is the generic step with this
:func:`move` inside. Everything else runs as generic ``xp`` code on cupy arrays.
"""
import cupy

from . import _cbo_generic

_aniso_update = cupy.ElementwiseKernel(
    "T x, T c, T xi, T lam_dt, T sig", "T y, T ad",
    """
    T diff = x - c;
    y = x - lam_dt * diff + sig * diff * xi;
    ad = fabs(diff);
    """,
    "solvers_cbo_aniso_update")

_iso_update = cupy.ElementwiseKernel(
    "T x, T c, T xi, T nrm, T lam_dt, T sig", "T y, T ad",
    """
    T diff = x - c;
    y = x - lam_dt * diff + sig * nrm * xi;
    ad = fabs(diff);
    """,
    "solvers_cbo_iso_update")


def move(X, C, xi, lam_dt, sig_sqdt, aniso, xp):
    """Moved particles and the per-run spread ``max |X - c|`` for (M, N, d) cupy ``X``."""
    X = cupy.asarray(X)
    M = X.shape[0]
    c = cupy.asarray(C)[:, None, :]
    xi = cupy.asarray(xi)
    t = X.dtype.type
    if aniso:
        y, ad = _aniso_update(X, c, xi, t(lam_dt), t(sig_sqdt))
    else:
        nrm = cupy.sqrt(cupy.sum((X - c) ** 2, axis=2, keepdims=True))
        y, ad = _iso_update(X, c, xi, nrm, t(lam_dt), t(sig_sqdt))
    spread = cupy.max(ad.reshape(M, -1), axis=1) if ad.size else cupy.zeros(M, dtype=X.dtype)
    return y, spread


def consensus_move(P, E, mask, alpha, ess, alpha_max, X, xi, lam_dt, sig_sqdt, aniso, box,
                   xp):
    """The generic ``consensus_move`` with the fused :func:`move` above."""
    return _cbo_generic.consensus_move(P, E, mask, alpha, ess, alpha_max, X, xi, lam_dt,
                                       sig_sqdt, aniso, box, xp, move=move)
