"""CatBoost models (defrag/sources/catboost.py): the trees read from CatBoost's JSON export
reach CatBoost's own leaves (calc_leaf_indexes) and their leaf values add up to its raw
prediction (RawFormulaVal, scale and bias included), with NaN in each nan_mode, values
at the float32 borders, and one-hot categorical features given as pandas categorical,
text or integer columns; the split gains are CatBoost's PredictionValuesChange; a model
with CTR features is refused with the reason; malformed JSON is a ValueError naming the
field; DefragModel on Synthetic1 and the CLI on a .cbm file work."""
import copy
import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

cb = pytest.importorskip("catboost", reason="catboost is not installed (pip install catboost)")
pd = pytest.importorskip("pandas")

from conftest import xor_data  # noqa: E402
from defrag import DefragModel, PrototypeExplainer, RuleTree, cli  # noqa: E402
from defrag.sources import adapt, walk_tree  # noqa: E402
from defrag.sources.catboost import category_hash, model_json  # noqa: E402
from defrag.rules import from_json

FLT_MAX = float(np.finfo(np.float32).max)
QUIET = dict(verbose=0, thread_count=1, random_seed=0, allow_writing_files=False)


def numeric_data(seed=0, n=1000, nan=0.1):
    """Features on different scales (one with ties) with NaN; a target that depends on
    whether x0 is missing, so that NaN has splits of its own."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 0.1, 100]
    X[:, 3] = np.round(X[:, 3])
    X[rng.random(X.shape) < nan] = np.nan
    y = np.where(np.isnan(X[:, 0]), 2.5, np.nan_to_num(X[:, 0])) + 0.1 * np.nan_to_num(X[:, 1])
    return X, y


def category_frame(seed=0, n=1000):
    """Numeric columns with NaN; a pandas categorical of text (one category never used),
    one of integers, and a text (object) column whose words have 1 to 80 bytes, non-ASCII
    ones included (CatBoost hashes them with CityHash64, every length branch)."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "black", "white"], n)
    size = rng.choice([3, 7, 10, 42], n)
    words = np.array(["a", "ab", "über", "mañana-7", "x" * 12, "word-of-twenty-bytes", "y" * 40, "z" * 80])
    word = rng.choice(words, n)
    X = pd.DataFrame({
        "x0": rng.normal(size=n),
        "colour": pd.Categorical(colour, categories=["grey", "red", "green", "blue", "black", "white"]),
        "x2": rng.normal(size=n) * 10,
        "size": pd.Categorical(size, categories=[3, 7, 10, 42]),
        "word": word.astype(object),
    })
    X.loc[rng.random(n) < 0.1, "x0"] = np.nan
    y = (np.nan_to_num(X["x0"].to_numpy()) + 1.5 * np.isin(colour, ["red", "blue"]) - (size == 42)
         + 0.8 * np.isin(word, words[::2]) + 0.05 * X["x2"].to_numpy())
    return X, y


def walked(source, X):
    """Node ids of the leaves each row reaches in each tree, and the summed leaf values."""
    Xe = source.encoding.bind(X).transform(X)
    trees = source.trees()
    leaves = np.stack([walk_tree(t, Xe) for t in trees], axis=1)
    return leaves, sum(t.value[leaves[:, i]] for i, t in enumerate(trees))


