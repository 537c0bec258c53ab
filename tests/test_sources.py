"""Split tables from scikit-learn boosting models: our binary features send every
sample the way the library's own trees do."""
import numpy as np
import pytest
from sklearn.datasets import load_wine, make_friedman1
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    ExtraTreesRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from conftest import xor_data
from defrag import DefragModel, split_table_from_estimator
from defrag.sources import matched_source
from defrag.splits.table import float32_threshold


def data(n_classes, seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 0.1, 100]
    X[:, 3] = np.round(X[:, 3])  # ties
    if n_classes == 0:
        return X, X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=n)
    return X, np.digitize(X[:, 0] + 0.1 * X[:, 1], np.linspace(-1, 1, n_classes - 1))


def in_table(table, features, thresholds):
    keys = set(zip(table.feature.tolist(), table.threshold.tolist()))
    return all((int(f), float(t)) in keys for f, t in zip(features, thresholds))


@pytest.mark.parametrize("Model,n_classes", [
    (GradientBoostingRegressor, 0), (GradientBoostingClassifier, 2), (GradientBoostingClassifier, 3),
])
def test_gradient_boosting_splits_match_decision_paths(Model, n_classes):
    X, y = data(n_classes)
    gb = Model(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    table = split_table_from_estimator(gb)
    trees = np.ravel(gb.estimators_)
    assert len(trees) == 15 * (1 if n_classes <= 2 else n_classes)
    for tree in trees:
        t = tree.tree_
        path = tree.decision_path(X).toarray().astype(bool)
        internal = np.flatnonzero(t.children_left >= 0)
        t2 = float32_threshold(t.threshold[internal])
        assert in_table(table, t.feature[internal], t2)
        for node, thr in zip(internal, t2):
            seen = path[:, node]
            went_right = path[:, t.children_right[node]]
            np.testing.assert_array_equal(went_right[seen], (X[:, t.feature[node]] > thr)[seen])


@pytest.mark.parametrize("Model,n_classes", [
    (HistGradientBoostingRegressor, 0), (HistGradientBoostingClassifier, 2),
    (HistGradientBoostingClassifier, 3),
])
def test_hist_gradient_boosting_traversal_reproduces_raw_prediction(Model, n_classes):
    X, y = data(n_classes)
    hgb = Model(max_iter=10, random_state=0).fit(X, y)
    table = split_table_from_estimator(hgb)
    raw = np.zeros((len(X), len(hgb._predictors[0])))
    for per_class in hgb._predictors:
        for c, predictor in enumerate(per_class):
            nodes = predictor.nodes
            internal = np.flatnonzero(nodes["is_leaf"] == 0)
            assert in_table(table, nodes["feature_idx"][internal], nodes["num_threshold"][internal])
            node = np.zeros(len(X), dtype=int)
            for _ in range(64):  # walk every sample down with s = x > threshold
                leaf = nodes["is_leaf"][node] == 1
                if leaf.all():
                    break
                right = X[np.arange(len(X)), nodes["feature_idx"][node]] > nodes["num_threshold"][node]
                nxt = np.where(right, nodes["right"][node], nodes["left"][node])
                node = np.where(leaf, node, nxt)
            raw[:, c] += nodes["value"][node]
    expected = hgb._raw_predict(X)
    np.testing.assert_allclose(raw + hgb._baseline_prediction.reshape(1, -1), expected.reshape(raw.shape),
                               rtol=1e-6, atol=1e-6)


def test_boosted_models_simplify_synthetic1():
    Xtr, ytr, Xte, yte = xor_data(0)
    for model in (GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0),
                  HistGradientBoostingClassifier(max_iter=50, random_state=0)):
        model.fit(Xtr, ytr)
        m = DefragModel(model, n_restarts=10, random_state=0, form="list").fit(Xtr, ytr)
        ev = m.evaluate(Xte, yte)
        assert m.task_ == "classification"
        assert ev["error"] <= 0.2 and m.n_regions_ <= 6, (str(m), ev)


