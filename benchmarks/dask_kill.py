"""Dask fault benchmark (issue 23.3): a worker of a LocalCluster killed (SIGKILL) during the
restarts of DefragModel.fit on a Dask X, --kills times; printed: for each kill, the outcome
(the same rules as the fit without a kill, the clear RuntimeError saying a worker was lost, or
anything else: other rules or a raw error), then "same rules: x/N".

Usage (from the repository root, defrag built in place, dask[distributed] installed):

    PYTHONPATH=. nice -n 10 python benchmarks/dask_kill.py                  # 10 kills
    PYTHONPATH=. nice -n 10 python benchmarks/dask_kill.py --kills 3 --rows 20000

The cluster: --workers worker processes (each under a nanny, which starts a new worker
process when one dies) x 1 thread. X: make_classification(--rows, 8 features), a Dask
array of --partitions partitions built from the array (so that the scheduler can recompute
any partition); the forest: 30 trees of depth 6; the fit: y=None (the forest's
predictions, computed and kept on the workers), --restarts restarts on a subsample of
--subsample rows, each scored by its rule list on all rows (one pass over the partitions
a restart). The reference is the same fit without a kill, on the same cluster (and it is
checked against the in-memory fit of the same rows).

Kill k: a thread waits until the fit's log reports pass number j (j drawn from 1 to
--restarts + 1, counting the passes after the first one: the restarts' passes), then
waits a random 0-150 ms (so that the kill lands inside a pass or between two), then
SIGKILLs the worker process of one worker (its pid read with client.run(os.getpid)
before the fit), chosen at random. The draws come from --seed. A draw that lands after the
fit has ended is not counted (printed, and drawn again). With --anywhere, the kill comes
at a random moment from the fit's start to the reference fit's duration instead. After each fit the
benchmark waits for the nanny's new worker before the next.
"""
import argparse
import faulthandler
import logging
import os
import signal
import threading
import time
import traceback

import numpy as np


class PassCounter(logging.Handler):
    """Counts the "defrag" log's passes over the partitions after the first pass."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.count = 0
        self.changed = threading.Condition()

    def emit(self, record):
        if record.getMessage().startswith("pass "):
            with self.changed:
                self.count += 1
                self.changed.notify_all()

    def wait_for(self, n, timeout):
        with self.changed:
            return self.changed.wait_for(lambda: self.count >= n, timeout)


def fingerprint(model):
    return (str(model.rules_), model.restart_errors_.tobytes(), model.eta_.tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--restarts", type=int, default=6)
    parser.add_argument("--subsample", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anywhere", action="store_true",
                        help="kill at a random moment of the whole fit (its first pass and the "
                             "states sent to the workers too), not only during the restarts")
    args = parser.parse_args()
    faulthandler.register(signal.SIGUSR1)  # kill -USR1 <pid>: where a stuck fit waits
    os.environ["DASK_LOGGING__DISTRIBUTED"] = "critical"  # the kills' own noise, in every process

    import dask.array as da
    from distributed import Client, LocalCluster
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    X, y = make_classification(args.rows, 8, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               random_state=0)
    forest = RandomForestClassifier(30, max_depth=6, random_state=0).fit(X, y)
    Xd = da.from_array(X, chunks=(-(-args.rows // args.partitions), 8))
    params = dict(n_restarts=args.restarts, subsample=args.subsample, max_iter=30, random_state=3)

    counter = PassCounter()
    logger = logging.getLogger("defrag")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    rng = np.random.default_rng(args.seed)

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="1GiB") as cluster, Client(cluster) as client:
        start = time.perf_counter()
        ref = DefragModel(forest, **params).fit(Xd)
        ref_seconds = time.perf_counter() - start
        print(f"reference fit (no kill): {ref_seconds:.1f} s, {counter.count} passes, "
              f"{ref.n_regions_} rules")
        in_memory = DefragModel(forest, **params).fit(X)
        print(f"  the same as in memory: {fingerprint(in_memory) == fingerprint(ref)}")
        passes = counter.count

        same = clear = k = missed = 0
        while k < args.kills:
            client.wait_for_workers(args.workers, timeout=120)
            pids = client.run(os.getpid)
            if args.anywhere:
                at, delay = 0, float(rng.uniform(0.0, ref_seconds))
            else:
                at, delay = int(rng.integers(1, passes)), float(rng.uniform(0.0, 0.15))
            victim = sorted(pids)[int(rng.integers(len(pids)))]
            counter.count = 0
            killed, done = [], threading.Event()

            def kill(at=at, delay=delay, pid=pids[victim], done=done, killed=killed):
                if counter.wait_for(at, timeout=300) and not done.is_set():
                    time.sleep(delay)
                    if not done.is_set():
                        os.kill(pid, signal.SIGKILL)
                        killed.append(counter.count)

            killer = threading.Thread(target=kill, daemon=True)
            killer.start()
            start = time.perf_counter()
            outcome = None
            try:
                model = DefragModel(forest, **params).fit(Xd)
            except Exception as exc:  # what the benchmark is here to count
                outcome = exc
            seconds = time.perf_counter() - start
            done.set()
            with counter.changed:  # the killer waits no more
                counter.count = passes
                counter.changed.notify_all()
            killer.join()
            if not killed:  # the fit ended before the kill: not counted, drawn again
                missed += 1
                print(f"  (the fit ended before the kill ({at}, {delay * 1000:.0f} ms): drawn again)")
                continue
            k += 1
            if outcome is None:
                same_rules = fingerprint(model) == fingerprint(ref)
                same += same_rules
                outcome = "same rules" if same_rules else "OTHER RULES"
            elif isinstance(outcome, RuntimeError) and "worker was lost" in str(outcome):
                clear += 1
                outcome = f"clear RuntimeError: {outcome}"
            else:
                where = traceback.extract_tb(outcome.__traceback__)[-3:]
                outcome = (f"RAW {type(outcome).__module__}.{type(outcome).__name__}: {outcome} (raised in "
                           + " < ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in reversed(where)) + ")")
            when = (f"{delay * 1000:.0f} ms into the fit, {killed[0]} passes done" if args.anywhere
                    else f"after pass {killed[0]} + {delay * 1000:.0f} ms")
            print(f"kill {k}: worker pid {pids[victim]} {when}: {outcome} ({seconds:.1f} s)", flush=True)
        print(f"same rules: {same}/{args.kills}; clear RuntimeError: {clear}/{args.kills}; "
              f"other: {args.kills - same - clear}/{args.kills} ({missed} draws missed: the fit ended first)")


if __name__ == "__main__":
    main()
