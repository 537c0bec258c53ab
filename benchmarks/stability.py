"""Stability of the printed explanation under a retrain, against a tree of the same size.

Usage (from the repository root, with defrag installed, or built in place and PYTHONPATH=.;
on a shared machine prefix ``nice -n 19``):

    PYTHONPATH=. python benchmarks/stability.py                    # the 17 cases of quality.py
    PYTHONPATH=. python benchmarks/stability.py --cases sonar,servo --out stability.md
    PYTHONPATH=. python benchmarks/stability.py --data DIR --cases NAME   # DIR/NAME.csv
    PYTHONPATH=. python benchmarks/stability.py --pairs 6          # six retrains per case

Protocol (issue 37): a case's rows split 70/30 (random_state 0, benchmarks/quality.py's
Split); two bootstrap samples of the training rows (NumPy generators seeded 0 and 1); on
each, a random forest of 100 trees (random_state 0 and 1; quality.py's settings:
min_samples_leaf 5 for regression and above 5,000 rows, else 1), each explained by
``DefragModel(forest, random_state=0).fit(X_boot, y_boot)``. On the test rows:

- ARI: the adjusted Rand index of the two explanations' regions (each row's region: the
  leaf it reaches, ``rules_.apply``; a sum of trees, its combination of one leaf per part;
  a list, its first matching rule). 1: the same partition of the test rows;
- changed: the share of test rows whose prediction differs between the two fits (a class
  label that differs; in regression a value that moves by more than CHANGE_TOL times the
  standard deviation of the training targets: a refit's outputs always move a little);
- regions: ``n_regions_`` of each fit;
- error: the second fit's test error (quality.py's: the share of wrong labels, or the mean
  squared error), and CART-fp's and the warm start's likewise.

The same for CART-fp (a DecisionTree of random_state 0, max_leaf_nodes the regions of the
explanation of the same forest, fitted to that forest's predictions on its bootstrap rows,
as quality.py's Split.cart), and for a warm start: the second fit with
``reference_rules`` = the first fit's ``rules_`` (ARI and changed against the first fit;
edits: the regions its ``reference_diff_`` counts changed, added and removed).

Summary: on how many cases the default's ARI is at least CART-fp's, and the warm start's
changed share at most CART-fp's, its ARI at least CART-fp's and its test error within
ERROR_SLACK of the fresh fit's (issue 47's counts), with its fidelity to the new model
(R^2, or accuracy, on the test rows). ``--model lightgbm`` retrains LightGBM models in
place of the forests (issue 47's Boston case: ``--cases bostonhousing --model lightgbm``). Writes a markdown table and
the summary (stdout and --out).

One retrain is one draw: the same code's count of cases where its ARI is at least
CART-fp's moves by several cases from one pair of seeds to the next. ``--pairs N`` repeats
the protocol with the seeds (2k, 2k + 1) of pair k = 0 .. N - 1 (pair 0 is the protocol
above) and adds, per case, the mean ARI over the pairs against CART-fp's, and in the
summary each pair's count and the mean difference of ARI (default less CART-fp, over every
case and pair) with its standard error. ``--seed-noise`` fits the second fresh fit once more
with random_state=1 and counts the cells where its test error is within ERROR_SLACK of
random_state=0's: the count a warm start that prints other regions than the fresh fit can
expect on that test however good it is.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quality  # noqa: E402  (benchmarks/quality.py: load, CASES, the forests' settings)

# regression: a prediction "changed" where it moved by more than this many standard
# deviations of the training targets
CHANGE_TOL = 0.05
TIE = 1e-12
# the warm start's test error counts as the fresh fit's where at most this much (relative) above it
ERROR_SLACK = 0.02


def regions_of(model, X):
    """Each row's region of a fitted DefragModel's printed explanation, as integers."""
    regions = np.asarray(model.rules_.apply(X))
    if regions.ndim == 2:  # a sum of trees: one leaf per part
        regions = np.unique(regions, axis=0, return_inverse=True)[1].ravel()
    return regions


def changed_share(p1, p2, task, scale):
    if task == "regression":
        moved = np.abs(np.asarray(p1, dtype=float) - np.asarray(p2, dtype=float)) > CHANGE_TOL * scale
    else:
        moved = np.asarray(p1) != np.asarray(p2)
    return float(np.mean(moved)) if len(moved) else 0.0


def forest_of(task, n_rows, seed, kind="forest"):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    if kind == "lightgbm":
        import lightgbm

        Model = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        return Model(n_estimators=100, random_state=seed, verbose=-1, n_jobs=1)
    leaf = 5 if task == "regression" or n_rows > 5000 else 1
    Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return Forest(n_estimators=100, min_samples_leaf=leaf, random_state=seed, n_jobs=-1)


def cart_fp(task, forest, X, leaves):
    """CART-fp: a tree with `leaves` leaves fitted to the forest's predictions on X (its
    region of a row: tree.apply; one leaf: a constant, one region)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    Tree = DecisionTreeRegressor if task == "regression" else DecisionTreeClassifier
    return Tree(max_leaf_nodes=max(int(leaves), 2), random_state=0).fit(X, forest.predict(X)) \
        if leaves >= 2 else _Constant(task, forest.predict(X))