def nan_data(seed=0, n=600):
    X, y = data(2, seed, n)
    rng = np.random.default_rng(seed + 1)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X, y


def test_forest_with_missing_values_matches_decision_paths():
    from sklearn.ensemble import RandomForestClassifier

    X, y = nan_data()
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    table = split_table_from_estimator(rf, keep_duplicates=True)
    assert table.supports_missing and table.missing_right.any() and not table.missing_right.all()
    for tree in rf.estimators_:
        t = tree.tree_
        path = tree.decision_path(X).toarray().astype(bool)
        for node in np.flatnonzero(t.children_left >= 0):
            seen = path[:, node]
            went_right = path[:, t.children_right[node]]
            x = X[:, t.feature[node]]
            s = np.where(np.isnan(x), t.missing_go_to_left[node] == 0,
                         x > float32_threshold(t.threshold[node:node + 1])[0])
            np.testing.assert_array_equal(went_right[seen], s[seen])


def test_hist_gradient_boosting_with_missing_values_reproduces_raw_prediction():
    X, y = nan_data(2)
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    raw = np.zeros(len(X))
    for (predictor,) in hgb._predictors:
        nodes = predictor.nodes
        node = np.zeros(len(X), dtype=int)
        for _ in range(64):
            leaf = nodes["is_leaf"][node] == 1
            if leaf.all():
                break
            x = X[np.arange(len(X)), nodes["feature_idx"][node]]
            right = np.where(np.isnan(x), nodes["missing_go_to_left"][node] == 0,
                             x > nodes["num_threshold"][node])
            node = np.where(leaf, node, np.where(right, nodes["right"][node], nodes["left"][node]))
        raw += nodes["value"][node]
    np.testing.assert_allclose(raw + hgb._baseline_prediction.ravel()[0], hgb._raw_predict(X).ravel(),
                               rtol=1e-6, atol=1e-6)


def test_defrag_with_missing_values():
    Xtr, ytr, Xte, yte = xor_data(0)
    rng = np.random.default_rng(0)
    Xtr, Xte = Xtr.copy(), Xte.copy()
    Xtr[rng.random(Xtr.shape) < 0.1] = np.nan
    Xte[rng.random(Xte.shape) < 0.1] = np.nan
    hgb = HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(Xtr, ytr)
    m = DefragModel(hgb, n_restarts=10, random_state=0, form="list").fit(Xtr, ytr)
    ev = m.evaluate(Xte, yte)
    assert ev["error"] <= 0.35, (str(m), ev)
    # the printed rules and the C rule kernels agree on points with missing values
    expected = np.stack([r.covers(Xte) for r in m.rules_.rules], axis=1)
    np.testing.assert_array_equal(m.rules_.covers(Xte), expected)
    # eq. 10 by hand on the dense binary features, missing values included
    S = m.splits_.binary_features(Xte)
    logpost = S @ np.log(m.eta_).T + (~S) @ np.log1p(-m.eta_).T + np.log(m.alpha_)
    np.testing.assert_array_equal(m.apply_map(Xte), np.argmax(logpost, axis=1))
    # the list predicts what it prints, missing values included
    np.testing.assert_array_equal(m.predict(Xte), m.rules_.predict(Xte))


def test_pipelines_with_passthrough_steps_only():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, Xte, yte = xor_data(1)
    pipe = Pipeline([("keep", "passthrough"), ("rf", RandomForestClassifier(n_estimators=30, random_state=0))])
    pipe.fit(Xtr, ytr)
    m = DefragModel(pipe, n_restarts=5, random_state=0, form="list").fit(Xtr)
    assert m.evaluate(Xte, yte)["fidelity"] > 0.8
    logged = Pipeline([("log", FunctionTransformer(np.abs)), ("rf", RandomForestClassifier(n_estimators=5))])
    with pytest.raises(TypeError, match="FunctionTransformer"):  # (tests/test_pipelines.py: those it reads)
        DefragModel(logged.fit(Xtr, ytr), n_restarts=1, form="list").fit(Xtr, ytr)


