"""defrag benchmark suite: one table of speed, memory and size figures.

Usage (from the repository root, with defrag installed or built in place):

    python benchmarks/run.py            # quick: small cases, dense baseline for 3 iterations
    python benchmarks/run.py --full     # adds the 1,000,000-row case and its scaling rows,
                                        # and runs the dense baseline for a whole restart

Cases (each measured in a fresh child process, so that its peak memory is its own):

* synthetic1     Synthetic1 of Hara & Hayashi (XOR, 10% label noise), N=1,000, 100 trees;
* cls28, cls50   make_classification(10,000, D=28 or 50, 8 informative) split half/half,
                 100 trees, N=5,000 training points;
* large          make_classification(2,000,000, D=28), first 1,000,000 rows, random forest of
                 100 trees with min_samples_leaf=100 (--full; data and forest made once, in a
                 child of their own, and cached in --cache: the measured children read them);
                 (20 restarts, n_jobs=2, default subsample="auto": each restart fitted on 30,000
                 rows, the best on all rows kept; --compare-all-rows adds subsample=None);
* scale-N-tT     one restart on N rows with T OpenMP threads: the large case's rows and
                 forest with --full (N = 1e3 .. 1e6), else make_classification rows with the
                 cls28 forest (N = 1e3 .. 1e5);
* ruleset        RuleSet.predict on 1,000,000 rows over 28 features: a 10-rule set (EM, long
                 rules) and the set FAB chooses on the same data.
* contended      a 58,000-row, 7-class fit (make_classification(58,000, 9, n_informative=6),
                 100 trees, min_samples_leaf=5, DefragModel's defaults) timed on a quiet
                 machine and again while one busy-loop process per core but one runs
                 (started and stopped by the benchmark, each bounded in time): the ratio.
* rowcost        (--only rowcost) seconds per EM update (K=10, one thread, every split) per
                 row x component x feature at N = 5,000 and 1,000,000 of the large case's
                 rows, with the cls28 forest and with the large forest: how the per-row cost
                 grows with N (the tables and the N x K arrays leaving the caches).

Columns: N, D, trees, L (distinct splits), K (rules found), s/restart (median over the
restarts of a fit), peak MB of the child process, threads, and, where the dense N x L
formulation fits in memory, the same restart by benchmarks/dense_restart.py (the
equations of tests/reference.py in dense NumPy) from the same random start (eps_schedule=(), so both run exactly Algorithm 1) with the ratio, its
BLAS on as many threads as defrag used (--full adds the ratio with BLAS on every core).
In quick mode the dense run is cut to a few iterations and both sides report seconds
per iteration instead. Timing ratios are taken within one run; absolute seconds move
with the machine's load (the load average is printed).
"""
import argparse
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DENSE_LIMIT_BYTES = 4 * 2**30  # the dense S matrix must fit in this


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_mb():
    """Resident memory now (Linux /proc), else the peak so far."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_mb()


def large_data(cache):
    """The large case's rows: (X_train, y_train) in memory, (X_test, y_test) memory-mapped
    (read as used), from .npy files in the cache written on first use. Generating them
    peaks at 1.46 GB (make_classification's temporaries), which would hide what the fit
    itself uses: the parent makes them in a child of their own (child_prepare)."""
    names = ("Xtr", "ytr", "Xte", "yte")
    paths = [os.path.join(cache, f"large-{name}.npy") for name in names]
    if not all(os.path.exists(p) for p in paths):
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=2_000_000, n_features=28, n_informative=8,
                                   random_state=0)
        os.makedirs(cache, exist_ok=True)
        for path, part in zip(paths, (X[:1_000_000], y[:1_000_000], X[1_000_000:], y[1_000_000:])):
            np.save(path + ".tmp.npy", part)
            os.replace(path + ".tmp.npy", path)
    return (np.load(paths[0]), np.load(paths[1]), np.load(paths[2], mmap_mode="r"),
            np.load(paths[3], mmap_mode="r"))


def child_prepare(args):
    """Writes a case's data (large) and forest to the cache, so that the measured
    children only read them: training a forest on a cold cache would count in their peak."""
    load_data(args.child, args.cache)
    return {"peak_mb": peak_mb()}


def load_data(case, cache):
    """(X_train, y_train, X_test, y_test, forest) of a case; forests cached on disk."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    if case == "synthetic1":
        rng = np.random.default_rng(0)
        X = rng.random((2000, 2))
        clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
        y = np.where(rng.random(2000) < 0.1, 1 - clean, clean)
        split, forest_kw = 1000, {}
    elif case in ("cls28", "cls50"):
        X, y = make_classification(n_samples=10000, n_features=int(case[3:]), n_informative=8,
                                   random_state=0)
        split, forest_kw = 5000, {}
    elif case == "large":
        Xtr, ytr, Xte, yte = large_data(cache)
        X, y = None, None
        split, forest_kw = 1_000_000, {"min_samples_leaf": 100}
    else:
        raise ValueError(case)
    if X is not None:
        Xtr, ytr, Xte, yte = X[:split], y[:split], X[split:], y[split:]
    path = os.path.join(cache, f"forest-{case}.pkl")
    if os.path.exists(path):
        with open(path, "rb") as f:
            forest = pickle.load(f)
    else:
        forest = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=-1,
                                        **forest_kw).fit(Xtr, ytr)
        os.makedirs(cache, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(forest, f)
    return Xtr, ytr, Xte, yte, forest


def child_fit(args):
    """Fit figures of one case: L, K, seconds per restart, test error, peak memory."""
    from defrag import DefragModel
    from defrag.utils.threads import thread_budget

    Xtr, ytr, Xte, yte, forest = load_data(args.child, args.cache)
    # the process before any fit: Python, NumPy, scikit-learn (the forest), the data
    loaded_mb = current_mb()
    n_restarts = args.restarts
    times, model = [], None
    for _ in range(args.reps):
        model = DefragModel(forest, n_restarts=n_restarts, random_state=0, n_jobs=args.n_jobs,
                            subsample=None if args.subsample == "none" else "auto")
        start = time.perf_counter()
        model.fit(Xtr, ytr)
        times.append((time.perf_counter() - start) / n_restarts)
    ev = model.evaluate(Xte[:100_000], yte[:100_000])
    # the paper's algorithm (every split, MAP prediction: the default before the rule
    # lists), timed the same way in the same child for the ratio
    paper_times, paper = [], None
    for _ in range(args.reps):
        paper = DefragModel.paper(forest, n_restarts=n_restarts, random_state=0, n_jobs=args.n_jobs,
                                  subsample=None if args.subsample == "none" else "auto")
        start = time.perf_counter()
        paper.fit(Xtr, ytr)
        paper_times.append((time.perf_counter() - start) / n_restarts)
    out = {
        "paper_s_restart": statistics.median(paper_times), "paper_K": paper.n_regions_,
        "paper_error": paper.evaluate(Xte[:100_000], yte[:100_000])["error"],
        "N": len(Xtr), "D": Xtr.shape[1], "trees": len(forest.estimators_),
        "L": len(model.splits_), "K": model.n_regions_, "s_restart": statistics.median(times),
        "fit_s": statistics.median(times) * n_restarts, "error": ev["error"],
        # the paper's coverage (sec. 7): the test rows a rule of the printed list covers
        "coverage": float(np.mean(model.rules_.covers(Xte[:100_000]).any(axis=1))),
        "subsample": model.subsample_size_,
        "threads": thread_budget(args.n_jobs, n_restarts, len(Xtr))[1],
        "workers": thread_budget(args.n_jobs, n_restarts, len(Xtr))[0],
        "loaded_mb": loaded_mb,
        # the per-update run below: one restart, n_jobs=1
        "algo_threads": thread_budget(1, 1, len(Xtr))[1],
    }
    if args.dense_iters:
        # the like-for-like run: Algorithm 1 without the warm-up, the dense baseline's seed
        # Seconds per update: a fit with max_iter=T minus one with max_iter=1 (same
        # start), so that the fixed costs (split table, ranks, rules) cancel; the
        # fastest of the repetitions, as the work is deterministic. The dense side
        # times its own loop only.
        def algo_fit(max_iter):  # every split, as the dense formulation has them
            return DefragModel.paper(forest, n_restarts=1, max_iter=max_iter, eps_schedule=(),
                                     random_state=0, n_jobs=1)

        algo, one = algo_fit(args.dense_iters), algo_fit(1)
        long_runs = [_timed(lambda: algo.fit(Xtr, ytr)) for _ in range(max(args.reps, 3))]
        short_runs = [_timed(lambda: one.fit(Xtr, ytr)) for _ in range(max(args.reps, 3))]
        out["algo_updates"] = max(int(algo.n_iter_) - 2, 1)  # updates beyond the first
        # on a tiny case the difference can drown in timing noise: no figure then
        diff = min(long_runs) - min(short_runs)
        out["algo_s"] = diff if diff > 0.05 * min(short_runs) else None
        out["algo_bound"] = algo.lower_bound_.tolist()
    out["peak_mb"] = peak_mb()
    return out


def child_dense(args):
    """The same restart in dense NumPy (benchmarks/dense_restart.py)."""
    sys.path.insert(0, HERE)
    import dense_restart
    from threadpoolctl import threadpool_limits

    from defrag import split_table_from_estimator

    Xtr, ytr, _, _, forest = load_data(args.child, args.cache)
    splits = split_table_from_estimator(forest)
    # the table DefragModel.paper fits: splits repeated but for an idle missing direction dropped
    splits = splits.without_idle_directions(Xtr)
    S = splits.binary_features(Xtr).astype(np.float64)
    y = np.searchsorted(forest.classes_, ytr).astype(np.intp)
    # BLAS threads: as many as defrag's run (--blas-threads), or the library's default
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        run = dense_restart.fab_restart(S, y, len(forest.classes_), n_components=10,
                                        max_iter=args.dense_iters,
                                        seed=dense_restart.restart_seed(0))
    return {"dense_s": float(np.sum(run["iter_seconds"])), "dense_updates": len(run["iter_seconds"]),
            "dense_bound": run["lower_bound"].tolist(), "dense_peak_mb": peak_mb()}


def child_scale(args):
    """One restart on N rows: the large case's rows and forest (--full), or rows of the
    same generator with the cls28 forest (quick mode: no 1e6-row forest to train)."""
    from sklearn.datasets import make_classification

    from defrag import DefragModel

    _, size, source = args.child.split("-")
    n = int(size)
    if source == "large":
        Xtr, ytr, _, _, forest = load_data("large", args.cache)
        X, y = Xtr[:n], ytr[:n]
    else:
        forest = load_data("cls28", args.cache)[4]
        X, y = make_classification(n_samples=n, n_features=28, n_informative=8, random_state=1)
    model = DefragModel.paper(forest, n_restarts=1, random_state=0, n_jobs=1)  # every split
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - start)
    return {"N": n, "D": X.shape[1], "trees": len(forest.estimators_), "L": len(model.splits_),
            "K": model.n_regions_, "s_restart": min(times), "iterations": model.n_iter_,
            "s_iter": min(times) / model.n_iter_, "peak_mb": peak_mb()}