class _Constant:
    """CART-fp with one leaf: the constant that fits the forest's predictions best."""

    def __init__(self, task, fp):
        if task == "regression":
            self.value = float(np.mean(fp))
        else:
            values, counts = np.unique(fp, return_counts=True)
            self.value = values[np.argmax(counts)]

    def predict(self, X):
        return np.full(len(X), self.value)

    def apply(self, X):
        return np.zeros(len(X), dtype=np.int64)


def warm_start_supported():
    from defrag import DefragModel

    return "reference_rules" in DefragModel().get_params()


def edits_of(model):
    """The warm start's edits of its reference: regions changed, added and removed."""
    d = getattr(model, "reference_diff_", None)
    if d is None:
        return math.nan
    counts = d.to_dict()["headline"]
    return int(counts["changed"] + counts["added"] + counts["removed"])


def one_case(X, y, task, warm, pair=0, kind="forest", seed_noise=False):
    from sklearn.metrics import adjusted_rand_score
    from sklearn.model_selection import train_test_split

    from defrag import DefragModel

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    scale = float(np.std(np.asarray(ytr, dtype=float))) if task == "regression" else 1.0
    fits = []
    for seed in (2 * pair, 2 * pair + 1):
        boot = np.random.default_rng(seed).integers(0, len(Xtr), len(Xtr))
        Xb, yb = Xtr[boot], ytr[boot]
        # predicted on one thread (quality.Split: the same values from run to run)
        forest = forest_of(task, len(X), seed, kind).fit(Xb, yb).set_params(n_jobs=1)
        t0 = time.perf_counter()
        model = DefragModel(forest, random_state=0).fit(Xb, yb)
        seconds = time.perf_counter() - t0
        cart = cart_fp(task, forest, Xb, model.n_regions_)
        fits.append(dict(forest=forest, model=model, cart=cart, Xb=Xb, yb=yb, seconds=seconds))
    a, b = fits
    out = dict(
        ari=adjusted_rand_score(regions_of(a["model"], Xte), regions_of(b["model"], Xte)),
        changed=changed_share(a["model"].predict(Xte), b["model"].predict(Xte), task, scale),
        regions=(int(a["model"].n_regions_), int(b["model"].n_regions_)),
        cart_ari=adjusted_rand_score(a["cart"].apply(Xte), b["cart"].apply(Xte)),
        cart_changed=changed_share(a["cart"].predict(Xte), b["cart"].predict(Xte), task, scale),
        seconds=(a["seconds"], b["seconds"]),
        error=quality.error(b["model"].predict(Xte), yte, task),
        cart_error=quality.error(b["cart"].predict(Xte), yte, task),
        fidelity=fidelity(b["model"].predict(Xte), b["forest"].predict(Xte), task))
    if seed_noise:  # the fresh fit once more, random_state 1: as valid a choice as random_state 0's
        again = DefragModel(b["forest"], random_state=1).fit(b["Xb"], b["yb"])
        out.update(seed_error=quality.error(again.predict(Xte), yte, task),
                   seed_same=str(again.rules_) == str(b["model"].rules_))
    if warm:
        w = DefragModel(b["forest"], random_state=0, reference_rules=a["model"].rules_).fit(b["Xb"], b["yb"])
        out.update(warm_ari=adjusted_rand_score(regions_of(a["model"], Xte), regions_of(w, Xte)),
                   warm_changed=changed_share(a["model"].predict(Xte), w.predict(Xte), task, scale),
                   warm_regions=int(w.n_regions_), warm_kept=bool(getattr(w, "reference_kept_", False)),
                   warm_error=quality.error(w.predict(Xte), yte, task), warm_edits=edits_of(w),
                   warm_fidelity=fidelity(w.predict(Xte), b["forest"].predict(Xte), task))
    return out


