"""Quality of the rules as printed, on real data, against a tree of the same reading cost.

Usage (from the repository root, with defrag installed, or built in place and PYTHONPATH=.;
on a shared machine prefix ``nice -n 10``):

    PYTHONPATH=. python benchmarks/quality.py            # every case, default and paper preset
    PYTHONPATH=. python benchmarks/quality.py --cases wine,diabetes --out quality.md
    PYTHONPATH=. python benchmarks/quality.py --path     # and the size path K = 2..10
    PYTHONPATH=. python benchmarks/quality.py --no-paper # the default preset only (half the time)
    PYTHONPATH=. python benchmarks/quality.py --png quality.png

Cases (17): scikit-learn's breast_cancer, wine and diabetes, make_friedman1(2000, noise=1,
random_state=0), and the CSV files of ../shared/data (skipped with a message where the
folder is absent; see its README). Regression: diabetes, friedman1, bostonhousing, ozone,
servo, houseprices; multiclass: wine, vehicle, satellite, glass, soybean,
letterrecognition; binary: the rest (issue 25 says "16 public cases" but names these
17; the summary counts over the cases run). ``--cases`` also takes any other NAME.csv of the
data folder (``--data``; the last column the target): its task is the one the folder's
README.md table gives it, else the target's (numbers that are not all integers, or more than
20 distinct ones: regression; else binary or multiclass by its classes). The CSV files' categorical columns (ozone V1-V3,
servo's 4 features, houseprices' 6 yes/no columns, soybean's and housevotes84's features)
hold the integer codes of R's factors and are used as these ordinal codes, by every
learner alike (a column of strings, if a file had one, would get the codes of its sorted
values). Missing values (ozone, soybean, housevotes84) stay NaN: scikit-learn's forests
and trees route them, and defrag's rules follow the forest's missing directions. FIGS does
not take NaN: it gets the training medians in their place.

Protocol (that of docs/performance.rst, "Rules against a tree of the same size"): a random
forest of 100 trees (random_state 0; min_samples_leaf 5 for regression and above 5,000
rows, else 1), a 70/30 split; ``DefragModel(forest, random_state=0).fit(X_train)`` (the
default: the explanation of the forest, fitted to its predictions as CART-fp is) and
``DefragModel.paper(...).fit(X_train, y_train)`` (Algorithm 1 on every split, MAP prediction;
``--no-paper`` leaves it out; the path is about the default). Error is the
misclassification rate or the mean squared error of the rules as printed
(``rules_.predict``) on the test rows. CART-fp is a DecisionTree fitted to the
forest's predictions on the training rows (random_state 0), compared

- at equal leaves: as many leaves as the explanation has regions (``n_regions_``);
- at equal conditions: as many splits as the explanation prints comparisons
  (``n_conditions_``: each condition once, an interval ``a < x <= b`` two), i.e.
  max_leaf_nodes = conditions + 1 (a constant where there is none).

Reading cost per row: the comparisons a reader makes on each test row (``rules_.checks``:
down a tree, each box's conditions until the first that fails; a list's rules in turn,
each until its first failing condition), against CART-fp's mean depth at equal leaves.

``--budget``: per B = 3, 7, 15, ``DefragModel(forest, max_conditions=B, random_state=0)``
against CART-fp with B splits (B + 1 leaves), FIGS-fp (FIGS fitted to the forest's predictions) and FIGS
(fitted to y_train) with B splits (max_rules=B, where imodels runs), and STreeD-fp (pystreed, where
it installs: an optimal tree of at most B branching nodes and depth 4 on the forest's predictions,
each fit stopped after 10 s, marked * where that stopped it):
test errors, the comparisons printed and read per row, and the fit seconds against CART-fp's
with B splits (the best of --budget-repeats fits, default 1, against CART-fp's best of 3):
their geometric-mean ratio per B.

``--synthetic``: the same tables on 12 generated data sets instead of the 17 cases (``SYNTHETIC``:
scikit-learn's Friedman functions, sums of one-feature terms among idle features, and
``make_classification`` of 2, 3 and 5 classes), each function known, no setting tuned on them:
a check of a change that the public cases cannot tell from noise.

``--path``: the size path K = 2..10 regions, ``DefragModel(forest, n_regions=K)``,
against CART-fp with K leaves and, where imodels is installed (``pip
install ".[bench]"``), FIGS fitted to the same forest predictions with max_rules=K (FIGS
counts splits: K splits over its trees). Fit seconds: DefragModel's fit against CART-fp's
fit at equal leaves, each the best of 3 fits (the forest's predictions are not counted),
their ratio per case and the geometric mean of the ratios.

A "win" is a test error of the rules as printed strictly below CART-fp's; equal within
1e-12 (relative) is a tie, counted apart. Where the test set has fewer than 1,000 rows
the figures are means over 3 splits (random_state 0, 1, 2) and wins are counted on the
means. Writes markdown tables and a summary (stdout and --out) and, when matplotlib is
installed, a PNG of rules against error (--png).
"""
import argparse
import csv
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
SKLEARN = ("breast_cancer", "wine", "diabetes", "friedman1")
SHARED = ("bostonhousing", "pimaindiansdiabetes", "ionosphere", "vehicle", "satellite",
          "letterrecognition", "ozone", "servo", "houseprices", "glass", "sonar", "soybean",
          "housevotes84")