def test_splits_that_differ_only_in_an_idle_missing_direction_are_duplicates():
    from sklearn.ensemble import RandomForestClassifier

    X, y = data(2, n=600)
    X[::7, 1] = np.nan  # feature 1 has missing training values; the others have none
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    full = split_table_from_estimator(rf)  # duplicates by (feature, threshold, direction)
    model = DefragModel(rf, n_components=3, n_restarts=1, random_state=0, max_splits=None, form="list").fit(X, y)
    kept = model.splits_
    test = set(zip(full.feature.tolist(), full.threshold.tolist()))
    with_direction = set(zip(full.feature.tolist(), full.threshold.tolist(), full.missing_right.tolist()))
    # scikit-learn sends missing values of features it never saw missing to the larger
    # child, so such splits come in both directions
    assert len(with_direction) > len(test)
    on_1 = {k for k in with_direction if k[0] == 1}
    expected = len({k[:2] for k in with_direction if k[0] != 1}) + len(on_1)
    assert len(kept) == expected  # one split per test, but both directions on feature 1
    kept_keys = set(zip(kept.feature.tolist(), kept.threshold.tolist(), kept.missing_right.tolist()))
    assert {k for k in kept_keys if k[0] == 1} == on_1
    np.testing.assert_array_equal(  # the same binary features on the training rows
        np.unique(full.binary_features(X), axis=1), np.unique(kept.binary_features(X), axis=1))
    keep = DefragModel(rf, n_components=3, n_restarts=1, random_state=0, max_splits=None,
                       keep_duplicate_splits=True, form="list").fit(X, y)
    assert len(keep.splits_) > len(full)


def test_a_forest_with_n_jobs_predicts_on_one_thread_and_stays_as_it_was(monkeypatch):
    # its joblib threads would sum the trees in the order they finish: the fit predicts
    # on a shallow copy with n_jobs=1, and leaves the model's own n_jobs alone (where the
    # source does not sum the trees itself: a forest's sums are left out here)
    import defrag.sources.sklearn_trees as sklearn_trees

    monkeypatch.setattr(sklearn_trees, "_summed_trees", lambda est, X, last=None, nodes=None: (None, None))
    X, y = make_friedman1(300, noise=1.0, random_state=0)
    y = (y > np.median(y)).astype(int)
    forest = RandomForestClassifier(n_estimators=20, n_jobs=2, random_state=0).fit(X, y)
    seen = []
    original = RandomForestClassifier.predict
    monkeypatch.setattr(RandomForestClassifier, "predict",
                        lambda self, Z: seen.append(self.n_jobs) or original(self, Z))
    source, _ = matched_source(forest, X)
    np.testing.assert_array_equal(source.predict(X), original(forest.set_params(n_jobs=1), X))
    forest.set_params(n_jobs=2)
    assert seen == [1] and forest.n_jobs == 2
    seen.clear()
    model = DefragModel(forest, n_restarts=2, random_state=0, form="list").fit(X)  # the forest's labels are the target
    assert seen and set(seen) == {1} and forest.n_jobs == 2
    again = DefragModel(forest, n_restarts=2, random_state=0, form="list").fit(X)
    assert str(again.rules_) == str(model.rules_)
    # n_jobs=None reads joblib's parallel_config: one thread for the fit there too
    import joblib

    seen.clear()
    forest.set_params(n_jobs=None)
    with joblib.parallel_config(n_jobs=2):
        source.predict(X)
    assert seen == [1] and forest.n_jobs is None


