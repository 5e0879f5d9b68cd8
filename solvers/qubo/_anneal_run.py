"""How the reads of one ``minimize_qubo`` call are run: schedules, batches, restarts.

Written once against the chains interface of :mod:`._anneal_kernels`. Without a target all
reads form one batch. With a target the groups of 8 reads run in batches, in order, until
one reaches it; then the later groups are dropped, so the samples do not depend on the
batch size (the number of threads). Without an explicit sweep count the groups restart
with schedules of Luby's lengths ``unit * (1, 1, 2, 1, 1, 2, 4, 1, ...)`` (Luby, Sinclair &
Zuckerman 1993: within a log factor of the best fixed length, whatever it is), so a hard
instance reaches long schedules and an easy one pays for short ones only.
"""
from typing import NamedTuple

import numpy as np

from .._lib import Progress, Status, resolve_backend
from .._lib.parallel import collect
from ._anneal_groups import GROUP, RUNNING, first_stop
from ._anneal_kernels import batch_groups, make_chains, prepare


def luby(i):
    """Term ``i >= 1`` of Luby's sequence ``1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ...``."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    if i == (1 << k) - 1:
        return 1 << (k - 1)
    return luby(i - (1 << (k - 1)) + 1)


class Schedule(NamedTuple):
    """The inverse temperatures of a read: ``kind`` ("geometric", "linear" or "explicit"),
    ``beta_range``, ``sweeps`` (of one schedule; the unit of the restarts), the explicit
    sequence (or None) and whether groups restart with Luby's lengths."""

    kind: str
    beta_range: tuple
    sweeps: int
    explicit: object
    restarts: bool

    def betas(self, scale=1):
        """The schedule of a group whose length is ``scale`` units."""
        if self.explicit is not None:
            return self.explicit
        hot, cold = self.beta_range
        n = self.sweeps * scale
        if n == 1:
            return np.array([cold])
        if self.kind == "geometric":
            return np.geomspace(hot, cold, n)
        return np.linspace(hot, cold, n)

    def length(self, scale=1):
        """Sweeps of a group whose length is ``scale`` units."""
        return self.explicit.shape[0] if self.explicit is not None else self.sweeps * scale

    def scales(self, first_group, n_groups):
        """Length (in units) of groups ``first_group, ...``: Luby's terms, or all 1."""
        if not self.restarts:
            return [1] * n_groups
        return [luby(first_group + k + 1) for k in range(n_groups)]


class Part(NamedTuple):
    """Reads of one chains object: samples, energies, group stops, sweeps of each group's
    schedule."""

    X: object
    energies: object
    stops: np.ndarray
    lengths: np.ndarray


class Merged(NamedTuple):
    X: object
    energies: object
    reached: bool
    nit: int
    nfev: int


