"""Unfitted and malformed XGBoost / LightGBM models, through the public API only.

An unfitted model is cloned and fitted on fit(X, y), as a meta-estimator's. A malformed model (a dump or JSON whose
indices point outside the model, whose trees have cycles, or whose feature count is
absurd) is a ValueError naming the field, within a second and without allocating more
than a few MB: the cases run in a subprocess under an address-space limit (1 GiB above
what it holds after a warm-up fit), each under an alarm, with tracemalloc measuring
its peak, so a reader that hangs or allocates without bound fails the test instead of
the machine.

The malformed models reach defrag as a real fitted model whose booster returns them
(``dump_model`` / ``save_raw`` replaced on the instance), so the tests do not depend on
where the readers live.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

import defrag  # noqa: E402
from defrag import DefragModel, PrototypeExplainer  # noqa: E402
from defrag.sources import adapt  # noqa: E402

TIME_LIMIT_S = 5.0  # each case takes well under a second; loose for slow CI machines
PEAK_LIMIT_BYTES = 100 * 2**20


def small_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    X[:, 2] = rng.integers(0, 6, n)
    y = ((X[:, 0] > 0.5) ^ np.isin(X[:, 2], [1, 3])).astype(int)
    return X, y


# ------------------------------------------------------------------------ unfitted

@pytest.mark.parametrize("make", [
    lambda: lgb.LGBMClassifier(verbose=-1), lambda: lgb.LGBMRegressor(verbose=-1),
    lambda: xgb.XGBClassifier(), lambda: xgb.XGBRegressor(),
    lambda: Pipeline([("pass", "passthrough"), ("model", lgb.LGBMClassifier(verbose=-1))]),
], ids=["LGBMClassifier", "LGBMRegressor", "XGBClassifier", "XGBRegressor", "Pipeline-LGBM"])
def test_unfitted_model_is_cloned_and_fitted(make):
    X, y = small_data(60)
    with pytest.raises(ValueError, match="requires y to be passed"):  # nothing to fit it on
        DefragModel(make()).fit(X)
    unfitted = make()
    model = DefragModel(unfitted, form="list", n_restarts=1, random_state=0).fit(X, y)
    assert model.estimator_ is not unfitted
    with pytest.raises(NotFittedError):
        adapt(unfitted)  # the parameter stays unfitted
    PrototypeExplainer(make(), n_prototypes=2, distance="auto").fit(X, y)


# ------------------------------------------------------------------------ malformed

# Each case: (name, library, reader, mutation of the model's dump / JSON, words the
# ValueError names). reader "rules" fits DefragModel, "prototypes" PrototypeExplainer.
CASES = {
    # LightGBM dump_model()
    "lgb_split_feature_1e6": ("lgb", "rules", "split_feature", "split_feature"),
    "lgb_split_feature_negative": ("lgb", "rules", "split_feature_negative", "split_feature"),
    "lgb_max_feature_idx_1e9": ("lgb", "rules", "max_feature_idx", "max_feature_idx"),
    "lgb_max_feature_idx_1e9_no_names": ("lgb", "rules", "max_feature_idx_no_names", "max_feature_idx"),
    "lgb_max_feature_idx_not_x": ("lgb", "rules", "max_feature_idx_4", "X has 3 features"),
    "lgb_cycle_to_root": ("lgb", "rules", "cycle_root", "cycle"),
    "lgb_cycle_to_parent": ("lgb", "rules", "cycle_parent", "cycle"),
    "lgb_shared_node": ("lgb", "rules", "shared", "reached twice"),
    "lgb_leaf_index_1e9": ("lgb", "rules", "leaf_index", "leaf_index"),
    "lgb_leaf_index_repeated": ("lgb", "rules", "leaf_index_repeated", "leaf_index"),
    "lgb_split_index_1e9": ("lgb", "rules", "split_index", "split_index"),
    "lgb_num_leaves": ("lgb", "rules", "num_leaves", "num_leaves"),
    "lgb_category_2e9": ("lgb", "rules", "category_huge", "threshold"),
    "lgb_split_feature_fraction": ("lgb", "rules", "split_feature_fraction", "split_feature"),
    "lgb_leaf_index_fraction": ("lgb", "rules", "leaf_index_fraction", "leaf_index"),
    "lgb_split_index_fraction": ("lgb", "rules", "split_index_fraction", "split_index"),
    "lgb_leaf_count_fraction": ("lgb", "rules", "leaf_count_fraction", "leaf_count"),
    "lgb_category_fraction": ("lgb", "rules", "category_fraction", "category code"),
    "lgb_max_feature_idx_fraction": ("lgb", "rules", "max_feature_idx_fraction", "max_feature_idx"),
    "lgb_prototypes_cycle": ("lgb", "prototypes", "cycle_parent", "cycle"),
    "lgb_prototypes_leaf_index_1e9": ("lgb", "prototypes", "leaf_index", "leaf_index"),
    # XGBoost JSON
    "xgb_num_feature_1e9": ("xgb", "rules", "num_feature", "num_feature"),
    "xgb_num_feature_text": ("xgb", "rules", "num_feature_text", "num_feature"),
    "xgb_left_children_1e6": ("xgb", "rules", "left_children", "left_children"),
    "xgb_right_children_negative": ("xgb", "rules", "right_children", "right_children"),
    "xgb_split_indices_1e6": ("xgb", "rules", "split_indices", "split_indices"),
    "xgb_unequal_lengths": ("xgb", "rules", "unequal", "split_conditions"),
    # fractional indices were truncated (1.5 read as 1): now refused, naming the field
    "xgb_left_children_fraction": ("xgb", "rules", "left_children_fraction", "left_children"),
    "xgb_right_children_fraction": ("xgb", "rules", "right_children_fraction", "right_children"),
    "xgb_split_indices_fraction": ("xgb", "rules", "split_indices_fraction", "split_indices"),
    "xgb_default_left_fraction": ("xgb", "rules", "default_left_fraction", "default_left"),
    "xgb_split_type_fraction": ("xgb", "rules", "split_type_fraction", "split_type"),
    "xgb_num_nodes_fraction": ("xgb", "rules", "num_nodes_fraction", "num_nodes"),
    "xgb_tree_info_fraction": ("xgb", "rules", "tree_info_fraction", "tree_info"),
    "xgb_num_nodes": ("xgb", "rules", "num_nodes", "num_nodes"),
    "xgb_cycle_to_root": ("xgb", "rules", "cycle_root", "tree"),
    "xgb_leaf_disagreement": ("xgb", "rules", "leaf_disagreement", "leaves"),
}

SCRIPT = textwrap.dedent(r'''
    import copy, json, resource, signal, sys, time, tracemalloc
    import numpy as np
    import lightgbm as lgb, xgboost as xgb
    from defrag import DefragModel, PrototypeExplainer

    cases = json.loads(sys.argv[1])
    rng = np.random.default_rng(0)
    n = 300
    X = rng.random((n, 3))
    X[:, 2] = rng.integers(0, 6, n)
    y = ((X[:, 0] > 0.5) ^ np.isin(X[:, 2], [1, 3])).astype(int)
    lgbm = lgb.LGBMClassifier(n_estimators=3, num_leaves=6, min_child_samples=5, min_data_per_group=5,
                              verbose=-1).fit(X, y, categorical_feature=[2])
    xgbm = xgb.XGBClassifier(n_estimators=3, max_depth=3).fit(X, y)
    LGB = lgbm.booster_.dump_model()
    XGB = json.loads(xgbm.get_booster().save_raw(raw_format="json"))
    # warm-up: thread pools and lazy imports exist before the limit is set
    DefragModel(lgbm, n_restarts=1).fit(X)
    DefragModel(xgbm, n_restarts=1).fit(X)
    PrototypeExplainer(lgbm, n_prototypes=2).fit(X, y)

    def vm_size():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024

    try:
        limit = vm_size() + 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (OSError, ValueError, TypeError):
        limit = None

    def deepest_internal(tree):  # an internal node whose child is internal, and that child
        node = tree["tree_structure"]
        for side in ("left_child", "right_child"):
            if "split_index" in node[side]:
                return node, node[side]
        raise AssertionError("tree of depth 1")

    def lgb_case(kind):
        d = copy.deepcopy(LGB)
        t0 = next(t for t in d["tree_info"] if t["num_leaves"] >= 4)
        root = t0["tree_structure"]
        leaf = root
        while "split_index" in leaf:
            leaf = leaf["left_child"]
        if kind == "split_feature": root["split_feature"] = 10**6
        elif kind == "split_feature_negative": root["split_feature"] = -1
        elif kind == "max_feature_idx": d["max_feature_idx"] = 10**9
        elif kind == "max_feature_idx_no_names":
            d["max_feature_idx"] = 10**9
            del d["feature_names"]
        elif kind == "max_feature_idx_4":
            d["max_feature_idx"] = 3
            d["feature_names"].append("extra")
        elif kind == "cycle_root":
            parent, child = deepest_internal(t0)
            child["left_child"] = root
        elif kind == "cycle_parent":
            parent, child = deepest_internal(t0)
            child["right_child"] = parent
        elif kind == "shared":
            parent, child = deepest_internal(t0)
            child["right_child"] = child["left_child"]
        elif kind == "leaf_index": leaf["leaf_index"] = 10**9
        elif kind == "leaf_index_repeated":
            leaf["leaf_index"] = 1 if leaf["leaf_index"] == 0 else 0
        elif kind == "split_index": root["split_index"] = 10**9
        elif kind == "split_feature_fraction": root["split_feature"] = 1.5
        elif kind == "leaf_index_fraction": leaf["leaf_index"] = leaf["leaf_index"] + 0.5
        elif kind == "split_index_fraction": root["split_index"] = 0.5
        elif kind == "leaf_count_fraction": leaf["leaf_count"] = 10.5
        elif kind == "max_feature_idx_fraction": d["max_feature_idx"] = 2.5
        elif kind == "category_fraction":
            node = next(n for t in d["tree_info"] for n in walk(t["tree_structure"])
                        if n.get("decision_type") == "==")
            node["threshold"] = "1||2.5"
        elif kind == "num_leaves": t0["num_leaves"] = 10**9
        elif kind == "category_huge":
            node = next(n for t in d["tree_info"] for n in walk(t["tree_structure"])
                        if n.get("decision_type") == "==")
            node["threshold"] = "1||2000000000000"
        else: raise KeyError(kind)
        return d

    def walk(node):
        stack = [node]
        while stack:
            n = stack.pop()
            yield n
            if "split_index" in n:
                stack += [n["left_child"], n["right_child"]]

    def xgb_case(kind):
        d = copy.deepcopy(XGB)
        trees = d["learner"]["gradient_booster"]["model"]["trees"]
        tree = next(t for t in trees if sum(c >= 0 for c in t["left_children"]) >= 2)
        inner = [i for i, c in enumerate(tree["left_children"]) if c >= 0]
        if kind == "num_feature": d["learner"]["learner_model_param"]["num_feature"] = "1000000000"
        elif kind == "num_feature_text": d["learner"]["learner_model_param"]["num_feature"] = "3.5"
        elif kind == "left_children": tree["left_children"][inner[0]] = 10**6
        elif kind == "right_children": tree["right_children"][inner[0]] = -5
        elif kind == "split_indices": tree["split_indices"][inner[0]] = 10**6
        elif kind == "unequal": tree["split_conditions"].pop()
        elif kind == "left_children_fraction": tree["left_children"][inner[0]] += 0.5
        elif kind == "right_children_fraction": tree["right_children"][inner[0]] += 0.5
        elif kind == "split_indices_fraction": tree["split_indices"][inner[0]] = 1.5
        elif kind == "default_left_fraction": tree["default_left"][inner[0]] = 0.5
        elif kind == "split_type_fraction": tree["split_type"][inner[0]] = 0.5
        elif kind == "num_nodes_fraction": tree["tree_param"]["num_nodes"] = str(len(tree["left_children"]) + 0.5)
        elif kind == "tree_info_fraction": d["learner"]["gradient_booster"]["model"]["tree_info"][0] = 0.5
        elif kind == "num_nodes": tree["tree_param"]["num_nodes"] = "1000000000"
        elif kind == "cycle_root": tree["left_children"][inner[1]] = 0
        elif kind == "leaf_disagreement":
            leaf = next(i for i, c in enumerate(tree["left_children"]) if c < 0)
            tree["left_children"][leaf] = 1
        else: raise KeyError(kind)
        return d

    def on_alarm(signum, frame):
        raise TimeoutError("no answer within 10 s")

    signal.signal(signal.SIGALRM, on_alarm)
    results = {}
    for name, (library, reader, kind, _) in cases.items():
        if library == "lgb":
            model, booster = lgbm, lgbm.booster_
            bad = lgb_case(kind)
            booster.dump_model = lambda *a, bad=bad, **k: bad
        else:
            model, booster = xgbm, xgbm.get_booster()
            raw = json.dumps(bad := xgb_case(kind)).encode()
            booster.save_raw = lambda raw_format="json", raw=raw: raw
        tracemalloc.start()
        start = time.perf_counter()
        signal.alarm(10)
        try:
            if reader == "rules":
                DefragModel(model, n_restarts=1).fit(X)
            else:
                PrototypeExplainer(model, n_prototypes=2, distance="gbt").fit(X, y)
            error, message = None, ""
        except BaseException as exc:  # MemoryError and TimeoutError too
            error, message = type(exc).__name__, str(exc)
            error = "ValueError" if isinstance(exc, ValueError) and error != "ValueError" else error
        finally:
            signal.alarm(0)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del booster.__dict__["dump_model" if library == "lgb" else "save_raw"]
        results[name] = dict(error=error, message=message, seconds=elapsed, peak=peak)
    print(json.dumps({"limit": limit, "results": results}))
''')


@pytest.fixture(scope="module")
def malformed_results():
    root = os.path.dirname(os.path.dirname(os.path.abspath(defrag.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])["results"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_model_is_a_quick_value_error(malformed_results, case):
    got = malformed_results[case]
    words = CASES[case][3]
    assert got["error"] == "ValueError", got
    assert words in got["message"], got
    assert got["seconds"] < TIME_LIMIT_S, got
    assert got["peak"] < PEAK_LIMIT_BYTES, got


def test_feature_count_mismatch_names_both_numbers():
    X, y = small_data()
    model = lgb.LGBMClassifier(n_estimators=3, verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features but the LightGBM model has 3"):
        DefragModel(model).fit(X[:, :2], y)
    model = xgb.XGBClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features but the XGBoost model has 3"):
        DefragModel(model).fit(np.column_stack([X, X[:, 0]]), y)