def check_catboost_exactness(model, X):
    """The leaves and the raw prediction of CatBoost itself, on X."""
    source = adapt(model)
    leaves, raw = walked(source, X)
    own = np.asarray(model.calc_leaf_indexes(X))
    first_leaf = np.array([t.n_nodes // 2 for t in source.trees()])  # leaf i is node 2**depth - 1 + i
    np.testing.assert_array_equal(leaves, first_leaf + own)
    np.testing.assert_array_equal(leaves, source.leaves(X))
    expected = np.asarray(model.predict(X, prediction_type="RawFormulaVal")).reshape(len(leaves), -1)
    np.testing.assert_allclose(raw, expected, rtol=0, atol=1e-6)
    return source


# ------------------------------------------------------------------ exactness

@pytest.mark.parametrize("loss", ["RMSE", "Logloss", "MultiClass"])
@pytest.mark.parametrize("nan_mode", ["Min", "Max", "Forbidden"])
def test_leaf_values_add_up_to_the_raw_prediction(loss, nan_mode):
    X, y = numeric_data()
    target = {"RMSE": y, "Logloss": (y > 0.3).astype(int), "MultiClass": np.digitize(y, [-0.5, 0.5, 2])}[loss]
    train = np.nan_to_num(X) if nan_mode == "Forbidden" else X  # Forbidden: no NaN in training
    Model = cb.CatBoostRegressor if loss == "RMSE" else cb.CatBoostClassifier
    model = Model(iterations=25, depth=4, loss_function=loss, nan_mode=nan_mode, **QUIET).fit(train, target)
    source = check_catboost_exactness(model, X)  # X with NaN (Forbidden: compared as they are)
    trees = source.trees()
    assert trees[0].value.shape[1] == (4 if loss == "MultiClass" else 1)
    missing_right = np.concatenate([t.missing_right[~t.is_leaf] for t in trees])
    # nan_mode Max reads NaN as +inf (right), Min as -inf and Forbidden as NaN (left)
    assert missing_right.any() == (nan_mode == "Max")
    assert source.task == ("regression" if loss == "RMSE" else "classification")


def test_scale_and_bias_are_in_the_leaf_values():
    X, y = numeric_data(1)
    model = cb.CatBoostRegressor(iterations=10, depth=3, **QUIET).fit(X, y + 100.0)  # bias ~ 100
    doc = model_json(model)
    scale, bias = doc["scale_and_bias"]
    assert abs(bias[0]) > 50
    shrunk = cb.CatBoostRegressor(iterations=10, depth=3, **QUIET).fit(X, y + 100.0)
    shrunk.set_scale_and_bias(0.5, [3.0])  # as sum_models / shrink leave them
    for m in (model, shrunk):
        check_catboost_exactness(m, X)


def test_values_at_the_float32_borders_go_where_catboost_sends_them():
    """CatBoost compares float32(x) > border: every border, its float64 neighbours, the
    midpoints between float32 neighbours (round half to even) and values beyond the
    float32 range; nan_mode Max puts a border at FLT_MAX."""
    X, y = numeric_data(2, n=600)
    for nan_mode in ("Min", "Max"):
        model = cb.CatBoostRegressor(iterations=20, depth=3, nan_mode=nan_mode, **QUIET).fit(X, y)
        doc = model_json(model)
        borders = np.concatenate([f["borders"] for f in doc["features_info"]["float_features"]])
        b32 = borders.astype(np.float32)
        with np.errstate(over="ignore"):
            up = np.nextafter(b32, np.float32(np.inf)).astype(np.float64)
            down = np.nextafter(b32, np.float32(-np.inf)).astype(np.float64)
        values = np.concatenate([borders, np.nextafter(borders, np.inf), np.nextafter(borders, -np.inf),
                                 (borders + up) / 2, (borders + down) / 2,
                                 np.nextafter((borders + up) / 2, np.inf), np.nextafter((borders + up) / 2, -np.inf),
                                 [FLT_MAX, -FLT_MAX, FLT_MAX + 2.0**103, np.nextafter(FLT_MAX + 2.0**103, 0),
                                  3.5e38, -3.5e38, 1e300, -1e300]])
        values = values[np.isfinite(values)]
        Z = np.tile(values[:, None], (1, 4))
        Z[1::3, 1] = np.nan
        check_catboost_exactness(model, np.vstack([Z, Z[::-1]]))
        if nan_mode == "Max":  # the FLT_MAX border is used (where float32_threshold alone errs)
            assert any(np.any(t.threshold[~t.is_leaf] > 3.4e38) for t in adapt(model).trees())


def test_a_border_between_float32_values_is_read_as_catboost_reads_it(tmp_path):
    """A JSON model file (CatBoost loads them too) may give a border that is no float32:
    CatBoost rounds it to the nearest float32, and so does the reader."""
    X, y = numeric_data(2, n=600)
    doc = model_json(cb.CatBoostRegressor(iterations=20, depth=3, **QUIET).fit(X, y))
    old = doc["features_info"]["float_features"][0]["borders"][1]
    up = float(np.nextafter(np.float32(old), np.float32(np.inf)))
    new = old + 0.7 * (up - old)  # rounds up to the next float32
    doc["features_info"]["float_features"][0]["borders"][1] = new
    used = [s for t in doc["oblivious_trees"] for s in t["splits"] if s.get("border") == old]
    assert used
    for split in used:
        split["border"] = new
    text = json.dumps(doc)
    (tmp_path / "model.json").write_text(text)
    model = cb.CatBoost().load_model(str(tmp_path / "model.json"), format="json")
    model.save_model = lambda path, format="cbm", **kw: open(path, "w").write(text)
    values = np.array([old, new, up, np.nextafter(up, np.inf), np.nextafter(up, -np.inf), (old + up) / 2])
    check_catboost_exactness(model, np.vstack([np.tile(values[:, None], (1, 4)), X]))


# ------------------------------------------------------------------ categories

def test_one_hot_categories_are_category_sets():
    X, y = category_frame()
    model = cb.CatBoostRegressor(iterations=40, depth=4, one_hot_max_size=255,
                                 cat_features=["colour", "size", "word"], **QUIET).fit(X, y)
    source = check_catboost_exactness(model, X)
    assert any(np.any(t.kind[~t.is_leaf] != 0) for t in source.trees())
    used = {source.trees()[i].feature[j] for i in range(len(source.trees()))
            for j in np.flatnonzero(source.trees()[i].kind != 0)}
    assert used == {1, 3, 4}
    # categories CatBoost never saw, or that the data at fit time lacked, are hashed too
    Z = X.copy()
    Z["colour"] = Z["colour"].cat.add_categories(["purple"])
    Z.loc[::7, "colour"] = "purple"
    Z["size"] = Z["size"].cat.add_categories([99])
    Z.loc[::5, "size"] = 99
    Z.loc[::3, "word"] = "never-seen"
    check_catboost_exactness(model, Z)
    bound = source.encoding.bind(X[X["colour"] != "red"])
    leaves = np.stack([walk_tree(t, bound.transform(Z)) for t in source.trees()], axis=1)
    np.testing.assert_array_equal(leaves, source.leaves(Z))
    # a DataFrame's columns are read by the model's names, as CatBoost reads them
    reordered = DefragModel(model, n_restarts=2, random_state=0, form="list").fit(X[["x2", "colour", "x0", "size", "word"]])
    ordered = DefragModel(model, n_restarts=2, random_state=0, form="list").fit(X)
    assert str(reordered.rules_) == str(ordered.rules_)
    # the codes are named by the values of X (not CatBoost's hashes)
    names = source.encoding.bind(X).category_names(1)
    assert set(names) <= {"red", "green", "blue", "black", "white"}
    assert set(source.encoding.bind(X).category_names(3)) <= {"3", "7", "10", "42"}


def test_integer_array_categories_and_multiclass():
    X, y = category_frame(1)
    codes = np.column_stack([np.nan_to_num(X["x0"]).round(1) * 10, X["size"].astype(int),
                             X["colour"].cat.codes]).astype(np.int64)
    target = np.digitize(y, [0, 1])
    model = cb.CatBoostClassifier(iterations=20, depth=3, loss_function="MultiClass", one_hot_max_size=10,
                                  cat_features=[1, 2], **QUIET).fit(codes, target)
    source = check_catboost_exactness(model, codes)
    assert source.encoding.categorical.tolist() == [False, True, True]
    # as floats (how defrag reads an array) the codes are the same integers
    leaves, raw = walked(source, codes.astype(np.float64))
    np.testing.assert_array_equal(leaves, source.leaves(codes))
    with pytest.raises(ValueError, match="integers or text"):
        source.encoding.transform(codes + np.array([0, 0.5, 0]))


def test_defrag_rules_name_the_categories_and_survive_json():
    X, _ = category_frame(2)
    labels = (X["colour"].isin(["red", "blue"]).to_numpy() ^ (X["size"] == 42).to_numpy()).astype(int)
    model = cb.CatBoostClassifier(iterations=30, depth=3, one_hot_max_size=255,
                                  cat_features=["colour", "size", "word"], **QUIET).fit(X, labels)
    m = DefragModel(model, n_components=6, n_restarts=5, random_state=0, n_jobs=1, form="list").fit(X)
    text = str(m)
    assert "colour not in {red, blue}" in text and "size not in {42}" in text, text
    assert "<CatBoost hash" not in text
    np.testing.assert_array_equal(m.predict(X), labels)
    # the exports read categories by name: other colours are not in {red, blue}
    back = from_json(m.rules_.to_json())
    np.testing.assert_array_equal(back.predict(X), labels)
    namespace = {}
    exec(m.rules_.to_python(), namespace)
    assert [namespace["predict"](r) for r in X.to_dict("records")] == labels.tolist()


def test_category_hash_is_catboosts(tmp_path):
    """CatBoost's own hashes of text categories (its Python export with the training pool)."""
    rng = np.random.default_rng(3)
    alphabet = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ ")
    words = ["", "a", "-3", "0", "12", "abc", "abcd", "abcdefgh", "abcdefghi"] + \
        ["".join(rng.choice(alphabet, k)) for k in list(range(10, 140, 7)) + [16, 17, 32, 33, 64, 65, 128, 129]]
    X = pd.DataFrame({"x": rng.normal(size=5 * len(words)), "c": np.repeat(words, 5)})
    y = rng.normal(size=len(X))
    model = cb.CatBoostRegressor(iterations=1, depth=1, one_hot_max_size=255, cat_features=[1], **QUIET).fit(X, y)
    path = tmp_path / "model.py"
    model.save_model(str(path), format="python", pool=cb.Pool(X, y, cat_features=[1]))
    source = path.read_text()
    block = source[source.index("cat_features_hashes = {"):]
    namespace = {}
    exec(block[:block.index("}") + 1], namespace)
    theirs = namespace["cat_features_hashes"]
    assert set(theirs) == set(words)
    assert {w: category_hash(w) for w in words} == {w: h & 0xFFFFFFFF for w, h in theirs.items()}
    assert category_hash(7) == category_hash("7") == category_hash(7.0) and category_hash(True) == category_hash("1")


def test_ctr_features_are_refused_with_the_reason():
    X, y = category_frame(3)
    model = cb.CatBoostRegressor(iterations=5, depth=3, one_hot_max_size=2, cat_features=["colour", "size", "word"],
                                 **QUIET).fit(X, y)
    for fit in (lambda: adapt(model), lambda: DefragModel(model, form="list").fit(X)):
        with pytest.raises(ValueError, match="CTR features") as exc:
            fit()
        message = str(exc.value)
        assert "one_hot_max_size" in message and "target" in message and "'colour'" in message


def test_non_symmetric_trees_and_unfitted_models_are_refused():
    from sklearn.exceptions import NotFittedError

    X, y = numeric_data(4, n=300)
    model = cb.CatBoostRegressor(iterations=3, depth=3, grow_policy="Depthwise", **QUIET).fit(X, y)
    with pytest.raises(TypeError, match="non-symmetric trees"):
        DefragModel(model, form="list").fit(X)
    # an unfitted model is cloned and fitted on (X, y), as a scikit-learn meta-estimator's
    unfitted = cb.CatBoostRegressor(iterations=3, depth=2, **QUIET)
    model = DefragModel(unfitted, form="list", n_restarts=1, random_state=0).fit(X, y)
    assert model.estimator_ is not unfitted and model.estimator_.is_fitted()
    assert not unfitted.is_fitted()
    with pytest.raises(NotFittedError, match="clone cannot copy it to fit"):  # the raw CatBoost's params
        DefragModel(cb.CatBoost({"iterations": 3, **QUIET}), form="list").fit(X, y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        DefragModel(cb.CatBoostClassifier(), form="list").fit(X)
    with pytest.raises(NotFittedError):
        DefragModel(cb.CatBoostClassifier()).predict(X)


# ------------------------------------------------------------------ gains, plain models, prototypes

@pytest.mark.parametrize("loss", ["RMSE", "MultiClass"])
def test_split_gains_are_catboosts_prediction_values_change(loss):
    X, y = category_frame(4)
    Model = cb.CatBoostRegressor if loss == "RMSE" else cb.CatBoostClassifier
    target = y if loss == "RMSE" else np.digitize(y, [0, 1])
    model = Model(iterations=20, depth=4, loss_function=loss, one_hot_max_size=255,
                  cat_features=["colour", "size", "word"], **QUIET).fit(X, target)
    source = adapt(model)
    per_feature = np.zeros(X.shape[1])
    for t in source.trees():
        np.add.at(per_feature, t.feature[~t.is_leaf], t.gain[~t.is_leaf])
    np.testing.assert_allclose(100 * per_feature / per_feature.sum(),
                               model.get_feature_importance(type="PredictionValuesChange"), atol=1e-8)
    # the split table holds each tree's level splits once, with the level's gain
    table = source.split_table(keep_duplicates=True)
    assert len(table) == sum(int(np.log2(t.n_nodes + 1)) - 1 for t in source.trees())
    np.testing.assert_allclose(table.gain.sum(), sum(t.gain[~t.is_leaf].sum() for t in source.trees()))


def test_a_plain_catboost_from_a_cbm_file_is_the_classifier(tmp_path):
    X, y = numeric_data(5, n=600)
    labels = np.array(["low", "mid", "high"])[np.digitize(y, [0, 1])]
    model = cb.CatBoostClassifier(iterations=20, depth=3, **QUIET).fit(X, labels)
    model.save_model(str(tmp_path / "m.cbm"))
    plain = cb.CatBoost().load_model(str(tmp_path / "m.cbm"))
    source = adapt(plain)
    assert source.task == "classification" and set(source.classes) == {"low", "mid", "high"}
    np.testing.assert_array_equal(np.ravel(source.predict(X)), np.ravel(model.predict(X)))
    a = DefragModel(plain, n_components=4, n_restarts=3, random_state=0, n_jobs=1, form="list").fit(X)
    b = DefragModel(model, n_components=4, n_restarts=3, random_state=0, n_jobs=1, form="list").fit(X)
    assert str(a) == str(b)
    regressor = cb.CatBoostRegressor(iterations=5, depth=2, **QUIET).fit(X, y)
    regressor.save_model(str(tmp_path / "r.cbm"))
    assert adapt(cb.CatBoost().load_model(str(tmp_path / "r.cbm"))).task == "regression"


def test_prototypes_use_catboosts_leaves():
    X, y = numeric_data(6, n=400)
    model = cb.CatBoostClassifier(iterations=15, depth=3, **QUIET).fit(X, (y > 0.3).astype(int))
    p = PrototypeExplainer(model, n_prototypes=2).fit(X, (y > 0.3).astype(int))
    assert p.distance_ == "gbt"
    Xc, yc = category_frame(6, n=300)
    model = cb.CatBoostRegressor(iterations=5, depth=2, one_hot_max_size=255, cat_features=[1, 3, 4],
                                 **QUIET).fit(Xc, yc)
    with pytest.raises(TypeError, match="DataFrame"):
        adapt(model).leaves(adapt(model).encoding.transform(Xc))


# ------------------------------------------------------------------ Synthetic1

def test_synthetic1_catboost_gives_four_regions_at_most():
    """Sec. 7's XOR (10% label noise): the rules of a CatBoost classifier (200 trees of
    depth 6) have at most 4 regions (the list's rules and its default) and a test error
    within 0.03 of CatBoost's."""
    for seed in range(5):
        Xtr, ytr, Xte, yte = xor_data(seed)
        model = cb.CatBoostClassifier(iterations=200, depth=6, verbose=0, thread_count=1,
                                      random_seed=seed, allow_writing_files=False).fit(Xtr, ytr)
        m = DefragModel(model, random_state=0, n_jobs=1, form="list").fit(Xtr)
        error = m.evaluate(Xte, yte)["error"]
        model_error = np.mean(np.ravel(model.predict(Xte)) != yte)
        assert m.n_regions_ <= 4, (seed, str(m))
        assert error <= model_error + 0.03, (seed, error, model_error)


# ------------------------------------------------------------------ malformed JSON

def _mutate(doc, kind):
    d = copy.deepcopy(doc)
    trees = d["oblivious_trees"]
    tree = next(t for t in trees if len(t["splits"]) >= 2)
    float_split = next(s for t in trees for s in t["splits"] if s["split_type"] == "FloatFeature")
    one_hot = next(s for t in trees for s in t["splits"] if s["split_type"] == "OneHotFeature")
    floats = d["features_info"]["float_features"]
    if kind == "float_feature_index": float_split["float_feature_index"] = 10**6
    elif kind == "float_feature_index_fraction": float_split["float_feature_index"] = 0.5
    elif kind == "cat_feature_index": one_hot["cat_feature_index"] = 7
    elif kind == "flat_feature_index": floats[0]["flat_feature_index"] = 10**9
    elif kind == "flat_feature_index_shared": floats[1]["flat_feature_index"] = floats[0]["flat_feature_index"]
    elif kind == "leaf_values": tree["leaf_values"].pop()
    elif kind == "leaf_weights": tree["leaf_weights"][0] = -1
    elif kind == "depth": tree["splits"] = tree["splits"] * 20
    elif kind == "border": float_split["border"] = "abc"
    elif kind == "border_nan": float_split["border"] = float("nan")
    elif kind == "value": one_hot["value"] = 1.5
    elif kind == "value_huge": one_hot["value"] = 2**40
    elif kind == "nan_value_treatment": floats[0]["nan_value_treatment"] = "Sometimes"
    elif kind == "has_nans": floats[0]["has_nans"] = "yes"
    elif kind == "split_type": float_split["split_type"] = "Weird"
    elif kind == "scale_and_bias": d["scale_and_bias"] = [1, []]
    elif kind == "splits": tree["splits"] = {"a": 1}
    elif kind == "no_trees_key": del d["oblivious_trees"]
    else: raise KeyError(kind)
    return json.dumps(d)


MALFORMED = {
    "float_feature_index": "float_feature_index",
    "float_feature_index_fraction": "float_feature_index",
    "cat_feature_index": "cat_feature_index",
    "flat_feature_index": "flat_feature_index",
    "flat_feature_index_shared": "flat_feature_index",
    "leaf_values": "leaf_values",
    "leaf_weights": "leaf_weights",
    "depth": "depth at most 16",
    "border": "border",
    "border_nan": "border",
    "value": "value",
    "value_huge": "value",
    "nan_value_treatment": "nan_value_treatment",
    "has_nans": "has_nans",
    "split_type": "split_type",
    "scale_and_bias": "scale_and_bias",
    "splits": "splits",
    "no_trees_key": "oblivious_trees",
    "text": "malformed CatBoost model JSON",
}


@pytest.fixture(scope="module")
def small_model():
    X, y = category_frame(7, n=300)
    model = cb.CatBoostRegressor(iterations=4, depth=3, one_hot_max_size=255, cat_features=[1, 3, 4],
                                 **QUIET).fit(X, y)
    return model, X, model_json(model)


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_json_is_a_value_error_naming_the_field(small_model, monkeypatch, kind):
    model, X, doc = small_model
    text = json.dumps(doc)[:500] if kind == "text" else _mutate(doc, kind)

    def save_model(path, format="cbm", **kwargs):
        with open(path, "w") as f:
            f.write(text)

    monkeypatch.setattr(model, "save_model", save_model)
    with pytest.raises(ValueError, match=MALFORMED[kind]):
        DefragModel(model, n_restarts=1, form="list").fit(X)


def test_more_malformed_types_name_the_field(small_model, monkeypatch):
    model, X, doc = small_model
    cases = {"leaf_values": lambda d: d["oblivious_trees"][0].__setitem__("leaf_values", ["a"] * 8),
             "oblivious_trees": lambda d: d["oblivious_trees"].__setitem__(0, 1),
             "splits": lambda d: d["oblivious_trees"][0]["splits"].__setitem__(0, "x"),
             "features_info": lambda d: d.pop("features_info"),
             "feature_index": lambda d: d["features_info"]["float_features"][0].__setitem__("feature_index", "a")}
    for words, mutate in cases.items():
        bad = copy.deepcopy(doc)
        mutate(bad)
        monkeypatch.setattr(model, "save_model", lambda path, format="cbm", text=json.dumps(bad), **kw:
                            open(path, "w").write(text))
        with pytest.raises(ValueError, match=words):
            DefragModel(model, n_restarts=1, form="list").fit(X)


def test_fitted_rules_pickle_and_baselines_read_catboost(small_model):
    import pickle

    from defrag.baselines import DepthTwoTree, InTrees

    model, X, _ = small_model
    m = DefragModel(model, n_restarts=2, random_state=0, form="list").fit(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).predict(X), m.predict(X))
    y = model.predict(X)
    for baseline in (InTrees(model), DepthTwoTree(model)):
        assert baseline.fit(X, y).predict(X).shape == (len(X),)


def test_feature_count_mismatch_names_both_numbers(small_model):
    model, X, _ = small_model
    with pytest.raises(ValueError, match="X lacks 1 of the 5 columns the CatBoost model reads by name: 'word'"):
        DefragModel(model, form="list").fit(X.iloc[:, :4])
    with pytest.raises(ValueError, match="X has 4 features but the CatBoost model has 5"), \
            pytest.warns(UserWarning, match="X does not have valid feature names"):
        DefragModel(model, form="list").fit(X.iloc[:, :4].to_numpy())


# ------------------------------------------------------------------ fuzzing

def _paths(node, prefix=()):
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, prefix + (i,))
    return out


def test_mutated_json_is_read_or_rejected(small_model):
    """Another number, a dropped key or entry, a value of another type, a number as text,
    a list cut short anywhere in the model JSON (without model_info): a ValueError or
    TypeError, or a model whose trees every row walks to a leaf (as test_fuzz_models.py
    does for XGBoost and LightGBM; DEFRAG_FUZZ_EXAMPLES=N runs N examples)."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st

    model, X, doc = small_model
    doc = {key: value for key, value in doc.items() if key != "model_info"}
    paths = _paths(doc)[1:]
    numbers = st.one_of(st.integers(-3, 20), st.sampled_from([2**31, 2**32, -(2**31) - 1, 10**9, 0.5]),
                        st.floats(allow_nan=True, allow_infinity=True, width=64))
    others = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.just([]), st.just({}),
                       st.lists(st.integers(-2, 5), max_size=3))

    @st.composite
    def mutations(draw):
        d = copy.deepcopy(doc)
        path = draw(st.sampled_from(paths))
        parent = d
        for key in path[:-1]:
            parent = parent[key]
        key, old = path[-1], parent[path[-1]]
        kind = draw(st.sampled_from(["number", "drop", "type", "stringify", "cut"]))
        if kind == "drop" or (kind == "cut" and not (isinstance(old, (list, str)) and old)):
            del parent[key]
        elif kind == "cut":
            parent[key] = old[:draw(st.integers(0, len(old) - 1))]
        elif kind == "number":
            parent[key] = draw(numbers)
        elif kind == "type":
            parent[key] = draw(others)
        else:
            parent[key] = str(old)
        return json.dumps(d), path

    @given(mutations())
    def check(mutated):
        text, path = mutated
        model.save_model = lambda p, format="cbm", **kw: open(p, "w").write(text)
        try:
            source = adapt(model)
            trees = source.trees()
            source.split_table()
            Xe = source.encoding.transform(X)
        except (ValueError, TypeError):
            return
        finally:
            del model.save_model
        for tree in trees:
            assert np.all(tree.is_leaf[walk_tree(tree, Xe)]), path

    check()


# ------------------------------------------------------------------ import and CLI

def test_import_defrag_does_not_import_catboost():
    code = ("import sys, defrag\nfrom defrag.sources import adapt\nfrom defrag.sources import catboost\n"
            "print('catboost' in sys.modules)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "False"


def test_cli_explains_a_cbm_file(tmp_path):
    X, y = category_frame(8, n=600)
    labels = (y > np.median(y)).astype(int)
    model = cb.CatBoostClassifier(iterations=30, depth=3, one_hot_max_size=255,
                                  cat_features=["colour", "size", "word"], **QUIET).fit(X, labels)
    model.save_model(str(tmp_path / "model.cbm"))
    frame = X[["x2", "word", "x0", "size", "colour"]].copy()  # other order: read by name
    frame["label"] = labels
    frame.to_csv(tmp_path / "data.csv", index=False)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["explain", str(tmp_path / "model.cbm"), str(tmp_path / "data.csv"), "--format", "json",
                     "--n-components", "5", "--n-restarts", "3", "--seed", "0", "--quiet"], out, err)
    assert code == 0 and err.getvalue() == "", err.getvalue()
    rules = from_json(out.getvalue())
    expected = DefragModel(model, n_components=5, n_restarts=3, random_state=0).fit(X)
    assert str(rules) == str(expected.rules_)
    np.testing.assert_array_equal(rules.predict(X), expected.predict(X))
    # a file that is not a CatBoost model: one line, no traceback
    (tmp_path / "fake.cbm").write_text("x0,x1\n1,2\n")
    (tmp_path / "cut.cbm").write_bytes((tmp_path / "model.cbm").read_bytes()[:64])
    for name, message in (("fake.cbm", "is not a CatBoost model"), ("cut.cbm", "cannot read")):
        out, err = io.StringIO(), io.StringIO()
        assert cli.main(["explain", str(tmp_path / name), str(tmp_path / "data.csv")], out, err) == 2
        assert message in err.getvalue() and err.getvalue().count("\n") == 1, err.getvalue()


def test_a_category_read_by_its_text_in_every_export():
    # CatBoost hashes a value's text: 42 and "42" are one category, in memory; the JSON
    # round trip and the exports matched labels by type, and read "42" as unknown
    # (a fault hunt: every export predicted otherwise than rules_.predict)
    import sqlite3

    X, _ = category_frame(2)
    labels = (X["colour"].isin(["red", "blue"]).to_numpy() ^ (X["size"] == 42).to_numpy()).astype(int)
    model = cb.CatBoostClassifier(iterations=30, depth=3, one_hot_max_size=255,
                                  cat_features=["colour", "size", "word"], **QUIET).fit(X, labels)
    rules = DefragModel(model, n_components=6, n_restarts=5, random_state=0, n_jobs=1, form="list").fit(X).rules_
    assert any(c.name == "size" for r in rules.rules for c in r.conditions)
    new = X.head(300).astype({"size": object})
    new["size"] = new["size"].map(str)  # the same categories, as text (a CSV read as text)
    floats = X.head(300).astype({"size": np.float64})  # as numbers (a CSV with a blank cell)
    expected = rules.predict(X.head(300))
    np.testing.assert_array_equal(rules.predict(new), expected)
    np.testing.assert_array_equal(rules.predict(floats), expected)
    back = RuleTree.from_json(rules.to_json())
    assert back.encoding.text_labels and rules.encoding.text_labels
    for frame in (new, X.head(300), floats):
        np.testing.assert_array_equal(back.predict(frame), expected)
        namespace = {}
        exec(rules.to_python(), namespace)
        assert [namespace["predict"](r) for r in frame.to_dict("records")] == expected.tolist()
        first = np.full(len(frame), -1)
        for i, q in reversed(list(enumerate(rules.query_strings()))):
            first[frame.reset_index(drop=True).eval(q).to_numpy(dtype=bool)] = i
        np.testing.assert_array_equal(rules.predictions()[first], expected)
        con = sqlite3.connect(":memory:")
        con.execute("CREATE TABLE data (" + ", ".join(f'"{c}"' for c in frame.columns) + ")")
        con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * frame.shape[1])})",
                        [tuple(None if v is None or v != v else (v.item() if hasattr(v, "item") else v)
                               for v in row) for row in frame.astype(object).itertuples(index=False)])
        got = [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM data ORDER BY rowid")]
        np.testing.assert_array_equal(np.asarray(got), expected)
