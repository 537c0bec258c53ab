"""Models whose trees were tampered with in memory (issue 40): a scikit-learn forest
whose tree_ holds a child index of 10**6, a cycle, a feature index of 1000 for 3
features or a NaN threshold is refused with a ValueError by every estimator that takes
a model, before scikit-learn's own predict, predict_proba or apply walks the trees (the
child index crashed ProxyTreeClassifier(rf).fit; the feature index made the proxy trees
and the prototypes read outside X without an error). The cases run in one child
process: a crash there fails the test instead of taking pytest down."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from defrag.sources import adapt, checked_model

ESTIMATORS = ["DefragModel", "ProxyTree", "ProxyTreeClassifier", "PrototypeExplainer",
              "PrototypeExplainer-euclidean", "explain_local", "reference_proba", "BornAgainTree",
              "DepthTwoTree", "InTrees", "NodeHarvest", "ProxyTree-DecisionTree",
              "PrototypeExplainer-DecisionTree", "ProxyTree-HistGradientBoosting"]
TAMPERINGS = {"child": "children_left holds node 1000000",
              "cycle": "do not form a tree",
              "feature": "tests feature 1000, outside the model's 3 features",
              "threshold": "thresholds must be numbers"}

CHILD = r"""
import json, sys, warnings
import numpy as np
from sklearn.ensemble import (HistGradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
import defrag
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); y = (X[:, 0] > 0).astype(int)

def tampered(model, how):
    members = [model] if hasattr(model, "tree_") else list(model.estimators_)
    state = members[0].tree_.__getstate__()
    nodes = state["nodes"].copy()
    if how == "child":
        nodes["left_child"][0] = 10 ** 6
    elif how == "cycle":
        nodes["left_child"][0] = 0
    elif how == "feature":
        nodes["feature"][0] = 1000
    else:
        nodes["threshold"][0] = np.nan
    state["nodes"] = nodes
    members[0].tree_.__setstate__(state)
    return model

def hist_tampered(how):
    model = HistGradientBoostingRegressor(max_iter=3, max_depth=3).fit(X, X[:, 0])
    nodes = model._predictors[0][0].nodes
    if how == "child":
        nodes["left"][0] = 10 ** 6
    elif how == "cycle":
        nodes["left"][0] = 0
    elif how == "feature":
        nodes["feature_idx"][0] = 1000
    else:
        nodes["num_threshold"][0] = np.nan
    return model

def run(name, how):
    clf = lambda: tampered(RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y), how)
    reg = lambda: tampered(RandomForestRegressor(5, max_depth=3, random_state=0).fit(X, X[:, 0]), how)
    if name == "DefragModel":
        defrag.DefragModel(clf(), n_restarts=2, random_state=0).fit(X)
    elif name == "ProxyTree":
        defrag.ProxyTree(reg(), max_leaves=3).fit(X)
    elif name == "ProxyTreeClassifier":
        defrag.ProxyTreeClassifier(clf(), max_leaves=3).fit(X)
    elif name == "PrototypeExplainer":
        defrag.PrototypeExplainer(clf(), n_prototypes=2).fit(X, y)
    elif name == "PrototypeExplainer-euclidean":  # the model labels the points (predict)
        defrag.PrototypeExplainer(clf(), n_prototypes=2, distance="euclidean").fit(X)
    elif name == "explain_local":
        defrag.explain_local(reg(), X[0], X.std(axis=0), max_leaves=3)
    elif name == "reference_proba":
        defrag.reference_proba(clf(), X)
    elif name in ("BornAgainTree", "DepthTwoTree", "InTrees", "NodeHarvest"):
        globals()[name](clf()).fit(X, y)
    elif name == "ProxyTree-DecisionTree":
        defrag.ProxyTree(tampered(DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0]), how), max_leaves=3).fit(X)
    elif name == "PrototypeExplainer-DecisionTree":
        model = tampered(DecisionTreeClassifier(max_depth=3).fit(X, y), how)
        defrag.PrototypeExplainer(model, n_prototypes=2, distance="rf").fit(X, y)
    elif name == "ProxyTree-HistGradientBoosting":
        defrag.ProxyTree(hist_tampered(how), max_leaves=3).fit(X)

for name, how in json.loads(sys.argv[1]):
    try:
        run(name, how)
        out = "accepted"
    except Exception as exc:
        out = f"{type(exc).__name__}: {exc}"
    print(json.dumps([name, how, out]), flush=True)
"""


@pytest.fixture(scope="module")
def outcomes():
    cases = [(name, how) for name in ESTIMATORS for how in TAMPERINGS]
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), json.dumps(cases)],
                          capture_output=True, text=True, timeout=120)
    got = {(n, h): out for n, h, out in map(json.loads, proc.stdout.splitlines())}
    return got, proc.returncode, proc.stderr[-2000:]


@pytest.mark.parametrize("how", sorted(TAMPERINGS))
@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_estimator_refuses_a_tampered_tree_before_its_library_walks_it(outcomes, name, how):
    got, rc, err = outcomes
    assert (name, how) in got, f"the child process ended (return code {rc}) before this case: {err}"
    out = got[name, how]
    words = TAMPERINGS[how]
    if name == "ProxyTree-HistGradientBoosting" and how == "child":
        words = "holds node 1000000"
    if name == "ProxyTree-HistGradientBoosting" and how == "feature":
        words = "tests feature 1000, outside the 3 features"
    assert out.startswith("ValueError") and words in out, out


def test_a_model_read_once_is_checked_once():
    X = np.random.default_rng(0).normal(size=(100, 3))
    forest = RandomForestClassifier(3, max_depth=2, random_state=0).fit(X, X[:, 0] > 0)
    source = checked_model(forest)
    assert source.checked() is source and source.trees() is source.trees()  # read once
    assert checked_model(object()) is None  # nothing defrag reads: as it is
    assert adapt(forest).checks_trees
