"""Restarts in turn against side by side: DefragModel's fit time with one restart worker
and with two, on the cases of benchmarks/quality.py (split 0): whether n_jobs=None should
run a small problem's restarts in turn (defrag/utils/threads.py's thread_budget).

Usage (from the repository root, with defrag installed or built in place):

    PYTHONPATH=. python benchmarks/restart_workers.py                  # every case
    PYTHONPATH=. python benchmarks/restart_workers.py --cases servo,vehicle --reps 20

Each case's forest is fitted once; then the default DefragModel (n_components=10, n_restarts=5,
random_state=0) is fitted with n_jobs=1, n_jobs=2 and n_jobs=None in turn, --reps times,
so that the three see the same load; the table gives the fastest fit of each (ms), rows x
splits of the restarts' problem, and which n_jobs=None chose, then the geometric means.
The rules do not depend on n_jobs (checked here too). Run it on an otherwise idle machine
with at least 2 cores. Three runs on the 2-core machine (2026-11-27): geometric means 33.0,
32.3 and 31.9 ms (17 cases; n_jobs 1, 2, None), 20.9 / 20.6 and 21.8 / 22.2 ms (the 12
smallest; n_jobs 1 / 2): in turn faster on servo, wine and glass, side by side on soybean
and housevotes84, so n_jobs=None keeps the restarts side by side.
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import quality
    from defrag import DefragModel
    from defrag.fit.config import AUTO_SEARCH_ROWS
    from defrag.utils import threads

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(quality.CASES))
    ap.add_argument("--reps", type=int, default=12)
    args = ap.parse_args()
    print("| data | rows x splits | n_jobs=1 ms | n_jobs=2 ms | n_jobs=None ms | None runs |")
    print("|---|---|---|---|---|---|")
    logs = {}
    for name in args.cases.split(","):
        loaded = quality.load(name)
        if loaded is None:
            print(f"{name}: no data file, skipped", file=sys.stderr)
            continue
        s = quality.Split(*loaded, 0)
        best, printed = {}, set()
        for _ in range(args.reps):
            for n_jobs in (1, 2, None):  # in turn: the same load for each
                model = DefragModel(s.forest, n_components=10, n_restarts=5, random_state=0, n_jobs=n_jobs)
                t0 = time.perf_counter()
                model.fit(s.Xtr, s.ytr)
                best[n_jobs] = min(best.get(n_jobs, float("inf")), time.perf_counter() - t0)
                printed.add(str(model.rules_))
        if len(printed) != 1:
            raise SystemExit(f"{name}: the rules differ between n_jobs values")
        rows = min(len(s.Xtr), AUTO_SEARCH_ROWS)  # the rows the restarts are fitted on
        work = rows * len(model.splits_)
        workers, _ = threads.thread_budget(None, 5, rows)
        print(f"| {name} | {work:,} | {1000 * best[1]:.1f} | {1000 * best[2]:.1f} | {1000 * best[None]:.1f} | "
              f"{'in turn' if workers == 1 else 'side by side'} |")
        for n_jobs, seconds in best.items():
            logs.setdefault(n_jobs, []).append(math.log(seconds))
    print("\ngeometric means, ms: " + ", ".join(
        f"n_jobs={n_jobs} {1000 * math.exp(sum(v) / len(v)):.1f}" for n_jobs, v in logs.items()))


if __name__ == "__main__":
    main()
