"""The rule-list search: the C kernel (grow_boxes, defrag/search/list_search.py) against
its NumPy reference (ListSearch.grow, tests/list_search_reference.py).

Usage (from the repository root, with defrag built in place):

    python benchmarks/list_search_kernel.py            # four problems, a few seconds
    python benchmarks/list_search_kernel.py --repeat 9

Each problem is a random forest's splits on its own training rows: S the rows' sides of
the splits (the first L distinct splits of the forest, thresholds of a feature nested
as in a split table), T the targets (regression: y about its mean, d = 1; classification:
the class indicators, d = 7), 30 candidate boxes (the paths to random leaves of the
forest) and max_rules = 9. Times
are the best of --repeat runs, one after the other in one process; the kernel runs on
one thread (ListSearch's products are single-threaded too). "same" says whether the
boxes are the same (certain only where the target sums are exact: classification).
"""
import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from defrag.search.list_search import grow_boxes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from list_search_reference import ListSearch  # noqa: E402


def forest_problem(n, L, d, seed=0, n_candidates=30):
    if d == 1:
        X, y = make_friedman1(n, 10, noise=1.0, random_state=seed)
        forest = RandomForestRegressor(100, max_leaf_nodes=24, random_state=seed).fit(X, y)
        T = (y - y.mean())[:, None]
    else:
        X, y = make_classification(n, 10, n_informative=6, n_classes=d, n_clusters_per_class=1,
                                   random_state=seed)
        forest = RandomForestClassifier(100, max_leaf_nodes=24, random_state=seed).fit(X, y)
        T = np.eye(d)[y]
    index, splits = {}, []
    for est in forest.estimators_:  # the first L distinct splits, in tree order
        tree = est.tree_
        for node in np.flatnonzero(tree.children_left >= 0):
            key = (int(tree.feature[node]), float(tree.threshold[node]))
            if key not in index and len(splits) < L:
                index[key] = len(splits)
                splits.append(key)
    order = sorted(range(len(splits)), key=lambda i: splits[i])  # by feature, then threshold
    rank = {splits[i]: r for r, i in enumerate(order)}
    feature = np.array([splits[i][0] for i in order], dtype=np.int64)
    threshold = np.array([splits[i][1] for i in order])
    L = feature.size
    S = X[:, feature] > threshold
    literal_feature = np.concatenate([feature, feature])
    literal_group = np.concatenate([2 * feature, 2 * feature + 1])
    rng = np.random.default_rng(seed)
    candidates = []
    while len(candidates) < n_candidates:  # the paths to random leaves, their splits all kept
        tree = forest.estimators_[rng.integers(len(forest.estimators_))].tree_
        node, box = 0, []
        while tree.children_left[node] >= 0:
            key = (int(tree.feature[node]), float(tree.threshold[node]))
            right = rng.random() < 0.5
            if key in rank:
                box.append(rank[key] if right else L + rank[key])
            node = tree.children_right[node] if right else tree.children_left[node]
        if box:
            candidates.append(box)
    return S, T, literal_feature, literal_group, candidates


def best_time(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'n':>5} {'L':>4} {'d':>2}  {'NumPy (ms)':>10} {'C (ms)':>8} {'ratio':>6}  rules  same")
    for n, L, d in [(300, 170, 1), (300, 170, 7), (3000, 550, 1), (3000, 550, 7)]:
        S, T, feature, group, cand = forest_problem(n, L, d)
        t_ref, ref = best_time(lambda: ListSearch(S, T, feature, group, 1).grow(cand, 9), args.repeat)
        t_c, got = best_time(lambda: grow_boxes(S, T, feature, group, cand, 9, 1, n_threads=1),
                             args.repeat)
        same = [[int(j) for j in b] for b in ref] == got
        print(f"{n:5d} {S.shape[1]:4d} {d:2d}  {1e3 * t_ref:10.1f} {1e3 * t_c:8.2f} {t_ref / t_c:6.1f}  "
              f"{len(got):5d}  {same}")


if __name__ == "__main__":
    main()
