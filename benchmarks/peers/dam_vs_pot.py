"""Gaussian DAM and Bures barycenters: solvers vs POT on the same problems, one process.

    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dam_vs_pot.py [--quick]

1. Barycenter of ``B`` Gaussians in dimension ``d`` with the same weights:
   ``ot.gaussian.bures_wasserstein_barycenter`` (plain fixed point) against
   ``solvers.transport.bures_wasserstein_barycenter`` (Álvarez-Esteban), time and relative
   difference of the covariances.
2. One full-covariance DAM retrieval step from one query to ``N`` stored Gaussians:
   POT called per pattern (W2 and the Monge map, then the Gibbs average -- the way the
   authors' code loops), POT's batched W2 plus per-pattern maps, and
   ``GaussianMemory.step``; same output checked. Twice: at beta = 1 near a pattern (few
   weights matter, so screening and zero-weight skipping do most of the work) and at
   beta = 1e-4 without screening (every pair needs its eigendecomposition: the worst
   case), and on the non-commuting synthetic protocol (N = 1000, d = 10, beta = 1), where
   every weight is above 1e-18 of the largest.
3. Batched diagonal retrieval: ``Q`` queries against ``N`` diagonal patterns at ``d``
   (no POT equivalent).
"""
import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root: benchmarks._common
from benchmarks._common import pin_blas_threads  # noqa: E402


def spd(rng, n, d):
    A = rng.normal(size=(n, d, d)) / np.sqrt(d)
    return A @ A.transpose(0, 2, 1) + 0.5 * np.eye(d)


def timed(f, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return out, best


def barycenter(B, d, rng):
    import ot
    from solvers.transport import bures_wasserstein_barycenter

    m, S = rng.normal(size=(B, d)), spd(rng, B, d)
    w = rng.random(B)
    w /= w.sum()
    bures_wasserstein_barycenter(m[:2], S[:2])  # warm-up
    (mb, Sb, info), t_ours = timed(lambda: bures_wasserstein_barycenter(
        m, S, w, tol=1e-10, return_info=True))
    (mp, Sp, log), t_pot = timed(lambda: ot.gaussian.bures_wasserstein_barycenter(
        m, S, w, num_iter=1000, eps=1e-10, log=True))
    rel = np.linalg.norm(Sb - Sp) / np.linalg.norm(Sp)
    print(f"barycenter B={B} d={d}: POT fixed point {t_pot:.3f} s ({log['num_iter']} it), "
          f"solvers Alvarez-Esteban {t_ours:.3f} s ({info['nit']} it): "
          f"{t_pot / t_ours:.1f}x, rel. diff {rel:.1e}")


def dam_step(N, d, beta, rng, screen=50.0, protocol=False):
    import ot
    from solvers import GaussianMemory
    from solvers.memory import synthetic_patterns, perturb

    if protocol:   # the non-commuting synthetic protocol: every weight above 1e-18
        m, S = synthetic_patterns(N, d, commuting=False, rng=0)
        qm, qS = (a[0] for a in perturb(m[:1], S[:1], 1.0 / np.sqrt(N), rng=1))
    else:
        m, S = rng.normal(size=(N, d)) * 2, spd(rng, N, d)
        qm, qS = m[0] + 0.1 * rng.normal(size=d), spd(rng, 1, d)[0]

    def pot_loop():
        d2 = np.array([float(ot.gaussian.bures_wasserstein_distance(qm, m[i], qS, S[i])) ** 2
                       for i in range(N)])
        p = np.exp(-beta * (d2 - d2.min()))
        p /= p.sum()
        A = sum(p[i] * ot.gaussian.bures_wasserstein_mapping(qm, m[i], qS, S[i])[0]
                for i in range(N))
        return p @ m, A @ qS @ A

    def pot_batched():
        d2 = np.asarray(ot.gaussian.bures_wasserstein_distance(qm[None], m, qS[None], S))[0] ** 2
        p = np.exp(-beta * (d2 - d2.min()))
        p /= p.sum()
        A = sum(p[i] * ot.gaussian.bures_wasserstein_mapping(qm, m[i], qS, S[i])[0]
                for i in range(N))
        return p @ m, A @ qS @ A

    mem = GaussianMemory(m, S, beta=beta, screen=screen)
    mem.step(qm, qS)  # warm-up (Numba cache)
    (m1, S1), t_ours = timed(lambda: mem.step(qm, qS), repeat=3)
    mem_np = GaussianMemory(m, S, beta=beta, backend="numpy")
    _, t_np = timed(lambda: mem_np.step(qm, qS), repeat=2)
    (m2, S2), t_loop = timed(pot_loop)
    (m3, S3), t_bat = timed(pot_batched)
    err = max(np.abs(S1 - S2).max() / np.abs(S2).max(), np.abs(m1 - m2).max())
    p = mem.weights(qm, qS)
    n_sig = int(np.sum(p > 1e-18 * p.max()))
    print(f"DAM step, 1 query, N={N} d={d} beta={beta} screen={screen}"
          f"{' (synthetic protocol)' if protocol else ''} "
          f"({n_sig} weights above 1e-18 of the largest): POT per-pattern loop {t_loop:.3f} s, "
          f"POT batched W2 + looped maps {t_bat:.3f} s, solvers {t_ours:.4f} s "
          f"(generic numpy {t_np:.4f} s): {t_loop / t_ours:.0f}x vs the loop, "
          f"{t_bat / t_ours:.0f}x vs batched POT; max rel. diff {err:.1e}")


def diagonal_retrieval(Q, N, d, beta, rng):
    from solvers import GaussianMemory

    m, v = rng.normal(size=(N, d)), rng.uniform(0.5, 2.0, (N, d))
    idx = rng.choice(N, Q, replace=False)
    qm = m[idx] + 0.05 * rng.normal(size=(Q, d))
    qv = v[idx] * rng.uniform(0.95, 1.05, (Q, d))
    mem = GaussianMemory(m, v, beta=beta)
    res, t = timed(lambda: mem.retrieve(qm, qv))
    ok = float(np.mean(res.index == idx))
    print(f"diagonal retrieval Q={Q} N={N} d={d} beta={beta}: {t:.2f} s, "
          f"max nit {int(res.nit.max())}, retrieved {ok:.1%}, converged {res.converged.mean():.0%}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    pin_blas_threads()
    rng = np.random.default_rng(0)
    if args.quick:
        barycenter(20, 16, rng)
        dam_step(30, 16, 1.0, rng)
        dam_step(30, 16, 1e-4, rng, screen=None)
        dam_step(100, 10, 1.0, rng, protocol=True)
        diagonal_retrieval(100, 1000, 64, 1.0, rng)
    else:
        barycenter(100, 64, rng)
        dam_step(100, 64, 1.0, rng)
        # worst case for the library: every weight matters (beta tiny), no screening
        dam_step(100, 64, 1e-4, rng, screen=None)
        dam_step(1000, 10, 1.0, rng, protocol=True)
        diagonal_retrieval(1000, 10_000, 64, 1.0, rng)


if __name__ == "__main__":
    main()
