"""The box tree at every size: the C kernel (grow_tree_path, defrag/search/tree_search.py)
against its NumPy reference (tests/tree_search_reference.py).

Usage (from the repository root, with defrag built in place):

    python benchmarks/tree_search_kernel.py            # three problems, about ten seconds
    python benchmarks/tree_search_kernel.py --repeat 9

Each problem is benchmarks/list_search_kernel.py's (a random forest's first L distinct splits
on its own training rows, T the class indicators (d classes) or y about its mean (d = 1),
candidate boxes the paths to random leaves of the forest), here with 40 candidates, grown
to 16 leaves (literal_price 0, min_leaf 1). Times are the best of --repeat runs on one
thread: "C (ms)" the wall clock, "CPU (ms)" the process's CPU time (the steadier figure on a
shared machine); the reference runs once. "same" says whether the steps are the same
(certain only where the target sums are exact: classification).
"""
import argparse
import os
import sys
import time

from defrag.search.tree_search import grow_tree_path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from list_search_kernel import forest_problem  # noqa: E402
from tree_search_reference import grow_tree_path as reference_path  # noqa: E402

MAX_LEAVES = 16


def best_times(fn, repeat):
    """(best wall seconds, best CPU seconds, the last result) of repeat runs."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'n':>5} {'L':>4} {'d':>2}  {'NumPy (ms)':>10} {'C (ms)':>8} {'CPU (ms)':>8} {'ratio':>6}  leaves  same")
    for n, L, d in [(300, 170, 2), (3000, 600, 2), (3000, 600, 7)]:
        S, T, feature, group, cand = forest_problem(n, L, d, n_candidates=40)
        t = time.perf_counter()
        ref = reference_path(S, T, feature, group, cand, MAX_LEAVES)
        t_ref = time.perf_counter() - t
        t_c, cpu_c, got = best_times(lambda: grow_tree_path(S, T, feature, group, cand, MAX_LEAVES, n_threads=1),
                                     args.repeat)
        same = [(leaf, [int(j) for j in box]) for leaf, box in ref] == got
        print(f"{n:5d} {S.shape[1]:4d} {d:2d}  {1e3 * t_ref:10.1f} {1e3 * t_c:8.2f} {1e3 * cpu_c:8.2f} "
              f"{t_ref / t_c:6.1f}  {len(got) + 1:6d}  {same}")


if __name__ == "__main__":
    main()
