"""The paper's baselines (defrag.baselines): rules consistent with predictions, Node
Harvest's weights against generic solvers, every source library, NaN, bad input."""
import pickle

import numpy as np
import pytest
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier, RandomForestClassifier,
                              RandomForestRegressor)

from defrag import DefragModel
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest
from defrag.baselines._paths import ConditionMaker
from defrag.baselines.intrees import discretize
from defrag.baselines.node_harvest import harvest_weights

from conftest import tabular_data, xor_data

LISTS = (BornAgainTree, DepthTwoTree, InTrees)  # rules_.predict is the model's predict
ALL = LISTS + (NodeHarvest,)
FAST = {BornAgainTree: dict(depth_grid=(2, 4), cv=3, n_generated=30, random_state=0),
        NodeHarvest: dict(random_state=0), DepthTwoTree: dict(random_state=0), InTrees: {}}


def make(cls, est, **kw):
    return cls(est, **{**FAST[cls], **kw})


@pytest.fixture(scope="module")
def xor_small():
    Xtr, ytr, Xte, yte = xor_data(1, n=300)
    rf = RandomForestClassifier(n_estimators=20, min_samples_leaf=5, random_state=0).fit(Xtr, ytr)
    return rf, Xtr, ytr, Xte, yte


@pytest.fixture(scope="module")
def regression_small():
    Xtr, ytr, Xte, yte = xor_data(2, n=300, regression=True)
    rf = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=0).fit(Xtr, ytr)
    return rf, Xtr, ytr, Xte, yte


@pytest.mark.parametrize("cls", LISTS)
@pytest.mark.parametrize("case", ["xor_small", "regression_small"])
def test_rules_predict_as_the_model(cls, case, request):
    est, Xtr, ytr, Xte, yte = request.getfixturevalue(case)
    model = make(cls, est).fit(Xtr, ytr)
    for X in (Xtr, Xte):
        assert np.array_equal(model.rules_.predict(X), model.predict(X))
    scores = model.evaluate(Xte, yte)
    keys = set(DefragModel(est, n_restarts=1, random_state=0).fit(Xtr, ytr).evaluate(Xte, yte))
    assert set(scores) == keys - {"error_mixture_map"}
    assert scores["n_regions"] == model.n_regions_ >= 1
    assert scores["regions_reached"] <= scores["n_regions"]
    if cls is not InTrees:  # a tree's leaves: one rule per point
        assert scores["overlap_share"] == 0.0
    if case == "xor_small":
        proba = model.predict_proba(Xte)
        assert proba.shape == (len(Xte), 2) and np.allclose(proba.sum(axis=1), 1.0)
        assert np.array_equal(model.classes_[np.argmax(proba, axis=1)], model.predict(Xte))


def test_depth_two_tree(xor_small, regression_small):
    for est, Xtr, ytr, Xte, _ in (xor_small, regression_small):
        model = DepthTwoTree(est, random_state=0).fit(Xtr, ytr)
        assert model.n_regions_ == len(model.rules_.rules) <= 4
        assert all(len(r.conditions) <= 2 for r in model.rules_.rules)
        # the tree of scikit-learn, fitted to y or to the ensemble's predictions
        from sklearn.base import is_classifier
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        Tree = DecisionTreeClassifier if is_classifier(est) else DecisionTreeRegressor
        for target, fit_y in (("y", ytr), ("ensemble", est.predict(Xtr))):
            ours = DepthTwoTree(est, target=target, random_state=0).fit(Xtr, ytr)
            ref = Tree(max_depth=2, random_state=0).fit(Xtr, fit_y)
            # the same tree on the training rows; elsewhere the printed thresholds (the
            # shortest decimals with the same training split) decide, as the rules say
            # (regression: the values rounded to the decimals printed)
            tol = 0.0 if ours.rules_.decimals is None else 0.5 * 10.0 ** -ours.rules_.decimals
            assert np.allclose(ours.predict(Xtr), ref.predict(Xtr), rtol=0, atol=tol + 1e-12)
            assert np.array_equal(ours.predict(Xte), ours.rules_.predict(Xte))
    assert DepthTwoTree(xor_small[0], max_depth=1).fit(*xor_small[1:3]).n_regions_ == 2