def fidelity(pred, model_pred, task):
    """Agreement with the model on the test rows: R^2 in regression, accuracy else."""
    if task == "regression":
        from sklearn.metrics import r2_score

        return float(r2_score(model_pred, pred))
    return float(np.mean(np.asarray(pred) == np.asarray(model_pred)))


def within_error(r):
    """The warm start's test error within ERROR_SLACK of the fresh fit's."""
    return r["warm_error"] <= (1 + ERROR_SLACK) * r["error"] + TIE


def fmt(v):
    return "n/a" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.2f}"


def efmt(v):
    return f"{v:.4g}"


def table(rows, warm):
    head = ["case", "task", "regions", "ARI", "changed", "error", "CART-fp ARI", "CART-fp changed", "CART-fp error"]
    if warm:
        head += ["warm regions", "warm kept", "warm edits", "warm ARI", "warm changed", "warm error"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, task, r in rows:
        cells = [name, task, f"{r['regions'][0]}, {r['regions'][1]}", fmt(r["ari"]), fmt(r["changed"]),
                 efmt(r["error"]), fmt(r["cart_ari"]), fmt(r["cart_changed"]), efmt(r["cart_error"])]
        if warm:
            cells += [str(r["warm_regions"]), "yes" if r["warm_kept"] else "no", str(r["warm_edits"]),
                      fmt(r["warm_ari"]), fmt(r["warm_changed"]), efmt(r["warm_error"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def at_least(ours, theirs):
    return ours >= theirs - TIE * max(1.0, abs(theirs))


def summary(rows, warm):
    n = len(rows)
    ari = sum(at_least(r["ari"], r["cart_ari"]) for _, _, r in rows)
    lines = [f"default ARI >= CART-fp's on {ari} of {n} cases "
             f"(mean ARI {np.mean([r['ari'] for _, _, r in rows]):.2f} against "
             f"{np.mean([r['cart_ari'] for _, _, r in rows]):.2f})"]
    if warm:
        changed = sum(at_least(r["cart_changed"], r["warm_changed"]) for _, _, r in rows)
        kept = sum(r["warm_kept"] for _, _, r in rows)
        ari = sum(at_least(r["warm_ari"], r["cart_ari"]) for _, _, r in rows)
        within = sum(within_error(r) for _, _, r in rows)
        lines.append(f"warm start: prediction changes <= CART-fp's on {changed} of {n} cases "
                     f"(mean changed {np.mean([r['warm_changed'] for _, _, r in rows]):.2f} against "
                     f"{np.mean([r['cart_changed'] for _, _, r in rows]):.2f}; the reference kept on {kept}); "
                     f"ARI >= CART-fp's on {ari} of {n}; test error within {ERROR_SLACK:.0%} of the fresh "
                     f"fit's on {within} of {n}; fidelity to the new model (R^2 / accuracy on the test rows) "
                     f"{np.mean([r['warm_fidelity'] for _, _, r in rows]):.3f} against the fresh fit's "
                     f"{np.mean([r['fidelity'] for _, _, r in rows]):.3f} (mean)")
    else:
        lines.append("warm start: not measured (this defrag has no reference_rules)")
    return "\n".join(lines)


def pairs_table(rows):
    """Per case: the mean ARI over the pairs of the default and CART-fp, and each pair's."""
    head = ["case", "task", "mean ARI", "CART-fp mean ARI", "ARI per pair (default / CART-fp)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, task, runs in rows:
        per_pair = ", ".join(f"{fmt(r['ari'])} / {fmt(r['cart_ari'])}" for r in runs)
        lines.append(f"| {name} | {task} | {fmt(np.mean([r['ari'] for r in runs]))} | "
                     f"{fmt(np.mean([r['cart_ari'] for r in runs]))} | {per_pair} |")
    return "\n".join(lines)


def pairs_summary(rows, warm=False):
    n_pairs = len(rows[0][2])
    counts = [sum(at_least(runs[k]["ari"], runs[k]["cart_ari"]) for _, _, runs in rows) for k in range(n_pairs)]
    diff = np.array([r["ari"] - r["cart_ari"] for _, _, runs in rows for r in runs])
    se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
    means = sum(at_least(np.mean([r["ari"] for r in runs]), np.mean([r["cart_ari"] for r in runs]))
                for _, _, runs in rows)
    return (f"over {n_pairs} pairs of seeds: default ARI >= CART-fp's on {', '.join(map(str, counts))} "
            f"of {len(rows)} cases (pair 0, 1, ...); mean ARI difference (default - CART-fp) "
            f"{diff.mean():+.3f} (standard error {se:.3f}); mean ARI over the pairs >= CART-fp's on "
            f"{means} of {len(rows)}") + (warm_pairs_summary(rows) if warm else "")


def warm_pairs_summary(rows):
    """Per pair, on how many cases the warm start meets each of issue 47's counts, and their totals."""
    n_pairs, n = len(rows[0][2]), len(rows)
    tests = {"changed <= CART-fp's": lambda r: at_least(r["cart_changed"], r["warm_changed"]),
             "ARI >= CART-fp's": lambda r: at_least(r["warm_ari"], r["cart_ari"]),
             f"test error within {ERROR_SLACK:.0%} of the fresh fit's": within_error}
    lines = []
    for what, test in tests.items():
        counts = [sum(test(runs[k]) for _, _, runs in rows) for k in range(n_pairs)]
        lines.append(f"warm start, {what}: {', '.join(map(str, counts))} of {n} cases (pair 0, 1, ...); "
                     f"{sum(counts)} of {n * n_pairs} in all ({sum(counts) / (n * n_pairs):.0%})")
    edits = [r["warm_edits"] for _, _, runs in rows for r in runs]
    lines.append(f"warm start: {np.nanmean(edits):.1f} edits of the reference's regions per fit (mean)")
    return "\n" + "\n".join(lines)


def seed_noise_summary(rows):
    """Where two fresh fits of the same model and rows that differ only in random_state have
    test errors within ERROR_SLACK of each other: what the warm start's error count can reach
    where it prints other regions than the fresh fit, however good they are."""
    runs = [r for _, _, rs in rows for r in rs]
    within = sum(r["seed_error"] <= (1 + ERROR_SLACK) * r["error"] + TIE for r in runs)
    same = sum(r["seed_same"] for r in runs)
    return (f"a second fresh fit (random_state=1, the same model and rows): test error within "
            f"{ERROR_SLACK:.0%} of the fresh fit's on {within} of {len(runs)} cells ({within / len(runs):.0%}); "
            f"the same explanation on {same}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(quality.CASES),
                    help="comma-separated (default: quality.py's 17); also any other NAME.csv of the data folder")
    ap.add_argument("--data", default=quality.DATA, help="the folder of the CSV files (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="pairs of seeds per case (default: %(default)s, the issue's protocol); above 1 also "
                         "the mean over the pairs")
    ap.add_argument("--model", choices=("forest", "lightgbm"), default="forest",
                    help="the ensemble retrained (default: %(default)s; lightgbm: 100 trees, the rest its defaults)")
    ap.add_argument("--seed-noise", action="store_true",
                    help="also fit the second fresh fit with random_state=1 and count where its test error is "
                         "within ERROR_SLACK of random_state=0's: the floor of the warm start's error count")
    ap.add_argument("--out", help="write the markdown table and the summary to this file too")
    args = ap.parse_args()
    if args.pairs < 1:
        ap.error(f"--pairs must be at least 1, not {args.pairs}")
    quality.DATA = args.data
    warm = warm_start_supported()
    rows = []
    start = time.perf_counter()
    for name in args.cases.split(","):
        if name not in quality.CASES and not os.path.exists(os.path.join(args.data, f"{name}.csv")):
            ap.error(f"unknown case {name!r}: not one of quality.py's and no {os.path.join(args.data, name + '.csv')}")
        try:
            data = quality.load(name)
        except ValueError as exc:
            ap.error(str(exc))
        if data is None:
            print(f"{name}: {os.path.join(args.data, name + '.csv')} is absent, skipped", file=sys.stderr)
            continue
        X, y, task = data
        t0 = time.perf_counter()
        runs = [one_case(X, y, task, warm, pair, args.model, args.seed_noise) for pair in range(args.pairs)]
        rows.append((name, task, runs))
        print(f"{name}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if not rows:
        sys.exit("no case to run")
    first = [(name, task, runs[0]) for name, task, runs in rows]
    parts = [table(first, warm), summary(first, warm)]
    if args.pairs > 1:
        parts += [pairs_table(rows), pairs_summary(rows, warm)]
    if args.seed_noise:
        parts.append(seed_noise_summary(rows))
    parts.append(f"({len(rows)} cases, {time.perf_counter() - start:.0f} s in all)")
    text = "\n\n".join(parts)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
