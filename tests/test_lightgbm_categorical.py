"""LightGBM categorical models: defrag's split bits reproduce LightGBM's own leaves.

LightGBM's predictor (include/LightGBM/tree.h, src/c_api.cpp) reads a row so:
  * any |x| <= kZeroThreshold (1e-35f) is dropped from the row, i.e. read as 0;
  * a NumPy array that is not float32 / float64 (integers) is converted to float32;
  * CategoricalDecision: NaN goes right; else the value is cast to int (truncated
    toward zero: -0.5 and 2.7 are categories 0 and 2), a negative int goes right, and
    the category goes left when its bit is set in the node's bitset (the dump lists
    the set bits as "a||b||c"), right otherwise (beyond the bitset included);
    missing_type and zero-as-missing play no part in a categorical decision;
  * NumericalDecision: NaN is 0 unless missing_type is NaN; missing_type Zero sends
    zero (and NaN) the default way; else left when x <= threshold. Thresholds next to
    zero are +-kZeroThreshold.
A DataFrame's pandas categorical columns are coded by the training categories
(``pandas_categorical``), an unseen one becoming NaN; ordered ones are numeric features.

Every test walks every tree of the model with defrag's split bits of the fitted
DefragModel (``model.splits_``, on the X it encodes) and compares the leaf with
``predict(pred_leaf=True)`` and the summed leaf values with ``predict(raw_score=True)``
(``lightgbm_walk`` of test_categorical), on the training data and on data with the
values LightGBM reads in its own way.
"""
import re

import numpy as np
import pandas as pd
import pytest

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

from test_categorical import lightgbm_walk  # noqa: E402
from defrag import Condition, DefragModel  # noqa: E402
from defrag.sources import adapt  # noqa: E402

ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold
PARAMS = dict(n_estimators=12, num_leaves=8, min_child_samples=5, min_data_per_group=5, cat_smooth=1.0,
              verbose=-1, deterministic=True, force_row_wise=True, n_jobs=1)


def coded_data(n_cat, seed, n=2500, signed=True):
    """Category codes 0 .. n_cat - 1 (5% NaN), a signed (or non-negative) feature with many
    exact zeros (LightGBM then splits at +-1e-35), a noise feature; the target: a set of
    categories xor the sign of x1, zero on its own."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, n_cat, n).astype(float)
    sign = rng.choice([-1.0, 0.0, 1.0], n)
    x = (sign if signed else np.abs(sign)) * (0.1 + rng.random(n))
    x[rng.random(n) < 0.25] = 0.0
    good = rng.choice(n_cat, n_cat // 2, replace=False)
    y = (np.isin(c, good) ^ (x < 0)) + 2.0 * (x == 0)
    c[rng.random(n) < 0.05] = np.nan
    X = np.column_stack([c, x, rng.normal(size=n)])
    return X, y.astype(float) + 0.1 * rng.normal(size=n)


def odd_values(X, n_cat):
    """X with the values LightGBM reads its own way in the categorical column 0 (unseen
    codes, codes beyond int, negative, non-integer, NaN, tiny) and the zero thresholds'
    neighbourhood in column 1 (+-1e-35 itself, tiny values, -0.0)."""
    X = X.copy()
    odd = [n_cat, n_cat + 7, 1000, 3e9, -1, -3, -0.5, -0.99, 0.5, 2.7, n_cat - 0.5, np.nan, 1e-36, -0.0]
    for i, v in enumerate(odd):
        X[i::len(odd) + 3, 0] = v
    for i, v in enumerate([ZERO, -ZERO, 5e-36, -5e-36, -0.0, 2 * ZERO, -2 * ZERO]):
        X[i::11, 1] = v
    return X


def read_splits(m):
    """The split table read from m's model (each split with its own missing direction: the
    fit drops directions no training row takes, and the data here put NaN where training
    had none), with the input encoding m bound at fit."""
    table = adapt(m.estimator).split_table()
    table.encoding = m.splits_.encoding
    return table


def has_set_splits(splits, more_than=1):
    """The table has categorical splits whose sets hold more than one category (LightGBM's
    many-vs-many splits, for features with more than max_cat_to_onehot categories)."""
    return any(splits.set_of(l).size > more_than for l in np.flatnonzero(splits.kind != 0))


def zero_thresholds(booster):
    """The +-1e-35 thresholds in the model's dump."""
    found, stack = set(), [t["tree_structure"] for t in booster.dump_model()["tree_info"]]
    while stack:
        node = stack.pop()
        if "split_index" in node:
            if node["decision_type"] == "<=" and abs(float(node["threshold"])) == ZERO:
                found.add(float(node["threshold"]))
            stack += [node["left_child"], node["right_child"]]
    return found