def test_born_again_tree_cross_validates_the_depth(xor_small):
    est, Xtr, ytr, Xte, yte = xor_small
    model = BornAgainTree(est, n_generated=30, random_state=0).fit(Xtr, ytr)
    assert model.max_depth_ in (2, 3, 4, 6, 8, 10)
    assert sorted(model.cv_errors_) == [2, 3, 4, 6, 8, 10]
    assert model.cv_errors_[model.max_depth_] == min(model.cv_errors_.values())
    assert max(len(r.conditions) for r in model.rules_.rules) <= model.max_depth_
    # the same random_state gives the same tree; the tree mimics the forest
    again = BornAgainTree(est, n_generated=30, random_state=0).fit(Xtr, ytr)
    assert str(again.rules_) == str(model.rules_)
    assert model.evaluate(Xte, yte)["fidelity"] > 0.85
    fixed = BornAgainTree(est, max_depth=3, n_generated=30, random_state=0).fit(Xtr, ytr)
    assert fixed.max_depth_ == 3 and fixed.cv_errors_ == {} and fixed.n_regions_ <= 8


def test_intrees_levels_follow_r_quantile_type_3():
    # R: quantile(1:10, c(1/3, 2/3), type = 3) is (3, 7): L1 <= 3 < L2 <= 7 < L3
    assert discretize(np.arange(1.0, 11.0), 3).tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]


def _reference_learner(cover, pred, lengths, y, min_freq):
    """buildLearner of the R package, one rule at a time over index sets."""
    n = y.size
    left = set(range(n))
    rows = [set(np.flatnonzero(cover[:, j])) for j in range(cover.shape[1])]
    chosen = []
    while True:
        rest = np.bincount(y[sorted(left)], minlength=y.max() + 1)
        rest_err = 1 - rest.max() / len(left)
        best = None
        for j, r in enumerate(rows):
            if len(r) / n < min_freq or not r:
                continue
            err = 1 - sum(y[i] == pred[j] for i in r) / len(r)
            key = (err, -len(r) / n, lengths[j], j)
            best = key if best is None or key < best else best
        if best is None or best[0] >= rest_err:
            return chosen, int(np.argmax(rest))
        j = best[3]
        chosen.append(j)
        left -= rows[j]
        rows = [r - rows[j] for r in rows]
        if not left:
            return chosen, int(np.argmax(np.bincount(y)))


def test_intrees_learner_against_a_plain_reference():
    rng = np.random.default_rng(0)
    n, R = 120, 40
    cover = rng.random((n, R)) < 0.2
    y = rng.integers(0, 3, n)
    pred = rng.integers(0, 3, R)
    lengths = rng.integers(1, 4, R)
    got = InTrees(min_freq=0.02)._learner(cover, lengths, pred, y, 3)
    assert got == _reference_learner(cover, pred, lengths, y, 0.02)
    assert len(got[0]) >= 2


def test_intrees_pruning_against_a_plain_reference(xor_small):
    est, Xtr, ytr, _, _ = xor_small
    model = InTrees(est)
    fitting = model._prepare(Xtr, ytr)
    maker = ConditionMaker(fitting.names, fitting.encoding, True)
    rules = model._extract(fitting.source)[:80]
    counts = model._counts(maker, rules, Xtr, ytr, 2)
    pred = np.argmax(counts, axis=1)
    err = model._error(counts, pred)
    got = model._prune(maker, rules, pred, err, Xtr, ytr, 2)
    dropped = 0
    for j, rule in enumerate(rules):  # pruneSingleRule, one rule and one condition at a time
        current = list(rule)
        for i in reversed(range(len(rule))):
            if len(current) <= 1:
                break
            candidate = [a for a in current if a is not rule[i]]
            covered = maker.cover([tuple(candidate)], Xtr)[:, 0]
            new_err = 1 - np.round(np.mean(ytr[covered] == pred[j]), 3)
            if new_err - err[j] <= 0.05:
                current = candidate
        assert got[j] == tuple(current)
        dropped += len(rule) - len(current)
    assert dropped > 0


