"""Faults a production service meets (issue 23): Ctrl-C during a fit, a fork after a fit,
fits in threads. Prints one line per measurement.

Usage (from the repository root, with defrag installed or built in place):

    PYTHONPATH=. python benchmarks/faults.py interrupt [CASE ...] [--reps 3]
    PYTHONPATH=. python benchmarks/faults.py fork
    PYTHONPATH=. python benchmarks/faults.py threads

interrupt: each case fits in a child process, which gets SIGINT `--delay` seconds into
the fit (default: 25 s for DefragModel on all rows, inside the restarts; 2 s for the
others); printed: the seconds from the signal to KeyboardInterrupt leaving fit (the
library's part) and to the child's exit (with the interpreter's own teardown: 1-2.5 s
for scikit-learn alone on a busy 2-core machine), and whether the estimator kept its
attributes. Cases (the issue's): DefragModel(subsample=None) on 1,000,000 x 28 with 20
restarts (fab, fab-nj2 with n_jobs=2, em, em-kl), proxy (ProxyTreeClassifier on
1,000,000 rows), proto (PrototypeExplainer on 35,000 rows, 10,000 candidates), and the
baselines bat, intrees, nh, d2 on 200,000 rows. Data: make_classification(1,000,000, 28,
8 informative), a random forest of 50 trees (min_samples_leaf=100, 100,000 rows a tree),
made once in --cache.

fork: a fit on 2 OpenMP threads, then os.fork() and a fit in the child, and the same
with a fork Pool of 2 workers; printed: seconds, or "hung" after --timeout.

threads: (1) threadpool_limits(1) in the main thread and a fit in another thread: the
restarts' thread budget (the log), the runnable threads of the process and its CPU time /
wall time during the fit; (2) 4 fits under joblib's threading
backend against the same 4 one after another: wall seconds and the most runnable
threads of the process at once (sampled from /proc every 10 ms, Linux).
"""
import argparse
import logging
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

CASES = ("fab", "fab-nj2", "em", "em-kl", "proxy", "proto", "bat", "intrees", "nh", "d2")

CHILD = textwrap.dedent("""
    import os, pickle, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal
    import numpy as np
    cache, case = sys.argv[1], sys.argv[2]
    X = np.load(os.path.join(cache, "X.npy")); y = np.load(os.path.join(cache, "y.npy"))
    with open(os.path.join(cache, "forest.pkl"), "rb") as f:
        forest = pickle.load(f)
    from defrag import DefragModel, PrototypeExplainer, ProxyTreeClassifier
    from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest
    all_rows = dict(subsample=None, n_restarts=20, random_state=0)
    est, args = {
        "fab": (lambda: DefragModel(forest, **all_rows), (X, y)),
        "fab-nj2": (lambda: DefragModel(forest, n_jobs=2, **all_rows), (X, y)),
        "em": (lambda: DefragModel(forest, method="em", **all_rows), (X, y)),
        "em-kl": (lambda: DefragModel(forest, method="em-kl", **all_rows), (X, y)),
        "proxy": (lambda: ProxyTreeClassifier(forest, n_jobs=2), (X,)),
        "proto": (lambda: PrototypeExplainer(forest, max_candidates=10000, random_state=0),
                  (X[:35000], y[:35000])),
        "bat": (lambda: BornAgainTree(forest, random_state=0), (X[:200000], y[:200000])),
        "intrees": (lambda: InTrees(forest), (X[:200000], y[:200000])),
        "nh": (lambda: NodeHarvest(forest), (X[:200000], y[:200000])),
        "d2": (lambda: DepthTwoTree(forest), (X[:200000], y[:200000])),
    }[case]
    est = est()
    before = dict(vars(est))
    print("READY", flush=True)
    try:
        est.fit(*args)
    except KeyboardInterrupt:
        kept = vars(est).keys() == before.keys() and all(vars(est)[k] is before[k] for k in before)
        print("INTERRUPTED", time.monotonic(), "kept" if kept else "changed", flush=True)
        raise
    print("FINISHED", flush=True)
""")


def make_data(cache):
    paths = [os.path.join(cache, name) for name in ("X.npy", "y.npy", "forest.pkl")]
    if all(os.path.exists(p) for p in paths):
        return
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    os.makedirs(cache, exist_ok=True)
    X, y = make_classification(1_000_000, 28, n_informative=8, random_state=0)
    forest = RandomForestClassifier(50, min_samples_leaf=100, max_samples=100_000, n_jobs=2,
                                    random_state=0).fit(X, y)
    np.save(paths[0], X)
    np.save(paths[1], y)
    with open(paths[2], "wb") as f:
        pickle.dump(forest, f)


