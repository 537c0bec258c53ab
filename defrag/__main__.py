"""Command line: ``python -m defrag demo`` and ``python -m defrag config``."""
import argparse
import sys
import time

import numpy as np

DATASETS = {
    "breast_cancer": ("classification", "load_breast_cancer"),
    "wine": ("classification", "load_wine"),
    "diabetes": ("regression", "load_diabetes"),
}


def demo(args, out):
    """Train a random forest on a bundled data set, simplify it, print the rules."""
    import sklearn.datasets
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.model_selection import train_test_split

    from . import DefragModel

    task, loader = DATASETS[args.dataset]
    data = getattr(sklearn.datasets, loader)()  # plain arrays: pandas is optional
    X, y = data.data, data.target
    names = [str(n) for n in data.feature_names]
    if task == "classification" and hasattr(data, "target_names"):
        y = np.asarray(data.target_names)[y]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=args.random_state)
    Forest = RandomForestClassifier if task == "classification" else RandomForestRegressor
    t0 = time.perf_counter()
    forest = Forest(n_estimators=100, random_state=args.random_state, n_jobs=-1).fit(Xtr, ytr)
    forest_seconds = time.perf_counter() - t0

    t0 = time.perf_counter()
    model = DefragModel(forest, max_rules=args.max_rules, n_restarts=args.n_restarts,
                        feature_names=names, random_state=args.random_state, n_jobs=-1).fit(Xtr)
    defrag_seconds = time.perf_counter() - t0
    ev = model.evaluate(Xte, yte)

    if task == "classification":
        forest_error = float(np.mean(forest.predict(Xte) != np.asarray(yte)))
        metric = "test error"
    else:
        forest_error = float(np.mean((forest.predict(Xte) - np.asarray(yte)) ** 2))
        metric = "test MSE"
    n_leaves = sum(int(t.tree_.n_leaves) for t in forest.estimators_)

    print(f"defrag demo: {args.dataset} ({task}), {len(Xtr)} training and {len(Xte)} test points", file=out)
    print(f"random forest of 100 trees ({n_leaves} leaves, {model.n_all_splits_} distinct splits, the "
          f"{len(model.splits_)} of largest gain used), simplified to fit its own predictions on the "
          "training points; the rules below are the predictor, read in order\n", file=out)
    print(model, file=out)
    print(file=out)
    rows = [
        ("", "rules", metric, "coverage", "fidelity", "fit seconds"),
        ("ensemble", f"{n_leaves} leaves", f"{forest_error:.4g}", "1.000", "1.000", f"{forest_seconds:.2f}"),
        ("defrag", str(model.n_rules_), f"{ev['error']:.4g}", f"{ev['coverage']:.3f}",
         f"{ev['fidelity']:.3f}", f"{defrag_seconds:.2f}"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))), file=out)
    return 0


def config(args, out):
    from . import show_config

    print(show_config(), file=out)
    return 0


def main(argv=None, out=None):
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m defrag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="simplify a random forest on a data set bundled with scikit-learn")
    p.add_argument("--dataset", choices=sorted(DATASETS), default="breast_cancer")
    p.add_argument("--max-rules", type=int, default=10)
    p.add_argument("--n-restarts", type=int, default=20)
    p.add_argument("--random-state", type=int, default=0)
    p.set_defaults(func=demo)
    c = sub.add_parser("config", help="show how the compiled kernels were built")
    c.set_defaults(func=config)
    args = parser.parse_args(argv)
    return args.func(args, out)


if __name__ == "__main__":
    sys.exit(main())