def test_intrees_prunes_and_builds_a_list(xor_small):
    est, Xtr, ytr, Xte, yte = xor_small
    model = InTrees(est).fit(Xtr, ytr)
    assert model.n_extracted_ > model.n_regions_ - 1 >= 1
    assert all(len(r.conditions) <= 6 for r in model.rules_.rules)
    # no decay allowed: rules keep more conditions
    strict = InTrees(est, max_decay=0.0).fit(Xtr, ytr)
    n_cond = lambda m: sum(len(r.conditions) for r in m.rules_.rules) / len(m.rules_.rules)  # noqa: E731
    assert n_cond(strict) >= n_cond(model)
    # the list's rules overlap (Table 3): most rows are held by several rules
    assert model.evaluate(Xte, yte)["overlap_share"] > 0.5
    # regression: the levels' means are its predictions
    Xr, yr, _, _ = xor_data(3, n=300, regression=True)
    rr = RandomForestRegressor(n_estimators=10, random_state=0).fit(Xr, yr)
    reg = InTrees(rr, n_levels=4).fit(Xr, yr)
    assert set(np.unique(reg.predict(Xr))) <= set(reg.levels_)
    assert reg.levels_.size == 4


def _harvest_problem(model, X, y):
    maker = ConditionMaker(["x0", "x1"], model.encoding_, True)
    member = maker.cover(model.candidates_, X).astype(np.float64)
    return member, member * model.node_means_[None, :], y.astype(np.float64)


def test_node_harvest_weights_solve_the_problem():
    from scipy.optimize import linprog, minimize

    Xtr, ytr, _, _ = xor_data(4, n=300)
    rf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(Xtr, ytr)
    model = NodeHarvest(rf, nodesize=5).fit(Xtr, ytr)
    member, I, y = _harvest_problem(model, Xtr, ytr)
    w = model.coef_
    p = w.size
    root = p - 1
    assert np.all(member[:, root] == 1) and model.candidates_[root] == ()
    assert np.abs(member @ w - 1).max() < 1e-8  # the weights of each point's nodes sum to 1
    assert w.min() >= -1e-8 and w[root] >= 0.01 - 1e-8

    def objective(v):
        return float(np.sum((y - I @ v) ** 2))

    lb = np.zeros(p)
    lb[root] = 0.01
    A = np.unique(member, axis=0)
    rng = np.random.default_rng(0)
    for _ in range(3):  # random feasible points: vertices of the feasible set
        lp = linprog(rng.normal(size=p), A_eq=A, b_eq=np.ones(A.shape[0]),
                     bounds=list(zip(lb, [None] * p)), method="highs")
        assert lp.status == 0
        assert objective(w) <= objective(lp.x) + 1e-9
    # scipy's generic solver on the same problem (independent constraint rows)
    _, s, vt = np.linalg.svd(A)
    from scipy.linalg import qr

    rank = int(np.sum(s > 1e-9 * s[0]))
    rows = np.sort(qr(A.T, pivoting=True)[2][:rank])
    start = np.zeros(p)
    start[root] = 1.0
    slsqp = minimize(objective, start, jac=lambda v: -2 * I.T @ (y - I @ v), method="SLSQP",
                     bounds=list(zip(lb, [None] * p)),
                     constraints=[{"type": "eq", "fun": lambda v: A[rows] @ v - 1, "jac": lambda v: A[rows]}],
                     options={"maxiter": 1000, "ftol": 1e-12})
    assert np.abs(A @ slsqp.x - 1).max() < 1e-6
    assert objective(w) <= objective(slsqp.x) * (1 + 1e-6) + 1e-9
    # harvest_weights alone: the same weights
    assert np.allclose(harvest_weights(member, model.node_means_, y, root), w, atol=1e-6)