def child_ruleset(args):
    """RuleSet.predict throughput on 1,000,000 rows over 28 features: a 10-rule set (EM,
    long rules) and the rule set FAB chooses on the same data."""
    from defrag import DefragModel

    Xtr, ytr, _, _, forest = load_data("cls28", args.cache)
    X = np.random.default_rng(0).normal(size=(1_000_000, 28))
    out = {}
    for name, kw in (("em", dict(method="em", n_components=10, n_restarts=2)), ("fab", dict(n_restarts=5))):
        rules = DefragModel.paper(forest, random_state=0, **kw).fit(Xtr, ytr).rules_  # long rules
        rules.predict(X[:1000])
        best = min(_timed(lambda: rules.predict(X, n_threads=1)) for _ in range(max(args.reps, 5)))
        out[name] = {"K": len(rules.rules), "conditions": sum(len(r.conditions) for r in rules.rules),
                     "rows_per_s": len(X) / best}
    return {"N": len(X), "D": 28, "sets": out, "threads": 1, "peak_mb": peak_mb()}


def child_phases(args):
    """The large case's default fit (20 restarts, subsample="auto") on n_jobs threads:
    seconds per phase (DefragModel.fit_seconds_)."""
    from defrag import DefragModel

    Xtr, ytr, _, _, forest = load_data("large", args.cache)
    model = DefragModel(forest, n_restarts=20, random_state=0, n_jobs=args.n_jobs)
    start = time.perf_counter()
    model.fit(Xtr, ytr)
    total = time.perf_counter() - start
    return {"N": len(Xtr), "n_jobs": args.n_jobs, "fit_s": total, "phases": getattr(model, "fit_seconds_", {"fit": total}),
            "K": model.n_regions_, "rules": str(model.rules_), "peak_mb": peak_mb()}


