"""Rules: extraction from eta, pruning, printing, export, split-table semantics."""
import json
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesRegressor, RandomForestClassifier

from defrag import DefragModel, RuleSet, split_table_from_estimator
from defrag.rules.extract import components_bounds
from defrag.splits.table import SplitTable


def test_split_semantics_match_scikit_learn_decision_paths():
    rng = np.random.default_rng(0)
    X = rng.random((300, 3)) * 10
    y = (X[:, 0] + X[:, 1] > 10).astype(int)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    table = split_table_from_estimator(rf, keep_duplicates=True)
    Xp = table.prepare(X)
    for tree in rf.estimators_:
        t = tree.tree_
        path = tree.decision_path(X).toarray().astype(bool)
        internal = np.flatnonzero(t.children_left >= 0)
        for node in internal:
            went_right = path[:, t.children_right[node]]
            s = Xp[:, t.feature[node]] > t.threshold[node]
            visited = path[:, node]
            np.testing.assert_array_equal(went_right[visited], s[visited])
    n_internal = sum(int((e.tree_.children_left >= 0).sum()) for e in rf.estimators_)
    assert len(table) == n_internal
    assert len(split_table_from_estimator(rf)) <= n_internal


def test_float32_thresholds_are_exact_on_float64_inputs():
    from defrag.splits.table import float32_threshold

    rng = np.random.default_rng(0)
    f32 = (rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 8, 2000)).astype(np.float32)
    nxt = np.nextafter(f32, np.float32(np.inf))
    t = (f32.astype(np.float64) + nxt.astype(np.float64)) / 2  # scikit-learn style midpoints
    t = np.concatenate([t, f32.astype(np.float64), t + 1e-30, [0.0, -0.0, 1.0, -1.0]])
    t2 = float32_threshold(t)
    for x in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), t2, np.nextafter(t2, np.inf),
              t * (1 + 1e-9)):
        np.testing.assert_array_equal(x.astype(np.float32) > t, x > t2)
    # exact ties at float32 midpoints, both parities
    mids = (f32.astype(np.float64) + nxt.astype(np.float64)) / 2
    for tt in (f32.astype(np.float64), mids):
        np.testing.assert_array_equal(mids.astype(np.float32) > tt, mids > float32_threshold(tt))


def test_split_table_is_sorted_and_deduplicated():
    t = SplitTable([1, 0, 1, 0, 1], [0.5, 0.2, 0.1, 0.2, 0.5], n_features=3)
    np.testing.assert_array_equal(t.feature, [0, 1, 1])
    np.testing.assert_array_equal(t.threshold, [0.2, 0.1, 0.5])
    np.testing.assert_array_equal(t.feat_ptr, [0, 1, 3, 3])


def test_component_bounds_merge_per_feature():
    # feature 0: missing goes right at 0.1 and 0.4 (the region's side) but also right
    # at 0.8, where the region lies left; feature 1: missing goes left at 0.6 (fine)
    t = SplitTable([0, 0, 0, 1, 1], [0.1, 0.4, 0.8, 0.3, 0.6], n_features=2,
                   missing_right=[1, 1, 1, 1, 0])
    eta = np.array([1 - 1e-10, 1 - 1e-10, 1e-10, 0.5, 1e-10])
    (lower,), (upper,), (missing_ok,) = components_bounds(eta[None, :], t, 1e-6)
    np.testing.assert_array_equal(lower, [0.4, -np.inf])
    np.testing.assert_array_equal(upper, [0.8, 0.6])
    np.testing.assert_array_equal(missing_ok, [False, True])


@pytest.fixture(scope="module")
def fitted(xor_forest):
    rf, Xtr, ytr, Xte, yte = xor_forest
    cols = ["age (years)", "größe [cm]"]
    with pytest.warns(UserWarning, match="read by position"):  # the forest was fitted on an array
        m = DefragModel(rf, n_restarts=10, random_state=0, form="list").fit(pd.DataFrame(Xtr, columns=cols), ytr)
    return m, Xtr, ytr, Xte, yte, cols


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # arrays on purpose
def test_rules_support_and_coverage_are_consistent(fitted, xor_forest):
    m, Xtr, *_ = fitted
    cover = m.rules_.covers(Xtr)
    first = m.rules_.route(Xtr)[:, 0]
    # a rule list's support: the training points it is the first match for
    assert [r.support for r in m.rules_.rules] == [int(np.sum(first == j)) for j in range(len(m.rules_.rules))]
    # the paper's rules: the points each covers, pruned as in sec. 3.2
    rf, _, ytr, _, _ = xor_forest
    m = DefragModel.paper(rf, n_restarts=10, random_state=0).fit(Xtr, ytr)
    cover = m.rules_.covers(Xtr)
    for j, rule in enumerate(m.rules_.rules):
        assert rule.support == cover[:, j].sum()
        # pruning: dropping any remaining bound changes the covered count
        for i in range(len(rule.conditions)):
            others = [c for k, c in enumerate(rule.conditions) if k != i]
            ok = np.ones(len(Xtr), dtype=bool)
            for c in others:
                ok &= c.holds(Xtr)
            assert ok.sum() != rule.support


