"""A sum of trees against a tree of the same budget, the forms fitted on their own.

Under ``max_conditions=B`` the search weighs trees and, in regression and with two
classes, sums of small trees (search/tree_path.py); in regression, where the best is a tree,
it prints the best sum when that comes within one standard error of it. This script shows
the ground for that rule: per case, split (benchmarks/quality.py's: 70/30, seeds 0, 1, 2,
a 100-tree random forest) and budget, the test errors of ``form="sum"`` and ``form="tree"``
fitted alone (each sized by cross-validation within the budget), FIGS-fp's where imodels
is installed, and how many cells the sum's error is below the tree's.

    PYTHONPATH=. python benchmarks/sum_vs_tree.py                      # generated regression data
    PYTHONPATH=. python benchmarks/sum_vs_tree.py --cases servo,ozone --data DIR
"""
import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quality  # noqa: E402  (load, Split, SYNTHETIC)

DEFAULT_CASES = ("syn_friedman1_600", "syn_friedman2", "syn_friedman3", "syn_additive_800")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES))
    parser.add_argument("--data", default=quality.DATA)
    parser.add_argument("--budgets", default="3,7,15")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    quality.DATA = args.data
    from defrag import DefragModel

    try:
        import imodels  # noqa: F401
        figs = True
    except ImportError:
        figs = False
    budgets = [int(b) for b in args.budgets.split(",")]
    below = cells = 0
    print("| case | seed | B | sum | tree | FIGS-fp |")
    print("|---|---|---|---|---|---|")
    for name in args.cases.split(","):
        loaded = quality.load(name)
        if loaded is None:
            print(f"{name}: no data (--data)", file=sys.stderr)
            continue
        X, y, task = loaded
        for seed in range(args.seeds):
            s = quality.Split(X, y, task, seed)
            for B in budgets:
                errors = []
                for form in ("sum", "tree"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = DefragModel(s.forest, max_conditions=B, form=form, n_restarts=5, random_state=0).fit(s.Xtr)
                    errors.append(s.error(m.rules_.predict(s.Xte)))
                peer = f"{s.figs(B):.4g}" if figs else "n/a"
                cells += 1
                below += errors[0] < errors[1]
                print(f"| {name} | {seed} | {B} | {errors[0]:.4g} | {errors[1]:.4g} | {peer} |", flush=True)
    print(f"\nthe sum's test error below the tree's in {below} of {cells} cells")


if __name__ == "__main__":
    main()
