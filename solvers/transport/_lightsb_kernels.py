"""LightSB's kernel table: the inner operations a backend may replace.

================  =====================================================  ===========
operation         what it computes                                        kernels
================  =====================================================  ===========
diag_stats        log-sum-exps and Gibbs-weighted moments of a batch      numba
log_weights_diag  normalised gate log-weights log gamma_k(x)              numba
sample_diag       exact draws from the diagonal-S mixture pi(.|x)         numba
================  =====================================================  ===========

The generic twins (in :mod:`._lightsb_model`) run on every other backend and are the
references the kernels are tested against. The algorithm modules receive a resolved
:class:`Kernels` and never ask which backend they run on.
"""
from functools import partial

from ._lightsb_model import diag_stats_xp, log_weights_diag_xp, sample_diag_xp
from .._lib.kernels import KernelTable
from .._lib.backend import backend_arg, resolve_backend

KERNELS = KernelTable(
    __package__,
    diag_stats={"numba": "._lightsb_numba:diag_stats"},
    log_weights_diag={"numba": "._lightsb_numba:log_weights_diag"},
    sample_diag={"numba": "._lightsb_numba:sample_diag"},
)


class Kernels:
    """The LightSB kernels resolved for one backend.

    Attributes
    ----------
    lse : str
        The ``backend=`` for the row log-sum-exps of the generic code: where the
        backend has its own statistics kernel (Numba), its generic twin (plain numpy: the
        (batch, K) slices are small and its call overhead is lower), elsewhere the
        backend itself.
    diag_stats, log_weights_diag, sample_diag : callable
        See the table above; same signatures on every backend.
    """

    def __init__(self, be):
        xp = be.xp
        self.lse = backend_arg(be.generic() if KERNELS.has("diag_stats", be) else be)
        self.diag_stats = KERNELS.get(
            "diag_stats", be, generic=partial(diag_stats_xp, xp=xp, lse_backend=self.lse))
        self.log_weights_diag = KERNELS.get(
            "log_weights_diag", be,
            generic=partial(log_weights_diag_xp, xp=xp, lse_backend=backend_arg(be)))
        self.sample_diag = KERNELS.get("sample_diag", be, generic=partial(sample_diag_xp, xp=xp))

    @classmethod
    def generic(cls, xp):
        """The generic implementations on ``xp`` (the references the kernels are tested
        against)."""
        return cls(resolve_backend("auto", xp).generic())