@pytest.mark.parametrize("Forest", [RandomForestRegressor, ExtraTreesRegressor])
def test_a_regression_forest_sums_its_trees_as_its_own_predict_does(Forest, monkeypatch):
    # the trees summed in order on float32 inputs, without the forest's predict: its values
    X, y = make_friedman1(300, noise=1.0, random_state=0)
    if Forest is RandomForestRegressor:  # (extra trees take NaN from scikit-learn 1.6)
        X[::7, 2] = np.nan  # missing values go where each node sends them
    forest = Forest(n_estimators=15, min_samples_leaf=3, n_jobs=2, random_state=0).fit(X, y)
    expected = forest.set_params(n_jobs=1).predict(X)
    forest.set_params(n_jobs=2)
    called = []
    original = Forest.predict
    monkeypatch.setattr(Forest, "predict", lambda self, Z: called.append(1) or original(self, Z))
    source, _ = matched_source(forest, X)
    np.testing.assert_array_equal(source.predict(X), expected)
    np.testing.assert_array_equal(source.predict(X.astype(np.float32)), expected)
    assert called == [] and forest.n_jobs == 2
    # a DataFrame of the model's own columns, in order, takes the same way; other input
    # (too narrow, other columns) goes to the forest's own predict and its messages
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    named = Forest(n_estimators=15, min_samples_leaf=3, random_state=0).fit(frame, y)
    np.testing.assert_array_equal(matched_source(named, frame)[0].predict(frame), original(named, frame))
    assert called == []
    with pytest.raises(ValueError, match="features"):
        source.predict(X[:, :4])
    assert called == [1]
    # too large for the trees' float32: named here (column and value); infinite: the
    # forest's own error
    huge = np.nan_to_num(X.copy())
    huge[0, 0] = 1e300
    with pytest.raises(ValueError, match=r"beyond float32's range .* in column 'x0', e\.g\. 1e\+300"):
        source.predict(huge)
    assert called == [1]
    huge[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity or a value too large"):
        source.predict(huge)
    assert called == [1, 1]


@pytest.mark.parametrize("forest", ["RandomForestClassifier", "ExtraTreesClassifier", "RandomForestRegressor"])
def test_a_forests_summed_trees_are_its_own_predictions_and_are_not_kept_past_their_rows(forest):
    """The source sums a forest's trees itself (labels of a classifier: the first most
    probable class of the sums): its own predict and predict_proba, bit for bit. The sums
    of the last rows are kept for the next call on the same values: another X is summed
    anew, and a caller that writes into a result does not change the next one."""
    import sklearn.ensemble as ensemble

    from defrag.sources import matched_source

    X, y = load_wine(return_X_y=True)
    Forest = getattr(ensemble, forest)
    model = Forest(n_estimators=40, random_state=0).fit(X, y if "Classifier" in forest else y.astype(float))
    source, _ = matched_source(model, X)
    np.testing.assert_array_equal(source.predict(X), model.predict(X))
    if "Classifier" in forest:
        proba = source.predict_proba(X)  # (the sums kept from predict)
        np.testing.assert_array_equal(proba, model.predict_proba(X))
        proba[:] = -1.0
        np.testing.assert_array_equal(source.predict_proba(X), model.predict_proba(X))
    other = X[::-1] + 0.5
    np.testing.assert_array_equal(source.predict(other), model.predict(other))
    np.testing.assert_array_equal(source.predict(X), model.predict(X))


@pytest.mark.parametrize("forest", ["RandomForestClassifier", "RandomForestRegressor"])
def test_a_forests_summed_trees_on_several_threads_are_its_own_predictions(forest, monkeypatch):
    """Rows summed side by side (tasks of rows on the kernel's threads, NaN among them
    routed by missing_go_to_left): the same values, bit for bit, as the forest's own
    predictions and as on one thread."""
    import sklearn.ensemble as ensemble

    from defrag.sources import matched_source, sklearn_trees

    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int) if "Classifier" in forest else X[:, 0] + np.sin(3 * X[:, 2])
    X[::11, 1] = np.nan
    model = getattr(ensemble, forest)(n_estimators=30, random_state=0).fit(X, y)
    monkeypatch.setattr(sklearn_trees, "threads_now", lambda: 4)
    several, _ = sklearn_trees._summed_trees(model, X)
    monkeypatch.setattr(sklearn_trees, "threads_now", lambda: 1)
    one, _ = sklearn_trees._summed_trees(model, X)
    np.testing.assert_array_equal(several, one)
    monkeypatch.setattr(sklearn_trees, "threads_now", lambda: 4)
    source, _ = matched_source(model, X)
    if "Classifier" in forest:
        np.testing.assert_array_equal(source.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(source.predict(X), model.predict(X))


def test_forest_nodes_that_are_no_trees_are_refused_by_the_kernel():
    """The router's own check (src_c/dfg_forest_sum.c): a child before its parent, one
    outside its tree or a feature beyond X's columns is a ValueError, never a walk that
    loops or reads outside the arrays."""
    from defrag.sources._forest_sum import forest_sum

    # one tree: 0 -> (1, 2), then a leaf-only tree at 3
    roots = np.array([0, 3], dtype=np.int64)
    left = np.array([1, -1, -1, -1], dtype=np.int64)
    right = np.array([2, -1, -1, -1], dtype=np.int64)
    feature = np.array([1, -2, -2, -2], dtype=np.int64)
    threshold = np.array([0.5, 0.0, 0.0, 0.0])
    value = np.array([[0.0], [1.0], [2.0], [10.0]])
    X = np.array([[0.0, 0.2], [0.0, 0.9], [0.0, np.nan]], dtype=np.float32)
    out = forest_sum(X, roots, left, right, feature, threshold, np.array([0, 0, 0, 0], np.uint8), value)
    np.testing.assert_array_equal(out[:, 0], [11.0, 12.0, 12.0])  # NaN: right where not missing_left
    out = forest_sum(X, roots, left, right, feature, threshold, np.array([1, 0, 0, 0], np.uint8), value)
    np.testing.assert_array_equal(out[:, 0], [11.0, 12.0, 11.0])
    for bad in (dict(left=np.array([0, -1, -1, -1])),           # a node its own child: a loop
                dict(right=np.array([3, -1, -1, -1])),          # a child in the next tree
                dict(right=np.array([-1, -1, -1, -1])),         # one child missing
                dict(feature=np.array([2, -2, -2, -2])),        # beyond X's two columns
                dict(roots=np.array([0, 5], dtype=np.int64))):  # a tree past the nodes
        arrays = dict(roots=roots, left=left, right=right, feature=feature)
        arrays.update({k: np.asarray(v, dtype=np.int64) for k, v in bad.items()})
        with pytest.raises(ValueError, match="forest_sum"):
            forest_sum(X, arrays["roots"], arrays["left"], arrays["right"], arrays["feature"], threshold, None,
                       value)


def _forest_cases():
    """(name, fitted forest, rows to predict): the forest kinds of one output whose sums the
    source takes itself, with the fits that shape their trees oddly."""
    import sklearn.ensemble as ensemble

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    Xnan = X.copy()
    Xnan[::7, 2] = np.nan  # NaN seen at the fit in column 2 only
    y = X[:, 0] + np.sin(3 * X[:, 1])
    labels = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-1, -0.3, 0.3, 1])
    f32 = np.finfo(np.float32)
    odd = rng.normal(size=(12, 4))
    odd[0] = [f32.max, -f32.max, f32.tiny, -f32.tiny]
    odd[1] = [1e-45, -1e-45, -0.0, 0.0]  # denormals and signed zeros
    odd[2] = np.nan
    odd[3] = [np.nan, 0.0, np.nan, -0.0]
    odd[4] = [1e38, -1e38, 1e-300, -1e-300]
    cases = []
    for kind in ("RandomForest", "ExtraTrees"):
        C, R = getattr(ensemble, kind + "Classifier"), getattr(ensemble, kind + "Regressor")
        for boot in (False, True):
            def fit(model, Xf, yf, **kw):
                return model.set_params(bootstrap=boot, random_state=0).fit(Xf, yf, **kw)

            cases += [
                (f"{kind}R-{boot}", fit(R(n_estimators=6), Xnan, y)),
                (f"{kind}C2-{boot}", fit(C(n_estimators=6), X, (labels > 2).astype(int))),
                (f"{kind}C5-weights-{boot}", fit(C(n_estimators=6, class_weight="balanced"), Xnan, labels,
                                                 sample_weight=rng.random(300))),
                (f"{kind}Cstr-{boot}", fit(C(n_estimators=6), X, np.array(["b", "a", "zz", "c", "d"])[labels])),
                (f"{kind}C-depth1-{boot}", fit(C(n_estimators=3, max_depth=1), X, labels)),
                (f"{kind}R-one-leaf-{boot}", fit(R(n_estimators=3, min_samples_split=10 ** 6), X, y)),
                (f"{kind}C-constant-{boot}", fit(C(n_estimators=3), X, np.zeros(300, int))),
                (f"{kind}R-one-tree-{boot}", fit(R(n_estimators=1), X, y)),
            ]
    return cases, odd


