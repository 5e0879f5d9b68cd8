"""LightSB's kernel table: the inner operations a backend may replace.

================  =====================================================  ===========
operation         what it computes                                        kernels
================  =====================================================  ===========
diag_stats        log-sum-exps and Gibbs-weighted moments of a batch      numba
diag_lse          the row log-sum-exps alone (the held-out score)         numba
log_weights_diag  normalised gate log-weights log gamma_k(x)              numba
sample_diag       exact draws from the diagonal-S mixture pi(.|x)         numba
================  =====================================================  ===========

The generic twins (in :mod:`._lightsb_model`) run on every other backend and are the
references the kernels are tested against. The algorithm modules receive a resolved
:class:`Kernels` and never ask which backend they run on.
"""
from functools import partial

from ._lightsb_model import diag_lse_xp, diag_stats_xp, log_weights_diag_xp, sample_diag_xp
from .._lib.kernels import KernelTable
from .._lib.backend import backend_arg, resolve_backend

#: work (samples x components x dimensions, times the iteration cap for a fit) under which
#: ``backend="auto"`` runs the generic code, which needs no compilation: there a warm fit
#: took 1.5-2.1x the Numba fit's time, at most ~0.2 s (e.g. 1000 samples a side, K = 4,
#: D = 2, 50 iterations: 30 against 14 ms; 2000 a side, K = 32, D = 16, 300 iterations:
#: 0.19 against 0.11 s; one thread), against ~2 s of compilation on a first call
GENERIC_BELOW = 1 << 30

KERNELS = KernelTable(
    __package__,
    diag_stats={"numba": "._lightsb_numba:diag_stats", "generic_below": GENERIC_BELOW},
    diag_lse={"numba": "._lightsb_numba:diag_lse", "generic_below": GENERIC_BELOW},
    log_weights_diag={"numba": "._lightsb_numba:log_weights_diag",
                      "generic_below": GENERIC_BELOW},
    sample_diag={"numba": "._lightsb_numba:sample_diag", "generic_below": GENERIC_BELOW},
)


def fit_work(n0, n1, K, D, maxiter):
    """The work of a fit in the unit of :data:`GENERIC_BELOW`."""
    return (n0 + n1) * K * D * maxiter


class Kernels:
    """The LightSB kernels resolved for one backend.

    Parameters
    ----------
    be : Backend
    size : int, optional
        The work of the call (see :func:`fit_work`): under ``"auto"``, below
        :data:`GENERIC_BELOW` the generic code serves it (nothing to compile).

    Attributes
    ----------
    lse : str
        The ``backend=`` for the row log-sum-exps of the generic code: where the
        backend has its own statistics kernel (Numba), its generic twin (plain numpy: the
        (batch, K) slices are small and its call overhead is lower), elsewhere the
        backend itself.
    diag_stats, diag_lse, log_weights_diag, sample_diag : callable
        See the table above; same signatures on every backend.
    """

    def __init__(self, be, size=None):
        xp = be.xp
        self.lse = backend_arg(be.generic() if KERNELS.has("diag_stats", be) else be)
        self.diag_stats = KERNELS.get(
            "diag_stats", be, generic=partial(diag_stats_xp, xp=xp, lse_backend=self.lse),
            size=size)
        self.diag_lse = KERNELS.get(
            "diag_lse", be, generic=partial(diag_lse_xp, xp=xp, lse_backend=self.lse),
            size=size)
        self.log_weights_diag = KERNELS.get(
            "log_weights_diag", be,
            generic=partial(log_weights_diag_xp, xp=xp, lse_backend=backend_arg(be)),
            size=size)
        self.sample_diag = KERNELS.get("sample_diag", be, generic=partial(sample_diag_xp, xp=xp),
                                       size=size)

    @classmethod
    def generic(cls, xp):
        """The generic implementations on ``xp`` (the references the kernels are tested
        against)."""
        return cls(resolve_backend("auto", xp).generic())