def test_node_harvest_fits_targets_of_any_scale():
    # y of about 1e8: the least distance form's matrix (the nodes' means squared, against a
    # ridge of 1e-4) is singular to working precision, and its Cholesky factor raised
    # LinAlgError; the weights come from the slower solver, the same fit as at scale 1
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=50)
    hgb = HistGradientBoostingRegressor(max_iter=5, random_state=0)
    fits = [NodeHarvest(hgb.fit(X, y * scale)).fit(X, y * scale) for scale in (1.0, 1e8)]
    assert fits[1].weights_.min() >= -1e-8
    assert len(fits[1].rules_.rules) == len(fits[0].rules_.rules)
    assert np.allclose(fits[1].predict(X) / 1e8, fits[0].predict(X), rtol=1e-4, atol=1e-4)


def test_node_harvest_predicts_the_weighted_mean_of_its_nodes(xor_small, regression_small):
    for est, Xtr, ytr, Xte, yte in (xor_small, regression_small):
        model = NodeHarvest(est).fit(Xtr, ytr)
        assert model.n_regions_ == len(model.rules_.rules) == model.weights_.size - 1
        w = model.weights_
        assert np.all(np.diff(w[:-1]) <= 0) and np.all(w >= 0.01 * w.max() - 1e-12) or w[-1] >= 0.01 - 1e-9
        cover = model.rules_.covers(Xte).astype(float)  # the kept nodes but the root
        means = model.node_means_[model._kept]
        num = cover @ (w[:-1] * means[:-1]) + w[-1] * means[-1]
        den = cover @ w[:-1] + w[-1]
        value = model._harvest(model._check_X(Xte))
        assert np.allclose(value, num / den)
        if est is xor_small[0]:
            # scikit-learn's convention: positive for classes_[1]
            assert np.allclose(model.decision_function(Xte), value - 0.5)
            assert np.array_equal(model.predict(Xte), (value > 0.5).astype(int))
            assert np.allclose(model.predict_proba(Xte)[:, 1], np.clip(value, 0, 1))
        else:
            assert np.allclose(model.predict(Xte), value)
            assert not hasattr(model, "decision_function")  # a regressor has none


def test_node_harvest_refuses_more_than_two_classes():
    X, y = tabular_data(3, nan=0.0)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="3 classes"):
        NodeHarvest(rf).fit(X, y)


def _sources():
    yield "forest", lambda X, y: RandomForestClassifier(n_estimators=8, random_state=0).fit(X, y)
    yield "extra", lambda X, y: ExtraTreesClassifier(n_estimators=8, random_state=0).fit(X, y)
    yield "gb", lambda X, y: GradientBoostingClassifier(n_estimators=8, random_state=0).fit(X, y)
    yield "hist", lambda X, y: HistGradientBoostingClassifier(max_iter=8, random_state=0).fit(X, y)
    yield "gb-reg", lambda X, y: GradientBoostingRegressor(n_estimators=8, random_state=0).fit(X, y)


def _external(name):
    if name == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return lambda X, y: xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
    lgb = pytest.importorskip("lightgbm")
    return lambda X, y: lgb.LGBMClassifier(n_estimators=8, num_leaves=8, verbose=-1).fit(X, y)


@pytest.mark.parametrize("source", [n for n, _ in _sources()] + ["xgboost", "lightgbm"])
@pytest.mark.parametrize("cls", ALL)
def test_every_source_library(source, cls):
    X, y, Xte, yte = xor_data(5, n=200)
    build = dict(_sources()).get(source) or _external(source)
    if source == "gb-reg":
        y, yte = y.astype(float), yte.astype(float)
    est = build(X, y)
    model = make(cls, est).fit(X, y)
    pred = model.predict(Xte)
    assert pred.shape == (len(Xte),)
    if cls is not NodeHarvest:
        assert np.array_equal(model.rules_.predict(Xte), pred)
    assert model.evaluate(Xte, yte)["n_regions"] == model.n_regions_
    restored = pickle.loads(pickle.dumps(model))
    assert np.array_equal(restored.predict(Xte), pred)


