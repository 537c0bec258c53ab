"""Fuzzing the XGBoost and LightGBM readers with mutations of real models.

A tiny real model of each library is fitted once; hypothesis picks a place in its
XGBoost JSON / LightGBM dump_model() and a mutation (another number, a dropped key or
list entry, a value of another type, a list or the JSON text cut short). The mutated
model reaches defrag as in test_malformed_models.py: the fitted model's booster returns
it (``save_raw`` / ``dump_model`` replaced on the instance). Then either defrag raises
ValueError or TypeError, or reading, fitting DefragModel and predicting work and give
checked trees (every row reaches a leaf); where the mutation left the trees and the
encoding as they were, the fitted rules predict as on the unmutated model. Never
another exception, a crash, a hang (hypothesis deadline) or a large allocation
(tracemalloc peak). The reads run under a memory limit (``defrag.max_memory``) of half
the peak allowed: what defrag sizes from the model (a category set's bitset grows with
its largest code) must be refused by the memory guard rather than allocated.

Examples per property: tests/conftest.py (bounded "ci" profile, DEFRAG_FUZZ_EXAMPLES=N).
"""
import copy
import json
import tracemalloc

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import defrag  # noqa: E402
from defrag import DefragMemoryError, DefragModel  # noqa: E402
from defrag.sources import adapt, walk_tree  # noqa: E402
from conftest import json_paths  # noqa: E402
from test_malformed_models import small_data  # noqa: E402

PEAK_LIMIT_BYTES = 100 * 2**20
# keys that describe the inputs rather than the trees: a change there may change the fit
ENCODING_KEYS = {"feature_types", "feature_names", "cats", "pandas_categorical", "num_feature",
                 "max_feature_idx", "objective", "name"}


def fit_models():
    X, y = small_data(n=200)
    xgbm = xgb.XGBClassifier(n_estimators=3, max_depth=3, n_jobs=1).fit(X, y)
    lgbm = lgb.LGBMClassifier(n_estimators=3, num_leaves=6, min_child_samples=5,
                              min_data_per_group=5, n_jobs=1, verbose=-1).fit(X, y, categorical_feature=[2])
    return X, xgbm, lgbm


X, XGBM, LGBM = fit_models()
XGB_DOC = json.loads(XGBM.get_booster().save_raw(raw_format="json"))
LGB_DOC = LGBM.booster_.dump_model()


class Reader:
    """Runs defrag on a model whose booster returns a given (mutated) document."""

    def __init__(self, library):
        self.library = library
        self.model = XGBM if library == "xgb" else LGBM
        self.booster = XGBM.get_booster() if library == "xgb" else LGBM.booster_
        self.attr = "save_raw" if library == "xgb" else "dump_model"

    def run(self, doc):
        """(trees, encoding flags, predictions of the fitted rules) for doc (a dict, or
        bytes for XGBoost)."""
        if self.library == "xgb":
            raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
            setattr(self.booster, self.attr, lambda raw_format="json": raw)
        else:
            setattr(self.booster, self.attr, lambda *a, **k: doc)
        try:
            source = adapt(self.model)
            trees = source.trees()
            source.split_table()
            encoding = source.encoding
            rules = DefragModel(self.model, n_restarts=1, max_iter=20, n_components=3,
                                random_state=0, n_jobs=1).fit(X)
            return trees, encoding, rules.predict(X)
        finally:
            delattr(self.booster, self.attr)


READERS = {name: Reader(name) for name in ("xgb", "lgb")}
ORIGINAL = {name: READERS[name].run(copy.deepcopy(doc)) for name, doc in
            (("xgb", XGB_DOC), ("lgb", LGB_DOC))}


def margin(trees, X):
    """Sum of the leaf values the rows reach, per output."""
    out = np.zeros((X.shape[0], 1 + max((t.output for t in trees), default=0)))  # no trees: zeros
    for tree in trees:
        node = walk_tree(tree, X)
        assert np.all(tree.is_leaf[node])
        out[:, tree.output] += tree.value[node, 0]
    return out


def test_unmutated_trees_give_the_libraries_own_raw_scores():
    # the reference the mutated models are compared with is the library's model
    xgb_raw = XGBM.predict(X, output_margin=True)
    lgb_raw = LGBM.predict(X, raw_score=True)
    for trees, raw in ((ORIGINAL["xgb"][0], xgb_raw), (ORIGINAL["lgb"][0], lgb_raw)):
        diff = margin(trees, X)[:, 0] - raw
        np.testing.assert_allclose(diff, diff[0], atol=1e-5)  # up to base_score


PATHS = {"xgb": json_paths(XGB_DOC)[1:], "lgb": json_paths(LGB_DOC)[1:]}

NUMBERS = st.one_of(st.integers(-3, 20), st.sampled_from([-1, 0, 1, 2**31, -(2**31), 2**63, 10**9, 10**30]),
                    st.floats(allow_nan=True, allow_infinity=True, width=64))
