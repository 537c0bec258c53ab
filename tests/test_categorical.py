"""Categorical splits and LightGBM's zero-as-missing: every sample reaches the library's
own leaf through our binary features, and the leaf values add up to its raw prediction.

Each test walks the library's trees itself, reading where a node sends a sample only
from our binary features S (one column per split of the table). The column of a node
is found from the node as the library documents it (for a categorical node: the
feature, the set of categories going right, where missing values go), so a wrong
side, set, code mapping or missing direction sends samples to other leaves.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from conftest import categorical_frame
from defrag import DefragModel, split_table_from_estimator
from defrag.splits.table import float32_threshold
from defrag.utils.text import printed_name

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

from defrag.sources.lightgbm import LightGBMSource  # noqa: E402
from defrag.sources.lightgbm import model_dump as lightgbm_model_dump  # noqa: E402
from defrag.sources.xgboost import XGBoostSource  # noqa: E402
from defrag.sources.xgboost import model_json as xgboost_model_json  # noqa: E402


def binary_features(table, X):
    """S from the table (NumPy), checked against the packed bits and the ranks of the C kernels."""
    Xc = table.encoding.transform(X)
    S = table.binary_features(Xc)
    packed = np.unpackbits(table.pack(Xc).view(np.uint8), axis=1, bitorder="little")[:, :len(table)]
    np.testing.assert_array_equal(packed.astype(bool), S)
    np.testing.assert_array_equal(s_from_ranks(table, table.ranks(Xc)), S)
    return S


def s_from_ranks(table, ranks):
    """S read from the ranks as the rank kernels read them: s_l = [rank of l's group >
    l's position in it], and missing_right[l] at the missing rank m + 1."""
    ptr = table.rank_ptr
    group = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    np.testing.assert_array_equal(table.rank_feature[group], table.feature)
    position = np.arange(len(table)) - ptr[group]
    m = np.diff(ptr)[group]
    R = ranks[group].T
    return np.where(R == m + 1, table.missing_right.astype(bool), R > position)


def columns_by_key(table):
    """Split index of each (feature, kind, threshold or set, missing_right) of the table."""
    keys = {}
    for l in range(len(table)):
        what = float(table.threshold[l]) if table.kind[l] == 0 else frozenset(table.set_of(l).tolist())
        keys[(int(table.feature[l]), int(table.kind[l]), what, int(table.missing_right[l]))] = l
    return keys


def walk(left, right, is_leaf, column, S):
    """Node reached by every sample, going right where S[:, column[node]] is set."""
    node = np.zeros(S.shape[0], dtype=np.int64)
    rows = np.arange(S.shape[0])
    for _ in range(64):
        leaf = is_leaf[node]
        if leaf.all():
            return node
        go_right = S[rows, np.where(leaf, 0, column[node])]
        node = np.where(leaf, node, np.where(go_right, right[node], left[node]))
    raise AssertionError("tree deeper than 64")


# ------------------------------------------------------------------ HistGradientBoosting

def hist_walk_raw(hgb, table, X):
    """Sum of the leaf values our binary features reach, per class, plus the baseline."""
    S = binary_features(table, X)
    keys = columns_by_key(table)
    is_cat = hgb.is_categorical_
    # the estimator's ColumnTransformer puts the categorical columns first
    column_of = np.concatenate([np.flatnonzero(is_cat), np.flatnonzero(~is_cat)])
    n_known = {j: int(np.sum(pd.notna(c))) for j, c in
               zip(np.flatnonzero(is_cat), hgb._preprocessor.named_transformers_["encoder"].categories_)}
    raw = np.zeros((len(S), len(hgb._predictors[0])))
    for per_class in hgb._predictors:
        for c, predictor in enumerate(per_class):
            nodes = predictor.nodes
            col = np.zeros(len(nodes), dtype=np.int64)
            for i in np.flatnonzero(nodes["is_leaf"] == 0):
                f = int(column_of[nodes["feature_idx"][i]])
                mr = int(nodes["missing_go_to_left"][i] == 0)
                if nodes["is_categorical"][i]:
                    words = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][i]]
                    left = {k for k in range(256) if (int(words[k // 32]) >> (k % 32)) & 1}
                    col[i] = keys[(f, 1, frozenset(set(range(n_known[f])) - left), mr)]
                else:
                    col[i] = keys[(f, 0, float(nodes["num_threshold"][i]), mr)]
            leaf = walk(nodes["left"], nodes["right"], nodes["is_leaf"] == 1, col, S)
            raw[:, c] += nodes["value"][leaf]
    return raw + hgb._baseline_prediction.reshape(1, -1)


@pytest.mark.parametrize("Model,n_classes", [
    (HistGradientBoostingRegressor, 0), (HistGradientBoostingClassifier, 2),
    (HistGradientBoostingClassifier, 3),
])
def test_hist_gradient_boosting_categorical_frame(Model, n_classes):
    X, y = categorical_frame(n_classes)
    hgb = Model(max_iter=8, random_state=0).fit(X, y)  # categorical_features="from_dtype"
    table = split_table_from_estimator(hgb, keep_duplicates=True)
    assert table.has_categorical and list(table.categorical) == [False, True, False, True]
    np.testing.assert_allclose(hist_walk_raw(hgb, table, X), hgb._raw_predict(X).reshape(len(X), -1),
                               rtol=1e-6, atol=1e-6)
    # categories the model never saw ("never", a new one) are missing values, as in scikit-learn
    X2 = X.copy()
    X2["colour"] = X2["colour"].cat.add_categories(["purple"])
    X2.loc[::7, "colour"] = "never"
    X2.loc[1::7, "colour"] = "purple"
    np.testing.assert_allclose(hist_walk_raw(hgb, table, X2), hgb._raw_predict(X2).reshape(len(X), -1),
                               rtol=1e-6, atol=1e-6)


def test_hist_gradient_boosting_categorical_numpy_values():
    # numeric category values (any floats) are looked up in the encoder's categories;
    # the categorical column is not the first one (the estimator moves it first)
    rng = np.random.default_rng(1)
    X = np.c_[rng.normal(size=500), rng.normal(size=500), rng.choice([-2.0, 3.5, 1000.0, 7.0, 8.0], 500)]
    X[::11, 2] = np.nan
    y = X[:, 0] + 2 * (X[:, 2] == 3.5) + (X[:, 2] == -2) - X[:, 1] * (X[:, 2] == 8)
    hgb = HistGradientBoostingRegressor(max_iter=10, categorical_features=[2], random_state=0).fit(X, y)
    table = split_table_from_estimator(hgb, keep_duplicates=True)
    assert list(table.categorical) == [False, False, True]
    X_new = X.copy()
    X_new[::5, 2] = 5.0  # an unseen value: missing
    for Z in (X, X_new):
        np.testing.assert_allclose(hist_walk_raw(hgb, table, Z)[:, 0], hgb._raw_predict(Z)[:, 0],
                                   rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ XGBoost

def xgboost_walk(model, table, X, leaves, dmatrix):
    """Per tree, check our leaves against pred_leaf; return the summed leaf values."""
    S = binary_features(table, X)
    keys = columns_by_key(table)
    doc = xgboost_model_json(model)
    gbtree = doc["learner"]["gradient_booster"]["model"]
    groups = np.asarray(gbtree["tree_info"])
    raw = np.zeros((len(S), groups.max() + 1))
    for i, tree in enumerate(gbtree["trees"]):
        left, right = np.asarray(tree["left_children"]), np.asarray(tree["right_children"])
        cond = np.asarray(tree["split_conditions"], dtype=np.float32)
        listed = {node: tree["categories"][seg:seg + size] for node, seg, size in
                  zip(tree["categories_nodes"], tree["categories_segments"], tree["categories_sizes"])}
        col = np.zeros(left.size, dtype=np.int64)
        for node in np.flatnonzero(left >= 0):
            f, mr = tree["split_indices"][node], int(tree["default_left"][node] == 0)
            if tree["split_type"][node] == 1:  # the listed categories go right
                col[node] = keys[(f, 1, frozenset(listed[node]), mr)]
            else:  # left when float32(x) < t
                t = float32_threshold(float(np.nextafter(cond[node], np.float32(-np.inf))))
                col[node] = keys[(f, 0, float(t), mr)]
        leaf = walk(left, right, left < 0, col, S)
        np.testing.assert_array_equal(leaf, leaves[:, i])
        raw[:, groups[i]] += cond[leaf]
    margin = model.get_booster().predict(dmatrix(np.zeros((len(S), raw.shape[1]))), output_margin=True)
    np.testing.assert_allclose(raw, margin.reshape(raw.shape), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("Model,n_classes,onehot", [
    (xgb.XGBRegressor, 0, 4), (xgb.XGBClassifier, 2, 1), (xgb.XGBClassifier, 3, 1),
])
def test_xgboost_categorical_frame(Model, n_classes, onehot):
    X, y = categorical_frame(n_classes)
    model = Model(n_estimators=6, max_depth=4, enable_categorical=True, max_cat_to_onehot=onehot,
                  random_state=0).fit(X, y)
    table = XGBoostSource(model).split_table(keep_duplicates=True)
    assert list(table.categorical) == [False, True, False, True]
    assert [list(c) for c in table.encoding.categories if c is not None] == [
        list(X["colour"].cat.categories), list(X["size"].cat.categories)]

    def dmatrix(margin):
        return xgb.DMatrix(X, enable_categorical=True, base_margin=margin)

    leaves = model.get_booster().predict(dmatrix(None), pred_leaf=True).astype(int).reshape(len(X), -1)
    xgboost_walk(model, table, X, leaves, dmatrix)
    # XGBoost (>= 3.1) re-codes a DataFrame by its training categories, as we do
    X2 = X.copy()
    X2["colour"] = X2["colour"].cat.reorder_categories(list(reversed(X["colour"].cat.categories)))

    def dmatrix2(margin):
        return xgb.DMatrix(X2, enable_categorical=True, base_margin=margin)

    leaves2 = model.get_booster().predict(dmatrix2(None), pred_leaf=True).astype(int).reshape(len(X), -1)
    np.testing.assert_array_equal(leaves2, leaves)
    xgboost_walk(model, table, X2, leaves2, dmatrix2)


def test_xgboost_categorical_codes_in_numpy():
    # numpy input: the values are the codes; negative and too large codes go left
    X, y = categorical_frame(2, seed=3)
    Xn = X.assign(colour=X["colour"].cat.codes.replace(-1, np.nan),
                  size=X["size"].cat.codes.replace(-1, np.nan)).to_numpy(dtype=float)
    types = ["q", "c", "q", "c"]
    model = xgb.XGBClassifier(n_estimators=6, max_depth=4, max_cat_to_onehot=1, feature_types=types,
                              enable_categorical=True).fit(Xn, y)
    table = XGBoostSource(model).split_table(keep_duplicates=True)
    Xn[::9, 1] = -1  # XGBoost accepts invalid codes at prediction time only
    Xn[1::9, 3] = 99

    def dmatrix(margin):
        return xgb.DMatrix(Xn, feature_types=types, enable_categorical=True, base_margin=margin)

    leaves = model.get_booster().predict(dmatrix(None), pred_leaf=True).astype(int)
    xgboost_walk(model, table, Xn, leaves, dmatrix)
    with pytest.raises(ValueError, match="integer category codes"):
        table.encoding.transform(Xn + 0.5)


# ----------------------------------------------------------------------------- LightGBM

def flatten(structure):
    """Arrays (left, right, is_leaf, nodes) of a dumped tree, nodes in visiting order."""
    nodes, left, right = [], [], []
    stack = [(structure, -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        i = len(nodes)
        nodes.append(node)
        left.append(-1)
        right.append(-1)
        if parent >= 0:
            (right if is_right else left)[parent] = i
        if "split_index" in node:
            stack.append((node["right_child"], i, True))
            stack.append((node["left_child"], i, False))
    return np.array(left), np.array(right), np.array(left) < 0, nodes


def lightgbm_walk(model, table, X):
    """Per tree, check our leaves against pred_leaf and the sum against raw_score."""
    S = binary_features(table, X)
    keys = columns_by_key(table)
    dump = lightgbm_model_dump(model)
    booster = getattr(model, "booster_", model)
    leaves = booster.predict(X, pred_leaf=True)
    n_per_iteration = dump["num_tree_per_iteration"]
    raw = np.zeros((len(S), n_per_iteration))
    for i, info in enumerate(dump["tree_info"]):
        left, right, is_leaf, nodes = flatten(info["tree_structure"])
        col = np.zeros(len(nodes), dtype=np.int64)
        for j in np.flatnonzero(~is_leaf):
            node = nodes[j]
            f = node["split_feature"]
            if node["decision_type"] == "==":  # the listed categories go left, all else right
                listed = frozenset(int(c) for c in str(node["threshold"]).split("||"))
                col[j] = keys[(f, 2, listed, 1)]
            else:
                t = float(node["threshold"])
                mr = 0.0 > t if node["missing_type"] == "None" else not node["default_left"]
                col[j] = keys[(f, 0, t, int(mr))]
        leaf = walk(left, right, is_leaf, col, S)
        np.testing.assert_array_equal([nodes[k]["leaf_index"] for k in leaf], leaves[:, i])
        raw[:, i % n_per_iteration] += [nodes[k]["leaf_value"] for k in leaf]
    expected = booster.predict(X, raw_score=True).reshape(raw.shape)
    np.testing.assert_allclose(raw, expected, rtol=1e-6, atol=1e-6)


LGB_PARAMS = dict(n_estimators=6, num_leaves=12, min_child_samples=5, min_data_per_group=5,
                  cat_smooth=1.0, max_cat_to_onehot=2, verbose=-1)


@pytest.mark.parametrize("Model,n_classes", [
    (lgb.LGBMRegressor, 0), (lgb.LGBMClassifier, 2), (lgb.LGBMClassifier, 3),
])
def test_lightgbm_categorical_frame(Model, n_classes):
    X, y = categorical_frame(n_classes)
    model = Model(**LGB_PARAMS).fit(X, y)
    table = LightGBMSource(model).split_table(keep_duplicates=True)
    table.encoding = table.encoding.bind(X)
    assert table.categorical[1] and not table.categorical[[0, 2]].any()
    lightgbm_walk(model, table, X)
    # a DataFrame with its categories in another order, or one the model never saw
    # (LightGBM: missing, which goes right), reaches the same leaves as LightGBM's
    X2 = X.copy()
    X2["colour"] = X2["colour"].cat.reorder_categories(list(reversed(X["colour"].cat.categories)))
    X2["colour"] = X2["colour"].cat.add_categories(["purple"])
    X2.loc[::6, "colour"] = "purple"
    lightgbm_walk(model, table, X2)


def test_lightgbm_categorical_codes_in_numpy():
    # numpy input: the values are the codes; negative and too large codes go right
    X, y = categorical_frame(2, seed=4)
    Xn = X.assign(colour=X["colour"].cat.codes, size=X["size"].cat.codes).to_numpy(dtype=float)
    Xn[::9, 1] = -3
    Xn[1::9, 3] = 1000
    Xn[2::9, 1] = np.nan
    model = lgb.LGBMClassifier(**LGB_PARAMS).fit(Xn, y, categorical_feature=[1, 3])
    table = LightGBMSource(model).split_table(keep_duplicates=True)
    lightgbm_walk(model, table, Xn)


def test_lightgbm_zero_as_missing():
    rng = np.random.default_rng(5)
    n = 1500
    X = rng.normal(size=(n, 3))
    X[::4, 0] = 0.0
    X[1::7, 0] = np.nan
    X[::5, 1] = -0.0
    y = X[:, 2] + np.nan_to_num(X[:, 0]) + 2.0 * (X[:, 0] == 0) - (X[:, 1] == 0)
    model = lgb.LGBMRegressor(n_estimators=8, num_leaves=8, zero_as_missing=True, verbose=-1).fit(X, y)
    table = LightGBMSource(model).split_table(keep_duplicates=True)
    assert table.encoding.zero_missing.all()
    # zero is |x| <= 1e-35 (as float32): values on both sides of that edge
    edge = float(np.float32(1e-35))
    X[2::9, 0] = edge
    X[3::9, 0] = np.nextafter(edge, 1.0)
    X[4::9, 1] = -edge
    X[5::9, 1] = 1e-300
    lightgbm_walk(model, table, X)
    prepared = table.encoding.transform(X)
    zero = (np.abs(X) <= edge) | np.isnan(X)
    assert zero[:, 0].sum() > 300 and zero[:, 1].sum() > 300
    np.testing.assert_array_equal(np.isnan(prepared), zero)
    assert np.isnan(X).sum() < zero.sum()  # X itself is not modified


# ------------------------------------------------------------------- rules with sets

def xor_frame(seed, name, n=1000):
    """y = XOR(category in {grün, b}, x > 0.5) with 5% label noise, missing colours."""
    rng = np.random.default_rng(seed)
    cats = ["grün", "b", "c d", "e,f", "g", "h"]
    X = pd.DataFrame({"x": rng.random(n), name: pd.Categorical(rng.choice(cats, n), categories=cats)})
    X.loc[rng.random(n) < 0.05, name] = np.nan
    clean = X[name].isin(["grün", "b"]).to_numpy() ^ (X["x"].to_numpy() > 0.5)
    return X, np.where(rng.random(n) < 0.05, ~clean, clean).astype(int)


def evaluate_as_written(rules, X):
    """The rules of to_dict() applied to the DataFrame with NumPy: first covering rule."""
    pred = np.full(len(X), rules["default_prediction"], dtype=object)
    done = np.zeros(len(X), dtype=bool)
    for rule in rules["rules"]:
        ok = np.ones(len(X), dtype=bool)
        for c in rule["conditions"]:
            col = X[c["name"]]
            missing = col.isna().to_numpy()
            if c["categories"] is not None:
                holds = col.astype(object).isin(c["categories"]).to_numpy() ^ c["negated"]
            else:
                v = col.to_numpy(dtype=float)
                holds = np.ones(len(X), dtype=bool)
                if c["lower"] is not None:
                    holds &= v > c["lower"]
                if c["upper"] is not None:
                    holds &= v <= c["upper"]
            ok &= np.where(missing, c["missing"], holds)
        pred[ok & ~done] = rule["prediction"]
        done |= ok
    return pred


def small_classifier(library, n_trees):
    """An unfitted classifier of the library with native categorical splits, n_trees small trees."""
    if library == "hist":
        return HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0)
    if library == "xgboost":
        return xgb.XGBClassifier(n_estimators=n_trees, max_depth=3, enable_categorical=True,
                                 max_cat_to_onehot=1, random_state=0)
    return lgb.LGBMClassifier(n_estimators=n_trees, num_leaves=6, verbose=-1, min_data_per_group=5,
                              cat_smooth=1.0, random_state=0)


@pytest.mark.parametrize("library", ["hist", "xgboost", "lightgbm"])
def test_rules_with_category_sets(library):
    import pickle

    # XGBoost refuses '[', ']' and '<' in feature names, LightGBM JSON characters
    name = "colour [main] ü" if library == "hist" else "Farbe (ü) #1"
    Xtr, ytr = xor_frame(0, name)
    Xte, yte = xor_frame(1, name)
    model = small_classifier(library, 30).fit(Xtr, ytr)
    m = DefragModel(model, n_restarts=10, random_state=0, form="list").fit(Xtr, ytr)
    assert m.splits_.has_categorical
    text = str(m)
    sets = [c for r in m.rules_.rules for c in r.conditions if c.is_set]
    shown = printed_name(name)  # ('#' is quoted: utils/text.py)
    assert sets and f"{shown} in {{" in text or f"{shown} not in {{" in text, text
    # category names, not codes, in the printed sets
    assert any(label in text for label in ("grün", "c d", "'e,f'")), text
    assert all(set(c.to_dict()["categories"]) <= {"grün", "b", "c d", "e,f", "g", "h"} for c in sets)
    # the C kernels, the conditions and the printed rules agree
    np.testing.assert_array_equal(m.rules_.predict(Xte).astype(object), evaluate_as_written(m.rules_.to_dict(), Xte))
    coded = m.rules_.encode(Xte)
    np.testing.assert_array_equal(m.rules_.covers(Xte), np.stack([r.covers(coded) for r in m.rules_.rules], axis=1))
    # eq. 10 by hand on the binary features of the bit path
    S = m.splits_.binary_features(m.splits_.encoding.transform(Xte))
    logpost = S @ np.log(m.eta_).T + (~S) @ np.log1p(-m.eta_).T + np.log(m.alpha_)
    np.testing.assert_array_equal(m.apply_map(Xte), np.argmax(logpost, axis=1))
    ev = m.evaluate(Xte, yte)
    assert ev["fidelity"] > 0.6, (text, ev)
    if library == "xgboost":
        assert ev["error"] <= 0.2, (text, ev)
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(Xte), m.predict(Xte))
    np.testing.assert_array_equal(back.rules_.predict(Xte), m.rules_.predict(Xte))
    # categories in another order mean the same
    X2 = Xte.copy()
    X2[name] = X2[name].cat.reorder_categories(list(reversed(Xte[name].cat.categories)))
    np.testing.assert_array_equal(m.predict(X2), m.predict(Xte))
    np.testing.assert_array_equal(m.rules_.predict(X2), m.rules_.predict(Xte))


def test_unseen_categories():
    Xtr, ytr = xor_frame(0, "colour")
    X2 = Xtr.copy()
    X2["colour"] = X2["colour"].cat.add_categories(["new"])
    X2.loc[:9, "colour"] = "new"
    Xnan = X2.copy()
    Xnan.loc[:9, "colour"] = np.nan
    # scikit-learn and LightGBM read an unseen category as missing
    for model in (HistGradientBoostingClassifier(max_iter=10, random_state=0),
                  lgb.LGBMClassifier(n_estimators=10, verbose=-1, min_data_per_group=5)):
        m = DefragModel(model.fit(Xtr, ytr), n_restarts=2, random_state=0, form="list").fit(Xtr, ytr)
        np.testing.assert_array_equal(m.predict(X2), m.predict(Xnan))
        np.testing.assert_array_equal(model.predict(X2), model.predict(Xnan))
    # XGBoost refuses categories it was not trained with
    model = xgb.XGBClassifier(n_estimators=10, enable_categorical=True).fit(Xtr, ytr)
    m = DefragModel(model, n_restarts=2, random_state=0, form="list").fit(Xtr, ytr)
    with pytest.raises(ValueError, match="not trained with: new"):
        m.predict(X2)


def test_condition_text_for_sets_and_zero_as_missing():
    from defrag import Condition

    names = ["red", "blue", "grün"]
    assert str(Condition(1, "colour", categories=[2, 0], category_names=names)) == "colour in {red, grün}"
    assert str(Condition(1, "colour", categories=[1], negated=True, missing=True,
                         category_names=names)) == "colour not in {blue} (or missing)"
    assert str(Condition(1, "c", categories=[5, 7])) == "c in {5, 7}"  # codes when names are unknown
    assert str(Condition(1, "c", categories=[0, 1, 2], category_names=["a,b", " x", "{}"])) == \
        "c in {'a,b', ' x', '{}'}"
    assert str(Condition(1, "c", categories=[], missing=True)) == "c is missing"
    # LightGBM zero-as-missing: zero is not in an interval unless missing values are
    assert str(Condition(0, "x", upper=0.5, zero_missing=True)) == "x <= 0.5 (except 0)"
    assert str(Condition(0, "x", lower=0.5, zero_missing=True)) == "x > 0.5"
    assert str(Condition(0, "x", upper=0.5, missing=True, zero_missing=True)) == "x <= 0.5 (or missing or 0)"
    assert str(Condition(0, "x", lower=np.inf, missing=True, zero_missing=True)) == "x is missing or 0"
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [0.3, 1.0], [np.nan, 1.0], [1e-36, 1.0]])
    np.testing.assert_array_equal(Condition(0, "x", upper=0.5, zero_missing=True).holds(X),
                                  [False, False, True, False, False])
    np.testing.assert_array_equal(Condition(1, "c", categories=[1], negated=True).holds(X), [False] * 5)
    with pytest.raises(ValueError):
        Condition(0, "x", lower=0.0, categories=[1])


def test_lightgbm_zero_as_missing_rules():
    rng = np.random.default_rng(6)
    X = rng.random((1200, 2))
    X[::3, 0] = 0.0
    y = ((X[:, 0] == 0) | (X[:, 1] > 0.7)).astype(int)
    model = lgb.LGBMClassifier(n_estimators=20, num_leaves=4, zero_as_missing=True, verbose=-1).fit(X, y)
    m = DefragModel(model, n_restarts=5, random_state=0, form="list").fit(X, y)
    zero_conditions = [c for r in m.rules_.rules for c in r.conditions if c.feature == 0]
    assert zero_conditions and all(c.zero_missing for c in zero_conditions)
    assert all("0" in str(c) for c in zero_conditions if c.missing), str(m)
    # the rules as printed, evaluated on the raw inputs (zero included), match the C kernels
    np.testing.assert_array_equal(m.rules_.covers(X), np.stack([r.covers(X) for r in m.rules_.rules], axis=1))
    assert m.evaluate(X, y)["fidelity"] > 0.9, str(m)


# ------------------------------------------------------------------- split table, errors

def test_split_table_with_categorical_splits():
    from defrag.splits.table import SplitTable

    t = SplitTable([1, 0, 1, 1, 0], [0, 0.5, 0, 0, 0.2], n_features=2, kind=[1, 0, 1, 2, 0],
                   cat_ptr=[0, 2, 2, 5, 6, 6], cat_codes=[3, 1, 1, 3, 3, 1])
    # the two sets {1, 3} are one split; numeric feature 0 keeps its thermometer order
    assert len(t) == 4 and list(t.categorical) == [False, True]
    np.testing.assert_array_equal(t.threshold[:2], [0.2, 0.5])
    assert [t.set_of(l).tolist() for l in range(4)] == [[], [], [1, 3], [1]]
    np.testing.assert_array_equal(t.kind, [0, 0, 1, 2])
    X = np.array([[0.3, 1.0], [0.1, 3.0], [0.6, -1.0], [0.6, np.nan], [0.0, 7.0]])
    np.testing.assert_array_equal(t.binary_features(X).astype(int),
                                  [[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 1], [1, 1, 0, 0], [0, 0, 0, 1]])
    # numeric feature 0 is one rank group, each categorical split one of its own
    np.testing.assert_array_equal(t.rank_ptr, [0, 2, 3, 4])
    np.testing.assert_array_equal(t.rank_feature, [0, 1, 1])
    np.testing.assert_array_equal(t.ranks(X), [[1, 0, 2, 2, 0], [1, 1, 0, 2, 0], [0, 1, 1, 2, 1]])
    np.testing.assert_array_equal(s_from_ranks(t, t.ranks(X)), t.binary_features(X))
    assert "ranks" in t.kernel_input(X) and "bits" in t.kernel_input(X, bits=True)
    with pytest.raises(ValueError, match="both numeric and categorical"):
        SplitTable([0, 0], [0.5, 0], 1, kind=[0, 1], cat_ptr=[0, 0, 1], cat_codes=[2])
    with pytest.raises(ValueError, match="category codes"):
        SplitTable([0], [0], 1, kind=[1], cat_ptr=[0, 1], cat_codes=[-1])
    with pytest.raises(ValueError, match="sets"):
        SplitTable([0], [0], 1, kind=[1])
    with pytest.raises(ValueError, match="cat_ptr"):
        SplitTable([0], [0], 1, kind=[1], cat_ptr=[0, 3], cat_codes=[1])


def test_malformed_categorical_json_is_a_value_error():
    import copy
    import json

    X, y = categorical_frame(2)
    model = xgb.XGBClassifier(n_estimators=3, max_depth=3, enable_categorical=True,
                              max_cat_to_onehot=1).fit(X, y)
    doc = json.loads(model.get_booster().save_raw(raw_format="json"))
    trees = doc["learner"]["gradient_booster"]["model"]["trees"]
    i = next(k for k, t in enumerate(trees) if t["categories_nodes"])

    def broken(change):
        d = copy.deepcopy(doc)
        change(d["learner"]["gradient_booster"]["model"]["trees"][i], d["learner"]["gradient_booster"]["model"])
        return d

    changes = [
        lambda t, m: t.pop("categories_nodes"),
        lambda t, m: t.update(categories_nodes=[]),
        lambda t, m: t["categories_sizes"].__setitem__(0, 10**6),
        lambda t, m: t["categories_segments"].__setitem__(0, -1),
        lambda t, m: t["categories"].__setitem__(0, -4),
        lambda t, m: t["categories"].__setitem__(0, "red"),
        lambda t, m: t["split_type"].__setitem__(t["categories_nodes"][0], 7),
        lambda t, m: t.update(categories_sizes=t["categories_sizes"][:-1]),
        lambda t, m: m["cats"]["enc"][1]["offsets"].__setitem__(1, 10**6),
        lambda t, m: m["cats"].update(enc=m["cats"]["enc"][:1]),
        lambda t, m: m["cats"]["enc"][3]["values"].__setitem__(0, m["cats"]["enc"][3]["values"][1]),
    ]
    for change in changes:
        with pytest.raises(ValueError, match="malformed XGBoost"):
            XGBoostSource(broken(change)).split_table()


def test_malformed_categorical_dump_is_a_value_error():
    import copy

    X, y = categorical_frame(2)
    dump = lgb.LGBMClassifier(**LGB_PARAMS).fit(X, y).booster_.dump_model()

    def first(tree, decision):
        stack = [tree["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_index" in node:
                if node["decision_type"] == decision:
                    return node
                stack += [node["left_child"], node["right_child"]]
        return None

    def broken(change):
        d = copy.deepcopy(dump)
        change(d)
        return d

    k = next(j for j, t in enumerate(dump["tree_info"]) if first(t, "=="))
    assert first(dump["tree_info"][0], "<=")["missing_type"] != "Zero"
    changes = [
        lambda d: first(d["tree_info"][k], "==").update(threshold="1||x"),
        lambda d: first(d["tree_info"][k], "==").update(threshold="-1||2"),
        lambda d: first(d["tree_info"][k], "==").update(threshold=""),
        lambda d: first(d["tree_info"][k], "==").update(decision_type="!="),
        lambda d: first(d["tree_info"][k], "==").update(missing_type="Sometimes"),
        lambda d: d.update(pandas_categorical="red"),
        # Zero on one node of a feature whose other nodes are not
        lambda d: first(d["tree_info"][0], "<=").update(missing_type="Zero"),
    ]
    for change in changes:
        with pytest.raises(ValueError, match="malformed LightGBM"):
            LightGBMSource(broken(change)).split_table()
    # pandas categories are placed on the DataFrame's categorical columns at fit time
    twice = broken(lambda d: d["pandas_categorical"][0].__setitem__(1, d["pandas_categorical"][0][0]))
    with pytest.raises(ValueError, match="not unique"):
        LightGBMSource(twice).split_table().encoding.bind(X)
    with pytest.raises(ValueError, match="categorical columns"):
        LightGBMSource(dump).split_table().encoding.bind(X.assign(size=X["size"].cat.codes))


def test_restarts_on_a_subsample_with_categorical_splits():
    # the subsample's Problem takes the columns of the ranks (the bit path's rows: below)
    Xtr, ytr = xor_frame(0, "colour", n=1200)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True,
                              max_cat_to_onehot=1).fit(Xtr, ytr)
    m = DefragModel(model, n_restarts=3, subsample=400, form="restarts", random_state=0).fit(Xtr, ytr)
    assert m.subsample_size_ == 400 and m.splits_.has_categorical
    assert m.restart_errors_.min() == pytest.approx(np.mean(m.predict(Xtr) != ytr), rel=1e-12)


@pytest.mark.parametrize("library,subsample", [("hist", None), ("xgboost", 400), ("lightgbm", None)])
def test_rank_and_bit_paths_fit_the_same_model(library, subsample, monkeypatch):
    # categorical splits are one-split rank features; the packed bits read the same s
    from defrag.splits.table import SplitTable

    Xtr, ytr = xor_frame(0, "colour", n=1200)
    Xte, _ = xor_frame(1, "colour")
    model = small_classifier(library, 20).fit(Xtr, ytr)
    kw = dict(n_restarts=4, subsample=subsample, random_state=0)
    by_ranks = DefragModel(model, **kw, form="list").fit(Xtr, ytr)
    t = by_ranks.splits_
    n_cat = int(np.count_nonzero(t.kind))
    assert n_cat and len(t.rank_ptr) - 1 == np.count_nonzero(~t.categorical) + n_cat
    on_ranks = by_ranks.apply(Xte)

    plain = SplitTable.kernel_input
    monkeypatch.setattr(SplitTable, "kernel_input",
                        lambda self, X, n_threads=1, bits=False: plain(self, X, n_threads, bits=True))
    by_bits = DefragModel(model, **kw, form="list").fit(Xtr, ytr)
    assert by_bits.n_regions_ == by_ranks.n_regions_
    assert by_bits.lower_bound_.shape == by_ranks.lower_bound_.shape
    np.testing.assert_allclose(by_ranks.lower_bound_, by_bits.lower_bound_, rtol=1e-9, atol=0)
    np.testing.assert_array_equal(by_ranks.restart_n_regions_, by_bits.restart_n_regions_)
    np.testing.assert_array_equal(by_ranks.restart_errors_, by_bits.restart_errors_)
    # the same rules: conditions, predictions and supports exactly, weights and class
    # probabilities to rounding (sums in another order)
    assert str(by_ranks) == str(by_bits) and len(by_ranks.rules_) == len(by_bits.rules_)
    for a, b in zip(by_ranks.rules_.rules, by_bits.rules_.rules):
        assert a.conditions == b.conditions and a.prediction == b.prediction and a.support == b.support
        np.testing.assert_allclose(a.proba, b.proba, rtol=1e-9)
        np.testing.assert_allclose(a.weight, b.weight, rtol=1e-9)
    # eq. 10 on the bit Problem: the same assignment, for either fitted model
    np.testing.assert_array_equal(by_bits.apply(Xte), on_ranks)
    np.testing.assert_array_equal(by_ranks.apply(Xte), on_ranks)


def test_group_ranks_kernel():
    from defrag.splits import _encoding
    from defrag.splits.table import category_words

    rng = np.random.default_rng(0)
    X = np.where(rng.random((20000, 2)) < 0.1, np.nan, rng.integers(-1, 70, size=(20000, 2)).astype(float))
    X[:, 0] = rng.random(20000)
    kind = np.array([0, 0, 1, 2], dtype=np.uint8)
    set_ptr, words = category_words([0, 0, 0, 3, 4], [1, 3, 65, 3])
    args = (np.array([0, 1, 1], dtype=np.int32), np.array([0, 2, 3, 4]), np.array([0.2, 0.7, 0, 0]))
    sets = dict(kind=kind, set_ptr=set_ptr, set_words=words)
    ranks = _encoding.compute_group_ranks(X, *args, 1, **sets)
    x = X[:, 1]
    np.testing.assert_array_equal(ranks[0], _encoding.compute_ranks(X[:, :1].copy(), np.array([0, 2]), args[2][:2])[0])
    np.testing.assert_array_equal(ranks[1], np.where(np.isnan(x), 2, np.isin(x, [1, 3, 65])))
    np.testing.assert_array_equal(ranks[2], np.where(np.isnan(x), 2, x != 3))
    np.testing.assert_array_equal(_encoding.compute_group_ranks(X, *args, 2, **sets), ranks)  # threads
    with pytest.raises(ValueError, match="invalid argument"):  # a set group of two splits
        _encoding.compute_group_ranks(X, np.array([0, 1], dtype=np.int32), np.array([0, 2, 4]), args[2], 1, **sets)
    with pytest.raises(ValueError, match="invalid argument"):  # no such column
        _encoding.compute_group_ranks(X, np.array([0, 1, 2], dtype=np.int32), *args[1:], 1, **sets)


def test_large_categorical_inputs_take_the_packed_bits(monkeypatch):
    # ranks cost 4 bytes per categorical split and row, packed bits 1 bit: past the
    # limit (and 4x the bits) the smaller form is built, and the fit agrees
    import defrag.splits.table as splits_mod

    X, y = categorical_frame(2)
    hgb = HistGradientBoostingClassifier(max_iter=8, random_state=0).fit(X, y)
    table = split_table_from_estimator(hgb)
    Xc = table.encoding.transform(X)
    assert "ranks" in table.kernel_input(Xc)
    a = DefragModel(hgb, n_restarts=2, random_state=0, form="list").fit(X, y)
    monkeypatch.setattr(splits_mod, "RANK_BYTES_LIMIT", 0)
    assert 4 * (len(table.rank_ptr) - 1) > 4 * 8 * ((len(table) + 63) // 64)  # ranks are larger here
    assert "bits" in table.kernel_input(Xc)
    b = DefragModel(hgb, n_restarts=2, random_state=0, form="list").fit(X, y)
    assert str(a.rules_) == str(b.rules_)
    np.testing.assert_array_equal(a.apply(X), b.apply(X))
