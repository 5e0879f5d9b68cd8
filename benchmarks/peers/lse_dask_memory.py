"""logsumexp_matmul on a dask array larger than a worker's memory (issue 18).

A (n x k) dask array of rows against a (k x m) matrix: the dense product ``A @ B`` would be
``n * m * 8`` bytes (32 GB at the default n = 2e6, m = 2000), but each task holds one chunk
of ``A``, ``B`` and one ``block_size`` tile. Runs on a LocalCluster with a per-worker memory
limit and prints the wall time, the peak memory every worker reported and a check of a few
rows against the in-memory computation.

Usage: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lse_dask_memory.py
       [--n 2000000] [--k 16] [--m 2000] [--chunk 50000] [--workers 2] [--memory-limit 1GB]
"""
import argparse
import os
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _worker_rss(client):
    return client.run(lambda: __import__("psutil").Process().memory_info().rss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--m", type=int, default=2000)
    parser.add_argument("--chunk", type=int, default=50_000)
    parser.add_argument("--block-size", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GB")
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    from solvers import logsumexp_matmul

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           memory_limit=args.memory_limit, dashboard_address=None)
    client = Client(cluster)
    client.run(lambda: __import__("solvers").logsumexp_matmul(np.ones((4, 2)), np.ones((2, 4))))
    rng = np.random.default_rng(0)
    B = rng.normal(size=(args.k, args.m)) / 4
    A = da.random.default_rng(1).normal(size=(args.n, args.k),
                                        chunks=(args.chunk, args.k)) / 4
    peaks = {}
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            for w, rss in _worker_rss(client).items():
                peaks[w] = max(peaks.get(w, 0), rss)
            time.sleep(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    base = _worker_rss(client)
    poller.start()
    start = time.perf_counter()
    out = logsumexp_matmul(A, B, block_size=args.block_size).compute()
    wall = time.perf_counter() - start
    stop.set()
    poller.join()
    head = A[:1000].compute()
    ref = logsumexp_matmul(head, B)
    dense_gb = args.n * args.m * 8 / 1e9
    print(f"logsumexp_matmul: A {args.n} x {args.k} (dask, chunks of {args.chunk} rows), "
          f"B {args.k} x {args.m}; dense A @ B would be {dense_gb:.1f} GB")
    print(f"LocalCluster: {args.workers} worker processes x 1 thread, memory_limit "
          f"{args.memory_limit} each; NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"wall time {wall:.1f} s; output {out.shape}, all finite: "
          f"{bool(np.isfinite(out).all())}; first 1000 rows vs in-memory max rel diff "
          f"{np.max(np.abs(out[:1000] / ref - 1)):.1e}")
    for w in sorted(peaks):
        print(f"worker {w}: peak RSS {peaks[w] / 2**20:.0f} MiB (idle {base[w] / 2**20:.0f} MiB)")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