CASES = SKLEARN + SHARED
REGRESSION = ("diabetes", "friedman1", "bostonhousing", "ozone", "servo", "houseprices")
MULTICLASS = ("wine", "vehicle", "satellite", "glass", "soybean", "letterrecognition")
# categorical columns of the CSV files (../shared/data/README.md): integer codes; "all": every feature
CATEGORICAL = {"ozone": ("V1", "V2", "V3"), "servo": "all",
               "houseprices": ("driveway", "recreation", "fullbase", "gasheat", "aircon", "prefer"),
               "soybean": "all", "housevotes84": "all"}
PATH_SIZES = range(2, 11)
PATH_COUNTED = (4, 6, 8)  # the path cells of issue 36's acceptance
READING_RATIO = 1.3  # issue 36: comparisons read per row against CART-fp's mean depth
TIE = 1e-12


# the tasks of the CSV files that are not among the 17 cases, found when they are loaded
OTHER_TASKS = {}


def task_of(name):
    if name in OTHER_TASKS:
        return OTHER_TASKS[name]
    if name in REGRESSION:
        return "regression"
    return "multiclass" if name in MULTICLASS else "binary"


def readme_task(name):
    """The task the data folder's README.md gives a file (its table's "task" column:
    "regression", "binary" or "N classes"), or None."""
    path = os.path.join(DATA, "README.md")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[0] == f"{name}.csv":
                task = cells[2].lower()
                if task.startswith("regression"):
                    return "regression"
                if task.startswith("binary"):
                    return "binary"
                if "class" in task:  # "N classes"
                    count = task.split()[0]
                    return "binary" if count.isdigit() and int(count) == 2 else "multiclass"
    return None


def inferred_task(y):
    """A target's task where nothing names it: numbers that are not all integers, or more
    than 20 distinct ones, are a regression; else 2 classes are binary, more multiclass."""
    try:
        values = np.array([float(v) for v in y])
    except ValueError:  # text: class labels
        values = None
    distinct = np.unique(np.asarray(y))
    if values is not None and np.all(np.isfinite(values)) and (np.any(values != np.round(values))
                                                               or distinct.size > 20):
        return "regression"
    return "binary" if distinct.size == 2 else "multiclass"


def column_codes(values):
    """A CSV column as float64: numbers as they are, empty cells NaN, and a column with
    any other text as the ordinal codes of its sorted values (NaN where empty)."""
    try:
        return np.array([float(v) if v != "" else np.nan for v in values])
    except ValueError:
        levels = sorted({v for v in values if v != ""})
        code = {v: float(i) for i, v in enumerate(levels)}
        return np.array([code.get(v, np.nan) for v in values])


