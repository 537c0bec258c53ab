"""Plots, headless (Agg): PNGs are written and not blank, and the rule boxes lie at the
thresholds' pixels."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from conftest import xor_data  # noqa: E402
from defrag import DefragModel  # noqa: E402
from defrag import plot  # noqa: E402


@pytest.fixture(scope="module")
def xor_model():
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, Xte, yte = xor_data(0, n=800)
    rf = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(Xtr, ytr)
    return DefragModel(rf, n_components=6, n_restarts=3, random_state=0, form="list").fit(Xtr), Xtr, ytr, Xte, yte


def _png(fig, path):
    fig.savefig(path, dpi=fig.dpi)  # no tight bounding box: display pixels are image pixels
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0.05  # not blank
    return image


def _matches(pixels, colour):
    return np.all(np.abs(pixels[..., :3] - np.asarray(colour[:3])) < 0.08, axis=-1)


def test_rules_2d_draws_each_box_at_its_thresholds(xor_model, tmp_path):
    m, Xtr, ytr, *_ = xor_model
    fig = plot.rules_2d(m, Xtr, ytr, features=(0, 1))
    image = _png(fig, tmp_path / "rules.png")
    ax = fig.axes[0]
    height = image.shape[0]
    boxes = [p for p in ax.patches if str(p.get_gid()).startswith("rule-")]
    assert len(boxes) == len(m.rules_.rules)
    checked = 0
    for k, (rule, box) in enumerate(zip(m.rules_.rules, boxes)):
        (x0, x1), (y0, y1), exact = plot.rule_box(rule, 0, 1)
        assert exact
        colour = box.get_edgecolor()
        lo = ax.get_ylim()[0] if y0 is None else y0
        hi = ax.get_ylim()[1] if y1 is None else y1
        for t in (x0, x1):
            if t is None:
                continue
            # the column of the threshold along the box's vertical extent
            px, py_lo = ax.transData.transform((t, lo))
            _, py_hi = ax.transData.transform((t, hi))
            rows = np.arange(int(height - py_hi) + 3, int(height - py_lo) - 3)
            col = int(round(px - 0.5))
            on = max(_matches(image[rows, c], colour).mean() for c in (col - 1, col, col + 1))
            off = _matches(image[rows, col + 6], colour).mean()
            assert on > 0.7 and off < 0.3, (k, t, on, off)
            checked += 1
    assert checked >= 2


def test_rules_2d_regression_and_errors(tmp_path):
    from sklearn.ensemble import RandomForestRegressor

    Xtr, ytr, _, _ = xor_data(1, n=400, regression=True)
    rf = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(Xtr, ytr)
    m = DefragModel(rf, n_components=4, n_restarts=2, random_state=0, form="list").fit(Xtr)
    fig = plot.rules_2d(m.rules_, Xtr, features=("x1", "x0"))
    _png(fig, tmp_path / "reg.png")
    assert fig.axes[0].get_xlabel() == "x1" and len(fig.axes) == 2  # a colour bar
    with pytest.raises(ValueError, match="no feature named"):
        plot.rules_2d(m, Xtr, features=("nope", 0))
    with pytest.raises(TypeError, match="rules_"):
        plot.rules_2d(object(), Xtr)


def test_tradeoff_and_rule_coverage(xor_model, tmp_path):
    m, _, _, Xte, yte = xor_model
    results = {"defrag": [(3, 0.12), (5, 0.11)], "CART": [(4, 0.15), (16, 0.1)], "inTrees": [(9, 0.2)]}
    fig = plot.tradeoff(results)
    _png(fig, tmp_path / "tradeoff.png")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["defrag", "CART", "inTrees"]
    np.testing.assert_array_equal(ax.lines[1].get_xydata(), [[4, 0.15], [16, 0.1]])
    records = [{"method": "a", "n_conditions": 2, "error": 0.3}, {"method": "a", "n_conditions": 1, "error": 0.4}]
    np.testing.assert_array_equal(plot.tradeoff(records).axes[0].lines[0].get_xydata(), [[1, 0.4], [2, 0.3]])
    with pytest.raises(ValueError, match="method"):
        plot.tradeoff([{"n_conditions": 1}])
    fig = plot.rule_coverage(m, Xte)
    _png(fig, tmp_path / "coverage.png")
    ax = fig.axes[0]
    heights = np.array([b.get_height() for b in ax.patches])
    n = len(m.rules_.rules) + 1
    np.testing.assert_allclose(heights[:n - 1], m.rules_.covers(Xte).mean(axis=0))
    first = m.apply(Xte)
    np.testing.assert_allclose(heights[n:], np.bincount(np.where(first < 0, n - 1, first), minlength=n) / len(Xte))
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "otherwise"


def test_import_does_not_load_matplotlib():
    import subprocess
    import sys

    code = "import sys, defrag.plot; print('matplotlib' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "False", res.stderr


def _overlapping_rules():
    """Three rules whose boxes share their top-left corner (all unbounded above and to the
    left): every label drawn at that corner would lie over the others."""
    from defrag.rules import Condition, Rule, RuleSet

    rules = [Rule([Condition(0, "x0", upper=0.3)], 0), Rule([Condition(0, "x0", upper=0.5)], 1),
             Rule([Condition(1, "x1", upper=0.7)], 0)]
    return RuleSet(rules, 1, feature_names=["x0", "x1"], classes=np.array([0, 1]))


def _label_extents(fig):
    ax = fig.axes[0]
    return [t.get_window_extent() for t in ax.texts if str(t.get_gid()).startswith("label-")]


def test_rules_2d_labels_do_not_overlap(tmp_path):
    Xtr, ytr, _, _ = xor_data(2, n=300)
    fig = plot.rules_2d(_overlapping_rules(), Xtr, ytr)
    _png(fig, tmp_path / "labels.png")
    extents = _label_extents(fig)
    assert len(extents) == 3
    for a in range(3):
        for b in range(a):
            assert not extents[a].overlaps(extents[b]), (a, b)


def test_rules_2d_draws_a_tree_of_rules_and_refuses_a_sum(tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, _, _ = xor_data(3, n=600)
    rf = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(Xtr, ytr)
    m = DefragModel(rf, n_restarts=2, random_state=0, form="tree").fit(Xtr)
    fig = plot.rules_2d(m, Xtr, ytr)
    _png(fig, tmp_path / "tree.png")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if str(p.get_gid()).startswith("rule-")]
    # one box per leaf but the one outside every box tested on the root's 'else' path
    assert 1 <= len(boxes) <= m.n_regions_
    assert ax.get_title().startswith(f"{m.n_regions_} regions")
    from defrag.rules import Condition, RuleTree
    from defrag.rules.tree_nodes import Leaf, Node

    summed = RuleTree([Node([Condition(0, "x0", upper=0.5)], Leaf(1.0), Leaf(-1.0)),
                       Node([Condition(1, "x1", upper=0.5)], Leaf(0.5), Leaf(-0.5))], base=0.0,
                      feature_names=["x0", "x1"])
    with pytest.raises(ValueError, match="sum of trees"):
        plot.rules_2d(summed, Xtr)


def test_tradeoff_of_a_path_counts_conditions_on_an_integer_axis(tmp_path):
    from sklearn.ensemble import RandomForestRegressor

    Xr, yr, _, _ = xor_data(5, n=400, regression=True)
    rf = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(Xr, yr)
    m = DefragModel(rf, n_restarts=2, random_state=0, max_conditions=8).fit(Xr)
    fig = plot.tradeoff(m)
    _png(fig, tmp_path / "path.png")
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear"
    assert ax.get_xlabel() == "conditions printed"
    assert ax.get_ylabel().startswith("validation error")
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks)
    path = m.path_
    finite = np.isfinite(np.asarray(path["validation_error"], dtype=float))
    xs = np.concatenate([line.get_xdata() for line in ax.lines if line.get_gid() != "chosen"])
    assert sorted(xs) == sorted(np.asarray(path["n_conditions"], dtype=float)[finite])
    chosen = [line for line in ax.lines if line.get_gid() == "chosen"]
    assert len(chosen) == 1 and chosen[0].get_xdata()[0] == m.n_conditions_
    # test errors are labelled as such
    assert plot.tradeoff({"a": [(2, 0.3), (5, 0.2)]}).axes[0].get_ylabel() == "test error"


@pytest.fixture(scope="module")
def three_forms():
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, _, _ = xor_data(6, n=600)
    rf = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(Xtr, ytr)
    budget = {"tree": {"max_conditions": 8}, "sum": {"max_conditions": 8}, "list": {}}
    return {form: DefragModel(rf, n_restarts=2, random_state=0, form=form, **budget[form]).fit(Xtr)
            for form in ("tree", "sum", "list")}, Xtr, ytr


@pytest.mark.parametrize("form", ["tree", "sum", "list"])
def test_every_plot_draws_each_form_or_refuses_it_in_one_line(three_forms, form, tmp_path):
    models, X, y = three_forms
    m = models[form]
    # rule_coverage: a bar per region (a list: and its default), a sum's per leaf of each part
    fig = plot.rule_coverage(m, X)
    _png(fig, tmp_path / f"coverage-{form}.png")
    ax = fig.axes[0]
    if form == "list":
        assert len(ax.patches) == 2 * (len(m.rules_.rules) + 1)
    else:
        heights = [b.get_height() for b in ax.patches]
        leaves = m.rules_.route(m.rules_.encode(X))  # the share of the rows reaching each leaf
        reach = [np.bincount(leaves[:, t], minlength=len(m.rules_.leaves(t))) for t in range(leaves.shape[1])]
        np.testing.assert_allclose(heights, np.concatenate(reach) / len(X))
        assert len(heights) == len(m.rules_.leaves())
    # rules_2d: a tree and a list drawn; a sum refused in one line that says why
    if form == "sum":
        with pytest.raises(ValueError, match="sum of trees") as info:
            plot.rules_2d(m, X, y)
        assert "\n" not in str(info.value)
    else:
        _png(plot.rules_2d(m, X, y), tmp_path / f"rules-{form}.png")
    # tradeoff: the model's searched path, whatever its form; its rules alone refused
    fig = plot.tradeoff(m)
    assert fig.axes[0].get_xlabel() == "conditions printed"
    assert [line for line in fig.axes[0].lines if line.get_gid() == "chosen"]
    with pytest.raises(TypeError, match="pass the fitted model") as info:
        plot.tradeoff(m.rules_)
    assert "\n" not in str(info.value)


def test_rules_2d_leaves_out_a_region_on_other_features_and_says_so():
    from defrag.rules import Condition, Rule, RuleSet

    Xtr, ytr, _, _ = xor_data(7, n=300)
    X3 = np.column_stack([Xtr, Xtr[:, 0]])
    rules = RuleSet([Rule([Condition(0, "x0", upper=0.5), Condition(1, "x1", upper=0.5)], 0),
                     Rule([Condition(2, "x2", lower=0.7)], 1)], 1, feature_names=["x0", "x1", "x2"],
                    classes=np.array([0, 1]))
    fig = plot.rules_2d(rules, X3, ytr, features=(0, 1))
    ax = fig.axes[0]
    assert [p.get_gid() for p in ax.patches if str(p.get_gid()).startswith("rule-")] == ["rule-1"]
    assert "not drawn" in ax.get_title() and "[2]" in ax.get_title()


def test_rules_2d_labels_keep_clear_of_each_other_and_of_the_legend(three_forms, tmp_path):
    from defrag.rules import Condition, Rule, RuleSet

    # a small box in the lower right corner, where the legend is
    rules = RuleSet([Rule([Condition(0, "x0", lower=0.9), Condition(1, "x1", upper=0.06)], 0),
                     Rule([Condition(0, "x0", lower=0.85), Condition(1, "x1", upper=0.1)], 1),
                     Rule([Condition(0, "x0", upper=0.5)], 0)], 1, feature_names=["x0", "x1"],
                    classes=np.array([0, 1]))
    models, X, y = three_forms
    for fig in (plot.rules_2d(rules, X, y), plot.rules_2d(models["tree"], X, y),
                plot.rules_2d(models["list"], X, y)):
        fig.canvas.draw()
        ax = fig.axes[0]
        extents = _label_extents(fig) + [ax.get_legend().get_window_extent()]
        for a in range(len(extents)):
            for b in range(a):
                assert not extents[a].overlaps(extents[b]), (a, b)
    # the bars' labels of rule_coverage do not overlap either
    for m in models.values():
        fig = plot.rule_coverage(m, X)
        fig.canvas.draw()
        texts = [t.get_window_extent() for t in fig.axes[0].texts]
        for a in range(len(texts)):
            for b in range(a):
                assert not texts[a].overlaps(texts[b]), (a, b)
