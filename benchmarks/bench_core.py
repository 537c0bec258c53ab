"""Figures for the core FAB fit of defrag: size, speed, memory, accuracy.

Usage (from the repository root, with defrag importable):

    python benchmarks/bench_core.py [--quick] [--threads N] [--dense-iters T] [--no-dense]

Prints one table, one row per case:

* synthetic1: Synthetic1 of sec. 7 (x ~ U[0,1]^2, y = XOR(x0 > .5, x1 > .5),
  10% label noise), 1,000 training and 1,000 test points;
* make_classification: scikit-learn's make_classification(10000, 28 features,
  8 informative), split half/half;

each simplified from RandomForestClassifier(n_estimators=100, random_state=0).

Columns: L = distinct splits (``len(model.splits_)``), rules found, error and
coverage of the rules on the test half (``model.evaluate``), the forest's test
error, seconds per restart (median of repeated fits with n_restarts=R, divided
by R), the peak resident memory of a process that does the whole case, the
OpenMP threads defrag used, then the like-for-like comparison with the dense
NumPy restart (benchmarks/dense_restart.py, the equations of tests/reference.py):
seconds per outer FAB iteration for both over the same first T iterations from
the same random start, their ratio, and the dense run's peak memory.

Every measurement runs in a fresh child process (this script with --case), so
that ru_maxrss is the peak of that case alone and no allocator or BLAS state
leaks from one case to the next; the child prints one JSON line.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

CASES = ("synthetic1", "make_classification")
N_ESTIMATORS = 100


def load_case(name):
    """(X_train, y_train, X_test, y_test) of a case."""
    if name == "synthetic1":
        # Same generator as tests/conftest.py::xor_data(0), copied so that the
        # benchmark does not depend on the test suite.
        rng = np.random.default_rng(0)
        n = 1000
        X = rng.random((2 * n, 2))
        clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
        y = np.where(rng.random(2 * n) < 0.1, 1 - clean, clean)
        return X[:n], y[:n], X[n:], y[n:]
    if name == "make_classification":
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=10000, n_features=28, n_informative=8, random_state=0)
        return X[:5000], y[:5000], X[5000:], y[5000:]
    raise ValueError(f"unknown case {name!r}")


def fit_forest(X, y):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=N_ESTIMATORS, random_state=0).fit(X, y)


def peak_mb():
    # ru_maxrss is in kB on Linux (bytes on macOS).
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024.0 * 1024.0) if sys.platform == "darwin" else rss / 1024.0


def wall(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# --------------------------------------------------------------------- children
def child_defrag(args):
    """Accuracy, seconds per restart and seconds per outer iteration of defrag."""
    from defrag import DefragModel
    from defrag.utils.threads import thread_budget

    Xtr, ytr, Xte, yte = load_case(args.case)
    rf = fit_forest(Xtr, ytr)

    R = args.restarts
    model = DefragModel.paper(rf, n_restarts=R, random_state=0, n_jobs=1)
    restart_times = [wall(lambda: model.fit(Xtr, ytr)) / R for _ in range(args.reps)]
    ev = model.evaluate(Xte, yte)

    # Per outer iteration: the fit with max_iter=T+1 makes T+1 full iterations
    # (log f, bound, E-step, truncation, M-step) plus one final bound; the fit with
    # max_iter=1 makes one, that final bound and all the fixed costs (split table,
    # ranks, training error, rules). Their difference is T iterations alone.
    # One restart and eps_schedule=() match the dense reference's run exactly.
    T = args.dense_iters

    def iter_model(max_iter):
        return DefragModel.paper(rf, n_restarts=1, max_iter=max_iter, eps_schedule=(),
                           random_state=0, n_jobs=1)

    long_run, short_run = iter_model(T + 1), iter_model(1)
    long_times, short_times = [], []
    # Interleaved pairs, at least iter_reps of them and at least iter_budget
    # seconds: on a small case the T iterations are a few per cent of a fit.
    start = time.perf_counter()
    while len(long_times) < args.iter_reps or time.perf_counter() - start < args.iter_budget:
        long_times.append(wall(lambda: long_run.fit(Xtr, ytr)))
        short_times.append(wall(lambda: short_run.fit(Xtr, ytr)))
    full_iters = long_run.n_iter_ - 2  # fewer than T if the bound converged early
    # Minimum, not median: the work is deterministic, so the fastest run is the one
    # least disturbed by other processes, and a difference of medians of a busy
    # machine can even come out negative.
    iter_s = (min(long_times) - min(short_times)) / max(full_iters, 1)

    return {
        "N": int(Xtr.shape[0]),
        "D": int(Xtr.shape[1]),
        "trees": len(rf.estimators_),
        "L": len(model.splits_),
        "rules": int(model.n_regions_),
        "error": ev["error"],
        # the paper's coverage (sec. 7): the test rows a rule of the printed list covers
        "coverage": float(np.mean(model.rules_.covers(Xte).any(axis=1))),
        "forest_error": float(np.mean(rf.predict(Xte) != yte)),
        "s_per_restart": statistics.median(restart_times),
        # defrag's OpenMP threads per restart for n_jobs=1 (its own thread budget).
        "threads": thread_budget(None, 1, Xtr.shape[0])[1],
        "iter_s": iter_s,
        "iters": full_iters,
        "lower_bound": long_run.lower_bound_.tolist(),
        "peak_mb": peak_mb(),
    }


def child_dense(args):
    """Seconds per outer iteration of the dense NumPy reference, same run as defrag's."""
    from threadpoolctl import threadpool_info

    from defrag import split_table_from_estimator

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dense_restart

    Xtr, ytr, _, _ = load_case(args.case)
    rf = fit_forest(Xtr, ytr)
    # defrag's split order and float32 rounding, so that eta's columns and the
    # random start line up with defrag's; the N x L float64 S is the dense cost.
    splits = split_table_from_estimator(rf)
    # the table DefragModel.paper fits: splits repeated but for an idle missing direction dropped
    splits = splits.without_idle_directions(Xtr)
    S = splits.binary_features(Xtr).astype(np.float64)
    y = np.searchsorted(rf.classes_, ytr).astype(np.intp)
    run = dense_restart.fab_restart(
        S, y, len(rf.classes_), n_components=10, max_iter=args.dense_iters + 1,
        seed=dense_restart.restart_seed(0),
    )
    blas = [p.get("num_threads") for p in threadpool_info() if p.get("user_api") == "blas"]
    return {
        "iter_s": float(np.mean(run["iter_seconds"])) if run["iter_seconds"].size else float("nan"),
        "iters": int(run["iter_seconds"].size),
        "lower_bound": run["lower_bound"].tolist(),
        "blas_threads": blas[0] if blas else None,
        "peak_mb": peak_mb(),
    }