def _additive(n, n_features, seed):
    """A sum of one-feature terms (a sine, a square, a step, a line, a bump) on the first five
    of n_features uniform features, the rest idle, and Gaussian noise of a fifth of the
    signal's standard deviation."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, n_features))
    f = (3 * np.sin(2 * np.pi * X[:, 0]) + 8 * (2 * X[:, 1] - 1) ** 2 + 2 * (X[:, 2] > 0.7)
         + 3 * X[:, 3] + 2 * np.exp(-((X[:, 4] - 0.3) / 0.1) ** 2))
    return X, f + rng.normal(scale=0.2 * f.std(), size=n)


def _classes(n, n_features, n_informative, n_classes, seed):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=n_features, n_informative=n_informative,
                               n_redundant=2, n_classes=n_classes, n_clusters_per_class=2, flip_y=0.05,
                               class_sep=1.0, random_state=seed)


def _synthetic():
    from sklearn import datasets

    return {  # name: (generator of (X, y), task)
        "syn_friedman1_600": (lambda: datasets.make_friedman1(600, noise=1.0, random_state=11), "regression"),
        "syn_friedman1_20f": (lambda: datasets.make_friedman1(2000, n_features=20, noise=2.0, random_state=12),
                              "regression"),
        "syn_friedman2": (lambda: datasets.make_friedman2(1000, noise=100.0, random_state=13), "regression"),
        "syn_friedman3": (lambda: datasets.make_friedman3(1000, noise=0.1, random_state=14), "regression"),
        "syn_additive_800": (lambda: _additive(800, 8, 15), "regression"),
        "syn_additive_3000": (lambda: _additive(3000, 15, 16), "regression"),
        "syn_binary_400": (lambda: _classes(400, 10, 3, 2, 17), "binary"),
        "syn_binary_1200": (lambda: _classes(1200, 20, 5, 2, 18), "binary"),
        "syn_binary_3000": (lambda: _classes(3000, 12, 4, 2, 19), "binary"),
        "syn_3class_600": (lambda: _classes(600, 10, 4, 3, 20), "multiclass"),
        "syn_3class_2000": (lambda: _classes(2000, 16, 6, 3, 21), "multiclass"),
        "syn_5class_1500": (lambda: _classes(1500, 12, 6, 5, 22), "multiclass"),
    }


SYNTHETIC = tuple(_synthetic())


def load(name):
    """(X, y, task) of a case, or None when its file is absent."""
    from sklearn import datasets

    if name in SYNTHETIC:
        make, task = _synthetic()[name]
        OTHER_TASKS[name] = task
        X, y = make()
        return X, y, task
    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "wine":
        X, y = datasets.load_wine(return_X_y=True)
    elif name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True)
    elif name == "friedman1":
        X, y = datasets.make_friedman1(2000, noise=1, random_state=0)
    else:
        path = os.path.join(DATA, f"{name}.csv")
        if not os.path.exists(path):
            return None
        try:
            with open(path, newline="", encoding="utf-8") as f:
                lines = list(csv.reader(f))
        except (UnicodeDecodeError, csv.Error) as exc:
            raise ValueError(f"{path} is not a CSV file of text ({type(exc).__name__}: {exc})") from None
        if not lines:
            raise ValueError(f"{path} is empty: a case needs a header line")
        header, *rows = lines
        ragged = [i + 2 for i, r in enumerate(rows) if r and len(r) != len(header)]
        if ragged:
            raise ValueError(f"{path}: line {ragged[0]} has not the header's {len(header)} cells")
        rows = [r for r in rows if r and r[-1] != ""]  # (no file has a missing target)
        if len(header) < 2 or len(rows) < 10:
            raise ValueError(f"{path}: a case needs a target and a feature column, and 10 rows with a target")
        X = np.column_stack([column_codes([r[j] for r in rows]) for j in range(len(header) - 1)])
        y = np.array([r[-1] for r in rows])
        categorical = CATEGORICAL.get(name, ())
        for j, column in enumerate(header[:-1]):
            if categorical == "all" or column in categorical:
                present = X[~np.isnan(X[:, j]), j]
                if not np.array_equal(present, np.round(present)):
                    raise ValueError(f"{name}: categorical column {column} does not hold integer codes")
        if name not in CASES:  # another file of the data folder: its README's task, or y's
            OTHER_TASKS[name] = readme_task(name) or inferred_task(y)
        if task_of(name) == "regression":
            y = y.astype(float)
    return X, y, task_of(name)


def error(pred, y, task):
    if task != "regression":
        return float(np.mean(pred != y))
    return float(np.mean((np.asarray(pred, dtype=float) - y) ** 2))


def sized_model(forest, K, n_restarts):
    """DefragModel with K regions."""
    from defrag import DefragModel

    return DefragModel(forest, n_regions=K, n_restarts=n_restarts, random_state=0)


def figs_available():
    try:
        import imodels  # noqa: F401
    except ImportError:
        return False
    return True


def streed_available():
    try:
        import pystreed  # noqa: F401
    except ImportError:
        return False
    return True


# STreeD (pystreed) with B nodes: depth at most STREED_DEPTH, each fit stopped after
# STREED_SECONDS (its tree is then the best found, not proven optimal: counted apart)
STREED_DEPTH = 4
STREED_SECONDS = 10.0


def best_of(fit, repeats=3):
    """(the fitted model, the smallest of `repeats` fit times in seconds)."""
    seconds = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        model = fit()
        seconds = min(seconds, time.perf_counter() - t0)
    return model, seconds


def list_size(model):
    """(printed rules or tree nodes, regions, conditions printed, median conditions per
    rule or node) of a fit."""
    rules = model.rules_
    groups = [len(nd.conditions) for nd in rules.nodes()]  # (a list's nodes: its rules)
    return len(groups), int(model.n_regions_), int(model.n_conditions_), \
        float(np.median(groups)) if groups else 0.0


def mean_checks(model, X):
    """The comparisons a reader of the printed explanation makes per row of X, on average."""
    return float(np.mean(model.rules_.checks(model.rules_.encode(X)))) if len(X) else 0.0


class Split:
    """One 70/30 split of a case: the forest, its predictions on the training rows, and the
    CART-fp and FIGS fits to them."""

    def __init__(self, X, y, task, seed):
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
        from sklearn.model_selection import train_test_split

        self.task = task
        self.Xtr, self.Xte, self.ytr, self.yte = train_test_split(X, y, test_size=0.3, random_state=seed)
        leaf = 5 if task == "regression" or len(X) > 5000 else 1
        Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
        self.forest = Forest(n_estimators=100, min_samples_leaf=leaf, random_state=0,
                             n_jobs=-1).fit(self.Xtr, self.ytr)
        # predictions on one thread: the forest's joblib threads add the trees in the order
        # they finish, so the last bits of its predictions (and CART-fp's and FIGS-fp's
        # ties on them) would change from run to run
        self.forest.set_params(n_jobs=1)
        self.fp = self.forest.predict(self.Xtr)

    def error(self, pred):
        return error(pred, self.yte, self.task)

    def cart(self, leaves, timed=False):
        """CART-fp's test error with this many leaves (and its fit seconds when timed)."""
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        self.last_depth = 0.0
        if leaves < 2:  # no split at all: the constant that fits the forest's predictions best
            if self.task == "regression":
                constant = np.mean(self.fp)
            else:
                values, counts = np.unique(self.fp, return_counts=True)
                constant = values[np.argmax(counts)]
            err = self.error(np.full(len(self.yte), constant))
            return (err, 0.0) if timed else err
        Tree = DecisionTreeRegressor if self.task == "regression" else DecisionTreeClassifier
        tree, seconds = best_of(lambda: Tree(max_leaf_nodes=int(leaves), random_state=0).fit(self.Xtr, self.fp),
                                repeats=3 if timed else 1)
        err = self.error(tree.predict(self.Xte))
        self.last_depth = float(np.mean(np.asarray(tree.decision_path(self.Xte).sum(axis=1)).ravel() - 1))
        return (err, seconds) if timed else err

    def filled(self, X):
        """X with each NaN the training median of its column (0 where the column has none):
        what the peers without missing-value support (FIGS, STreeD) read."""
        median = np.nanmedian(self.Xtr, axis=0)
        return np.where(np.isnan(X), np.where(np.isnan(median), 0.0, median), X)

    def figs(self, max_rules, to_y=False):
        """FIGS's test error with max_rules splits, fitted to the forest's predictions
        (FIGS-fp), or to y_train with to_y (NaN: the training medians; NaN itself where FIGS
        cannot run)."""
        from imodels import FIGSClassifier, FIGSRegressor

        Figs = FIGSRegressor if self.task == "regression" else FIGSClassifier
        # imodels 3.0's stumps are DecisionTrees without a random_state (FIGS keeps its own
        # unused): ties between features go by NumPy's global generator, seeded here so
        # that runs repeat
        state = np.random.get_state()
        np.random.seed(0)
        try:
            model = Figs(max_rules=max_rules, random_state=0).fit(self.filled(self.Xtr), self.ytr if to_y else self.fp)
            self.figs_checks = figs_checks(model, self.filled(self.Xte))
            return self.error(model.predict(self.filled(self.Xte)))
        except Exception as exc:  # noqa: BLE001 - an optional competitor: report it, go on
            print(f"FIGS failed ({type(exc).__name__}: {exc})", file=sys.stderr)
            self.figs_checks = float("nan")
            return float("nan")
        finally:
            np.random.set_state(state)

    def streed(self, n_nodes):
        """STreeD-fp's test error with at most n_nodes branching nodes (an optimal tree of
        depth at most STREED_DEPTH, fitted to the forest's predictions; pystreed's own
        binarization, 5 quantile thresholds a feature; NaN: the training medians), and
        whether its time limit stopped it; NaN where it cannot run."""
        import warnings

        from pystreed import STreeDClassifier, STreeDRegressor

        depth = min(n_nodes, STREED_DEPTH)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                if self.task == "regression":
                    model = STreeDRegressor(optimization_task="regression", max_depth=depth, max_num_nodes=n_nodes,
                                            cost_complexity=0.0, time_limit=STREED_SECONDS)
                    model.fit(self.filled(self.Xtr), self.fp)
                    pred = model.predict(self.filled(self.Xte))
                else:
                    labels, codes = np.unique(self.fp, return_inverse=True)
                    model = STreeDClassifier(max_depth=depth, max_num_nodes=n_nodes, time_limit=STREED_SECONDS)
                    model.fit(self.filled(self.Xtr), codes)
                    pred = labels[np.asarray(model.predict(self.filled(self.Xte)), dtype=np.int64)]
                stopped = time.perf_counter() - t0 >= 0.95 * STREED_SECONDS
            return self.error(pred), float(stopped)  # (a share over the splits: mean_of)
        except Exception as exc:  # noqa: BLE001 - an optional competitor: report it, go on
            print(f"STreeD failed ({type(exc).__name__}: {exc})", file=sys.stderr)
            return float("nan"), 0.0

    def depth2(self):
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        Tree = DecisionTreeRegressor if self.task == "regression" else DecisionTreeClassifier
        return self.error(Tree(max_depth=2, random_state=0).fit(self.Xtr, self.ytr).predict(self.Xte))