@pytest.mark.parametrize("n_threads", [1, 2, 64])
def test_forest_sums_of_odd_forests_and_rows_are_the_forests_own_bit_for_bit(n_threads, monkeypatch):
    """ExtraTrees and random forests, with and without bootstrap, class weights and sample
    weights, string classes, stumps, trees that are one leaf and a forest of one tree:
    the source's predict and predict_proba are the forest's own, bit for bit, on rows
    with float32's extremes, denormals, signed zeros and NaN in columns that had none at
    the fit, at row counts around the kernel's task sizes, on any thread count."""
    from defrag.sources import sklearn_trees

    monkeypatch.setattr(sklearn_trees, "threads_now", lambda: n_threads)
    cases, odd = _forest_cases()
    rng = np.random.default_rng(4)
    for name, model in cases:
        source = sklearn_trees.SklearnTreesSource(model)
        for n in (3, 511, 512, 513, 4095, 4097, 8193):
            X = rng.normal(size=(n, 4))
            X[::5, 1] = np.nan
            X[::13, 3] = np.nan
            X[:len(odd[:n])] = odd[:n]
            np.testing.assert_array_equal(source.predict(X), model.predict(X), err_msg=f"{name}, {n} rows")
            if hasattr(model, "predict_proba"):
                np.testing.assert_array_equal(source.predict_proba(X), model.predict_proba(X),
                                              err_msg=f"{name}, {n} rows")


