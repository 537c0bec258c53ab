"""Tree-space prototypes: accuracy vs k, the Table-1 layout, kernel speed.

Usage (from the repository root, with defrag built in place):

    python benchmarks/prototypes.py [--splits S] [--trees T] [--speed-only | --no-speed]
                                    [--speed-n N] [--speed-trees T] [--threads N]

Accuracy. On scikit-learn's bundled breast_cancer and digits restricted to 4 vs 9,
for S (default 10) random stratified splits (50% train, 25% validation, 25% test): a
RandomForestClassifier(T trees) and a GradientBoostingClassifier(100 trees, depth
3, learning rate 0.1) are fitted on the training part; prototypes are drawn from
the training part with its true labels, under the RF, GBT and Euclidean distances,
by SM-U, SG, SM-A and SM-WA for k = 1..40. Printed, as means over the splits:

* test balanced accuracy vs k (a selection of k; SG stops early, then its last
  set is kept for larger k);
* the paper's Table 1 layout: the original model, 1-NN on all training points,
  and each method at the k (1..40) with the best mean validation balanced
  accuracy (that k in parentheses);
* the k = 10 comparison of RF against Euclidean distance.

Nearest-prototype predictions for all k come from one test-to-training distance
matrix (ties to the lower training index, exactly as PrototypeExplainer.predict);
one PrototypeExplainer per split and distance is checked against it at k = 10.

Speed. RandomForestClassifier(--speed-trees) on N points of make_classification;
the N x N RF distance from leaf indices by the C kernel (1 and --threads threads,
best of 3; also with random unequal weights, the float path GBT distances take) and by the NumPy broadcasting version of the same formula
(``1 - (LA[i:i+c, None, :] == LB[None]).sum(-1) / T`` in row chunks, the fastest
of the variants we tried), once, in the same run; their ratio.
"""
import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

from defrag import prototypes as P
from defrag.prototypes import distance
from defrag.prototypes import PrototypeExplainer

METHODS = ("sm-u", "sg", "sm-a", "sm-wa")
DISTANCES = ("rf", "gbt", "euclidean")
KMAX = 40
K_SHOWN = (1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40)


def datasets():
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    keep = (yd == 4) | (yd == 9)
    return {"breast_cancer": (Xb, yb), "digits 4 vs 9": (Xd[keep], yd[keep])}


def nearest_prototype(Dq, protos, ytr):
    """Labels of the nearest prototype; ties to the lower training index."""
    order = np.sort(np.asarray(protos))
    return ytr[order[np.argmin(Dq[:, order], axis=1)]]


def selections(D, codes, q):
    """{method: [prototype list for k = 1..KMAX]} on the train x train distance D."""
    n = D.shape[0]
    idx = np.arange(n)
    out = {}
    for m in ("sm-a", "sm-wa"):
        full = P.select_submodular(D, codes, codes, q, min(KMAX, n), m)
        out[m] = [full[:k] for k in range(1, KMAX + 1)]
    out["sm-u"] = [P.select_submodular(D, codes, codes, q, k, "sm-u") for k in range(1, KMAX + 1)]
    sg, _ = P.select_supervised(D, codes, idx, codes, q, KMAX)
    out["sg"] = [sg[:k] for k in range(1, KMAX + 1)]  # stops early: the last set repeats
    return out


def run_split(X, y, seed, trees):
    Xtr, Xrest, ytr, yrest = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    Xva, Xte, yva, yte = train_test_split(Xrest, yrest, test_size=0.5, stratify=yrest, random_state=seed)
    classes, codes = np.unique(ytr, return_inverse=True)
    rf = RandomForestClassifier(n_estimators=trees, random_state=seed, n_jobs=-1).fit(Xtr, ytr)
    gb = GradientBoostingClassifier(n_estimators=100, max_depth=3, learning_rate=0.1,
                                    random_state=seed).fit(Xtr, ytr)
    res = {"original": {"rf": balanced_accuracy_score(yte, rf.predict(Xte)),
                        "gbt": balanced_accuracy_score(yte, gb.predict(Xte))},
           "n_train": len(ytr)}
    for dist in DISTANCES:
        est = gb if dist == "gbt" else rf
        if dist == "euclidean":
            Dtr = distance.euclidean_distances(Xtr, Xtr)
            scale = Dtr.max()
            Dtr, Dva, Dte = ((D / scale).astype(np.float32)
                             for D in (Dtr, distance.euclidean_distances(Xva, Xtr), distance.euclidean_distances(Xte, Xtr)))
        else:
            L = P.leaf_matrix(est, Xtr)
            w = P.tree_weights(est, L, dist)
            Dtr = P.tree_distance(L, L, w)
            Dva = P.tree_distance(P.leaf_matrix(est, Xva), L, w)
            Dte = P.tree_distance(P.leaf_matrix(est, Xte), L, w)
        sel = selections(Dtr, codes, len(classes))
        r = {"1-nn": balanced_accuracy_score(yte, nearest_prototype(Dte, np.arange(len(ytr)), ytr))}
        for m in METHODS:
            r[m] = {"val": [balanced_accuracy_score(yva, nearest_prototype(Dva, s, ytr)) for s in sel[m]],
                    "test": [balanced_accuracy_score(yte, nearest_prototype(Dte, s, ytr)) for s in sel[m]],
                    "size": [len(s) for s in sel[m]]}
        # the public estimator agrees with the shortcut above
        for m in METHODS:
            ex = PrototypeExplainer(est, n_prototypes=10, method=m, distance=dist).fit(Xtr, ytr)
            assert list(ex.prototypes_) == list(sel[m][9]), (dist, m)
            assert abs(ex.score(Xte, yte) - r[m]["test"][9]) < 1e-12, (dist, m)
        res[dist] = r
    return res