def figs_checks(model, X):
    """FIGS's comparisons per row of X: the depth of the leaf each of its trees sends the row
    to, summed over its trees (a reader adds one value per tree)."""
    total = np.zeros(len(X))
    for root in model.trees_:  # over trees and their nodes, not rows
        node = [root] * len(X)
        active = np.ones(len(X), dtype=bool)
        while active.any():
            for i in np.flatnonzero(active):
                nd = node[i]
                if nd.left is None:
                    active[i] = False
                    continue
                total[i] += 1
                node[i] = nd.left if X[i, nd.feature] <= nd.threshold else nd.right
    return float(total.mean()) if len(X) else 0.0


BUDGETS = (3, 7, 15)


def one_split(X, y, task, seed, n_restarts, presets=("default",), path=False, figs=False, budget=False,
              budget_repeats=1, streed=False):
    """Every figure of one split: per preset the list's size, its errors and CART-fp's at
    equal leaves and conditions; the baselines; the size path when asked."""
    from defrag import DefragModel

    s = Split(X, y, task, seed)
    out = {}
    for preset in presets:
        make = DefragModel.paper if preset == "paper" else DefragModel
        # timed as CART-fp is: the best of 3 fits (one cold fit would also time first calls)
        # the paper fits its rules to the training labels (Algorithm 1's input); the default explains the forest
        target = (s.ytr,) if preset == "paper" else ()
        model, seconds = best_of(lambda: make(s.forest, n_restarts=n_restarts, random_state=0).fit(s.Xtr, *target))
        n, regions, conditions, median = list_size(model)
        printed = model.rules_.predict(s.Xte)
        cover = model.rules_.covers(s.Xte)
        cart_leaves, cart_seconds = s.cart(regions, timed=True)
        out[preset] = {
            "rules": n, "regions": regions, "conditions": conditions, "median_conditions": median,
            "checks": mean_checks(model, s.Xte), "cart_depth": s.last_depth,
            "error": s.error(printed),
            "map": s.error(model.predict_map(s.Xte)) if hasattr(model, "predict_map") else float("nan"),
            "cart_leaves": cart_leaves, "cart_conditions": s.cart(conditions + 1),
            "coverage": float(np.mean(cover.any(axis=1))) if n else 0.0,
            "overlap": float(np.mean(cover.sum(axis=1))) if n else 0.0,
            "seconds": seconds, "cart_seconds": cart_seconds,
            "same": bool(np.array_equal(printed, model.predict(s.Xte)))}
    out["depth2"] = s.depth2()
    out["forest"] = s.error(s.forest.predict(s.Xte))
    out["n_train"] = len(s.Xtr)
    if budget:
        out["budget"] = {}
        for B in BUDGETS:
            model, seconds = best_of(lambda: DefragModel(s.forest, max_conditions=B, n_restarts=n_restarts,
                                                         random_state=0).fit(s.Xtr), repeats=budget_repeats)
            printed = model.rules_.predict(s.Xte)
            cart_seconds = s.cart(B + 1, timed=True)[1]
            out["budget"][B] = {"error": s.error(printed), "conditions": int(model.n_conditions_),
                                "seconds": seconds, "cart_seconds": cart_seconds,
                                "regions": int(model.n_regions_), "checks": mean_checks(model, s.Xte),
                                "sum": model.rules_.form == "sum",
                                "cart": s.cart(B + 1), "cart_depth": s.last_depth,
                                "figs": s.figs(B) if figs else float("nan"),
                                "figs_checks": s.figs_checks if figs else float("nan"),
                                "figs_y": s.figs(B, to_y=True) if figs else float("nan"),
                                **dict(zip(("streed", "streed_stopped"),
                                           s.streed(B) if streed else (float("nan"), 0.0))),
                                "same": bool(np.array_equal(printed, model.predict(s.Xte)))}
    if path:
        out["path"] = {}
        for K in PATH_SIZES:
            model = sized_model(s.forest, K, n_restarts).fit(s.Xtr)
            _, regions, conditions, _ = list_size(model)
            out["path"][K] = {"regions": regions, "conditions": conditions,
                                  "error": s.error(model.rules_.predict(s.Xte)), "cart": s.cart(K),
                                  "figs": s.figs(K) if figs else float("nan")}
    return out


