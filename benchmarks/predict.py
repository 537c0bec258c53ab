"""Predict time and memory of the explanation's forms on many rows, one thread, in one run.

The default explanation (a tree), the list and the sum of the same data are fitted on
20,000 rows of make_classification (28 features, 8 informative, as benchmarks/run.py's
large case) with a 100-tree random forest, then predict 2,000,000 rows: the best of
--repeats wall times, and tracemalloc's peak above the output (NumPy's and Python's
allocations, C's own malloc included). The figures to read are the ratios to the list
form, measured in the same run (machines are noisy), and the megabytes above the output.

    PYTHONPATH=. python benchmarks/predict.py [--rows 2000000] [--repeats 5]
"""
import argparse
import time
import tracemalloc
import warnings

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    X, y = make_classification(n_samples=20_000 + args.rows, n_features=28, n_informative=8, random_state=0)
    X_fit, y_fit, X_new = X[:20_000], y[:20_000], np.ascontiguousarray(X[20_000:])
    forest = RandomForestClassifier(100, min_samples_leaf=5, n_jobs=1, random_state=0).fit(X_fit, y_fit)
    forms = {"default": {}, "list": dict(form="list"), "sum (max_conditions=15)": dict(form="sum", max_conditions=15)}
    rows = {}
    for name, params in forms.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rules = DefragModel(forest, random_state=0, n_jobs=1, **params).fit(X_fit).rules_
        rules.predict(X_new[:1000])  # compiled arrays built once, as a service holds them
        best = min(timed(rules, X_new) for _ in range(args.repeats))
        tracemalloc.start()
        out = rules.predict(X_new)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows[name] = (best, (peak - out.nbytes) / 2**20, rules.form, len(rules))
    base = rows["list"][0]
    print(f"predict of {args.rows:,} x 28 rows, one thread, best of {args.repeats}")
    print(f"{'form':<26} {'form':<9} {'size':>5} {'seconds':>8} {'/ list':>7} {'MB above output':>16}")
    for name, (sec, mb, kind, size) in rows.items():
        print(f"{name:<26} {kind:<9} {size:>5} {sec:>8.3f} {sec / base:>7.2f} {mb:>16.1f}")


def timed(rules, X):
    t = time.perf_counter()
    rules.predict(X)
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
