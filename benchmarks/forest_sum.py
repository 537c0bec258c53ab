"""The forest's own predictions in a fit, against scikit-learn's, in one run.

A fit asks a scikit-learn random forest for its predictions of the training rows (the
targets of the search, the labels where no y is given). defrag sums the trees itself
(src_c/dfg_forest_sum.c over the node arrays it reads once per model); before, it called
each tree's ``tree_.predict`` in turn, which is what the forest's own ``predict`` does on
one thread, behind joblib's dispatch. Per case (a 100-tree forest as benchmarks/quality.py
fits them, on make_classification or make_regression rows): the best of --repeats wall
times of the forest's own predict (n_jobs=1), the per-tree loop, and defrag's sums on one
thread and on the threads this process may use; the figures to read are the ratios, and
whether the values are the same bit for bit (they must be).

    PYTHONPATH=. python benchmarks/forest_sum.py [--repeats 7]
"""
import argparse
import time

import numpy as np

CASES = [("regression", 300), ("regression", 1_500), ("classification", 500), ("classification", 5_000),
         ("classification", 50_000)]


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from defrag.sources.sklearn_trees import ForestNodes, tree_records
    from defrag.utils.threads import threads_now

    print(f"{'task':15s} {'rows':>7s} {'forest ms':>10s} {'per tree ms':>12s} {'defrag 1t ms':>13s} "
          f"{'defrag ms':>10s} {'threads':>7s} {'per tree / defrag 1t':>21s} {'same':>5s}")
    for task, n in CASES:
        if task == "regression":
            X, y = make_regression(n, 20, n_informative=8, noise=5.0, random_state=0)
            forest = RandomForestRegressor(100, min_samples_leaf=5, random_state=0).fit(X, y)
            own = forest.predict
        else:
            X, y = make_classification(n, 20, n_informative=8, n_classes=4, random_state=0)
            forest = RandomForestClassifier(100, min_samples_leaf=1 if n <= 5_000 else 5, random_state=0).fit(X, y)
            own = forest.predict_proba
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        trees = forest.estimators_

        def per_tree():
            out = trees[0].tree_.predict(X32).copy()
            for tree in trees[1:]:
                out += tree.tree_.predict(X32)
            return out / len(trees)

        nodes = ForestNodes(*tree_records(trees))  # (read once per model, as a fit reads it)
        expected, t_own = best(lambda: own(X), args.repeats)
        looped, t_loop = best(per_tree, args.repeats)
        one, t_one = best(lambda: nodes.summed(X32, 1) / len(trees), args.repeats)
        many, t_many = best(lambda: nodes.summed(X32, threads_now()) / len(trees), args.repeats)
        width = expected.shape[1] if expected.ndim == 2 else 1
        same = all(np.array_equal(a.reshape(len(X), -1)[:, :width], expected.reshape(len(X), -1))
                   for a in (looped, one, many))
        print(f"{task:15s} {n:7d} {t_own * 1e3:10.2f} {t_loop * 1e3:12.2f} {t_one * 1e3:13.2f} {t_many * 1e3:10.2f} "
              f"{threads_now():7d} {t_loop / t_one:21.2f} {'yes' if same else 'NO':>5s}", flush=True)


if __name__ == "__main__":
    main()