@pytest.mark.parametrize("cls", ALL)
def test_missing_values_as_the_source_model(cls):
    X, y = tabular_data(2, seed=1, n=300)
    rf = RandomForestClassifier(n_estimators=8, min_samples_leaf=3, random_state=0).fit(X, y)
    model = make(cls, rf).fit(X, y)
    assert np.isnan(X).any()
    pred = model.predict(X)
    if cls is not NodeHarvest:
        assert np.array_equal(model.rules_.predict(X), pred)
    assert model.score(X, y) > 0.6
    Xc = np.nan_to_num(X)
    gb = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(Xc, y)
    with pytest.raises(ValueError, match="NaN"):
        make(cls, gb).fit(X, y)
    fitted = make(cls, gb).fit(Xc, y)
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict(X)


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_as_defrag_model(cls, xor_small):
    est, Xtr, ytr, Xte, _ = xor_small

    def message(build, *args):
        with pytest.raises((ValueError, TypeError)) as info:
            build(*args)
        return type(info.value), str(info.value)

    for bad_X in (np.where(np.arange(Xtr.size).reshape(Xtr.shape) == 3, np.inf, Xtr), Xtr[:, :1]):
        ours = message(lambda X: make(cls, est).fit(X, ytr), bad_X)
        theirs = message(lambda X: DefragModel(est, n_restarts=1).fit(X, ytr), bad_X)
        assert ours == theirs
    assert message(lambda: make(cls, est).fit(Xtr, ytr[:-1])) == \
        message(lambda: DefragModel(est, n_restarts=1).fit(Xtr, ytr[:-1]))
    with pytest.raises(TypeError, match="supported"):
        make(cls, object()).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="needs an estimator"):
        make(cls, None).fit(Xtr, ytr)
    with pytest.raises(TypeError, match="trees"):
        make(cls, np.array([[0, 0.5], [1, 0.5]])).fit(Xtr, ytr)
    with pytest.raises(TypeError, match="numeric"):
        make(cls, est).fit(np.array([["a", "b"]] * 5), ytr[:5])
    fitted = make(cls, est).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(Xte[:, :1])
    with pytest.raises(ValueError, match="y has"):
        fitted.evaluate(Xte, ytr[:3])


@pytest.mark.parametrize("cls, param, value", [
    (BornAgainTree, "max_depth", 0), (BornAgainTree, "depth_grid", ()), (BornAgainTree, "p_alt", 0.0),
    (BornAgainTree, "cv", 1), (InTrees, "max_length", 0), (InTrees, "type_decay", 3),
    (InTrees, "min_freq", 2.0), (InTrees, "n_levels", 1), (NodeHarvest, "max_depth", 0),
    (NodeHarvest, "weight_threshold", 1.0), (DepthTwoTree, "max_depth", 0), (DepthTwoTree, "target", "x")])
def test_bad_parameters(cls, param, value, xor_small):
    est, Xtr, ytr, _, _ = xor_small
    with pytest.raises(ValueError, match=param):
        cls(est, **{param: value}).fit(Xtr, ytr)


def test_dataframe_categorical_features():
    pd = pytest.importorskip("pandas")
    from conftest import categorical_frame

    X, y = categorical_frame(2, n=300)
    hist = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    for cls in ALL:
        model = make(cls, hist).fit(X, y)
        pred = model.predict(X)
        if cls is not NodeHarvest:
            assert np.array_equal(model.rules_.predict(X), pred)
        assert model.score(X, y) > 0.6, cls
        assert isinstance(X, pd.DataFrame) and list(model.feature_names_in_) == list(X.columns)
