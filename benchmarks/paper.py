"""The paper's comparison (Hara & Hayashi, sec. 7.2, Fig. 5 and Table 3) with defrag.baselines.

Usage (from the repository root, with defrag installed or built in place):

    python benchmarks/paper.py                 # Synthetic1, Synthetic2 and ../shared/data
    python benchmarks/paper.py --quick         # one realisation of Synthetic1 and Synthetic2
    python benchmarks/paper.py --datasets synthetic1 --realisations 10 --out out/

Protocol (sec. 7): ten random data realisations per data set; a random forest of 100
trees (the paper tunes R's randomForest by its out-of-bag error over nodesize and
maxnodes; here scikit-learn's, min_samples_split=11 as R's nodesize 10, max_leaf_nodes
from {16, 32, 64, 128} by out-of-bag error); then on the training points

- defrag: ``DefragModel.paper(forest, n_components=10, n_restarts=20)`` (K_max = 10, 20
  restarts, every split, the MAP prediction: the paper's method) and "defrag (list)",
  the library's default (rules as an ordered list);
- BATrees: ``BornAgainTree`` (depth from {2, 3, 4, 6, 8, 10} by 5-fold CV);
- inTrees: ``InTrees`` (the R package's defaults);
- NH: ``NodeHarvest`` (depth-2 nodes; regression and binary classification only);
- DTree2: ``DepthTwoTree`` (a depth-2 CART fitted to y).

Synthetic1 and Synthetic2 (sec. 7): x ~ U[0, 1]^2, y* = XOR(x1 > .5, x2 > .5), resp.
y* = 1[x2 > r(x1)], r(x1) = 0.25 + 0.5 / (1 + exp(-20 (x1 - 0.5))) + 0.05 cos(2 pi x1),
with 10% of the labels flipped; 1,000 training and 1,000 test points (Table 1). The
CSV files of ../shared/data (skipped when absent) are split 70/30, the realisation
number as the split's random_state.

Writes to --out (default benchmarks/out/paper/): per data set a markdown table
(method, rules, test error, overlap: the mean number of rules covering a test point,
Table 3's measure; coverage; fit seconds; mean +- sd over the realisations) and, when
matplotlib is installed, a PNG in the layout of Fig. 5 (rules against test error, one
marker per method, the forest's error as a line); all tables also in paper.md, the figures of every realisation in <data set>.json.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHARED = ("bostonhousing", "pimaindiansdiabetes", "ionosphere", "vehicle", "satellite",
          "letterrecognition")
METHODS = ("defrag", "defrag (list)", "BATrees", "inTrees", "NH", "DTree2")
MARKERS = {"defrag": "o", "defrag (list)": "s", "BATrees": "^", "inTrees": "v", "NH": "D", "DTree2": "x"}


def synthetic(kind, seed, n=1000):
    """(X_train, y_train, X_test, y_test) of Synthetic1 or Synthetic2 (sec. 7)."""
    rng = np.random.default_rng(seed)
    X = rng.random((2 * n, 2))
    if kind == "synthetic1":
        clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5)
    else:
        r = 0.25 + 0.5 / (1 + np.exp(-20 * (X[:, 0] - 0.5))) + 0.05 * np.cos(2 * np.pi * X[:, 0])
        clean = X[:, 1] > r
    y = np.logical_xor(clean, rng.random(2 * n) < 0.1).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def realisation(name, seed):
    """(X_train, y_train, X_test, y_test, task) or None when the data are absent."""
    if name.startswith("synthetic"):
        return (*synthetic(name, seed), "classification")
    from quality import load
    from sklearn.model_selection import train_test_split

    data = load(name)
    if data is None:
        return None
    X, y, task = data
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    return Xtr, ytr, Xte, yte, task


def forest(Xtr, ytr, task, seed):
    """A 100-tree forest, max_leaf_nodes by out-of-bag error (R's randomForest tuning)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
    best = None
    for leaves in (16, 32, 64, 128):
        rf = Forest(n_estimators=100, min_samples_split=11, max_leaf_nodes=leaves, oob_score=True,
                    random_state=seed, n_jobs=-1).fit(Xtr, ytr)
        if best is None or rf.oob_score_ > best.oob_score_:
            best = rf
    return best


def methods(rf, task, n_classes, seed):
    from defrag import DefragModel
    from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest

    out = {
        "defrag": DefragModel.paper(rf, n_components=10, n_restarts=20, random_state=seed),
        "defrag (list)": DefragModel(rf, n_components=10, n_restarts=20, random_state=seed),
        "BATrees": BornAgainTree(rf, random_state=seed),
        "inTrees": InTrees(rf),
        "NH": NodeHarvest(rf, random_state=seed),
        "DTree2": DepthTwoTree(rf, random_state=seed),
    }
    if task == "classification" and n_classes > 2:
        del out["NH"]  # Node Harvest: regression and binary classification only
    return out


def run(name, realisations):
    """Per method: lists of rules, error, overlap, coverage, seconds; and the forest's errors."""
    from quality import error

    rows = {m: {k: [] for k in ("rules", "error", "overlap", "coverage", "seconds")} for m in METHODS}
    forest_errors = []
    for seed in range(realisations):
        data = realisation(name, seed)
        if data is None:
            return None
        Xtr, ytr, Xte, yte, task = data
        rf = forest(Xtr, ytr, task, seed)
        forest_errors.append(error(rf.predict(Xte), yte, task))
        for method, model in methods(rf, task, np.unique(ytr).size, seed).items():
            t0 = time.perf_counter()
            model.fit(Xtr, ytr)
            seconds = time.perf_counter() - t0
            scores = model.evaluate(Xte, yte)
            cover = model.rules_.covers(Xte)  # the paper's measures of the printed rules (Tables 2, 3)
            for key, value in (("rules", scores["n_regions"]), ("error", scores["error"]),
                               ("overlap", np.mean(cover.sum(axis=1))), ("coverage", np.mean(cover.any(axis=1))),
                               ("seconds", seconds)):
                rows[method][key].append(float(value))
        print(f"  {name} realisation {seed}: " + ", ".join(
            f"{m} {rows[m]['rules'][-1]:.0f} rules {rows[m]['error'][-1]:.3f}" for m in METHODS
            if rows[m]["rules"]), flush=True)
    return {m: v for m, v in rows.items() if v["rules"]}, forest_errors


def pm(values, digits=3):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.{digits}g} ± {values.std(ddof=1) if values.size > 1 else 0.0:.{digits - 1}g}"