def test_printing_uses_feature_names_and_default(fitted):
    m, *_, cols = fitted
    text = str(m)
    assert "age (years)" in text and "größe [cm]" in text
    assert "otherwise y =" in text
    assert text.count(" then y = ") == m.n_regions_ - 1  # and the default
    assert list(m.feature_names_in_) == cols


def test_to_dict_is_json_ready(fitted):
    m, *_ = fitted
    d = m.rules_.to_dict()
    back = json.loads(json.dumps(d))
    assert len(back["rules"]) == len(m.rules_.rules) == m.n_regions_ - 1
    assert back["feature_names"] == ["age (years)", "größe [cm]"]
    assert all(set(r) == {"conditions", "prediction", "proba", "support", "weight", "coverage"}
               for r in back["rules"])


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # arrays on purpose
def test_ruleset_predict_uses_first_covering_rule(fitted):
    m, _, _, Xte, yte, _ = fitted
    pred = m.rules_.predict(Xte)
    cover = m.rules_.covers(Xte)
    for i in range(0, len(Xte), 37):
        hits = np.flatnonzero(cover[i])
        expected = m.rules_.rules[hits[0]].prediction if hits.size else m.rules_.default_prediction
        assert pred[i] == expected
    assert np.mean(pred == yte) > 0.8


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # arrays on purpose
def test_ruleset_kernels_match_conditions(fitted):
    m, Xtr, _, Xte, _, _ = fitted
    expected = np.stack([rule.covers(Xte) for rule in m.rules_.rules], axis=1)
    np.testing.assert_array_equal(m.rules_.covers(Xte), expected)
    # boundary values: x == upper is covered, x == lower is not
    rule = m.rules_.rules[0]
    x = Xte[:1].copy()
    for c in rule.conditions:
        x[0, c.feature] = c.upper if c.upper is not None else c.lower + 1e-9
    assert m.rules_.covers(x)[0, 0] == rule.covers(x)[0] == True  # noqa: E712
    # missing values: the C kernels follow each condition's missing flag
    Xnan = Xte.copy()
    Xnan[::3, 0] = np.nan
    Xnan[::5, 1] = np.nan
    expected = np.stack([r.covers(Xnan) for r in m.rules_.rules], axis=1)
    np.testing.assert_array_equal(m.rules_.covers(Xnan), expected)
    # a rule set whose model defined no direction for missing values refuses NaN
    strict = RuleSet(m.rules_.rules, m.rules_.default_prediction, feature_names=m.rules_.feature_names)
    if any(not c.missing for r in strict.rules for c in r.conditions):
        with pytest.raises(ValueError, match="NaN"):
            strict.predict(np.array([[np.nan, np.nan]]))
    x = Xte[:1].copy()
    x[0, 0] = rule.conditions[0].lower if rule.conditions[0].lower is not None else rule.conditions[0].upper + 1
    assert not rule.covers(x)[0] and not m.rules_.covers(x)[0, 0]
    with pytest.raises(ValueError, match="features"):
        m.rules_.covers(Xte[:, :1])


def test_dataframe_columns_must_match_at_predict(fitted):
    m, _, _, Xte, *_ = fitted
    with pytest.raises(ValueError, match=r"lacks.*'age \(years\)', 'größe \[cm\]'"):
        m.predict(pd.DataFrame(Xte, columns=["a", "b"]))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        m.predict(Xte)  # a plain array is read by position


def test_feature_names_parameter_and_regression_rules():
    rng = np.random.default_rng(0)
    X = rng.random((500, 2))
    y = np.where(X[:, 0] > 0.5, 3.0, -1.0) + 0.05 * rng.standard_normal(500)
    et = ExtraTreesRegressor(n_estimators=20, min_samples_leaf=5, random_state=0).fit(X, y)
    m = DefragModel(et, feature_names=["speed", "noise"], n_restarts=10, random_state=0, form="list").fit(X, y)
    assert "speed" in str(m)
    # the rule list: the first rule splits speed, every rule and the default predict a level
    assert 2 <= m.n_regions_ <= 3 and [c.name for c in m.rules_.rules[0].conditions] == ["speed"], str(m)
    for prediction in m.rules_.predictions():
        assert min(abs(prediction + 1.0), abs(prediction - 3.0)) < 0.1, str(m)
    assert m.score(X, y) > 0.95
    m = DefragModel.paper(et, feature_names=["speed", "noise"], n_restarts=10, random_state=0).fit(X, y)
    # The regions also model where the inputs lie (eq. 6), so the uniform 'noise'
    # feature may cut a level set into several rules; each predicts its level.
    assert 2 <= m.n_regions_ <= 10
    for rule in m.rules_.rules:
        level = -1.0 if rule.prediction < 1.0 else 3.0
        assert rule.prediction == pytest.approx(level, abs=0.1), str(m)
        speed = [c for c in rule.conditions if c.name == "speed"]
        # the rule's region lies on its level's side of speed = 0.5
        assert len(speed) == 1
        if level < 0:
            assert speed[0].upper is not None and speed[0].upper <= 0.55, str(m)
        else:
            assert speed[0].lower is not None and speed[0].lower >= 0.45, str(m)
    assert m.score(X, y) > 0.95
    with pytest.raises(AttributeError):
        m.predict_proba(X)
    with pytest.raises(ValueError, match="feature_names"):
        DefragModel(et, feature_names=["a"], n_restarts=1, form="list").fit(X, y)