def mean_of(results):
    """Means over the splits of every number (and all of the booleans)."""
    out = {}
    for key, value in results[0].items():
        if isinstance(value, dict):
            out[key] = mean_of([r[key] for r in results])
        elif isinstance(value, bool):
            out[key] = all(r[key] for r in results)
        else:
            out[key] = float(np.mean([r[key] for r in results]))
    return out


def outcome(ours, theirs):
    """"win", "tie" or "loss" of an error against a competitor's ("n/a" where it has none)."""
    if np.isnan(theirs):
        return "n/a"
    if abs(ours - theirs) <= TIE * max(abs(ours), abs(theirs), 1e-300):
        return "tie"
    return "win" if ours < theirs else "loss"


def tally(outcomes):
    """"x/n (t ties)" of a list of outcomes, n/a left out."""
    outcomes = [o for o in outcomes if o != "n/a"]
    text = f"{outcomes.count('win')}/{len(outcomes)}"
    ties = outcomes.count("tie")
    return text + (f" ({ties} tie{'s' if ties > 1 else ''})" if ties else "")


def fmt(v):
    return "n/a" if np.isnan(v) else f"{v:.4g}"


def size_table(rows, preset):
    """Errors at the preset's size against CART-fp at equal leaves and equal conditions."""
    lines = [f"### {preset}: rules as printed against CART-fp at equal leaves and equal conditions", "",
             ("| data | task | splits | rules | regions | conditions | rules as printed | "
             "CART-fp, leaves = regions | vs leaves | CART-fp, splits = conditions | vs conditions | "
             "read per row | CART-fp depth | MAP | depth-2 tree | forest | coverage | overlap | median conditions | "
             "printed = predict |"), "|---" * 20 + "|"]
    for name, n_splits, r in rows:
        p = r[preset]
        lines.append(
            f"| {name} | {task_of(name)} | {n_splits} | {p['rules']:.3g} | {p['regions']:.3g} | "
            f"{p['conditions']:.3g} | {fmt(p['error'])} | {fmt(p['cart_leaves'])} | "
            f"{outcome(p['error'], p['cart_leaves'])} | {fmt(p['cart_conditions'])} | "
            f"{outcome(p['error'], p['cart_conditions'])} | {p['checks']:.2f} | {p['cart_depth']:.2f} | "
            f"{fmt(p['map'])} | {fmt(r['depth2'])} | "
            f"{fmt(r['forest'])} | {p['coverage']:.3f} | {p['overlap']:.2f} | {p['median_conditions']:.3g} | "
            f"{'yes' if p['same'] else 'no'} |")
    return "\n".join(lines)