@pytest.mark.parametrize("n_cat", [6, 12])
@pytest.mark.parametrize("zero_as_missing", [False, True])
@pytest.mark.parametrize("Model", [lgb.LGBMRegressor, lgb.LGBMClassifier])
def test_numpy_codes_reach_lightgbm_leaves(Model, zero_as_missing, n_cat):
    X, y = coded_data(n_cat, seed=n_cat)
    if Model is lgb.LGBMClassifier:
        y = np.digitize(y, [0.5, 1.5])  # three classes: one tree per class and iteration
    model = Model(**PARAMS, zero_as_missing=zero_as_missing).fit(X, y, categorical_feature=[0])
    m = DefragModel(model, n_restarts=1, random_state=0, form="list").fit(X)
    assert has_set_splits(m.splits_)
    assert m.splits_.encoding.zero_missing[1] == zero_as_missing
    lightgbm_walk(model, read_splits(m), X)
    lightgbm_walk(model, read_splits(m), odd_values(X, n_cat))
    np.testing.assert_array_equal(m.predict(odd_values(X, n_cat)).shape, (len(X),))  # no ValueError


def test_zero_thresholds_and_tiny_values():
    # both zero thresholds, x <= -1e-35 (x < 0) and x <= 1e-35 (x <= 0): LightGBM reads
    # -1e-35 itself (and every |x| <= 1e-35) as 0, so -1e-35 goes where 0 goes
    X, y = coded_data(8, seed=1)
    model = lgb.LGBMRegressor(**PARAMS).fit(X, y, categorical_feature=[0])
    assert zero_thresholds(model.booster_) == {ZERO, -ZERO}
    m = DefragModel(model, n_restarts=1, random_state=0, form="list").fit(X)
    T = odd_values(X, 8)
    lightgbm_walk(model, read_splits(m), T)
    leaves = model.booster_.predict(T, pred_leaf=True)
    rows = np.flatnonzero(T[:, 1] == -ZERO)
    zero = T[rows].copy()
    zero[:, 1] = 0.0
    np.testing.assert_array_equal(leaves[rows], model.booster_.predict(zero, pred_leaf=True))
    np.testing.assert_array_equal(m.predict(T[rows]), m.predict(zero))


@pytest.mark.parametrize("zero_as_missing", [False, True])
def test_dataframe_categories_reach_lightgbm_leaves(zero_as_missing):
    rng = np.random.default_rng(3)
    n = 2500
    colours = [f"c{i}" for i in range(9)]
    colour = rng.choice(colours, n)
    size = rng.choice([3, 7, 10, 42, 5, 8], n)
    grade = rng.choice(["low", "mid", "high"], n)
    x = rng.choice([-1.0, 0.0, 1.0], n) * rng.random(n)
    X = pd.DataFrame({
        "colour": pd.Categorical(colour, categories=colours + ["never"]),
        "x": x,
        "size": pd.Categorical(size, categories=[3, 5, 7, 8, 10, 42]),
        # ordered: LightGBM takes its codes as a numeric feature
        "grade": pd.Categorical(grade, categories=["low", "mid", "high"], ordered=True),
    })
    for col in X.columns:
        X.loc[rng.random(n) < 0.05, col] = np.nan
    y = (np.isin(colour, ["c1", "c4", "c5", "c8"]) ^ (x < 0)) + (size == 42) + 0.5 * (grade == "high") \
        + 2.0 * (x == 0)
    model = lgb.LGBMRegressor(**PARAMS, zero_as_missing=zero_as_missing).fit(X, y)
    m = DefragModel(model, n_restarts=1, random_state=0, form="list").fit(X)
    assert m.splits_.categorical[[0, 2]].all() and not m.splits_.categorical[[1, 3]].any()
    assert has_set_splits(m.splits_)
    lightgbm_walk(model, read_splits(m), X)
    # categories in another order, unseen ones, NaN: LightGBM codes the frame by its
    # training categories (an unseen one is NaN, which goes right)
    X2 = X.copy()
    X2["colour"] = X2["colour"].cat.reorder_categories(list(reversed(X["colour"].cat.categories)))
    X2["colour"] = X2["colour"].cat.add_categories(["purple"])
    X2.loc[::7, "colour"] = "purple"
    X2.loc[1::7, "colour"] = "never"
    X2["size"] = X2["size"].cat.add_categories([99])
    X2.loc[2::7, "size"] = 99
    X2["grade"] = X2["grade"].cat.set_categories(["high", "mid", "low", "top"], ordered=True)
    X2.loc[3::7, "grade"] = "top"
    X2.loc[4::9, "x"] = -ZERO
    lightgbm_walk(model, read_splits(m), X2)
    np.testing.assert_array_equal(m.predict(X2).shape, (n,))