class Run:
    """One annealing problem: the binary form, the schedule and the kernel options."""

    def __init__(self, be, a, W, c0, schedule, polish, single, target, prepared=None):
        self.be, self.a, self.W, self.c0 = be, a, W, c0
        self.schedule, self.polish, self.single = schedule, polish, single
        self.target, self.prepared = target, prepared

    def chains(self, X0, base, first=0):
        if self.prepared is None:  # once per run, shared by the batches
            self.prepared = prepare(self.be, self.a, self.W, self.single)
        return make_chains(self.be, self.a, self.W, self.c0, X0, base, first, self.single,
                           self.prepared)

    def serial(self, X0, base, callback, progress, out):
        """All reads here. Returns the parts and the callback's status (or None)."""
        if callback is not None:
            return self._observed(X0, base, callback, progress, out)
        groups = -(-X0.shape[0] // GROUP)
        total = sum(self.schedule.length(s) for s in self.schedule.scales(0, groups))
        with Progress(total, "anneal", enabled=progress) as bar:
            return self.batches(X0, base, bar=bar), None

    def _observed(self, X0, base, callback, progress, out):
        """Every group at once, sweep by sweep, the callback after each (fixed schedule)."""
        chains = self.chains(X0, base)
        betas, status = self.schedule.betas(), None
        with Progress(betas.shape[0], "anneal", enabled=progress) as bar:
            for t in range(betas.shape[0]):
                chains.sweep(betas[t:t + 1], self.target)
                bar.update(1)
                if out.report(callback, chains, t + 1):
                    status = Status.CALLBACK
                    break
                if _decided(chains.stops):
                    break
        if self.polish and status is None:
            chains.descend()
        lengths = np.full(chains.stops.shape[0], chains.t)
        return [Part(*chains.finish(), chains.stops.copy(), lengths)], status

    def batches(self, X0, base, first=0, bar=None):
        """Reads in batches of groups, in order, until a group reaches the target (one
        batch of all reads without a target)."""
        size = X0.shape[0] if self.target is None else \
            batch_groups(self.be, mixed=self.schedule.restarts) * GROUP
        parts = []
        for lo in range(0, X0.shape[0], size):
            X = X0[lo:lo + size]
            scales = self.schedule.scales((first + lo) // GROUP, -(-X.shape[0] // GROUP))
            rows = [self.schedule.betas(s) for s in scales]
            chains = self.chains(X, base, first + lo)
            self._sweep(chains, rows, bar)
            if self.polish:
                chains.descend()
            lengths = np.array([self.schedule.length(s) for s in scales])
            parts.append(Part(*chains.finish(), chains.stops.copy(), lengths))
            if first_stop(chains.stops) is not None:
                break
        return parts

    def _sweep(self, chains, rows, bar):
        if len({r.shape[0] for r in rows}) > 1:  # restarts: one schedule per group
            betas = np.full((len(rows), max(r.shape[0] for r in rows)), np.nan)
            for k, r in enumerate(rows):
                betas[k, :r.shape[0]] = r
            chains.sweep(betas, self.target)
        elif bar is None or not bar.enabled or self.target is not None:
            chains.sweep(rows[0], self.target)
        else:  # a smooth bar: the same sweeps in about 50 pieces
            step = max(1, rows[0].shape[0] // 50)
            for lo in range(0, rows[0].shape[0], step):
                chains.sweep(rows[0][lo:lo + step])
                bar.update(min(step, rows[0].shape[0] - lo))
            return
        if bar is not None:
            bar.update(sum(r.shape[0] for r in rows))

    def pieces(self, pmap, X0, base, n_pieces):
        """Split the groups into ``n_pieces`` runs of :func:`anneal_piece` via ``pmap``."""
        groups = -(-X0.shape[0] // GROUP)
        bounds = np.minimum(np.linspace(0, groups, n_pieces + 1).astype(int) * GROUP,
                            X0.shape[0])
        tasks = [(self.a, self.W, self.c0, self.schedule, X0[lo:hi], base, int(lo),
                  self.polish, self.single, self.target)
                 for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        return [part for parts in collect(pmap, anneal_piece, tasks) for part in parts]

    def merge(self, parts):
        """The reads up to the first group that reached the target (all without one)."""
        xp = self.be.xp
        stops = np.concatenate([p.stops for p in parts])
        lengths = np.concatenate([p.lengths for p in parts])
        X = parts[0].X if len(parts) == 1 else xp.concat([p.X for p in parts])
        E = parts[0].energies if len(parts) == 1 else xp.concat([p.energies for p in parts])
        hit = first_stop(stops)
        keep = X.shape[0] if hit is None else min(X.shape[0], (hit + 1) * GROUP)
        groups = -(-keep // GROUP)
        sweeps = np.where(stops >= 0, stops, lengths)[:groups]
        reads = np.minimum(GROUP, keep - GROUP * np.arange(groups))
        nit = int(sweeps[-1]) if groups else int(lengths.max(initial=0))
        return Merged(X[:keep, ...], E[:keep], hit is not None, nit,
                      int(np.sum(sweeps * reads)) * int(X.shape[-1]))


def _decided(stops):
    """True once a group reached the target and no lower group is still running."""
    hit = first_stop(stops)
    return hit is not None and not np.any(stops[:hit] == RUNNING)


def anneal_piece(task):
    """Anneal one piece of the reads with the Numba chains (runs in a worker process)."""
    a, W, c0, schedule, X0, base, first, polish, single, target = task
    run = Run(resolve_backend("numba", np), a, W, c0, schedule, polish, single, target)
    return run.batches(X0, base, first)
