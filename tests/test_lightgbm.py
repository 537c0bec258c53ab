"""LightGBM models read from dump_model(): every sample reaches the library's own leaf."""
import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from conftest import tabular_data, xor_data  # noqa: E402
from defrag import DefragModel  # noqa: E402
from defrag.sources.lightgbm import LightGBMSource  # noqa: E402
from defrag.sources.lightgbm import model_dump as lightgbm_model_dump  # noqa: E402


def data(n_classes, seed=0):
    X, y = tabular_data(n_classes, seed, n=600)
    X[:40, 2] = np.nan  # plenty of missing values on one feature
    return X, y


def leaf_of(tree, x, table):
    keys = set(zip(table.feature.tolist(), table.threshold.tolist(), table.missing_right.tolist()))
    node = tree["tree_structure"]
    while "split_index" in node:
        f, t = node["split_feature"], float(node["threshold"])
        if node["missing_type"] == "NaN":
            mr = not node["default_left"]
        else:
            mr = 0.0 > t
        assert (f, t, int(mr)) in keys
        v = x[f]
        right = mr if np.isnan(v) else v > t  # our binary feature s
        node = node["right_child"] if right else node["left_child"]
    return node["leaf_index"]


@pytest.mark.parametrize("Model,n_classes", [
    (lgb.LGBMRegressor, 0), (lgb.LGBMClassifier, 2), (lgb.LGBMClassifier, 3),
])
def test_binary_features_reach_lightgbm_leaves(Model, n_classes):
    X, y = data(n_classes)
    model = Model(n_estimators=6, num_leaves=12, min_child_samples=5, verbose=-1).fit(X, y)
    table = LightGBMSource(model).split_table(keep_duplicates=True)
    trees = lightgbm_model_dump(model)["tree_info"]
    leaves = model.booster_.predict(X, pred_leaf=True)
    for i, tree in enumerate(trees):
        got = np.array([leaf_of(tree, x, table) for x in X[:200]])
        np.testing.assert_array_equal(got, leaves[:200, i])


def test_malformed_dump_is_a_value_error():
    X, y = data(2)
    dump = lgb.LGBMClassifier(n_estimators=2, verbose=-1).fit(X, y).booster_.dump_model()
    del dump["tree_info"][0]["tree_structure"]["left_child"]
    with pytest.raises(ValueError, match="malformed LightGBM"):
        LightGBMSource(dump).split_table()
    with pytest.raises(ValueError, match="malformed LightGBM"):
        LightGBMSource({"tree_info": []}).split_table()


def test_lightgbm_synthetic1():
    for seed in range(3):
        Xtr, ytr, Xte, yte = xor_data(seed)
        model = lgb.LGBMClassifier(random_state=0, verbose=-1, n_jobs=1).fit(Xtr, ytr)
        m = DefragModel(model, random_state=0, n_jobs=2, form="list").fit(Xtr, ytr)
        ev = m.evaluate(Xte, yte)
        # XOR as a list: 3 lines (two quadrants of one class, the default the other two)
        # or 4 (a quadrant, a half-plane, a half-plane, the default)
        assert 3 <= m.n_regions_ <= 4, str(m)
        assert ev["error"] <= 0.16, ev
