"""The memory guard's estimate against the measured peak (defrag/utils/memory.py).

Usage (from the repository root, defrag built in place or installed; Linux):

    python benchmarks/memory.py [--cases synthetic1,cls28,...] [--cache DIR]

Each case runs in a child process: the benchmark case's data and model
(benchmarks/run.py's load_data; the proxy cases a bagged regressor, cached), a small
warm-up fit (imports, lazy modules), then the peak resident memory is reset
(/proc/self/clear_refs) and the measured fit runs. Printed: the estimate the fit
checked against the limit (DefragModel.fit, PrototypeExplainer.fit, ProxyTree.fit),
the measured growth of the peak resident memory over the resident memory before the
fit, tracemalloc's peak over the fit (NumPy's and Python's allocations), and the
ratio of the estimate to the larger of the two. The acceptance asks the estimate to be within 2x of the measured peak.

The predict-* cases (``--cases predict-10m-c,predict-10m-f32,predict-10m-fortran``; 2.2 GB
of input each, so not run by default) measure RuleSet.predict on 10,000,000 x 28 rows
(C-ordered float64, float32, Fortran-ordered float64) the same way; their "estimate" is
the target, the output plus one float64 column, so a ratio of 1 or more meets it.

The base-* cases fit the four baselines on cls28's 5,000 training rows (estimate against
the peak, as above). The guard-* cases are fits the guard refuses (issues 22 and 23): a
continuous y (``np.arange(rows)``) given with a small forest classifier of 2 classes, for
each estimator at 1,000,000 rows (DepthTwoTree at 100,000), and EM with a million rules
on 400 rows; printed under each: the outcome (the error and its message, or "fitted"),
and in the s column the seconds to it.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# name: (benchmark data, DefragModel parameters); "proto-*": PrototypeExplainer on the
# case's training and test rows; "proxy-*": ProxyTree on a bagged regressor (PROXY_DATA)
CASES = {
    "synthetic1": ("synthetic1", {}),
    "cls28": ("cls28", {}),
    "cls50": ("cls50", {}),
    "cls28-paper": ("cls28", {"max_splits": None, "form": "paper", "n_restarts": 2}),
    "cls28-em-k200": ("cls28", {"method": "em", "n_components": 200, "n_restarts": 2, "max_iter": 3,
                                "eps_schedule": (), "form": "paper"}),
    # large: the working set (the N x K tables) dominates the process's noise
    "cls28-fab-k1000": ("cls28", {"n_components": 1000, "n_restarts": 1, "max_iter": 3, "form": "paper"}),
    "cls28-em-k2000": ("cls28", {"method": "em", "n_components": 2000, "n_restarts": 1, "max_iter": 2,
                                 "eps_schedule": (), "form": "paper"}),
    "cls50-em-k500-sub": ("cls50", {"method": "em", "n_components": 500, "n_restarts": 2, "max_iter": 2,
                                    "eps_schedule": (), "subsample": 2000, "form": "paper"}),
    "proto-cls28-sma": ("cls28", {"method": "sm-a"}),
    "proto-cls28-sg": ("cls28", {"method": "sg"}),
    "proto-cls28-euclid": ("cls28", {"distance": "euclidean", "max_candidates": 3000}),
    "proxy-100k": ("proxy", {"rows": 100_000, "max_leaves": 16}),
    "proxy-100k-cv3": ("proxy", {"rows": 100_000, "cv": 3, "min_samples_leaf": 200}),
    # no reference: fitted to y (regression) or labels (classifier), 1,000,000 rows
    "proxy-y-1m": ("proxy", {"rows": 1_000_000, "y": "regression", "max_depth": 4, "max_leaves": 8}),
    "proxy-labels-1m": ("proxy", {"rows": 1_000_000, "y": "classes", "max_depth": 4, "max_leaves": 8}),
    # RuleSet.predict of the cls28 rules on 10,000,000 x 28 rows (not part of the default
    # run: 2.2 GB of input each); "estimate": the target, the output plus one column
    "predict-10m-c": ("predict", {"rows": 10_000_000, "layout": "C"}),
    "predict-10m-f32": ("predict", {"rows": 10_000_000, "layout": "float32"}),
    "predict-10m-fortran": ("predict", {"rows": 10_000_000, "layout": "F"}),
    # the baselines on cls28's 5,000 training rows (estimate against the peak)
    "base-cls28-bat": ("cls28", {"baseline": "BornAgainTree"}),
    "base-cls28-intrees": ("cls28", {"baseline": "InTrees"}),
    "base-cls28-nh": ("cls28", {"baseline": "NodeHarvest"}),
    "base-cls28-d2": ("cls28", {"baseline": "DepthTwoTree"}),
    # the guard's refusals (issues 22 and 23): a continuous y (np.arange(rows)) given with a
    # small forest classifier (2 classes), and a million rules on 400 rows; the outcome
    # column says what the fit did, s how long it took to say it
    "guard-bat-1m-classes": ("guard", {"baseline": "BornAgainTree", "rows": 10**6}),
    "guard-intrees-1m-classes": ("guard", {"baseline": "InTrees", "rows": 10**6}),
    "guard-nh-1m-classes": ("guard", {"baseline": "NodeHarvest", "rows": 10**6}),
    "guard-d2-100k-classes": ("guard", {"baseline": "DepthTwoTree", "rows": 10**5}),
    "guard-defrag-1m-classes": ("guard", {"baseline": "DefragModel", "rows": 10**6}),
    "guard-n-components-1m": ("guard", {"baseline": "DefragModel", "rows": 400, "n_components": 10**6,
                                     "method": "em"}),
}
DEFAULT_CASES = [name for name in CASES if not name.startswith("predict-")]
# the proxy cases' reference: a random forest regressor on 100,000 rows, 10 features
PROXY_DATA = {"rows": 100_000, "features": 10, "members": 250, "max_depth": 8}


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def measure(module, fit):
    """Runs fit() with module.check_memory recording what it checks, the peak resident
    size reset before (/proc/self/clear_refs) and tracemalloc on: (fit's result, figures).

    Measured: the growth of the peak resident size over the resident size before the
    fit, and tracemalloc's peak (NumPy's and Python's allocations). Both are lower bounds
    of the working set: the resident size misses what the allocator reuses from memory it
    kept after the warm-up (small cases), tracemalloc the C kernels' own malloc."""
    import gc
    import tracemalloc

    seen = {}
    if module is not None:  # (None: a call that checks no estimate)
        original = module.check_memory

        def record(estimate, what, knobs, parts=None):
            seen["estimate"], seen["parts"] = estimate, parts
            return original(estimate, what, knobs, parts)

        module.check_memory = record
    gc.collect()
    tracemalloc.start()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak (VmHWM) to the current resident size
    before = status_kb("VmRSS")
    t = time.perf_counter()
    result = fit()
    seconds = time.perf_counter() - t
    peak, traced = status_kb("VmHWM"), tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, {"estimate_mb": seen.get("estimate", 0) / 2**20, "rss_mb": (peak - before) / 1024,
                    "traced_mb": traced / 2**20, "seconds": seconds,
                    "parts_mb": {k: v / 2**20 for k, v in (seen.get("parts") or {}).items()}}


def proxy_reference(cache):
    import pickle

    import numpy as np
    from sklearn.ensemble import RandomForestRegressor

    p = PROXY_DATA
    rng = np.random.default_rng(0)
    X = rng.random((p["rows"], p["features"]))
    y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(p["rows"])
    path = os.path.join(cache, "proxy-reference-{rows}-{features}-{members}-{max_depth}.pkl".format(**p))
    if os.path.exists(path):
        with open(path, "rb") as f:
            return X, pickle.load(f)
    rf = RandomForestRegressor(n_estimators=p["members"], max_depth=p["max_depth"], max_samples=0.2,
                               random_state=0, n_jobs=-1).fit(X, y)
    os.makedirs(cache, exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump(rf, f)
    return X, rf


def child(name, cache):
    data, params = CASES[name]
    if name.startswith("predict-"):
        return child_predict(name, cache, params)
    if name.startswith("guard-"):
        return child_guard(name, dict(params))
    if name.startswith("base-"):
        return child_baseline(name, cache, data, params)
    if name.startswith("proxy-"):
        return child_proxy(name, cache, dict(params))
    if name.startswith("proto-"):
        return child_prototypes(name, cache, data, params)
    import defrag.defrag_model as dm
    from defrag import DefragModel
    from run import load_data

    Xtr, ytr, _, _, forest = load_data(data, cache)
    DefragModel(forest, n_restarts=1, max_iter=2, random_state=0).fit(Xtr[:200])  # warm-up
    model, figures = measure(dm, lambda: DefragModel(forest, random_state=0, **params).fit(Xtr))
    return {"case": name, "N": len(Xtr), "L": len(model.splits_), "K": int(params.get("n_components", 10)),
            **figures}


def child_predict(name, cache, params):
    """RuleSet.predict of the default cls28 rules on rows x 28 normal values, C-ordered
    float64, float32 or Fortran-ordered float64; the figures' estimate is the target:
    the output plus one float64 column."""
    import numpy as np

    from defrag import DefragModel
    from run import load_data

    Xtr, ytr, _, _, forest = load_data("cls28", cache)
    rules = DefragModel(forest, random_state=0).fit(Xtr).rules_
    rng = np.random.default_rng(0)
    rows, layout = params["rows"], params["layout"]
    if layout == "float32":
        X = rng.standard_normal((rows, 28), dtype=np.float32)
    elif layout == "F":
        X = rng.standard_normal((28, rows)).T
    else:
        X = rng.standard_normal((rows, 28))
    rules.predict(X[:1000])  # warm-up
    out, figures = measure(None, lambda: rules.predict(X))
    figures["estimate_mb"] = (out.nbytes + 8 * rows) / 2**20
    used = len({c.feature for r in rules.rules for c in r.conditions})
    return {"case": name, "N": rows, "L": used, "K": len(rules.rules), **figures}


def child_baseline(name, cache, data, params):
    """A baseline fitted to the case's training rows and labels."""
    import defrag.utils.memory as mem
    from defrag import baselines
    from run import load_data

    Xtr, ytr, _, _, forest = load_data(data, cache)
    est = getattr(baselines, params["baseline"])
    kw = {} if est is baselines.InTrees else {"random_state": 0}
    est(forest, **kw).fit(Xtr[:300], ytr[:300])  # warm-up
    model, figures = measure(mem, lambda: est(forest, **kw).fit(Xtr, ytr))
    return {"case": name, "N": len(Xtr), "L": 0, "K": int(model.n_regions_), **figures}


def child_guard(name, params):
    """A fit the guard refuses: its outcome (the error's type and message, or "fitted"),
    the seconds to it and the growth of the peak resident memory."""
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier

    import defrag.utils.memory as mem
    from defrag import DefragMemoryError, DefragModel, baselines

    rows, which = params.pop("rows"), params.pop("baseline")
    rng = np.random.default_rng(0)
    X = rng.random((rows, 5))
    train = min(rows, 2000)
    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X[:train], X[:train, 0] > 0.5)
    est = DefragModel if which == "DefragModel" else getattr(baselines, which)
    y = None if "n_components" in params else np.arange(rows)  # (the case: y from the forest)
    est(rf, **params)  # (imports)

    def fit():
        try:
            est(rf, **params).fit(X, y)
        except DefragMemoryError as exc:
            return f"{type(exc).__name__}: {exc}"
        return "fitted"

    outcome, figures = measure(mem, fit)
    return {"case": name, "N": rows, "L": 0, "K": int(params.get("n_components", 0)), "outcome": outcome,
            **figures}


def child_prototypes(name, cache, data, params):
    import numpy as np

    import defrag.prototypes as pm
    from run import load_data

    Xtr, ytr, Xte, yte, forest = load_data(data, cache)
    X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
    pm.PrototypeExplainer(forest, n_prototypes=4, random_state=0, **params).fit(X[:300], y[:300])
    _, figures = measure(pm, lambda: pm.PrototypeExplainer(forest, n_prototypes=10, random_state=0,
                                                           **params).fit(X, y))
    return {"case": name, "N": len(X), "L": 0, "K": 10, **figures}


def child_proxy(name, cache, params):
    import numpy as np

    import defrag.proxy.estimators as pe

    rows, target = params.pop("rows"), params.pop("y", None)
    if target is None:
        X, rf = proxy_reference(cache)
        X, y, est = X[:rows], None, pe.ProxyTree
    else:  # no reference: a tree fitted to y
        rng = np.random.default_rng(0)
        X, rf = rng.random((rows, PROXY_DATA["features"])), None
        y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2]
        est = pe.ProxyTree
        if target == "classes":
            y, est = np.digitize(y, [0.0, 0.5, 1.0]), pe.ProxyTreeClassifier
    est(rf, max_leaves=4).fit(X[:500], None if y is None else y[:500])  # warm-up
    tree, figures = measure(pe, lambda: est(rf, random_state=0, **params).fit(X, y))
    return {"case": name, "N": len(X), "L": int(tree.n_leaves_), "K": len(rf.estimators_) if rf else 0,
            **figures}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES),
                    help=f"comma-separated cases (default: all but predict-*); all: {','.join(CASES)}")
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--parts", action="store_true", help="print each estimate's parts (MB)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cache)))
        return
    print(f"{'case':<20} {'N':>7} {'L':>6} {'K':>5} {'estimate MB':>12} {'RSS MB':>8} {'traced MB':>9} "
          f"{'ratio':>6} {'s':>6}"
          "   (proto: K prototypes; proxy: L leaves, K reference members;\n"
          f"{'':>62}predict: L features used, K rules, estimate = output + one column)")
    for name in args.cases.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", name, "--cache", args.cache],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        ratio = r["estimate_mb"] / max(r["rss_mb"], r["traced_mb"], 1e-9)
        print(f"{r['case']:<20} {r['N']:>7} {r['L']:>6} {r['K']:>5} {r['estimate_mb']:>12.1f} "
              f"{r['rss_mb']:>8.1f} {r['traced_mb']:>9.1f} {ratio:>6.2f} {r['seconds']:>6.2f}", flush=True)
        if "outcome" in r:
            print(f"    {r['outcome'][:300]}", flush=True)
        if args.parts and r["parts_mb"]:
            print("    " + ", ".join(f"{k} {v:.1f}" for k, v in r["parts_mb"].items()), flush=True)


if __name__ == "__main__":
    main()