def seconds_table(rows, preset):
    lines = [f"### {preset}: fit seconds, DefragModel against CART-fp (equal leaves, best of 3)", "",
             "| data | training rows | DefragModel s | CART-fp s | ratio |", "|---|---|---|---|---|"]
    for name, _, r in rows:
        p = r[preset]
        lines.append(f"| {name} | {r['n_train']:.0f} | {p['seconds']:.3f} | {p['cart_seconds']:.4f} | "
                     f"{ratio(p):.0f} |")
    return "\n".join(lines)


def ratio(p):
    return p["seconds"] / max(p["cart_seconds"], 1e-9)


def path_tables(rows, how, figs):
    """The size path: one row per case and K, then a case-by-K matrix of outcomes."""
    lines = [f"### size path: {how}, against CART-fp with K leaves"
             + (" and FIGS (max_rules=K)" if figs else " (imodels not installed: no FIGS)"), "",
             ("| data | K | regions | conditions | rules as printed | CART-fp K leaves | vs CART-fp | "
             "FIGS max_rules=K | vs FIGS |"), "|---" * 9 + "|"]
    for name, _, r in rows:
        for K in PATH_SIZES:
            c = r["path"][K]
            lines.append(f"| {name} | {K} | {c['regions']:.3g} | {c['conditions']:.3g} | {fmt(c['error'])} | "
                         f"{fmt(c['cart'])} | {outcome(c['error'], c['cart'])} | {fmt(c['figs'])} | "
                         f"{outcome(c['error'], c['figs'])} |")
    short = {"win": "W", "tie": "T", "loss": "L", "n/a": "-"}
    lines += ["", "Against CART-fp with K leaves (W win, T tie, L loss):", "",
              "| data | " + " | ".join(f"K={K}" for K in PATH_SIZES) + " |", "|---" * (len(PATH_SIZES) + 1) + "|"]
    for name, _, r in rows:
        lines.append(f"| {name} | " + " | ".join(short[outcome(r['path'][K]['error'], r['path'][K]['cart'])]
                                                for K in PATH_SIZES) + " |")
    return "\n".join(lines)


