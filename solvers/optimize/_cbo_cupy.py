"""CuPy pieces of the CBO step (imported lazily, only when ``backend`` resolves to cupy).

The weights and the consensus run as the generic ``xp`` code on cupy arrays (a softmax and
one batched reduction: already one or two kernel launches each). What the generic code
spends most launches on is the particle update, ``X - lam dt (X - c) + sigma sqrt(dt) D xi``
plus the spread: here it is one ``ElementwiseKernel`` (anisotropic noise) or a norm
reduction and one ``ElementwiseKernel`` (isotropic), then a max reduction. The draws ``xi``
are the host Generator's, so the result agrees with the numpy and Numba paths draw for draw.
"""
import cupy

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


def update(X, C, xi, lam_dt, sig_sqdt, aniso):
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
    spread = cupy.max(ad.reshape(M, -1), axis=1)
    return y, spread