def run_child(case, role, args):
    """Run one measurement in a fresh interpreter and return its JSON result."""
    cmd = [sys.executable, os.path.abspath(__file__), "--case", case, "--role", role,
           "--reps", str(args.reps), "--iter-reps", str(args.iter_reps),
           "--iter-budget", str(args.iter_budget),
           "--restarts", str(args.restarts), "--dense-iters", str(args.dense_iters)]
    env = dict(os.environ)
    if args.threads is not None:
        env["OMP_NUM_THREADS"] = str(args.threads)  # OpenBLAS (dense) reads it too
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(f"[{case}/{role}] child failed (exit {proc.returncode}):\n{proc.stderr}\n")
        return None
    return json.loads(lines[-1])


# ----------------------------------------------------------------------- parent
def fmt(value, spec):
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "-"
    return format(value, spec)


def print_table(rows, args):
    columns = [  # (header, key, format)
        ("case", "case", "s"), ("N", "N", "d"), ("D", "D", "d"), ("trees", "trees", "d"),
        ("L", "L", "d"), ("rules", "rules", "d"), ("test err", "error", ".4f"),
        ("coverage", "coverage", ".4f"), ("RF err", "forest_error", ".4f"),
        ("s/restart", "s_per_restart", ".4f"), ("peak MB", "peak_mb", ".0f"),
        ("threads", "threads", "d"), ("dense s/iter", "dense_iter_s", ".4f"),
        ("defrag s/iter", "iter_s", ".5f"), ("ratio", "ratio", ".0f"),
        ("dense peak MB", "dense_peak_mb", ".0f"),
    ]
    cells = [[h for h, _, _ in columns]]
    cells += [[fmt(r.get(key), spec) for _, key, spec in columns] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(columns))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print(f"s/restart: median of {args.reps} fit(s) with n_restarts={args.restarts}, n_jobs=1, "
          f"divided by {args.restarts}; peak MB: ru_maxrss of the case's own process.")
    print(f"s/iter: first {args.dense_iters} outer FAB iterations, eps_schedule=(), same random "
          "start (defrag: fastest fit with max_iter=T+1 minus fastest with max_iter=1, over T); "
          "ratio = dense / defrag.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--threads", type=int, default=None,
                    help="OMP_NUM_THREADS for the child processes (default: inherit)")
    ap.add_argument("--dense-iters", type=int, default=3,
                    help="outer iterations timed for the dense/defrag comparison")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense reference")
    ap.add_argument("--restarts", type=int, default=5, help="restarts per timed fit")
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    # Internal: a child process measures one case.
    ap.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    ap.add_argument("--role", choices=("defrag", "dense"), help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--iter-reps", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--iter-budget", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dense_iters < 1:
        ap.error("--dense-iters must be >= 1")
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.iter_reps is None:
        # The per-iteration figure is a difference of two short fits: more
        # repetitions than for s/restart keep its noise down.
        args.iter_reps = 3 if args.quick else 7
    if args.iter_budget is None:
        args.iter_budget = 0.5 if args.quick else 2.0

    if args.case:
        result = child_defrag(args) if args.role == "defrag" else child_dense(args)
        print(json.dumps(result))
        return

    # Timings on a shared machine are only meaningful when it is otherwise idle
    # (defrag's OpenMP kernels slow down several-fold when a core is busy), so the
    # load is printed with the table.
    load_before = os.getloadavg()[0]
    rows, notes = [], []
    for case in args.cases:
        row = {"case": case}
        res = run_child(case, "defrag", args)
        if res is not None:
            row.update(res)
        if not args.no_dense:
            dense = run_child(case, "dense", args)
            if dense is not None:
                row["dense_iter_s"] = dense["iter_s"]
                row["dense_peak_mb"] = dense["peak_mb"]
                if res is not None:
                    if res["iter_s"] > 0:
                        row["ratio"] = dense["iter_s"] / res["iter_s"]
                    # Both ran the same iterations from the same start, so their
                    # bound traces must agree up to rounding: a check that the
                    # comparison is like for like (and that the kernels are right).
                    a, b = np.array(res["lower_bound"]), np.array(dense["lower_bound"])
                    if a.size == b.size:
                        rel = float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))
                        notes.append(f"{case}: bound traces ({a.size} values) agree to "
                                     f"relative {rel:.1e}")
                    else:
                        notes.append(f"{case}: iteration counts differ (defrag {a.size}, "
                                     f"dense {b.size}): the s/iter comparison is not like for like")
                    if dense["blas_threads"] not in (None, res["threads"]):
                        notes.append(f"{case}: dense used {dense['blas_threads']} BLAS threads")
        rows.append(row)
    print_table(rows, args)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"1-min load average before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f} "
          f"on {cores} cores")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
