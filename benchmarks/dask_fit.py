"""Dask benchmark: DefragModel.fit on 10,000,000 rows x 28 on a local cluster (defrag/fit/dask_rows.py).

Usage (from the repository root, defrag built in place, dask[distributed] installed):

    PYTHONPATH=. python benchmarks/dask_fit.py                    # 10,000,000 rows, 2 workers
    PYTHONPATH=. python benchmarks/dask_fit.py --rows 1000000 --compare

X is generated on the workers, one partition at a time from a seed of its own (standard
normal features), so that it is never built in one process; the partitions are not
persisted: each pass over X generates them again. The classes follow
((x0 > 0.5) and (x1 > -0.5)) or x2 > 1.2, 10% flipped. A random forest (--trees trees,
min_samples_leaf=100, as the large case of benchmarks/run.py) is fitted in the client on
--train-rows rows of the same generator (its own seed), and DefragModel (the defaults: 20
restarts, subsample="auto", 30,000 rows) is fitted to the forest's predictions (y=None:
computed on the workers, partition by partition, and kept there).

Printed: seconds per phase (fit_seconds_), seconds of each pass over the partitions (the
"defrag" log), and the peak resident memory of every process: the client (which runs the
scheduler of the LocalCluster and the restarts) and each worker (resource.getrusage, run
there through client.run). With --compare the same rows are also computed in the client
and fitted in memory (only for sizes that fit), and the rules compared.
"""
import argparse
import logging
import os
import pickle
import resource
import time

import numpy as np

N_FEATURES = 28


def labels(X, rng):
    clean = ((X[:, 0] > 0.5) & (X[:, 1] > -0.5)) | (X[:, 2] > 1.2)
    return np.where(rng.random(X.shape[0]) < 0.1, ~clean, clean).astype(np.int64)


def block(seed, block_info=None):
    """Partition i of X: standard normal rows from the seed (seed, i)."""
    info = block_info[None]
    rng = np.random.default_rng([seed, info["chunk-location"][0]])
    return rng.standard_normal(info["chunk-shape"])


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class PassLog(logging.Handler):
    """Collects the "defrag" log's lines about passes over the partitions."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if "pass" in message or message.startswith("fit in") or "restarts fitted on" in message:
            self.lines.append(message)


def train_forest(args):
    """The forest, fitted on --train-rows rows (or read from --cache, where it is saved)."""
    from sklearn.ensemble import RandomForestClassifier

    path = None if args.cache is None else os.path.join(
        args.cache, f"dask-forest-{args.trees}-{args.train_rows}-{args.seed}.pkl")
    if path is not None and os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)
    rng = np.random.default_rng([args.seed, 10**6])
    X_train = rng.standard_normal((args.train_rows, N_FEATURES))
    start = time.perf_counter()
    forest = RandomForestClassifier(args.trees, min_samples_leaf=100, random_state=0, n_jobs=-1).fit(
        X_train, labels(X_train, rng))
    forest.n_jobs = None  # predicting on the workers: one thread each (they are daemons)
    print(f"forest: {args.trees} trees on {args.train_rows:,} rows in {time.perf_counter() - start:.1f} s")
    if path is not None:
        os.makedirs(args.cache, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(forest, f)
    return forest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GiB", help="per worker (Dask's memory_limit)")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--train-rows", type=int, default=100_000, help="rows the forest is fitted on")
    parser.add_argument("--restarts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", action="store_true", help="also fit the same rows in memory")
    parser.add_argument("--cache", help="folder where the forest is saved and read (default: fit it)")
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster
    from defrag import DefragModel

    handler = PassLog()
    logger = logging.getLogger("defrag")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    forest = train_forest(args)

    size = -(-args.rows // args.partitions)
    chunks = tuple(min(size, args.rows - i) for i in range(0, args.rows, size))
    X = da.map_blocks(block, args.seed, chunks=(chunks, (N_FEATURES,)), dtype=np.float64)
    print(f"X: {args.rows:,} x {N_FEATURES} in {len(chunks)} partitions of {chunks[0]:,} rows "
          f"({args.rows * N_FEATURES * 8 / 2**30:.2f} GiB as float64), generated on the workers")

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        print(f"cluster: {args.workers} worker processes x 1 thread, memory_limit {args.memory_limit} each")
        model = DefragModel(forest, n_restarts=args.restarts, random_state=0)
        start = time.perf_counter()
        model.fit(X)
        total = time.perf_counter() - start
        workers = client.run(peak_mb)
    print(f"\nDask fit: {total:.1f} s, {model.n_regions_} rules, restarts on {model.subsample_size_:,} rows, "
          f"{len(model.splits_):,} splits of {model.n_all_splits_:,}")
    print("phases (s): " + ", ".join(f"{k} {v:.1f}" for k, v in model.fit_seconds_.items()))
    for line in handler.lines:
        print("  " + line)
    print("peak resident memory (MB):")
    print(f"  client (scheduler, restarts): {peak_mb():.0f}")
    for address, mb in sorted(workers.items()):
        print(f"  worker {address}: {mb:.0f}")
    print(model.rules_)

    if args.compare:
        handler.lines.clear()
        X_here = X.compute(scheduler="threads")
        start = time.perf_counter()
        ref = DefragModel(forest, n_restarts=args.restarts, random_state=0).fit(X_here)
        print(f"\nin-memory fit of the same rows: {time.perf_counter() - start:.1f} s; "
              f"phases (s): " + ", ".join(f"{k} {v:.1f}" for k, v in ref.fit_seconds_.items()))
        print(f"  client peak now {peak_mb():.0f} MB (X in memory: {X_here.nbytes / 2**20:.0f} MB)")
        same = str(ref.rules_) == str(model.rules_) and all(
            np.array_equal(getattr(ref, a), getattr(model, a))
            for a in ("eta_", "alpha_", "gamma_", "restart_errors_"))
        print(f"  identical rules and restarts: {same}")


if __name__ == "__main__":
    main()