OTHERS = st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.just([]), st.just({}),
                   st.lists(st.integers(-2, 5), max_size=3), st.sampled_from(["1||2", "nan", "1e400", "-0", "<=", "=="]))


@st.composite
def mutations(draw, library):
    """(mutated document, the path changed, whether trees and encoding may be the same)."""
    doc = copy.deepcopy(XGB_DOC if library == "xgb" else LGB_DOC)
    kind = draw(st.sampled_from(["number", "drop", "type", "stringify", "cut"]))
    if kind == "cut" and library == "xgb":
        text = json.dumps(XGB_DOC).encode()
        return text[: draw(st.integers(0, len(text) - 1))], ("text",)
    path = draw(st.sampled_from(PATHS[library]))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, old = path[-1], parent[path[-1]]
    if kind == "drop":
        del parent[key]
    elif kind == "cut":  # a list or string cut short
        if isinstance(old, (list, str)) and len(old):
            parent[key] = old[: draw(st.integers(0, len(old) - 1))]
        else:
            del parent[key]
    elif kind == "number":
        parent[key] = draw(NUMBERS)
    elif kind == "type":
        parent[key] = draw(OTHERS)
    else:  # the same value written as text (XGBoost writes many numbers as strings)
        parent[key] = str(old) if not isinstance(old, str) else _number_or_text(old)
    return doc, path


def _number_or_text(text):
    try:
        return json.loads(text)
    except ValueError:
        return [text]


def same_trees(a, b):
    if len(a) != len(b):
        return False
    for s, t in zip(a, b):
        for name in ("children_left", "children_right", "feature", "threshold", "kind", "cat_ptr",
                     "cat_codes", "missing_right", "value"):
            u, v = getattr(s, name), getattr(t, name)
            if u.shape != v.shape or not np.array_equal(u, v, equal_nan=True):
                return False
        if s.output != t.output:
            return False
    return True


def check_mutation(library, mutated):
    doc, path = mutated
    tracemalloc.start()
    try:
        try:
            with defrag.max_memory(PEAK_LIMIT_BYTES // 2):
                trees, encoding, predicted = READERS[library].run(doc)
        except (ValueError, TypeError) as exc:
            hypothesis.event(f"rejected: {type(exc).__name__}")
            return
        finally:
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT_BYTES, (path, peak)
    scores = margin(trees, X)  # every row reaches a leaf of every tree
    assert scores.shape[0] == X.shape[0]
    assert predicted.shape == (X.shape[0],)
    original_trees, original_encoding, original_predicted = ORIGINAL[library]
    unchanged = same_trees(trees, original_trees) and not ENCODING_KEYS.intersection(map(str, path)) \
        and np.array_equal(encoding.categorical, original_encoding.categorical)
    hypothesis.event("read: model unchanged" if unchanged else "read: model changed")
    if unchanged:
        np.testing.assert_array_equal(predicted, original_predicted, err_msg=str(path))


def test_lightgbm_category_code_of_1e9_is_refused_by_the_memory_guard():
    # found by the long fuzz run: codes go up to MAX_CATEGORY = 2**31 - 1 (LightGBM's own
    # bound) and a set is a bitset up to its largest code (code / 8 bytes: 125 MB for 1e9,
    # built twice); the bitsets are now checked against the memory limit before allocation
    doc = copy.deepcopy(LGB_DOC)
    node = next(n for t in doc["tree_info"] for n in walk_dump(t["tree_structure"])
                if n.get("decision_type") == "==")
    node["threshold"] = "1||1000000000"
    tracemalloc.start()
    try:
        with defrag.max_memory(PEAK_LIMIT_BYTES // 2), pytest.raises(DefragMemoryError) as info:
            READERS["lgb"].run(doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT_BYTES // 4, peak
    msg = str(info.value)
    assert "category sets (largest category code 1000000000)" in msg and "119 MB" in msg
    assert "limit of 50 MB" in msg and "category codes numbered 0 .. n_categories - 1" in msg
    # a large code whose bitset fits the limit is read (and kept in the set)
    node["threshold"] = "1||3||1000000"
    trees, _, _ = READERS["lgb"].run(doc)
    assert any(1000000 in t.cat_codes for t in trees)


def walk_dump(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if "split_index" in n:
            stack += [n["left_child"], n["right_child"]]


def test_xgboost_tree_output_outside_the_model_is_rejected():
    # found by the long fuzz run: tree_info 2**31 was read and sized arrays by it
    for output in (2**31, -2, 1):  # the binary model has one output
        doc = copy.deepcopy(XGB_DOC)
        doc["learner"]["gradient_booster"]["model"]["tree_info"][0] = output
        with pytest.raises(ValueError, match="tree_info"):
            READERS["xgb"].run(doc)


@given(mutations("xgb"))
def test_mutated_xgboost_json_is_read_or_rejected(mutated):
    check_mutation("xgb", mutated)


@given(mutations("lgb"))
def test_mutated_lightgbm_dump_is_read_or_rejected(mutated):
    check_mutation("lgb", mutated)