def _random_ruleset(rng, n_rules, n_features, n_cond, supports_missing=True):
    from defrag import Condition, Rule

    rules = []
    for r in range(n_rules):
        conds = []
        for _ in range(n_cond):
            d = int(rng.integers(n_features))  # repeats: a rule may bound a feature twice
            lo, hi = np.sort(rng.normal(size=2)) * [1.5, 1.5]
            kind = rng.integers(3)
            conds.append(Condition(d, f"x{d}", lower=None if kind == 1 else lo,
                                   upper=None if kind == 2 else hi,
                                   missing=bool(supports_missing and rng.random() < 0.3)))
        rules.append(Rule(conds, r, support=1, weight=1.0))
    return RuleSet(rules, -1, feature_names=[f"x{d}" for d in range(n_features)],
                   supports_missing=supports_missing)


@pytest.mark.parametrize("baseline", [False, True])
@pytest.mark.parametrize("n_rules,n_features,n_cond", [(10, 28, 18), (10, 40, 18), (7, 28, 4), (3, 200, 2), (1, 1, 1)])
def test_ruleset_kernels_match_numpy(baseline, n_rules, n_features, n_cond, kernel_env):
    # dense boxes (AVX2) and per-condition evaluation (the baseline build) give the
    # same covers and first rules as the conditions read in NumPy
    if baseline:
        kernel_env(DEFRAG_NO_AVX2="1")
    rng = np.random.default_rng(n_rules * 1000 + n_features)
    rules = _random_ruleset(rng, n_rules, n_features, n_cond)
    X = rng.normal(size=(3000, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    expected = np.ones((len(X), n_rules), dtype=bool)
    for r, rule in enumerate(rules.rules):
        for c in rule.conditions:
            v = X[:, c.feature]
            holds = np.ones(len(X), bool)
            if c.lower is not None:
                holds &= v > c.lower
            if c.upper is not None:
                holds &= v <= c.upper
            expected[:, r] &= np.where(np.isnan(v), c.missing, holds)
    np.testing.assert_array_equal(rules.covers(X), expected)
    first = np.where(expected.any(axis=1), np.argmax(expected, axis=1), -1)
    np.testing.assert_array_equal(rules.predict(X), np.where(first >= 0, first, -1))
    np.testing.assert_array_equal(rules.predict(X, n_threads=2), rules.predict(X))


@pytest.mark.parametrize("baseline", [False, True])
def test_ruleset_without_missing_rule_rejects_nan(baseline, kernel_env):
    if baseline:
        kernel_env(DEFRAG_NO_AVX2="1")
    rules = _random_ruleset(np.random.default_rng(5), 10, 28, 18, supports_missing=False)
    X = np.random.default_rng(6).normal(size=(100, 28))
    rules.predict(X)
    X[50, rules.rules[0].conditions[0].feature] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rules.predict(X)


def test_ruleset_matches_dataframe_columns_by_name(fitted):
    m, Xtr, _, Xte, _, cols = fitted
    frame = pd.DataFrame(Xte, columns=cols)
    expected = m.rules_.predict(frame)
    np.testing.assert_array_equal(m.rules_.predict(frame[cols[::-1]]), expected)  # reordered
    np.testing.assert_array_equal(m.rules_.covers(frame[cols[::-1]]), m.rules_.covers(frame))
    extra = frame.assign(other=1.0)[["other"] + cols]  # a further column is ignored
    np.testing.assert_array_equal(m.rules_.predict(extra), expected)
    with pytest.raises(ValueError, match="lacks the columns.*größe"):
        m.rules_.predict(frame[[cols[0]]].assign(z=0.0))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(m.rules_.predict(Xte), expected)
    back = pickle.loads(pickle.dumps(m.rules_))
    np.testing.assert_array_equal(back.predict(frame[cols[::-1]]), expected)