def test_integer_arrays_are_read_as_float32():
    # LightGBM converts an integer array to float32: 1_700_000_070 reads as 1_700_000_128
    rng = np.random.default_rng(4)
    n = 2000
    X = np.column_stack([rng.integers(0, 7, n), rng.integers(1_700_000_000, 1_700_010_000, n)])
    y = np.isin(X[:, 0], [1, 2, 5]) + (X[:, 1] % 2000 > 1000)
    model = lgb.LGBMRegressor(**PARAMS).fit(X.astype(float), y, categorical_feature=[0])
    m = DefragModel(model, n_restarts=1, random_state=0, form="list").fit(X)
    T = X.copy()
    T[:, 1] += rng.integers(-64, 64, n)  # values between float32 neighbours, as int64
    assert not np.array_equal(model.predict(T), model.predict(T.astype(float)))  # the case arises
    lightgbm_walk(model, read_splits(m), T)
    lightgbm_walk(model, read_splits(m), T.astype(float))


# ---------------------------------------------------------------------- printed rules

_BOUND = r"(-?[0-9.e+-]+|-?inf)"


def holds_as_printed(cond, column):
    """The interval condition as its text says, evaluated on raw values (NaN: missing)."""
    text = re.sub(r" \((or missing( or 0)?|except 0)\)$", "", str(cond))
    name = re.escape(cond.name)
    ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
    two = re.fullmatch(_BOUND + r" (<=?) " + name + r" (<=?) " + _BOUND, text)
    if two:
        lo, op1, op2, hi = two.groups()
        ok = ops[op1](float(lo), column) & ops[op2](column, float(hi))
    else:
        one = re.fullmatch(name + r" (<=?|>=?) " + _BOUND, text)
        assert one, text
        ok = ops[one.group(1)](column, float(one.group(2)))
    missing = np.isnan(column) | ((column == 0) if cond.zero_missing else False)
    if cond.zero_missing and "(except 0)" not in str(cond) and not cond.missing:
        assert not np.any(ok & (column == 0)), str(cond)  # the text excludes 0 itself
    return np.where(missing, cond.missing, ok)


def test_zero_thresholds_print_as_zero():
    k = ZERO
    cases = {
        (k, None, False): "x > 0", (-k, None, False): "x >= 0", (None, k, False): "x <= 0",
        (None, -k, False): "x < 0", (-k, 0.5, False): "0 <= x <= 0.5", (k, 0.5, False): "0 < x <= 0.5",
        (-3.0, -k, False): "-3 < x < 0", (-3.0, k, False): "-3 < x <= 0",
        # zero is missing: it is on neither side
        (k, None, True): "x > 0", (-k, None, True): "x > 0", (None, k, True): "x < 0",
        (None, -k, True): "x < 0", (-k, 0.5, True): "0 < x <= 0.5", (-3.0, k, True): "-3 < x < 0",
        (-3.0, 0.5, True): "-3 < x <= 0.5 (except 0)",
    }
    col = np.array([-3.5, -3.0, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, np.nan])
    for (lower, upper, zero_missing), text in cases.items():
        for missing in (False, True):
            cond = Condition(0, "x", lower, upper, missing=missing, zero_missing=zero_missing)
            expected = text if not missing else \
                text.replace(" (except 0)", "") + (" (or missing or 0)" if zero_missing else " (or missing)")
            assert str(cond) == expected
            coded = col.copy()
            if zero_missing:
                coded[coded == 0] = np.nan
            np.testing.assert_array_equal(holds_as_printed(cond, col), cond.holds(coded[:, None]), str(cond))


