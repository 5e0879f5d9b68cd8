"""``QUBOSampler``: :func:`~solvers.qubo.minimize_qubo` as a dimod sampler.

This module imports dimod; ``solvers.qubo`` loads it only when ``QUBOSampler`` is first
accessed, so dimod stays an optional dependency (``pip install dimod``, or the ``qubo``
extra).
"""
try:
    import dimod
except ImportError as exc:  # pragma: no cover - dimod is installed where this is tested
    raise ImportError("solvers.qubo.QUBOSampler is a dimod sampler and needs dimod: "
                      "pip install dimod (or the 'qubo' extra of solvers)") from exc
import numpy as np

from .._lib.params import COUNT, FLAG, SEED, Choice, Options, Param, Real
from ._anneal_groups import GROUP
from ._input import is_bqm, refuse_other_dimod_models
from .anneal import SCHEDULES, minimize_qubo

__all__ = ["QUBOSampler"]

#: the scalar parameters of ``sample`` under their dimod names (the rest are checked by
#: ``minimize_qubo``, whose names they share)
SAMPLE_OPTIONS = Options(
    "QUBOSamplerOptions",
    Param("num_reads", COUNT, None, "independent reads"),
    Param("num_sweeps", COUNT, None, "sweeps per read"),
    Param("beta_schedule_type", Choice(*SCHEDULES), "geometric", "beta interpolation"),
    Param("polish", FLAG, True, "finish with steepest descent"),
    Param("f_target", Real(finite=False), None, "stop at this energy"),
    Param("seed", SEED, None, "random numbers"),
)


class QUBOSampler(dimod.Sampler):
    r"""Simulated annealing (:func:`~solvers.qubo.minimize_qubo`) as a ``dimod.Sampler``.

    ``sample(bqm, **parameters)`` anneals a ``dimod.BinaryQuadraticModel`` and returns a
    ``dimod.SampleSet`` with one row per read (``num_occurrences`` 1), its energies, in the
    model's variables and vartype; ``sample_ising`` and ``sample_qubo`` come from
    ``dimod.Sampler``. It works in dimod's composites (spin-reversal transforms, tracking,
    truncation, fixed variables, connected components, ...).

    Unknown parameters are ignored with a ``dimod.exceptions.SamplerUnknownArgWarning``,
    as dimod's samplers do.

    Raises
    ------
    TypeError
        ``sample`` given something other than a BinaryQuadraticModel (a constrained,
        integer, discrete or higher-order model gets an error naming the dimod conversion
        to a BQM), or options of the wrong type.
    ValueError
        Invalid option values, as in :func:`~solvers.qubo.minimize_qubo`, or
        ``initial_states`` that do not match the model.

    Examples
    --------
    >>> import dimod
    >>> from solvers.qubo import QUBOSampler
    >>> bqm = dimod.BinaryQuadraticModel({"a": 1.0}, {("a", "b"): -2.0}, 0.0, "SPIN")
    >>> sampleset = QUBOSampler().sample(bqm, num_reads=4, seed=0)
    >>> float(sampleset.first.energy), len(sampleset)
    (-3.0, 4)
    """

    @property
    def parameters(self):
        """The keyword arguments of :meth:`sample` (each with the properties it uses)."""
        return {"num_reads": [], "num_sweeps": [], "beta_range": [],
                "beta_schedule_type": ["beta_schedule_options"], "beta_schedule": [],
                "polish": [], "f_target": [], "seed": [], "initial_states": []}

    @property
    def properties(self):
        """``beta_schedule_options`` and ``reads_per_group`` (see ``f_target``)."""
        return {"beta_schedule_options": SCHEDULES, "reads_per_group": GROUP}

    @SAMPLE_OPTIONS.entry
    def sample(self, bqm, num_reads=None, num_sweeps=None, beta_range=None,
               beta_schedule_type="geometric", beta_schedule=None, polish=True,
               f_target=None, seed=None, initial_states=None, **kwargs):
        """Anneal ``bqm`` and return its ``dimod.SampleSet``.

        Parameters
        ----------
        bqm : dimod.BinaryQuadraticModel
            The model (its vartype, linear and quadratic biases and offset).
        num_reads : int, optional
            Independent reads; default 16 (the number of rows of ``initial_states`` when those
            are given).
        num_sweeps : int, optional
            Sweeps per read; default 1000.
        beta_range : (float, float), optional
            ``(beta_hot, beta_cold)``; default from the model's local fields
            (:func:`~solvers.qubo.anneal.default_beta_range`).
        beta_schedule_type : {"geometric", "linear"}
            Interpolation of the inverse temperature between the ends of ``beta_range``.
        beta_schedule : sequence of float, optional
            The inverse temperature of every sweep (overrides the three above).
        polish : bool
            Finish every read with steepest descent to a 1-flip local minimum (default True).
        f_target : float, optional
            Stop early once a read reaches this energy (reads come in groups of 8, and the
            sample set then holds the groups up to the first one that reached it).
        seed : int or numpy.random.Generator, optional
            Seeds the initial states and the reads' random streams.
        initial_states : samples-like, optional
            One state for every read, or one state for all (anything ``dimod.as_samples``
            reads, labelled or in the order of ``bqm.variables``).

        **kwargs
            Unknown parameters: ignored with a warning.

        Returns
        -------
        dimod.SampleSet
            One row per read, with ``energy`` and ``num_occurrences``; ``info`` holds the
            ``beta_range``, the sweeps run (``num_sweeps``), ``status`` and ``message``.
        """
        self.remove_unknown_kwargs(**kwargs)
        cfg = SAMPLE_OPTIONS.validate(num_reads=num_reads, num_sweeps=num_sweeps,
                                      beta_schedule_type=beta_schedule_type, polish=polish,
                                      f_target=f_target, seed=seed)
        if not is_bqm(bqm):
            refuse_other_dimod_models(bqm, "bqm")  # names the conversion to a BQM
            raise TypeError("QUBOSampler.sample takes a dimod.BinaryQuadraticModel (use "
                            f"sample_qubo / sample_ising for dicts), got {type(bqm).__name__}")
        variables = list(bqm.variables)
        x0, num_reads = _initial_states(initial_states, variables, cfg.num_reads)
        res = minimize_qubo(bqm, n_reads=num_reads, n_sweeps=cfg.num_sweeps,
                            beta_range=beta_range,
                            beta_schedule=cfg.beta_schedule_type if beta_schedule is None
                            else beta_schedule, polish=cfg.polish, f_target=cfg.f_target,
                            rng=cfg.seed, x0=x0)
        info = {"beta_range": res.beta_range, "num_sweeps": res.nit, "status": int(res.status),
                "message": res.message}
        return dimod.SampleSet.from_samples((np.asarray(res.samples), variables),
                                            vartype=bqm.vartype, energy=res.energies,
                                            info=info)


def _initial_states(initial_states, variables, num_reads):
    """``(x0, num_reads)``: the states as an array in the order of ``variables``."""
    if initial_states is None:
        return None, num_reads
    states, labels = dimod.as_samples(initial_states)
    if len(labels) != len(variables) or set(labels) != set(variables):
        raise ValueError("initial_states must give a value to every variable of the model "
                         f"and no other; got labels {list(labels)!r}")
    order = {v: k for k, v in enumerate(labels)}
    states = states[:, [order[v] for v in variables]]
    if num_reads is None:
        num_reads = states.shape[0]
    if states.shape[0] not in (1, num_reads):
        raise ValueError(f"initial_states holds {states.shape[0]} states; give one, or one "
                         f"per read (num_reads={num_reads})")
    return (states[0] if states.shape[0] == 1 else states), num_reads