def child_rowcost(args):
    """Seconds per update of one restart on one thread, per row x component x feature:
    EM with K=10 fixed (FAB removes components as it goes, so its K per update varies),
    every split (DefragModel.paper), the update's time from a fit of T=40 final-phase
    updates minus one of T=1 (same start, same warm-up), over their difference in updates.
    Seconds are the process's CPU time (one thread). Forest: cls28 (fitted on 5,000 rows) or large (1e6 rows, min_samples_leaf=100); rows:
    the first N of the large case's."""
    from defrag import DefragModel

    _, size, source = args.child.split("-")
    n = int(size)
    Xtr, ytr, _, _, forest = load_data("large", args.cache)
    if source != "large":
        forest = load_data(source, args.cache)[4]
    X, y = Xtr[:n], ytr[:n]

    def fit(max_iter):
        model = DefragModel.paper(forest, method="em", n_components=10, n_restarts=1, random_state=0,
                                  n_jobs=1, max_iter=max_iter, tol=0.0)
        start = time.process_time()  # CPU seconds of this one-thread process: a busy
        model.fit(X, y)                # machine slows the wall clock, not the work done
        return time.process_time() - start, model.n_iter_, model

    reps = max(1, min(args.reps, int(2e6 // n)))
    long_ = min((fit(40) for _ in range(reps)), key=lambda r: r[0])
    short = min((fit(1) for _ in range(reps)), key=lambda r: r[0])
    per_update = (long_[0] - short[0]) / (long_[1] - short[1])
    model = long_[2]
    return {"N": n, "forest": source, "L": len(model.splits_), "K": 10, "D": X.shape[1],
            "s_update": per_update, "ns": per_update / (n * 10 * X.shape[1]) * 1e9,
            "peak_mb": peak_mb()}


def _busy_loops(n, seconds):
    """n processes that each spin on a core for at most `seconds`."""
    code = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def child_contended(args):
    """The same fit quiet and with every core but one taken by a busy loop."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel
    from defrag.utils.threads import available_cores

    X, y = make_classification(n_samples=58_000, n_features=9, n_classes=7, n_informative=6,
                               random_state=0)
    path = os.path.join(args.cache, "forest-contended.pkl")
    if os.path.exists(path):
        with open(path, "rb") as f:
            forest = pickle.load(f)
    else:
        forest = RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=0,
                                        n_jobs=-1).fit(X, y)
        os.makedirs(args.cache, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(forest, f)
    cores = available_cores()

    def fit():
        return DefragModel(forest, random_state=0).fit(X)

    fit()  # warm: imports, first-touch allocations
    quiet = [_timed(fit) for _ in range(args.reps)]
    busy = _busy_loops(cores - 1, seconds=60 + 30 * args.reps * max(quiet))
    try:
        time.sleep(0.2)  # the loops are running
        contended = [_timed(fit) for _ in range(args.reps)]
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return {"N": len(X), "D": X.shape[1], "cores": cores, "busy": cores - 1,
            "quiet_s": quiet, "contended_s": contended,
            "ratio": statistics.median(contended) / statistics.median(quiet),
            "peak_mb": peak_mb()}


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_child(name, role, args, threads=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--role", role,
           "--cache", args.cache, "--reps", str(args.reps), "--restarts", str(args.restarts),
           "--n-jobs", str(args.n_jobs), "--dense-iters", str(args.dense_iters),
           "--subsample", args.subsample]
    if getattr(args, "blas_threads", None):
        cmd += ["--blas-threads", str(args.blas_threads)]
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        print(f"[{name}/{role}] failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="add the 1e6-row case, full dense restarts")
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "defrag-bench"),
                    help="where trained forests are kept between runs")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--dense-iters", type=int, default=None,
                    help="outer iterations of the like-for-like runs (default 3, --full: 100)")
    ap.add_argument("--compare-all-rows", action="store_true",
                    help="with --full, also fit the 1e6-row case with every restart on all rows "
                         "(subsample=None; about 10 minutes on 2 cores)")
    ap.add_argument("--only", default=None,
                    help="comma-separated sections to run: fit,scale,ruleset,contended,phases,rowcost "
                         "(default all but phases and rowcost; phases: the 1e6-row fit's phases "
                         "per --threads; rowcost: seconds per update per row x component x "
                         "feature at 5,000 and 1,000,000 rows)")
    ap.add_argument("--threads", default="1,2",
                    help="thread counts of the scaling rows and of the phase breakdown")
    ap.add_argument("--subsample", default="auto", help=argparse.SUPPRESS)
    ap.add_argument("--blas-threads", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--role", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dense_iters is None:
        args.dense_iters = 100 if args.full else 3

    if args.child:
        role = {"fit": child_fit, "dense": child_dense, "scale": child_scale,
                "ruleset": child_ruleset, "prepare": child_prepare,
                "contended": child_contended, "phases": child_phases,
                "rowcost": child_rowcost}[args.role]
        print(json.dumps(role(args)))
        return 0

    load = os.getloadavg()[0]
    sections = set((args.only or "fit,scale,ruleset,contended").split(","))
    thread_counts = [int(t) for t in args.threads.split(",")]
    rows = []
    for case in ["synthetic1", "cls28", "cls50"] if "fit" in sections else []:
        run_child(case, "prepare", args)
        fit = run_child(case, "fit", args)
        if fit is None:
            continue
        row = dict(case=case, **fit)
        if fit["N"] * fit["L"] * 8 <= DENSE_LIMIT_BYTES:
            # Like for like: the dense run's BLAS on as many threads as defrag's run
            # (one on these cases); with --full also on every core, NumPy's default.
            dense = run_child(case, "dense", argparse.Namespace(
                **{**vars(args), "blas_threads": fit["algo_threads"]}))
            if dense:
                row.update(dense)
                agree = np.max(np.abs(np.subtract(fit["algo_bound"], dense["dense_bound"]))
                               / np.abs(dense["dense_bound"]))
                row["agree"] = float(agree)
                if fit["algo_s"]:
                    row["ratio"] = (dense["dense_s"] / dense["dense_updates"]) / (
                        fit["algo_s"] / fit["algo_updates"])
            all_cores = run_child(case, "dense", args) if args.full else None
            if all_cores and fit["algo_s"]:
                row["dense_all_cores_s"] = all_cores["dense_s"] / all_cores["dense_updates"]
                row["ratio_all_cores"] = row["dense_all_cores_s"] / (
                    fit["algo_s"] / fit["algo_updates"])
        rows.append(row)
    if args.full and "fit" in sections:
        run_child("large", "prepare", args)
        big = argparse.Namespace(**{**vars(args), "restarts": 20, "n_jobs": 2, "reps": 1,
                                    "dense_iters": 0})
        fit = run_child("large", "fit", big)
        if fit:
            rows.append(dict(case="large-20-restarts", **fit))
        if args.compare_all_rows:
            fit = run_child("large", "fit", argparse.Namespace(**{**vars(big), "subsample": "none"}))
            if fit:
                rows.append(dict(case="large-20-restarts-all-rows", **fit))
    sizes = [1000, 10_000, 100_000] + ([1_000_000] if args.full else [])
    sizes = sizes if "scale" in sections else []
    scale = []
    for n in sizes:
        for threads in thread_counts:
            source = "large" if args.full else "cls28"
            res = run_child(f"scale-{n}-{source}", "scale", args, threads=threads)
            if res:
                res["threads"] = threads
                scale.append(res)
                rows.append(dict(case=f"scale-{n}-t{threads}", **res))
    rowcost = []
    if "rowcost" in sections:
        run_child("large", "prepare", args)
        for source in ("cls28", "large"):
            for n in (5_000, 1_000_000):
                res = run_child(f"rowcost-{n}-{source}", "rowcost", args, threads=1)
                if res:
                    rowcost.append(res)
    rs = run_child("ruleset", "ruleset", args) if "ruleset" in sections else None
    contended = run_child("contended", "contended", args) if "contended" in sections else None
    phases = []
    if "phases" in sections:
        run_child("large", "prepare", args)
        for t in thread_counts:
            res = run_child("large", "phases", argparse.Namespace(**{**vars(args), "n_jobs": t}),
                            threads=t)
            if res:
                phases.append(res)

    head = ("case", "N", "D", "trees", "L", "K", "s/restart", "peak MB", "threads",
            "dense s/upd", "defrag s/upd", "ratio", "dense MB")
    table = [head]
    for r in rows:
        table.append((
            r["case"], str(r["N"]), str(r["D"]), str(r["trees"]), str(r["L"]), str(r["K"]),
            fmt(r["s_restart"], ".4f"), fmt(r["peak_mb"], ".0f"), str(r["threads"]),
            fmt(r.get("dense_s") and r["dense_s"] / r["dense_updates"], ".4f"),
            fmt(r.get("algo_s") and r["algo_s"] / r["algo_updates"], ".5f"),
            fmt(r.get("ratio"), ".0f"), fmt(r.get("dense_peak_mb"), ".0f"),
        ))
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    for t in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(t, widths))))
    print()
    for r in rows:
        if "loaded_mb" in r and not r["case"].startswith("large"):
            print(f"{r['case']}: peak {r['peak_mb']:.0f} MB; {r['loaded_mb']:.0f} MB resident before "
                  f"the first fit (Python, NumPy, scikit-learn with the forest, the data)")
        if "paper_s_restart" in r:
            print(f"{r['case']}: default {r['s_restart']:.4f} s per restart ({r['K']} rules, test error "
                  f"{r['error']:.4f}); DefragModel.paper {r['paper_s_restart']:.4f} s per restart "
                  f"({r['paper_K']} rules, test error {r['paper_error']:.4f}): default / paper "
                  f"{r['s_restart'] / r['paper_s_restart']:.2f}")
        if "agree" in r:
            print(f"{r['case']}: defrag and dense bound traces ({len(r['dense_bound'])} values) "
                  f"agree to relative {r['agree']:.1e}; {r['algo_updates']} updates")
        if "ratio_all_cores" in r:
            print(f"{r['case']}: the dense run with BLAS on every core: "
                  f"{r['dense_all_cores_s']:.4f} s per update, {r['ratio_all_cores']:.0f}x defrag's "
                  f"({r['algo_threads']} thread{'s' if r['algo_threads'] > 1 else ''})")
        if r["case"].startswith("large"):
            print(f"{r['case']}: 20 restarts in {r['fit_s']:.1f} s with n_jobs=2 "
                  f"({r['workers']} workers x {r['threads']} OpenMP threads), each fitted on "
                  f"{r['subsample']:,} of {r['N']:,} rows, peak {r['peak_mb']:.0f} MB "
                  f"({r['loaded_mb']:.0f} MB resident before the fit: data, forest, scikit-learn), "
                  f"test error {r['error']:.4f}, coverage {r['coverage']:.3f}")
    by_threads = {}
    for r in scale:
        by_threads.setdefault(r["threads"], []).append(r)
    for threads, rs_ in sorted(by_threads.items()):
        if len(rs_) >= 2:
            n = np.log([r["N"] for r in rs_])
            t = np.log([r["s_iter"] for r in rs_])
            slope = np.polyfit(n, t, 1)[0]
            print(f"scaling, {threads} thread(s): seconds per iteration ~ N^{slope:.2f} "
                  f"over N = {rs_[0]['N']:,} .. {rs_[-1]['N']:,}")
    one = {r["N"]: r for r in scale if r["threads"] == 1}
    two = {r["N"]: r for r in scale if r["threads"] == 2}
    for n in sorted(set(one) & set(two)):
        print(f"N={n:,}: 2 threads {one[n]['s_iter'] / two[n]['s_iter']:.2f}x faster per iteration than 1")
    if rs:
        for name, r in rs["sets"].items():
            print(f"RuleSet.predict ({name.upper()} set): {r['rows_per_s'] / 1e6:.1f} M rows/s on one "
                  f"thread ({r['K']} rules, {r['conditions']} conditions, D=28, 1,000,000 rows)")
    for p in phases:
        print(f"phases, 1e6 rows, 20 restarts, n_jobs={p['n_jobs']} (OMP_NUM_THREADS={p['n_jobs']}): "
              f"{p['fit_s']:.2f} s = " + ", ".join(f"{k} {v:.2f}" for k, v in p["phases"].items())
              + f"; {p['K']} rules, peak {p['peak_mb']:.0f} MB")
    by_t = {p["n_jobs"]: p for p in phases}
    if 1 in by_t:
        one = by_t[1]
        for t, p in sorted(by_t.items()):
            if t == 1:
                continue
            speedup = one["fit_s"] / p["fit_s"]
            # Amdahl: speedup = 1 / (f + (1 - f) / t)  =>  f = (t / speedup - 1) / (t - 1)
            serial = (t / speedup - 1) / (t - 1)
            print(f"phases: {t} threads {speedup:.2f}x faster than 1 for the whole fit; "
                  f"serial fraction (Amdahl) {serial:.3f}; per phase " + ", ".join(
                      f"{k} {one['phases'][k] / max(v, 1e-9):.2f}x" for k, v in p["phases"].items()
                      if k in one["phases"]))
        same = len({p["rules"] for p in phases}) == 1
        print(f"phases: identical rules for every thread count: {same}")
    for r in rowcost:
        print(f"rowcost: {r['forest']} forest (L={r['L']:,}), N={r['N']:,}: {r['s_update']:.5f} s per EM "
              f"update (K=10, one thread), {r['ns']:.3f} ns per row x component x feature")
    cost = {(r["forest"], r["N"]): r["ns"] for r in rowcost}
    for a, b in ((("cls28", 5_000), ("cls28", 1_000_000)), (("large", 5_000), ("large", 1_000_000)),
                 (("cls28", 5_000), ("large", 1_000_000))):
        if a in cost and b in cost:
            print(f"rowcost: {b[0]} N={b[1]:,} / {a[0]} N={a[1]:,}: {cost[b] / cost[a]:.2f}x per row x "
                  f"component x feature")
    if contended:
        c = contended
        print(f"contended: {c['N']:,} x {c['D']}, 7 classes, defaults; quiet "
              f"{', '.join(f'{t:.2f}' for t in c['quiet_s'])} s; with {c['busy']} busy loop(s) on "
              f"{c['cores']} cores {', '.join(f'{t:.2f}' for t in c['contended_s'])} s: "
              f"ratio {c['ratio']:.2f} (medians)")
    print(f"1-min load average before/after: {load:.2f}/{os.getloadavg()[0]:.2f} on "
          f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