def summary(rows, preset, path_how=None, figs=False, streed=False):
    """The figures issue 25's acceptance names, for one preset (and the path)."""
    def results(key, names=None):
        return [outcome(r[preset]["error"], r[preset][key]) for name, _, r in rows
                if names is None or name in names]

    def of_task(task):
        return {name for name, _, _ in rows if task_of(name) == task}

    ratios = [ratio(r[preset]) for _, _, r in rows]
    slowest = max(rows, key=lambda row: row[2][preset]["seconds"])
    lines = [f"### summary ({preset})", "",
             f"- wins at equal leaves: {tally(results('cart_leaves'))}",
             f"- wins at equal conditions: {tally(results('cart_conditions'))}",
             (f"- regression wins (equal leaves): {tally(results('cart_leaves', of_task('regression')))}; "
             f"at equal conditions: {tally(results('cart_conditions', of_task('regression')))}"),
             (f"- multiclass wins (equal leaves): {tally(results('cart_leaves', of_task('multiclass')))}; "
             f"at equal conditions: {tally(results('cart_conditions', of_task('multiclass')))}"),
             (f"- binary wins (equal leaves): "
             f"{tally([o for (name, _, _), o in zip(rows, results('cart_leaves')) if task_of(name) == 'binary'])}"),
             f"- max fit seconds: {slowest[2][preset]['seconds']:.2f} ({slowest[0]})",
             (f"- geometric-mean fit ratio DefragModel / CART-fp: {np.exp(np.mean(np.log(ratios))):.1f}x "
             f"(range {min(ratios):.0f}-{max(ratios):.0f}x)"),
             f"- printed = predict everywhere: {'yes' if all(r[preset]['same'] for _, _, r in rows) else 'no'}",
             (f"- comparisons read per row at most {READING_RATIO} x CART-fp's mean depth at equal leaves: "
              f"{sum(r[preset]['checks'] <= READING_RATIO * r[preset]['cart_depth'] + 1e-12 for _, _, r in rows)}"
              f"/{len(rows)} (mean ratio "
              f"{np.mean([r[preset]['checks'] / max(r[preset]['cart_depth'], 1e-12) for _, _, r in rows]):.2f})")]
    if preset == "default" and "budget" in rows[0][2]:
        cells = [outcome(r["budget"][B]["error"], r["budget"][B]["cart"]) for _, _, r in rows for B in BUDGETS]
        wins, ties = cells.count("win"), cells.count("tie")
        over = sum(r["budget"][B]["conditions"] > B for _, _, r in rows for B in BUDGETS)
        for B in BUDGETS:  # fit seconds against CART-fp's with B splits (its best of 3)
            budget_ratios = [r["budget"][B]["seconds"] / max(r["budget"][B]["cart_seconds"], 1e-9) for _, _, r in rows]
            lines += [f"- max_conditions={B}: geometric-mean fit ratio DefragModel / CART-fp: "
                      f"{np.exp(np.mean(np.log(budget_ratios))):.1f}x (range {min(budget_ratios):.0f}-"
                      f"{max(budget_ratios):.0f}x)"]
        lines += [f"- budget cells (B = {', '.join(map(str, BUDGETS))}) won against CART-fp with B splits: "
                  f"{tally(cells)}, score {wins + ties / 2:g} of {len(cells)} (a tie half); printed more than B: "
                  f"{over}; sums of trees printed: {sum(r['budget'][B]['sum'] for _, _, r in rows for B in BUDGETS):g}"]
        if figs:
            cells = [outcome(r["budget"][B]["error"], r["budget"][B]["figs"]) for _, _, r in rows for B in BUDGETS]
            lines += [f"- budget cells won against FIGS-fp (the forest's predictions) with B splits: {tally(cells)}"]
            cells = [outcome(r["budget"][B]["error"], r["budget"][B]["figs_y"]) for _, _, r in rows for B in BUDGETS]
            lines += [f"- budget cells won against FIGS (y_train) with B splits: {tally(cells)}"]
            for who in ("figs", "figs_y"):  # the binary and regression cells, issue 46's
                cells = [outcome(r["budget"][B]["error"], r["budget"][B][who]) for name, _, r in rows
                         for B in BUDGETS if task_of(name) != "multiclass"]
                if cells:
                    lines += [f"- binary and regression budget cells won against "
                              f"{'FIGS-fp' if who == 'figs' else 'FIGS (y)'}: {tally(cells)}, score "
                              f"{cells.count('win') + cells.count('tie') / 2:g} of {len(cells)}"]
        if streed:
            cells = [outcome(r["budget"][B]["error"], r["budget"][B]["streed"]) for _, _, r in rows for B in BUDGETS]
            stopped = sum(r["budget"][B]["streed_stopped"] > 0 for _, _, r in rows for B in BUDGETS)
            lines += [f"- budget cells won against STreeD-fp (an optimal tree of B nodes, depth <= {STREED_DEPTH}): "
                      f"{tally(cells)}, score {cells.count('win') + cells.count('tie') / 2:g} of "
                      f"{len([c for c in cells if c != 'n/a'])}; stopped by its {STREED_SECONDS:g} s limit in {stopped}"]
            cells = [outcome(r["budget"][B]["error"], r["budget"][B]["streed"]) for name, _, r in rows
                     for B in BUDGETS if task_of(name) != "multiclass"]
            if cells:
                lines += [f"- binary and regression budget cells won against STreeD-fp: {tally(cells)}, score "
                          f"{cells.count('win') + cells.count('tie') / 2:g} of {len([c for c in cells if c != 'n/a'])}"]
    if path_how is not None and preset == "default":
        cells = [outcome(r["path"][K]["error"], r["path"][K]["cart"]) for _, _, r in rows for K in PATH_COUNTED]
        every = [outcome(r["path"][K]["error"], r["path"][K]["cart"]) for _, _, r in rows for K in PATH_SIZES]
        lines += [(f"- path ({path_how}) cells won against CART-fp at K={','.join(map(str, PATH_COUNTED))}: "
                  f"{tally(cells)}; at every K = 2..10: {tally(every)}")]
        if figs:
            cells = [outcome(r["path"][K]["error"], r["path"][K]["figs"]) for _, _, r in rows for K in PATH_COUNTED]
            lines += [f"- path cells won against FIGS at K={','.join(map(str, PATH_COUNTED))}: {tally(cells)}"]
    return "\n".join(lines)