@pytest.mark.parametrize("zero_as_missing", [False, True])
def test_no_rule_prints_1e35(zero_as_missing):
    # zero-as-missing: a non-negative feature, split at 1e-35 (zero or missing vs positive)
    X, y = coded_data(8, seed=2, signed=not zero_as_missing)
    model = lgb.LGBMRegressor(**PARAMS, zero_as_missing=zero_as_missing).fit(X, y, categorical_feature=[0])
    assert zero_thresholds(model.booster_)
    m = DefragModel(model, n_components=12, n_restarts=3, random_state=0, form="list").fit(X)
    text = str(m)
    assert "e-35" not in text and "e-36" not in text, text
    # the conditions mean what they print, on the raw values (no |x| <= 1e-35 but 0)
    coded = m.rules_.encode(X)
    conditions = [c for r in m.rules_.rules for c in r.conditions if not c.is_set]
    assert any(c.lower is not None and abs(c.lower) == ZERO or c.upper is not None and abs(c.upper) == ZERO
               for c in conditions), text
    for cond in conditions:
        np.testing.assert_array_equal(holds_as_printed(cond, X[:, cond.feature]), cond.holds(coded), str(cond))


# ------------------------------------------------------------------------- fidelity

def category_only_data(n_cat, seed, n=2000):
    """The target is a set of categories, nothing else; a numeric noise feature with zeros."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, n_cat, n)
    x = rng.normal(size=n)
    x[rng.random(n) < 0.3] = 0.0
    good = rng.choice(n_cat, n_cat // 2, replace=False)
    return np.column_stack([c, x]).astype(float), np.isin(c, good).astype(int)


@pytest.mark.parametrize("n_cat,zero_as_missing", [(6, False), (8, True), (12, False)])
def test_lightgbm_categorical_rules_are_as_faithful_as_xgboost(n_cat, zero_as_missing):
    """On data where XGBoost's rules are exact, LightGBM's are too once its repeated
    splits keep their weight.

    LightGBM bins its inputs, so it repeats the very same categorical split in every
    tree (here 20 times), while on a separable target it goes on splitting the noise
    feature at many different thresholds (min_sum_hessian_in_leaf 1e-3; XGBoost's
    min_child_weight 1 stops it). With duplicate splits dropped (the default) the one
    categorical column is outweighed by some 30 noise columns in the mixture over the
    split bits, and the rules follow the noise (fidelity 0.93-0.97); kept, the rules
    are exact. The split bits themselves are LightGBM's leaves either way."""
    X, y = category_only_data(n_cat, seed=0)
    lgbm = lgb.LGBMClassifier(n_estimators=20, num_leaves=6, min_data_per_group=5, cat_smooth=1.0,
                              zero_as_missing=zero_as_missing, verbose=-1, deterministic=True,
                              force_row_wise=True, n_jobs=1).fit(X, y, categorical_feature=[0])
    xgbm = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, max_cat_to_onehot=1,
                             feature_types=["c", "q"], random_state=0).fit(X, y)
    assert (lgbm.predict(X) == y).all() and (xgbm.predict(X) == y).all()
    rules = {}
    for name, est, keep in (("xgboost", xgbm, False), ("lightgbm", lgbm, True), ("lightgbm-dedup", lgbm, False)):
        rules[name] = DefragModel(est, n_components=10, n_restarts=5, random_state=0,
                                  keep_duplicate_splits=keep, form="list").fit(X)
    lightgbm_walk(lgbm, read_splits(rules["lightgbm-dedup"]), X)
    lightgbm_walk(lgbm, rules["lightgbm"].splits_, X)
    fidelity = {name: m.evaluate(X, y)["fidelity"] for name, m in rules.items()}
    assert fidelity["xgboost"] == 1.0, fidelity
    assert fidelity["lightgbm"] == 1.0, (fidelity, str(rules["lightgbm"]))
    assert all("e-35" not in str(m) for m in rules.values())
