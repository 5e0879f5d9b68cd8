"""QUBO area: exact moments, multi-objective scaling, Pareto sweeps and simulated annealing.

Public functions (loaded lazily so ``import solvers`` stays light):

- :func:`qubo_moments` -- exact mean and variance under uniform, Bernoulli and
  fixed-Hamming-weight assignments, binary or spin, dense / sparse / stacked;
- :func:`scale_qubos`, :func:`scalarize` -- unit-variance (or max-abs) scaling of several
  objectives and their weighted sum;
- :func:`pareto_sweep`, :func:`hypervolume`, :func:`pareto_front` -- weight sweeps, the
  non-dominated set and its hypervolume;
- :func:`minimize_qubo` -- simulated annealing (Numba, many reads in parallel; CuPy);
- :class:`QUBOSampler` -- the annealer as a ``dimod.Sampler`` (needs dimod, imported only
  when this name is first used).
"""
from .._lazy import lazy_exports

_EXPORTS = {
    "qubo_moments": "solvers.qubo.moments",
    "QuboMoments": "solvers.qubo.moments",
    "scale_qubos": "solvers.qubo.scaling",
    "scalarize": "solvers.qubo.scaling",
    "qubo_energy": "solvers.qubo.scaling",
    "pareto_sweep": "solvers.qubo.pareto",
    "pareto_front": "solvers.qubo.pareto",
    "hypervolume": "solvers.qubo.pareto",
    "minimize_qubo": "solvers.qubo.anneal",
    "QUBOSampler": "solvers.qubo.sampler",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
