"""``defrag demo``: a random forest on a data set bundled with scikit-learn, simplified,
and the two compared on test points."""
import argparse
import shutil
import textwrap
import time

import numpy as np

from .options import common_options, non_negative_int, positive_int
from .output import Progress

NAME = "demo"
DATASETS = {
    "breast_cancer": ("classification", "load_breast_cancer"),
    "wine": ("classification", "load_wine"),
    "diabetes": ("regression", "load_diabetes"),
}


def add_parser(commands):
    """The command's parser, on the subparsers of the defrag parser."""
    d = commands.add_parser(NAME, help="simplify a random forest on a data set bundled with scikit-learn",
                            description="Train a random forest on a data set bundled with scikit-learn, "
                                        "simplify it into rules and compare the two on test points.")
    d.add_argument("--dataset", choices=sorted(DATASETS), default="breast_cancer")
    d.add_argument("--n-trees", type=positive_int, default=100, metavar="N", help="forest size (default 100)")
    d.add_argument("--max-conditions", type=non_negative_int, default=None, metavar="B",
                   help="print at most B comparisons (default: a size by cross-validation)")
    d.add_argument("--n-restarts", type=positive_int, default=20, metavar="N",
                   help="random restarts (default 20)")
    common_options(d)
    d.add_argument("--random-state", type=int, dest="seed", help=argparse.SUPPRESS)  # --seed's other name
    return d


def run(args, out, err):
    """Train a random forest on a bundled data set, simplify it, print the rules."""
    # scikit-learn and the estimators load with the command that needs them (`defrag
    # predict` and `--help` start without them)
    import sklearn.datasets
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.model_selection import train_test_split

    from .. import DefragModel

    task, loader = DATASETS[args.dataset]
    data = getattr(sklearn.datasets, loader)()  # plain arrays: pandas is optional
    X, y = data.data, data.target
    names = [str(n) for n in data.feature_names]
    if task == "classification" and hasattr(data, "target_names"):
        y = np.asarray(data.target_names)[y]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=args.seed)
    Forest = RandomForestClassifier if task == "classification" else RandomForestRegressor
    t0 = time.perf_counter()
    forest = Forest(n_estimators=args.n_trees, random_state=args.seed, n_jobs=-1).fit(Xtr, ytr)
    forest_seconds = time.perf_counter() - t0

    with Progress(args.quiet, err) as progress:
        t0 = time.perf_counter()
        model = DefragModel(forest, max_conditions=args.max_conditions, n_restarts=args.n_restarts,
                            feature_names=names, random_state=args.seed, n_jobs=args.n_jobs,
                            verbose=progress.verbose).fit(Xtr)
        defrag_seconds = time.perf_counter() - t0
    ev = model.evaluate(Xte, yte)

    if task == "classification":
        forest_error = float(np.mean(forest.predict(Xte) != np.asarray(yte)))
        metric = "test error"
    else:
        forest_error = float(np.mean((forest.predict(Xte) - np.asarray(yte)) ** 2))
        metric = "test MSE"
    n_leaves = sum(int(t.tree_.n_leaves) for t in forest.estimators_)
    width = max(40, shutil.get_terminal_size((100, 24)).columns)

    def para(text):
        print(textwrap.fill(text, width), file=out)

    para(f"defrag demo: {args.dataset} ({task}), {len(Xtr)} training and {len(Xte)} test points")
    para(f"A {type(forest).__name__} of {len(forest.estimators_)} trees ({n_leaves} leaves, "
         f"{model.n_all_splits_} distinct splits, the {len(model.splits_)} of largest gain used), "
         "simplified to fit its own predictions on the training points. The rules below are the "
         "predictor.")
    print(file=out)
    for line in str(model).splitlines():
        indent = len(line) - len(line.lstrip(" "))
        print(textwrap.fill(line, width, subsequent_indent=" " * (indent + 4)), file=out)
    print(file=out)
    rows = [
        ("", "regions", "conditions", metric, "read per row", "fidelity", "fit seconds"),
        ("ensemble", f"{n_leaves}", "", f"{forest_error:.4g}", "", "1.000", f"{forest_seconds:.2f}"),
        ("defrag", str(model.n_regions_), str(model.n_conditions_), f"{ev['error']:.4g}",
         f"{ev['mean_checks']:.2f}", f"{ev['fidelity']:.3f}", f"{defrag_seconds:.2f}"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))),
              file=out)
    if task == "classification":
        para("fidelity: share of test points where the rules predict the forest's class.")
    else:
        para("fidelity: R^2 of the rules' predictions against the forest's on the test points "
             "(1 = the same predictions, 0 = no better than their mean).")
    return 0