def budget_table(rows, figs, streed=False):
    """Per case and budget B: the explanation's test error, printed and read comparisons,
    CART-fp's with B splits, FIGS's with B splits (max_rules=B), STreeD-fp's with B nodes
    (a * where its time limit stopped it on a split)."""
    lines = ["### budget: DefragModel(forest, max_conditions=B) against CART-fp with B splits, FIGS-fp (fitted to "
             "the forest's predictions) and FIGS (fitted to y_train)", "",
             ("| data | B | form | regions | conditions | per row | error | CART-fp B splits | its depth | vs CART-fp | "
              "FIGS-fp | FIGS-fp per row | vs FIGS-fp | FIGS (y) | vs FIGS (y) | STreeD-fp | vs STreeD-fp | "
              "printed = predict |"), "|---" * 18 + "|"]
    for name, _, r in rows:
        for B in BUDGETS:
            c = r["budget"][B]
            lines.append(f"| {name} | {B} | {'sum' if c['sum'] >= 0.5 else 'tree'} | {c['regions']:.3g} | "
                         f"{c['conditions']:.3g} | {c['checks']:.2f} | {fmt(c['error'])} | {fmt(c['cart'])} | "
                         f"{c['cart_depth']:.2f} | {outcome(c['error'], c['cart'])} | {fmt(c['figs'])} | "
                         f"{fmt(c['figs_checks'])} | {outcome(c['error'], c['figs'])} | {fmt(c['figs_y'])} | "
                         f"{outcome(c['error'], c['figs_y'])} | {fmt(c['streed'])}{'*' if c['streed_stopped'] else ''} | "
                         f"{outcome(c['error'], c['streed'])} | {'yes' if c['same'] else 'no'} |")
    return "\n".join(lines)


def plot(rows, path, presets):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(rows), figsize=(3 * len(rows), 3), squeeze=False)
    for ax, (name, _, r) in zip(axes[0], rows):
        if "path" in r:
            ax.plot(list(PATH_SIZES), [r["path"][K]["error"] for K in PATH_SIZES], "-", label="defrag path")
            ax.plot(list(PATH_SIZES), [r["path"][K]["cart"] for K in PATH_SIZES], "-", color="grey",
                    label="CART-fp")
        for preset, marker in zip(presets, "os"):
            ax.plot(r[preset]["regions"], r[preset]["error"], marker, label=f"defrag ({preset})")
            ax.plot(r[preset]["regions"], r[preset]["cart_leaves"], "x", color="grey")
        ax.axhline(r["forest"], color="black", lw=0.8, label="forest")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("regions")
    axes[0][0].set_ylabel("test error")
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main():
    global DATA  # --data
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES),
                    help="comma-separated (default: all 17); also any other NAME.csv of the data folder")
    ap.add_argument("--data", default=DATA, help="the folder of the CSV files (default: %(default)s)")
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--splits", type=int, default=None,
                    help="data splits per case (default: 3 where the test set is under 1,000 rows, else 1)")
    ap.add_argument("--synthetic", action="store_true",
                    help="the 12 generated data sets (SYNTHETIC) instead of the 17 cases")
    ap.add_argument("--path", action="store_true", help="also the size path K = 2..10")
    ap.add_argument("--budget", action="store_true", help="also max_conditions = 3, 7, 15 against CART-fp and FIGS")
    ap.add_argument("--budget-repeats", type=int, default=1,
                    help="time each budget fit as the best of this many fits (default: %(default)s)")
    ap.add_argument("--paper", action=argparse.BooleanOptionalAction, default=True,
                    help="also the paper preset, DefragModel.paper (default: yes)")
    ap.add_argument("--out", help="write the markdown tables to this file too")
    ap.add_argument("--png", help="write the rules-against-error figure to this PNG")
    args = ap.parse_args()
    DATA = args.data
    presets = ("default", "paper") if args.paper else ("default",)
    figs = (args.path or args.budget) and figs_available()
    streed = args.budget and streed_available()
    if args.budget and not streed:
        print("pystreed is not installed: no STreeD column (pip install pystreed)", file=sys.stderr)
    path_how = None
    if args.path:
        path_how = "DefragModel(forest, n_regions=K)"
    rows = []
    start = time.perf_counter()
    names = SYNTHETIC if args.synthetic else args.cases.split(",")
    for name in names:
        if name not in CASES + SYNTHETIC and not os.path.exists(os.path.join(DATA, f"{name}.csv")):
            ap.error(f"unknown case {name!r}: not one of the 17 ({', '.join(CASES)}) and no "
                     f"{os.path.join(DATA, name + '.csv')}")
        try:
            data = load(name)
        except ValueError as exc:
            ap.error(str(exc))
        if data is None:
            print(f"{name}: {os.path.join(DATA, name + '.csv')} is absent, skipped", file=sys.stderr)
            continue
        X, y, task = data
        n_splits = args.splits or (3 if 0.3 * len(X) < 1000 else 1)
        t0 = time.perf_counter()
        results = [one_split(X, y, task, seed, args.restarts, presets, args.path, figs, args.budget,
                             args.budget_repeats, streed)
                   for seed in range(n_splits)]
        rows.append((name, n_splits, mean_of(results)))
        print(f"{name}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if not rows:
        sys.exit("no case to run")
    parts = []
    for preset in presets:
        parts += [size_table(rows, preset), seconds_table(rows, preset)]
    if args.path:
        parts.append(path_tables(rows, path_how, figs))
    if args.budget:
        parts.append(budget_table(rows, figs, streed))
    parts += [summary(rows, preset, path_how, figs, streed) for preset in presets]
    parts.append(f"({len(rows)} cases, {time.perf_counter() - start:.0f} s in all, {args.restarts} restarts)")
    text = "\n\n".join(parts)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    if args.png:
        plot(rows, args.png, presets)


if __name__ == "__main__":
    main()
