"""Quality of the rules as printed, on real data, against a CART of the same size.

Usage (from the repository root, with defrag installed or built in place):

    python benchmarks/quality.py                  # every data set, default and paper preset
    python benchmarks/quality.py --cases wine,diabetes --out quality.md

Protocol (the one of "Rules that predict" in the README): a random forest of 100 trees
(random_state 0; min_samples_leaf 5 for regression and above 5,000 rows, else 1), a 70/30
split; ``DefragModel(forest, max_rules=10, random_state=0).fit(X_train, y_train)`` (the
default) and ``DefragModel.paper(...)`` (Algorithm 1 on every split, MAP prediction).
For each: K (rules printed, the default not counted), the test error of the rules as
printed (``rules_.predict``) and of the mixture's MAP prediction, CART-fp (a
DecisionTree with K leaves, and with K + 1 leaves, the list's number of regions, fitted
to the forest's predictions on the training rows), a depth-2 tree fitted to y, the
forest, coverage and overlap of the printed rules, the median number of conditions per
rule and the fit seconds. Error is the misclassification rate or the mean squared error.
Where the test set has fewer than 1,000 rows the figures are means over 3 splits
(random_state 0, 1, 2). Data: scikit-learn's breast_cancer, wine and diabetes,
make_friedman1(2000, noise=1, random_state=0), and the CSV files of ../shared/data
(skipped when the folder is absent). Writes a markdown table (--out) and, when
matplotlib is installed, a PNG of rules against error (--png).
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
SHARED = ("bostonhousing", "pimaindiansdiabetes", "ionosphere", "vehicle", "satellite",
          "letterrecognition")
REGRESSION = ("diabetes", "friedman1", "bostonhousing")


def load(name):
    """(X, y, task) of a data set, or None when its file is absent."""
    from sklearn import datasets

    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "wine":
        X, y = datasets.load_wine(return_X_y=True)
    elif name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True)
    elif name == "friedman1":
        X, y = datasets.make_friedman1(2000, noise=1, random_state=0)
    else:
        path = os.path.join(DATA, f"{name}.csv")
        if not os.path.exists(path):
            return None
        import csv

        with open(path) as f:
            rows = list(csv.reader(f))[1:]
        X = np.array([[float(v) for v in r[:-1]] for r in rows])
        y = np.array([r[-1] for r in rows])
        if name in REGRESSION:
            y = y.astype(float)
    return X, y, "regression" if name in REGRESSION else "classification"


def error(pred, y, task):
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((np.asarray(pred, dtype=float) - y) ** 2))


def one_split(X, y, task, seed, n_restarts):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    from defrag import DefragModel

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    leaf = 5 if task == "regression" or len(X) > 5000 else 1
    Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
    Tree = DecisionTreeRegressor if task == "regression" else DecisionTreeClassifier
    forest = Forest(n_estimators=100, min_samples_leaf=leaf, random_state=0, n_jobs=-1).fit(Xtr, ytr)
    fp = forest.predict(Xtr)

    def cart(leaves):
        return error(Tree(max_leaf_nodes=max(int(leaves), 2), random_state=0).fit(Xtr, fp).predict(Xte), yte, task)

    out = {}
    for preset in ("default", "paper"):
        make = DefragModel.paper if preset == "paper" else DefragModel
        t0 = time.perf_counter()
        model = make(forest, max_rules=10, n_restarts=n_restarts, random_state=0).fit(Xtr, ytr)
        seconds = time.perf_counter() - t0
        printed = model.rules_.predict(Xte)
        cover = model.rules_.covers(Xte)
        conditions = [len(r.conditions) for r in model.rules_]
        K = model.n_rules_
        out[preset] = dict(
            K=K, rules=error(printed, yte, task), map=error(model.predict_map(Xte), yte, task),
            cart_K=cart(K), cart_K1=cart(K + 1), coverage=float(np.mean(cover.any(axis=1))),
            overlap=float(np.mean(cover.sum(axis=1))),
            conditions=float(np.median(conditions)) if conditions else 0.0, seconds=seconds,
            same=bool(np.array_equal(printed, model.predict(Xte))))
    out["depth2"] = error(Tree(max_depth=2, random_state=0).fit(Xtr, ytr).predict(Xte), yte, task)
    out["forest"] = error(forest.predict(Xte), yte, task)
    return out


def mean_of(results):
    """Means over the splits of every number (and all of the booleans)."""
    first = results[0]
    out = {}
    for key, value in first.items():
        if isinstance(value, dict):
            out[key] = mean_of([r[key] for r in results])
        elif isinstance(value, bool):
            out[key] = all(r[key] for r in results)
        else:
            out[key] = float(np.mean([r[key] for r in results]))
    return out


def fmt(v):
    return f"{v:.4g}"


def table(rows, preset):
    lines = [f"### {preset}", "",
             "| data | splits | K | rules as printed | MAP | CART-fp K leaves | CART-fp K+1 leaves | "
             "depth-2 tree | forest | coverage | overlap | median conditions | fit s | printed = predict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, n_splits, r in rows:
        p = r[preset]
        lines.append(f"| {name} | {n_splits} | {p['K']:.3g} | {fmt(p['rules'])} | {fmt(p['map'])} | "
                     f"{fmt(p['cart_K'])} | {fmt(p['cart_K1'])} | {fmt(r['depth2'])} | {fmt(r['forest'])} | "
                     f"{p['coverage']:.3f} | {p['overlap']:.2f} | {p['conditions']:.3g} | "
                     f"{p['seconds']:.2f} | {'yes' if p['same'] else 'no'} |")
    ratios_K = [r[preset]["rules"] / r[preset]["cart_K"] for _, _, r in rows]
    ratios_K1 = [r[preset]["rules"] / r[preset]["cart_K1"] for _, _, r in rows]
    wins_K = sum(r[preset]["rules"] <= r[preset]["cart_K"] * (1 + 1e-12) for _, _, r in rows)
    wins_K1 = sum(r[preset]["rules"] <= r[preset]["cart_K1"] * (1 + 1e-12) for _, _, r in rows)
    lines += ["", f"Rules as printed / CART-fp: mean ratio {np.mean(ratios_K):.3f} with K leaves "
              f"({wins_K} of {len(rows)} at or below), {np.mean(ratios_K1):.3f} with K+1 leaves "
              f"({wins_K1} of {len(rows)})."]
    return "\n".join(lines)


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(rows), figsize=(3 * len(rows), 3), squeeze=False)
    for ax, (name, _, r) in zip(axes[0], rows):
        for preset, marker in (("default", "o"), ("paper", "s")):
            ax.plot(r[preset]["K"], r[preset]["rules"], marker, label=f"defrag ({preset})")
            ax.plot(r[preset]["K"], r[preset]["cart_K"], "x", color="grey")
        ax.axhline(r["forest"], color="black", lw=0.8, label="forest")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("rules")
    axes[0][0].set_ylabel("test error")
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="breast_cancer,wine,diabetes,friedman1," + ",".join(SHARED))
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--splits", type=int, default=None,
                    help="data splits per case (default: 3 where the test set is under 1,000 rows, else 1)")
    ap.add_argument("--out", help="write the markdown table to this file too")
    ap.add_argument("--png", help="write the rules-against-error figure to this PNG")
    args = ap.parse_args()
    rows = []
    for name in args.cases.split(","):
        data = load(name)
        if data is None:
            print(f"{name}: {os.path.join(DATA, name + '.csv')} is absent, skipped", file=sys.stderr)
            continue
        X, y, task = data
        n_splits = args.splits or (3 if 0.3 * len(X) < 1000 else 1)
        t0 = time.perf_counter()
        results = [one_split(X, y, task, seed, args.restarts) for seed in range(n_splits)]
        rows.append((name, n_splits, mean_of(results)))
        print(f"{name}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    text = "\n\n".join(table(rows, preset) for preset in ("default", "paper"))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    if args.png and rows:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