def accuracy(args):
    for name, (X, y) in datasets().items():
        t0 = time.perf_counter()
        runs = [run_split(X, y, s, args.trees) for s in range(args.splits)]
        n_train = runs[0]["n_train"]
        print(f"\n=== {name}: n = {len(y)}, {n_train} train, mean over {args.splits} splits "
              f"({time.perf_counter() - t0:.1f} s)")

        def mean(dist, m, part):
            return np.mean([r[dist][m][part] for r in runs], axis=0)

        print("\nTest balanced accuracy vs k (SG keeps its last set once it stops)")
        head = "k".rjust(4) + "".join(f"{d[:3]}:{m}".rjust(13) for d in DISTANCES for m in METHODS)
        print(head)
        for k in K_SHOWN:
            row = str(k).rjust(4)
            for d in DISTANCES:
                for m in METHODS:
                    row += f"{mean(d, m, 'test')[k - 1]:13.3f}"
            print(row)
        sg_sizes = {d: np.mean([r[d]["sg"]["size"][-1] for r in runs]) for d in DISTANCES}
        print("SG mean final set size:", ", ".join(f"{d} {v:.1f}" for d, v in sg_sizes.items()))

        print("\nTable 1 layout: test balanced accuracy, k (1..40) chosen by mean validation accuracy")
        print(f"{'':10}{'':9}" + "".join(d.rjust(16) for d in DISTANCES))
        for label in ("Original", "1-NN") + METHODS:
            row = f"{'':10}{label:9}"
            for d in DISTANCES:
                if label == "Original":
                    row += (f"{np.mean([r['original'][d] for r in runs]):16.3f}" if d != "euclidean"
                            else " " * 16)
                elif label == "1-NN":
                    row += f"{np.mean([r[d]['1-nn'] for r in runs]):10.3f} ({n_train})"
                else:
                    k = int(np.argmax(mean(d, label, "val"))) + 1
                    row += f"{mean(d, label, 'test')[k - 1]:11.3f} ({k:2d})"
            print(row)

        print("\nk = 10, test balanced accuracy, RF vs Euclidean distance (mean +- sd over splits)")
        for m in METHODS:
            rfv = np.array([r["rf"][m]["test"][9] for r in runs])
            euv = np.array([r["euclidean"][m]["test"][9] for r in runs])
            wins, ties = int(np.sum(rfv > euv)), int(np.sum(rfv == euv))
            print(f"  {m:6} RF {rfv.mean():.3f} +- {rfv.std():.3f}   Euclidean {euv.mean():.3f} +- "
                  f"{euv.std():.3f}   RF better / tied / worse in {wins} / {ties} / "
                  f"{len(runs) - wins - ties} of {len(runs)} splits")


def speed(args):
    n, T, th = args.speed_n, args.speed_trees, args.threads
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)
    t0 = time.perf_counter()
    rf = RandomForestClassifier(n_estimators=T, random_state=0, n_jobs=-1).fit(X, y)
    L = P.leaf_matrix(rf, X)
    print(f"\n=== Speed: RF distance, {n} x {n} points, {T} trees "
          f"(forest fit + apply {time.perf_counter() - t0:.1f} s, mean leaves per tree "
          f"{np.mean([e.tree_.n_leaves for e in rf.estimators_]):.0f})")
    w = np.ones(T, np.float32)
    times = {}
    for threads in (1, th):
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            D = P.tree_distance(L, L, w, threads)
            best = min(best, time.perf_counter() - t0)
        times[threads] = best
        print(f"  C kernel, {threads} thread(s): {best:.3f} s (best of 3)")
    wg = np.random.default_rng(0).random(T).astype(np.float32)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        P.tree_distance(L, L, wg, th)
        best = min(best, time.perf_counter() - t0)
    print(f"  C kernel, unequal weights (the GBT path), {th} thread(s): {best:.3f} s (best of 3)")
    t0 = time.perf_counter()
    ref = np.empty((n, n), np.float32)
    for i in range(0, n, 4):
        ref[i:i + 4] = 1 - (L[i:i + 4, None, :] == L[None]).sum(-1, dtype=np.float32) / T
    t_np = time.perf_counter() - t0
    print(f"  NumPy broadcasting: {t_np:.2f} s; max |difference| {np.abs(ref - D).max():.2e}")
    print(f"  ratio NumPy / C ({th} threads): {t_np / times[th]:.1f}x; "
          f"NumPy / C (1 thread): {t_np / times[1]:.1f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--speed-n", type=int, default=5000)
    ap.add_argument("--speed-trees", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if not args.speed_only:
        accuracy(args)
    if not args.no_speed:
        speed(args)


if __name__ == "__main__":
    main()