def table(name, rows, forest_errors):
    lines = [f"### {name} ({len(forest_errors)} realisations; forest test error {pm(forest_errors)})", "",
             "| method | rules | test error | overlap | coverage | fit seconds |",
             "|---|---|---|---|---|---|"]
    for method, r in rows.items():
        lines.append(f"| {method} | {pm(r['rules'])} | {pm(r['error'])} | {pm(r['overlap'])} | "
                     f"{pm(r['coverage'])} | {pm(r['seconds'], 2)} |")
    return "\n".join(lines) + "\n"


def figure(name, rows, forest_errors, path):
    """Fig. 5's layout: rules (x) against test error (y), one marker per method."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    for method, r in rows.items():
        ax.scatter(r["rules"], r["error"], marker=MARKERS[method], alpha=0.35, s=18)
        ax.errorbar(np.mean(r["rules"]), np.mean(r["error"]), xerr=np.std(r["rules"]),
                    yerr=np.std(r["error"]), marker=MARKERS[method], markersize=8, capsize=3,
                    label=method, color=ax.collections[-1].get_facecolor()[0][:3])
    ax.axhline(np.mean(forest_errors), color="k", linestyle="--", linewidth=1, label="Ensemble")
    ax.set_xscale("log")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("# of rules")
    ax.set_ylabel("test error")
    ax.set_title(name)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one realisation of Synthetic1 and 2")
    parser.add_argument("--datasets", default=None, help="comma-separated (default: all)")
    parser.add_argument("--realisations", type=int, default=10)
    parser.add_argument("--out", default=os.path.join(HERE, "out", "paper"))
    args = parser.parse_args(argv)
    names = ["synthetic1", "synthetic2"] + ([] if args.quick else list(SHARED))
    if args.datasets:
        names = args.datasets.split(",")
    realisations = 1 if args.quick else args.realisations
    os.makedirs(args.out, exist_ok=True)
    tables = []
    for name in names:
        t0 = time.perf_counter()
        result = run(name, realisations)
        if result is None:
            print(f"{name}: skipped (no file in ../shared/data)")
            continue
        rows, forest_errors = result
        text = table(name, rows, forest_errors)
        tables.append(text)
        with open(os.path.join(args.out, f"{name}.md"), "w") as f:
            f.write(text)
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump({"methods": rows, "forest_errors": forest_errors}, f)
        png = figure(name, rows, forest_errors, os.path.join(args.out, f"{name}.png"))
        print(text + f"({time.perf_counter() - t0:.0f} s{'' if png else '; no PNG: matplotlib absent'})\n",
              flush=True)
    with open(os.path.join(args.out, "paper.md"), "w") as f:
        f.write("\n".join(tables))


if __name__ == "__main__":
    main()
