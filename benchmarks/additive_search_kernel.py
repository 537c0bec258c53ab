"""The additive path: the C kernel (grow_additive_path, defrag/search/additive_search.py)
against its NumPy reference (tests/additive_search_reference.py).

Usage (from the repository root, with defrag built in place):

    python benchmarks/additive_search_kernel.py            # three problems, a few seconds
    python benchmarks/additive_search_kernel.py --repeat 9

The problems are benchmarks/list_search_kernel.py's: a random forest's first L distinct
splits on its own training rows (S), the targets T (regression: y about its mean, d = 1;
binary classification: the indicator of the second class, d = 1); 15 splits, min_leaf 1,
3 backfit rounds. C times are the best of --repeat runs on one thread (n_threads=1), the
NumPy reference's one run; "same" says whether the steps are the same. Where imodels is
installed (the bench extra), FIGS fitted on the same S and T with n_components=15 is timed
beside them (the best of --repeat).
"""
import argparse
import os
import sys
import time

import numpy as np

from defrag.search.additive_search import grow_additive_path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from additive_search_reference import grow_additive_path as reference_path  # noqa: E402
from list_search_kernel import best_time, forest_problem  # noqa: E402

SPLITS = 15


def figs_time(S, T, repeat):
    """Seconds of imodels' FIGS on S and T (n_components=SPLITS), or None without imodels."""
    try:
        from imodels import FIGSRegressor
    except ImportError:
        return None
    X, y = S.astype(np.float64), T[:, 0]
    return best_time(lambda: FIGSRegressor(n_components=SPLITS).fit(X, y), repeat)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'problem':>14} {'n':>5} {'L':>4}  {'NumPy (ms)':>10} {'C (ms)':>8} {'ratio':>6}  steps  same"
          f"  {'FIGS (ms)':>9}")
    for name, n, L in [("regression", 300, 170), ("regression", 3000, 600), ("binary", 3000, 600)]:
        S, T, *_ = forest_problem(n, L, 1 if name == "regression" else 2)
        T = T if name == "regression" else T[:, 1:]
        S = np.ascontiguousarray(S)
        t_ref, (ref, _, _) = best_time(lambda: reference_path(S, T, SPLITS), 1)
        t_c, got = best_time(lambda: grow_additive_path(S, T, SPLITS, n_threads=1), args.repeat)
        t_figs = figs_time(S, T, args.repeat)
        figs = f"{1e3 * t_figs:9.1f}" if t_figs is not None else f"{'-':>9}"
        print(f"{name:>14} {n:5d} {S.shape[1]:4d}  {1e3 * t_ref:10.1f} {1e3 * t_c:8.2f} {t_ref / t_c:6.1f}  "
              f"{len(got):5d}  {got == ref}  {figs}")


if __name__ == "__main__":
    main()
