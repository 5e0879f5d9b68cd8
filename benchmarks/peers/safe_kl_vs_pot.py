"""Side by side: semi-dual entropic OT with solvers (L-BFGS, Genevay SGD, doubly stochastic
Safe-KL) vs POT (Sinkhorn in the log domain, and POT's averaged SGD on the semi-dual,
``ot.stochastic.solve_semi_dual_entropic(method="ASGD")``), in one process.

Usage: OPENBLAS_NUM_THREADS=1 python benchmarks/peers/safe_kl_vs_pot.py [--n 1000 --m 2000]
       [--epochs 2]

Reference: POT's Sinkhorn potentials to 1e-12. Accuracy of the target potentials v (up to a
constant, b-weighted RMS, relative to their range) and relative gap of the exact semi-dual
value. Stochastic methods get the same budget of ``epochs * n * m`` cost entries (an "epoch"
touches every (source, target) pair once). Wall times are single runs on a shared machine.
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import ot  # noqa: E402
import ot.stochastic  # noqa: E402

try:
    from solvers.lse import semidual_ot, semidual_ot_objective  # noqa: E402
except ImportError:  # versions that exported them from solvers.lse.applications
    from solvers.lse.applications import semidual_ot, semidual_ot_objective  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--m", type=int, default=2000)
    parser.add_argument("--eps", type=float, default=0.5)
    parser.add_argument("--epochs", type=float, default=2.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, m, eps = args.n, args.m, args.eps
    X = rng.normal(size=(n, 2))
    Y = rng.normal(size=(m, 2)) * 1.5 + 1.0
    a, b = np.full(n, 1.0 / n), np.full(m, 1.0 / m)
    M = ot.dist(X, Y)

    start = time.perf_counter()
    _, log = ot.sinkhorn(a, b, M, eps, method="sinkhorn_log", log=True, stopThr=1e-12,
                         numItermax=100000)
    t_sink = time.perf_counter() - start
    g = eps * log["log_v"] - eps * np.log(b)
    g -= g.mean()
    best, _ = semidual_ot_objective(g, X, Y, epsilon=eps)
    rows = [("POT sinkhorn_log (reference)", 0.0, 0.0, t_sink, "-")]

    def score(v):
        v = v - v.mean()
        value, _ = semidual_ot_objective(v, X, Y, epsilon=eps)
        return np.sqrt(np.mean((v - g) ** 2)) / np.ptp(g), (best - value) / abs(best)

    start = time.perf_counter()
    res = semidual_ot(X, Y, epsilon=eps, method="lbfgs")
    rows.append(("solvers lbfgs", *score(res.x), time.perf_counter() - start,
                 f"{res.nfev / (n * m):.0f}"))
    for method in ("sgd", "safe-kl"):
        start = time.perf_counter()
        res = semidual_ot(X, Y, epsilon=eps, method=method, epochs=args.epochs, rng=0)
        rows.append((f"solvers {method}", *score(res.x), time.perf_counter() - start,
                     f"{res.nfev / (n * m):.1f}"))
    start = time.perf_counter()
    _, pot_log = ot.stochastic.solve_semi_dual_entropic(a, b, M, eps, "ASGD",
                                                        numItermax=int(args.epochs * n),
                                                        log=True)
    v_pot = np.asarray(pot_log["beta"]).ravel()  # POT's target potential
    rows.append(("POT ASGD (one source point / step)", *score(v_pot),
                 time.perf_counter() - start, f"{args.epochs:.1f}"))
    print(f"semi-dual entropic OT, n={n} sources, m={m} targets, eps={eps}, "
          f"budget {args.epochs} epochs of n*m cost entries")
    print(f"{'method':38s} {'rms(v-g)/range':>15s} {'value gap':>10s} {'seconds':>8s} "
          f"{'epochs':>7s}")
    for name, rms, gap, sec, ep in rows:
        print(f"{name:38s} {rms:15.2e} {gap:10.2e} {sec:8.2f} {ep:>7s}")


if __name__ == "__main__":
    main()