@pytest.mark.parametrize("how", ["cycle", "backwards", "next-tree", "past-the-end", "feature", "no-right"])
def test_a_forest_tampered_with_after_the_source_was_made_is_a_value_error_from_its_sums(how):
    """The source sums a forest's trees without checked() (predict, predict_proba): a
    tree_ whose child points at itself, backwards, into the next tree or past the last
    node, a feature beyond X's columns, or an internal node without a right child is
    refused by the kernel's check with a ValueError (never a loop or a read outside the
    arrays)."""
    from defrag.sources import sklearn_trees

    X, y = data(3)
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    which = -1 if how == "past-the-end" else 0
    tree = model.estimators_[which].tree_
    state = tree.__getstate__()
    nodes = state["nodes"].copy()
    internal = int(np.flatnonzero(nodes["left_child"] >= 0)[-1])
    if how == "cycle":
        nodes["left_child"][0] = 0
    elif how == "backwards":
        nodes["right_child"][internal] = 0
    elif how in ("next-tree", "past-the-end"):
        nodes["left_child"][0] = len(nodes)  # the next tree's root; past every node for the last
    elif how == "feature":
        nodes["feature"][0] = X.shape[1]
    else:
        nodes["right_child"][0] = -1
    state["nodes"] = nodes
    tree.__setstate__(state)
    source = sklearn_trees.SklearnTreesSource(model)
    with pytest.raises(ValueError, match="forest_sum"):
        source.predict_proba(X)
    with pytest.raises(ValueError, match="forest_sum"):
        source.predict(X)