def interrupt(args):
    make_data(args.cache)
    for case in args.cases or CASES:
        delay = args.delay if args.delay is not None else (25.0 if case in ("fab", "fab-nj2", "em", "em-kl") else 2.0)
        for _ in range(args.reps):
            proc = subprocess.Popen([sys.executable, "-c", CHILD, args.cache, case], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
            if proc.stdout.readline().strip() != "READY":
                print(case, "failed:", proc.stderr.read()[-2000:])
                break
            reader.start()
            time.sleep(delay)
            if proc.poll() is not None:
                print(f"{case}: finished within {delay} s; no signal sent")
                continue
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            exited = time.monotonic() - sent
            reader.join()
            stopped = [line.split() for line in lines if line.startswith("INTERRUPTED")]
            took = f"{float(stopped[0][1]) - sent:.2f} s" if stopped else "-"
            print(f"{case:8s} KeyboardInterrupt {took} after SIGINT, exit {exited:.2f} s, estimator "
                  f"{stopped[0][2] if stopped else '?'}", flush=True)


FORK = textwrap.dedent("""
    import multiprocessing, os, sys, time
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from defrag import DefragModel
    X, y = make_classification(40000, 10, n_informative=6, random_state=0)
    forest = RandomForestClassifier(10, max_depth=8, random_state=0).fit(X[:5000], y[:5000])
    def fit(_=None):
        start = time.perf_counter()
        DefragModel(forest, n_restarts=2, subsample=None, n_jobs=1, random_state=0).fit(X, y)
        return time.perf_counter() - start
    print("parent fit (2 threads)", f"{fit():.2f} s", flush=True)
    if sys.argv[1] == "fork":
        pid = os.fork()
        if pid == 0:
            print("child fit after os.fork()", f"{fit():.2f} s", flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    else:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print("fork Pool(2) fits", " ".join(f"{t:.2f} s" for t in pool.map(fit, range(2))), flush=True)
""")


def fork(args):
    for mode in ("fork", "pool"):
        proc = subprocess.Popen([sys.executable, "-c", FORK, mode], stdout=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=args.timeout)
            print(out.strip(), flush=True)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            print(out.strip(), f"\n{mode}: the child hung (killed after {args.timeout:.0f} s)", flush=True)


class RunnableThreads:
    """The most runnable threads of this process at once (state R in /proc), sampled."""

    def __init__(self, period=0.01):
        self.period, self.peak, self.samples = period, 0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = threading.get_native_id()
        while not self._stop.wait(self.period):
            n = 0
            for tid in os.listdir("/proc/self/task"):
                if int(tid) == me:
                    continue
                try:
                    with open(f"/proc/self/task/{tid}/stat") as f:
                        n += f.read().rsplit(")", 1)[1].split()[0] == "R"
                except OSError:
                    pass
            self.samples.append(n)
            self.peak = max(self.peak, n)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def threads(args):
    import joblib
    from threadpoolctl import threadpool_limits

    from defrag import DefragModel

    make_data(args.cache)
    X = np.load(os.path.join(args.cache, "X.npy"))[:200_000]
    y = np.load(os.path.join(args.cache, "y.npy"))[:200_000]
    with open(os.path.join(args.cache, "forest.pkl"), "rb") as f:
        forest = pickle.load(f)

    def fit(_=None):
        return DefragModel(forest, n_restarts=4, random_state=0).fit(X, y)

    fit()  # warm (imports, caches)
    budgets = []

    class Budgets(logging.Handler):
        def emit(self, record):
            if "OpenMP threads" in record.getMessage():
                budgets.append(record.getMessage())

    logger = logging.getLogger("defrag")
    logger.addHandler(Budgets())
    logger.setLevel(logging.INFO)
    with threadpool_limits(1), RunnableThreads() as limited:
        cpu, wall = time.process_time(), time.perf_counter()
        worker = threading.Thread(target=fit)
        worker.start()
        worker.join()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    logger.setLevel(logging.NOTSET)
    print(f"threadpool_limits(1), a fit in another thread: {budgets[-1]}; runnable threads mean "
          f"{np.mean(limited.samples):.2f}, most {limited.peak}; CPU/wall {cpu / wall:.2f} ({wall:.1f} s; "
          "CPU/wall also falls with other processes' load)", flush=True)

    with RunnableThreads() as seq:
        start = time.perf_counter()
        for _ in range(4):
            fit()
        one_by_one = time.perf_counter() - start
    with RunnableThreads() as par:
        start = time.perf_counter()
        joblib.Parallel(n_jobs=4, backend="threading")(joblib.delayed(fit)() for _ in range(4))
        side_by_side = time.perf_counter() - start
    print(f"4 fits one after another: {one_by_one:.1f} s, most runnable threads {seq.peak} "
          f"(mean {np.mean(seq.samples):.1f}); under joblib's threading backend: {side_by_side:.1f} s, "
          f"most runnable threads {par.peak} (mean {np.mean(par.samples):.1f}); cores {len(os.sched_getaffinity(0))}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("interrupt", "fork", "threads"))
    ap.add_argument("cases", nargs="*", help=f"interrupt cases (default all): {', '.join(CASES)}")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--delay", type=float, default=None)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "defrag-faults"))
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    {"interrupt": interrupt, "fork": fork, "threads": threads}[args.what](args)


if __name__ == "__main__":
    main()