def test_forest_sum_refuses_roots_that_are_no_partition_of_the_nodes():
    """roots must start at 0 and increase strictly within the nodes: an empty tree (a root
    repeated), roots out of order, a negative root or one at the end, and a leaf with a
    right child or a child id below -1, are ValueErrors; zero rows give zero sums."""
    from defrag.sources._forest_sum import forest_sum

    i64 = lambda *v: np.array(v, dtype=np.int64)
    base = dict(roots=i64(0, 3), left=i64(1, -1, -1, -1), right=i64(2, -1, -1, -1), feature=i64(1, -2, -2, -2))
    threshold = np.array([0.5, 0.0, 0.0, 0.0])
    value = np.array([[0.0], [1.0], [2.0], [10.0]])
    X = np.array([[0.0, 0.2], [0.0, 0.9]], dtype=np.float32)
    for bad in (dict(roots=i64(0, 3, 3)), dict(roots=i64(0, 3, 1)), dict(roots=i64(0, -1)), dict(roots=i64(0, 4)),
                dict(roots=i64(1, 3)), dict(right=i64(2, 2, -1, -1)), dict(left=i64(-2, -1, -1, -1)),
                dict(left=i64(2 ** 40, -1, -1, -1)), dict(feature=i64(-1, -2, -2, -2))):
        arrays = {**base, **bad}
        with pytest.raises(ValueError, match="forest_sum"):
            forest_sum(X, arrays["roots"], arrays["left"], arrays["right"], arrays["feature"], threshold, None, value)
    with pytest.raises(ValueError, match="forest_sum"):
        forest_sum(X, base["roots"], base["left"], base["right"], base["feature"], threshold, None, value[:, :0])
    out = forest_sum(X[:0], base["roots"], base["left"], base["right"], base["feature"], threshold, None, value, 4)
    assert out.shape == (0, 1)


def test_a_forest_refitted_after_its_source_was_made_is_not_summed_with_its_old_trees():
    """warm_start adds trees to a fitted forest in place: the source reads its trees again
    (they were summed as read once and divided by the new number of trees: 5 old trees'
    sum divided by 10), and forgets its last sums, even of the same rows."""
    from defrag.sources import sklearn_trees

    X, y = data(0)
    model = RandomForestRegressor(n_estimators=5, warm_start=True, random_state=0).fit(X, y)
    source = sklearn_trees.SklearnTreesSource(model)
    np.testing.assert_array_equal(source.predict(X), model.predict(X))
    model.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(source.predict(X + 0.5), model.predict(X + 0.5))
    np.testing.assert_array_equal(source.predict(X), model.predict(X))
    model.set_params(warm_start=False, n_estimators=3).fit(X, -y)  # a refit from scratch: other trees
    np.testing.assert_array_equal(source.predict(X), model.predict(X))


def test_forest_sum_on_more_than_int32_columns_refuses_or_reads_the_right_column():
    """X of 2**31 + 8 float32 columns (np.empty: virtual memory, two pages touched) and a
    split on column 2**31 + 4, which dfg_forest_check accepts: the sum reads that column
    or the call is a ValueError, never a read before X (it was a segmentation fault). In a
    child process, so that a crash fails this test instead of ending the run."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np
        from defrag.sources._forest_sum import forest_sum
        try:
            X = np.empty((1, 2 ** 31 + 8), np.float32)
        except MemoryError:
            print("skip"); raise SystemExit
        X[0, 5] = 1.0
        X[0, 2 ** 31 + 4] = 0.0
        i64 = lambda *v: np.array(v, dtype=np.int64)
        try:
            out = forest_sum(X, i64(0), i64(1, -1, -1), i64(2, -1, -1), i64(2 ** 31 + 4, -2, -2),
                             np.array([0.5, 0.0, 0.0]), None, np.array([[0.0], [1.0], [2.0]]))
            print("sum", out[0, 0])
        except ValueError:
            print("refused")
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if child.stdout.strip() == "skip":
        pytest.skip("no 8 GiB of address space for X")
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.split() in (["sum", "1.0"], ["refused"])
