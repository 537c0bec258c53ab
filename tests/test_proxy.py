"""Proxy trees: eq. 8 node score, split search vs brute force, eq. 9
pruning path, reference predictions, RuleSet view, local explanations, eq. 10."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_regression
from sklearn.ensemble import (BaggingRegressor, GradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.tree import DecisionTreeRegressor

from defrag.proxy import _proxy_split
from defrag import _testing
from defrag.rules.conditions import printed_thresholds
from defrag.proxy import (ProxyTree, ProxyTreeClassifier, bootstrap_instability, explain_local,
                          local_loss, reference_predictions, tree_dissimilarity)

FLOOR = 1e-300


def np_score(m, v):
    """-n log(sigma2) of eq. 8 / sec. 3.1.1 in plain NumPy."""
    s2 = np.mean(v + (m - m.mean()) ** 2)
    return -m.size * np.log(max(s2, FLOOR))


def brute_search(X, gain, min_leaf, full=False):
    """Best (gain, feature, threshold) over every feature and every midpoint threshold,
    gain(left_mask) being the score improvement of that split; with full, also
    (missing_right, n_left). NaN as scikit-learn's CART: at each threshold the NaN rows
    are tried left, then right; then every present value left and NaN right (threshold
    the largest present value); with no NaN in the feature, NaN goes to the larger
    child (missing_right = n_right > n_left)."""
    best = (-np.inf, -1, 0.0, False, 0)
    for d in range(X.shape[1]):
        x = X[:, d]
        nan = np.isnan(x)
        vals = np.unique(x[~nan])
        cands = []
        for a, b in zip(vals[:-1], vals[1:]):
            t = 0.5 * (a + b)
            below = (x <= t) & ~nan
            if nan.any():
                cands += [(t, below | nan, False), (t, below, True)]
            else:
                cands.append((t, below, bool((~below).sum() > below.sum())))
        if nan.any() and vals.size:
            cands.append((vals[-1], ~nan, True))
        for t, left, mr in cands:
            if left.sum() < min_leaf or (~left).sum() < min_leaf:
                continue
            g, scale = gain(left)
            if g > best[0] + 1e-9 * scale:
                best = (g, d, t, mr, int(left.sum()))
    return best if full else best[:3]


def brute_split(X, m, v, min_leaf, full=False):
    """Best (gain, feature, threshold) for the eq. 8 score."""
    parent = np_score(m, v)
    return brute_search(
        X, lambda left: (np_score(m[left], v[left]) + np_score(m[~left], v[~left]) - parent, abs(parent)),
        min_leaf, full)


def problem(seed, n=60, d=3, zero_var=False, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    if ties:
        X = np.round(X * 5) / 5
    m = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    v = np.zeros(n) if zero_var else 0.05 * rng.random(n)
    return np.ascontiguousarray(X), m, v


@pytest.mark.parametrize("seed", range(3))
def test_node_score_matches_numpy(seed):
    X, m, v = problem(seed)
    rows = np.flatnonzero(X[:, 2] > 0.3).astype(np.int64)
    got = _testing.proxy_node_score(rows, m, v, FLOOR)
    assert got == pytest.approx(np_score(m[rows], v[rows]), rel=1e-12)


@pytest.mark.parametrize("seed,zero_var,ties,min_leaf", [
    (0, False, False, 1), (1, True, False, 3), (2, False, True, 5), (3, True, True, 2)])
def test_split_search_matches_brute_force(seed, zero_var, ties, min_leaf):
    X, m, v = problem(seed, zero_var=zero_var, ties=ties)
    rows = np.arange(X.shape[0], dtype=np.int64)
    f, t, gain, n_left, _ = _proxy_split.proxy_best_split(X, rows, m, v, min_leaf, FLOOR, 1)
    g_ref, f_ref, t_ref = brute_split(X, m, v, min_leaf)
    assert (f, t) == (f_ref, pytest.approx(t_ref))
    assert gain == pytest.approx(g_ref, rel=1e-9)
    assert n_left == int((X[:, f] <= t).sum())
    # a subset of rows, and the thread count does not change the answer
    sub = np.flatnonzero(X[:, 1] < 0.7).astype(np.int64)
    one = _proxy_split.proxy_best_split(X, sub, m, v, min_leaf, FLOOR, 1)
    assert one == _proxy_split.proxy_best_split(X, sub, m, v, min_leaf, FLOOR, 2)
    g_ref, f_ref, t_ref = brute_split(X[sub], m[sub], v[sub], min_leaf)
    assert one[:2] == (f_ref, pytest.approx(t_ref))


def test_split_search_respects_min_leaf_and_constant_features():
    X = np.ones((10, 2))
    m = np.arange(10.0)
    rows = np.arange(10, dtype=np.int64)
    assert _proxy_split.proxy_best_split(X, rows, m, np.zeros(10), 1, FLOOR, 1)[0] == -1
    X[:, 1] = np.arange(10)
    f, t, _, n_left, _ = _proxy_split.proxy_best_split(X, rows, m, np.zeros(10), 4, FLOOR, 1)
    assert f == 1 and 4 <= n_left <= 6
    assert _proxy_split.proxy_best_split(X, rows, m, np.zeros(10), 6, FLOOR, 1)[0] == -1
    with pytest.raises(ValueError):
        _proxy_split.proxy_best_split(X, rows, m, -np.ones(10), 1, FLOOR, 1)


def grown_splits_by_brute_force(X, m, v, rows, min_leaf, out, path=""):
    g, f, t, mr, _ = brute_split(X[rows], m[rows], v[rows], min_leaf, full=True)
    if f < 0 or not g > 0:
        return out
    x = X[rows, f]
    t0, t = t, float(printed_thresholds(X, [f], [t])[0])  # ProxyTree keeps the printed threshold
    assert np.array_equal(X[:, f] > t, X[:, f] > t0)  # (the same split of every training row)
    out[path] = (f, t, mr) if np.isnan(X).any() else (f, t)
    go_right = np.where(np.isnan(x), mr, x > t)
    left, right = rows[~go_right], rows[go_right]
    grown_splits_by_brute_force(X, m, v, left, min_leaf, out, path + "L")
    grown_splits_by_brute_force(X, m, v, right, min_leaf, out, path + "R")
    return out


def tree_splits(tree, missing=False):
    t, out, stack = tree.tree_, {}, [(0, "")]
    while stack:
        node, path = stack.pop()
        if t["children_left"][node] >= 0:
            out[path] = (int(t["feature"][node]), float(t["threshold"][node]))
            if missing:
                out[path] += (bool(t["missing_right"][node]),)
            stack += [(t["children_left"][node], path + "L"), (t["children_right"][node], path + "R")]
    return out


@pytest.mark.parametrize("seed", range(2))
def test_grown_tree_equals_brute_force_growth_with_zero_variance(seed):
    X, m, _ = problem(seed, n=80)
    tree = ProxyTree(min_samples_leaf=6, alpha=0.0).fit(X, m)
    ref = grown_splits_by_brute_force(X, m, np.zeros(80), np.arange(80), 6, {})
    got = tree_splits(tree)
    assert got.keys() == ref.keys()
    for p in ref:
        assert got[p][0] == ref[p][0] and got[p][1] == pytest.approx(ref[p][1])
    assert tree.n_leaves_ == len(ref) + 1
    # the same leaf count taken from the pruning path keeps the top of that tree
    k = tree.pruning_path_["n_leaves"][3]
    small = ProxyTree(min_samples_leaf=6, max_leaves=int(k)).fit(X, m)
    assert small.n_leaves_ == k
    assert all(ref[p][0] == s[0] and ref[p][1] == pytest.approx(s[1])
               for p, s in tree_splits(small).items())


def test_pruning_path_cost_nested_and_monotone():
    X, m, v = problem(5, n=150)
    S = X.shape[0]
    full = ProxyTree(min_samples_leaf=4, alpha=0.0).fit(X, m, variance=v)
    path = full.pruning_path_
    alphas, n_leaves, fit = path["alphas"], path["n_leaves"], path["fit"]
    assert n_leaves[0] == full.n_leaves_ and n_leaves[-1] == 1
    assert np.all(np.diff(n_leaves) < 0)
    assert np.all(np.diff(fit) >= -1e-9 * np.abs(fit).max())
    finite = np.flatnonzero(np.isfinite(alphas))
    assert finite[0] == 0 and finite[-1] == alphas.size - 1
    assert np.all(np.diff(alphas[finite]) > 0)
    labels = []
    for k in range(alphas.size):
        t = ProxyTree(min_samples_leaf=4, max_leaves=int(n_leaves[k])).fit(X, m, variance=v)
        assert t.n_leaves_ == n_leaves[k]
        if np.isfinite(alphas[k]):
            by_alpha = ProxyTree(min_samples_leaf=4, alpha=float(alphas[k])).fit(X, m, variance=v)
            np.testing.assert_array_equal(by_alpha.predict(X), t.predict(X))
        # eq. 9 data term S log(sigma2) in plain NumPy from the tree's own leaves
        leaf = t.apply(X)
        sse = sum(np.sum(v[leaf == u] + (m[leaf == u] - m[leaf == u].mean()) ** 2) for u in np.unique(leaf))
        assert fit[k] == pytest.approx(S * np.log(sse / S), rel=1e-10)
        # the leaves' means, rounded to the decimals printed
        np.testing.assert_allclose(t.predict(X), [m[leaf == u].mean() for u in leaf], rtol=0,
                                   atol=0.5 * 10.0 ** -t.decimals_)
        labels.append(leaf)
    for fine, coarse in zip(labels[:-1], labels[1:]):  # nested: each leaf lies in one coarser leaf
        for u in np.unique(fine):
            assert np.unique(coarse[fine == u]).size == 1
    # the tree chosen for alpha minimises C_alpha over the path; the minimal cost rises
    # and the selected tree's fit term S log(sigma2) worsens monotonically with alpha
    grid = np.linspace(0, alphas[-1] * 1.2 + 1, 60)
    best, chosen_fit, chosen_leaves = [], [], []
    for a in grid:
        t = ProxyTree(min_samples_leaf=4, alpha=float(a)).fit(X, m, variance=v)
        k = int(np.flatnonzero(n_leaves == t.n_leaves_)[0])
        cost = fit + a * n_leaves
        assert cost[k] <= cost.min() + 1e-9 * abs(cost).max()
        best.append(cost.min())
        chosen_fit.append(fit[k])
        chosen_leaves.append(n_leaves[k])
    assert np.all(np.diff(best) >= 0)
    assert np.all(np.diff(chosen_fit) >= 0) and np.all(np.diff(chosen_leaves) <= 0)
    assert chosen_leaves[0] == n_leaves[0] and chosen_leaves[-1] == 1


def test_reference_predictions_forest_bagging_and_variance_inputs():
    X, m, _ = problem(0, n=120, d=4)
    rf = RandomForestRegressor(n_estimators=15, random_state=0).fit(X, m)
    mean, var = reference_predictions(rf, X)
    per_tree = np.stack([t.predict(X) for t in rf.estimators_])
    np.testing.assert_allclose(mean, rf.predict(X))
    np.testing.assert_allclose(var, per_tree.var(axis=0))
    assert var.max() > 0
    bag = BaggingRegressor(DecisionTreeRegressor(), n_estimators=6, max_features=2,
                           random_state=0).fit(X, m)
    mean, var = reference_predictions(bag, X)
    np.testing.assert_allclose(mean, bag.predict(X))
    assert var.max() > 0
    gb = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, m)
    mean, var = reference_predictions(gb, X)
    np.testing.assert_allclose(mean, gb.predict(X))
    assert np.all(var == 0)
    np.testing.assert_allclose(reference_predictions(gb, X, lambda Z: Z[:, 0])[1], X[:, 0])
    np.testing.assert_allclose(reference_predictions(gb, X, np.full(120, 2.0))[1], 2.0)
    # a variance replaces the forest's spread
    np.testing.assert_allclose(reference_predictions(rf, X, np.zeros(120))[1], 0.0)


def test_bad_input_gives_clear_errors():
    X, m, v = problem(0)
    with pytest.raises(ValueError, match="variance must be >= 0"):
        ProxyTree().fit(X, m, variance=-v - 1)
    with pytest.raises(ValueError, match="entries but X has"):
        ProxyTree().fit(X, m[:-1])
    with pytest.raises(ValueError, match="entries but X has"):
        ProxyTree().fit(X, m, variance=v[:10])
    with pytest.raises(TypeError, match="predict"):
        ProxyTree(estimator=object()).fit(X)
    with pytest.raises(TypeError, match="predict"):
        reference_predictions(object(), X)
    gb = GradientBoostingRegressor(n_estimators=5).fit(X, m)
    with pytest.raises(ValueError, match="variance must be >= 0"):
        reference_predictions(gb, X, lambda Z: -np.ones(Z.shape[0]))
    rfc = RandomForestClassifier(n_estimators=2).fit(X, m > 0.5)
    with pytest.raises(TypeError, match="ProxyTreeClassifier"):
        ProxyTree(rfc).fit(X)
    with pytest.raises(ValueError, match="not both"):
        ProxyTree(alpha=1.0, max_leaves=3).fit(X, m)
    with pytest.raises(ValueError, match="min_samples_leaf"):
        ProxyTree(min_samples_leaf=0).fit(X, m)
    with pytest.raises(ValueError, match="needs the targets"):
        ProxyTree().fit(X)
    with pytest.raises(ValueError, match="features"):
        ProxyTree(max_leaves=3).fit(X, m).predict(X[:, :2])


def test_ruleset_view_one_rule_per_leaf():
    X, m, v = problem(1, n=200)
    rf = RandomForestRegressor(n_estimators=10, min_samples_leaf=3, random_state=0).fit(X, m)
    tree = ProxyTree(rf, max_leaves=6).fit(X)
    rules = tree.rules_
    assert len(rules.rules) == tree.n_leaves_ <= 6
    cover = rules.covers(X)
    assert np.all(cover.sum(axis=1) == 1)  # the leaves partition the input space
    np.testing.assert_allclose(rules.predict(X), tree.predict(X))
    assert sum(r.support for r in rules.rules) == X.shape[0]
    assert "if " in str(rules) and rules.to_dict()["rules"][0]["conditions"]
    assert tree.score(X, rf.predict(X)) > 0.5  # R^2 against the reference


def test_cross_validated_alpha_and_clone():
    X, m, v = problem(2, n=150)
    m = m + np.random.default_rng(0).standard_normal(150)  # noisy targets: CV must prune
    tree = ProxyTree(min_samples_leaf=5, random_state=0).fit(X, m, variance=v)
    assert tree.alpha_ in tree.cv_alphas_
    assert tree.cv_loss_[list(tree.cv_alphas_).index(tree.alpha_)] == pytest.approx(tree.cv_loss_.min())
    assert 1 < tree.n_leaves_ < tree.pruning_path_["n_leaves"][0]
    again = clone(tree).fit(X, m, variance=v)
    np.testing.assert_array_equal(again.predict(X), tree.predict(X))


def test_proxy_beats_cart_on_smooth_function():
    """Figure 1 setting (reduced to 5 seeds here; the benchmark runs 20)."""
    diffs = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-3, 3, (100, 1))
        f = lambda z: np.tanh(z[:, 0]) + 0.3 * z[:, 0]
        y = f(x) + 0.5 * rng.standard_normal(100)
        rf = RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=seed).fit(x, y)
        grid = np.linspace(-3, 3, 400)[:, None]
        proxy = ProxyTree(rf, max_leaves=6).fit(x)
        cart = ProxyTree(max_leaves=proxy.n_leaves_).fit(x, y)
        assert cart.n_leaves_ == proxy.n_leaves_
        rmse = lambda t: np.sqrt(np.mean((t.predict(grid) - f(grid)) ** 2))
        diffs.append(rmse(cart) - rmse(proxy))
    assert np.mean(diffs) > 0


def test_local_explanation_and_lime_baseline():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=30, min_samples_leaf=5, random_state=0).fit(X, y)
    glob = ProxyTree(rf, max_leaves=4).fit(X)
    proxy_loss, lime_loss = [], []
    for i in range(4):
        e = glob.explain_local(X[i], random_state=i)
        assert e.tree.tree_["children_left"].size <= 15  # depth <= 3
        assert e.samples.shape == (200, X.shape[1])
        np.testing.assert_allclose(e.reference_mean, rf.predict(e.samples))
        u = (e.samples - X[i]) / glob.feature_scale_
        w = np.exp(-0.5 * (u ** 2).sum(axis=1))
        pred = e.tree.predict(e.samples)
        assert e.loss == pytest.approx(np.sum(w * (e.reference_mean - pred) ** 2) / w.sum())
        lime = e.lime_baseline(n_features=2)
        assert lime.features.size == 2
        assert lime.loss == pytest.approx(local_loss(lime.predict(e.samples), e.reference_mean, w))
        # fidelity is agreement (higher is better): the weighted R^2 of the same predictions
        r = e.reference_mean - np.sum(w * e.reference_mean) / w.sum()
        assert e.fidelity == pytest.approx(1 - e.loss / (np.sum(w * r ** 2) / w.sum()))
        proxy_loss.append(e.loss)
        lime_loss.append(lime.loss)
    assert np.mean(proxy_loss) <= np.mean(lime_loss)
    same = explain_local(rf, X[0], X, random_state=0)  # module function with a training matrix
    assert same.samples.shape == (200, 10)
    with pytest.raises(ValueError):
        explain_local(rf, X[0], X, n_samples=3)
    # a row holding a category name: a TypeError that says so, not NumPy's conversion error
    with pytest.raises(TypeError, match="numeric"):
        explain_local(rf, np.array(["blue"] + [0.5] * 9, dtype=object), X)


def stump(feature, threshold, n_features=2):
    X = np.zeros((4, n_features))
    X[:, feature] = [0.0, 0.0, 1.0, 1.0]
    t = ProxyTree(min_samples_leaf=1, alpha=0.0).fit(X, [0.0, 0.0, 1.0, 1.0])
    t.tree_["threshold"][0] = threshold
    return t


def test_tree_dissimilarity_eq10():
    rng = np.ones(2)
    a, b, c = stump(0, 0.5), stump(0, 0.25), stump(1, 0.5)
    assert tree_dissimilarity(a, a, rng) == 0.0
    assert tree_dissimilarity(a, b, rng) == pytest.approx(0.25)
    assert tree_dissimilarity(a, b, rng) == tree_dissimilarity(b, a, rng)
    assert tree_dissimilarity(a, c, rng) == 1.0
    assert tree_dissimilarity(a, a, rng, weights="paper") == pytest.approx(0.5)  # q = 1/b, b = 2
    X, m, _ = problem(0, n=100)
    deep = ProxyTree(min_samples_leaf=5, max_leaves=5).fit(X, m)
    d = tree_dissimilarity(deep, a, np.ptp(X, axis=0))
    assert 0 < d < 1  # only the root can match
    sk = DecisionTreeRegressor(max_leaf_nodes=5, random_state=0).fit(X, m)
    assert 0 <= tree_dissimilarity(deep, sk, np.ptp(X, axis=0)) <= 1


def test_bootstrap_instability():
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = np.where(X[:, 0] > 0.5, 10.0, 0.0) + 0.01 * rng.standard_normal(200)
    mean, std = bootstrap_instability(lambda: ProxyTree(max_leaves=2), X, y, n_boot=10, random_state=0)
    assert 0 <= mean < 0.05 and std >= 0  # the obvious stump is found on every resample
    noisy = rng.standard_normal(200)
    mean2, _ = bootstrap_instability(lambda: ProxyTree(max_leaves=4), X, noisy, n_boot=6, random_state=0)
    assert mean2 > mean


# ---------------------------------------------------------------- classification


def np_neg_loglik(P):
    """n H(p) of soft targets P (rows) in plain NumPy: -sum_j sum_c P_jc log p_c."""
    p = P.mean(axis=0)
    return -np.sum(P.sum(axis=0)[p > 0] * np.log(p[p > 0]))


def brute_split_proba(X, P, min_leaf, full=False):
    parent = np_neg_loglik(P)
    return brute_search(
        X, lambda left: (parent - np_neg_loglik(P[left]) - np_neg_loglik(P[~left]), abs(parent)),
        min_leaf, full)


def soft_problem(seed, n=80, C=3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, 3)) * 20) / 20
    logits = np.stack([3 * X[:, 0], 2 * X[:, 1] ** 2, np.zeros(n)][:C], axis=1)
    logits += 0.3 * rng.standard_normal((n, C))
    P = np.exp(logits)
    return np.ascontiguousarray(X), np.ascontiguousarray(P / P.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("seed,min_leaf", [(0, 1), (1, 5)])
def test_soft_target_split_search_matches_brute_force(seed, min_leaf):
    X, P = soft_problem(seed)
    rows = np.arange(X.shape[0], dtype=np.int64)
    f, t, gain, n_left, mr = _proxy_split.proxy_best_split_proba(X, rows, P, min_leaf, 1)
    g_ref, f_ref, t_ref = brute_split_proba(X, P, min_leaf)
    assert (f, t) == (f_ref, pytest.approx(t_ref))
    assert gain == pytest.approx(g_ref, rel=1e-9)
    assert _proxy_split.proxy_best_split_proba(X, rows, P, min_leaf, 2) == (f, t, gain, n_left, mr)
    with pytest.raises(ValueError):
        _proxy_split.proxy_best_split_proba(X, rows, -P, min_leaf, 1)


def test_classifier_tree_path_and_rules():
    from sklearn.ensemble import RandomForestClassifier

    from defrag.proxy import ProxyTreeClassifier

    X, P = soft_problem(3, n=200)
    y = np.argmax(P, axis=1)
    rf = RandomForestClassifier(n_estimators=20, min_samples_leaf=3, random_state=0).fit(X, y)
    full = ProxyTreeClassifier(rf, min_samples_leaf=5, alpha=0.0).fit(X)
    Pr = rf.predict_proba(X)
    np.testing.assert_allclose(full.reference_proba_, Pr)
    # growth equals brute force on the reference's probabilities
    t = full.tree_
    stack = [(0, np.arange(200))]
    while stack:
        node, rows = stack.pop()
        if t["children_left"][node] < 0:
            np.testing.assert_allclose(t["value"][node], Pr[rows].mean(axis=0))
            continue
        g, f, thr = brute_split_proba(X[rows], Pr[rows], 5)
        # the printed threshold: the same split of the training rows
        assert t["feature"][node] == f and np.array_equal(X[:, f] <= t["threshold"][node], X[:, f] <= thr)
        left = X[rows, f] <= t["threshold"][node]
        stack += [(t["children_left"][node], rows[left]), (t["children_right"][node], rows[~left])]
    # pruning cost: -2 log-likelihood of the leaves, additive; nested sequence
    path = full.pruning_path_
    assert np.all(np.diff(path["n_leaves"]) < 0) and np.all(np.diff(path["fit"]) >= -1e-9)
    for k in (0, len(path["n_leaves"]) // 2, len(path["n_leaves"]) - 1):
        tk = ProxyTreeClassifier(rf, min_samples_leaf=5, max_leaves=int(path["n_leaves"][k])).fit(X)
        leaf = tk.apply(X)
        cost = sum(2 * np_neg_loglik(Pr[leaf == u]) for u in np.unique(leaf))
        assert path["fit"][k] == pytest.approx(cost, rel=1e-10, abs=1e-9)
    small = ProxyTreeClassifier(rf, max_leaves=4).fit(X)
    assert small.n_leaves_ <= 4 and len(small.rules_.rules) == small.n_leaves_
    np.testing.assert_array_equal(small.rules_.predict(X), small.predict(X))
    assert small.rules_.rules[0].proba is not None
    np.testing.assert_allclose(small.predict_proba(X).sum(axis=1), 1.0)
    assert small.score(X, rf.predict(X)) > 0.7
    cv = ProxyTreeClassifier(rf, random_state=0).fit(X)
    assert cv.alpha_ in cv.cv_alphas_
    hard = ProxyTreeClassifier(max_leaves=3).fit(X, np.array(["a", "b", "c"])[y])
    assert set(hard.predict(X)) <= {"a", "b", "c"}
    with pytest.raises(TypeError, match="predict_proba"):
        ProxyTreeClassifier(GradientBoostingRegressor()).fit(X)
    with pytest.raises(ValueError, match="one label per row"):
        ProxyTreeClassifier().fit(X, y[:-1])


def test_dataframe_input_keeps_feature_names_without_warnings():
    import warnings

    import pandas as pd

    X, m, _ = problem(4, n=120)
    df = pd.DataFrame(X, columns=["age", "bmi", "bp"])
    gb = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(df, m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = ProxyTree(gb, max_leaves=4).fit(df, variance=lambda Z: np.full(len(Z), 0.1))
        pred = tree.predict(df)
    assert list(tree.feature_names_in_) == ["age", "bmi", "bp"]
    assert {c.name for r in tree.rules_.rules for c in r.conditions} <= {"age", "bmi", "bp"}
    np.testing.assert_allclose(tree.reference_var_, 0.1)
    np.testing.assert_allclose(pred, tree.rules_.predict(X))


def test_edge_cases_strided_targets_tiny_and_constant_inputs():
    X = np.random.default_rng(0).random((30, 2))
    t = ProxyTree(min_samples_leaf=10, alpha=0.0).fit(X, X[:, 0], variance=X[:, 1])  # strided views
    _, f, thr = brute_split(X, X[:, 0].copy(), X[:, 1].copy(), 10)
    assert t.n_leaves_ >= 2 and t.tree_["feature"][0] == f
    assert np.array_equal(X[:, f] <= t.tree_["threshold"][0], X[:, f] <= thr)  # (printed threshold)
    assert ProxyTree(max_depth=0).fit(X, X[:, 0]).n_leaves_ == 1
    const = ProxyTree().fit(X, np.ones(30))
    assert const.n_leaves_ == 1 and np.all(const.predict(X) == 1.0)
    assert ProxyTree(max_leaves=3).fit(X[:3], X[:3, 0]).n_leaves_ == 1
    with pytest.raises(ValueError, match="cv=5"):
        ProxyTree().fit(X[:3], X[:3, 0])


def test_local_explanation_of_a_classifier():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=30, min_samples_leaf=3, random_state=0).fit(X, y)
    glob = ProxyTreeClassifier(rf, max_leaves=4).fit(X)
    for i in (0, 60, 120):  # one point of each class
        e = glob.explain_local(X[i], random_state=i)
        assert e.tree.tree_["children_left"].size <= 15  # depth <= 3
        assert isinstance(e.tree, ProxyTreeClassifier)
        # soft targets: the forest's probabilities at the samples
        np.testing.assert_allclose(e.reference_proba, rf.predict_proba(e.samples))
        c = int(np.argmax(rf.predict_proba(X[i:i + 1])[0]))
        assert e.explained_class == rf.classes_[c]
        np.testing.assert_array_equal(e.reference_mean, e.reference_proba[:, c])
        u = (e.samples - X[i]) / glob.feature_scale_
        w = np.exp(-0.5 * (u ** 2).sum(axis=1))
        p = e.tree.predict_proba(e.samples)[:, c]
        assert e.loss == pytest.approx(np.sum(w * (e.reference_mean - p) ** 2) / w.sum())
        assert e.prediction == e.tree.predict(X[i:i + 1])[0]
        np.testing.assert_allclose(e.prediction_proba.sum(), 1.0)
        assert e.reference_var is None
        lime = e.lime_baseline(n_features=2)  # regresses the explained class's probability
        assert lime.features.size == 2 and np.isfinite(lime.fidelity)
    assert e.prediction == rf.predict(X[120:121])[0]  # an unambiguous point of the last class
    with pytest.raises(ValueError, match="variance"):
        explain_local(rf, X[0], X, variance=lambda Z: np.zeros(len(Z)))


def test_local_explanation_of_a_dataframe_model_raises_no_warning():
    pd = pytest.importorskip("pandas")
    import warnings

    X, y = make_regression(n_samples=300, n_features=4, random_state=0)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    rf = RandomForestRegressor(n_estimators=10, random_state=0).fit(df, y)
    rfc = RandomForestClassifier(n_estimators=10, random_state=0).fit(df, y > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the samples go to the forests with the column names
        ProxyTree(rf, max_leaves=3).fit(df).explain_local(df.iloc[0], random_state=0)
        ProxyTreeClassifier(rfc, max_leaves=3).fit(df).explain_local(df.iloc[0], random_state=0)


# ---------------------------------------------------------------- missing values (issue 16)

def with_nan(X, seed, share=0.2, columns=(0, 1)):
    X = X.copy()
    rng = np.random.default_rng(seed)
    for d in columns:
        X[rng.random(X.shape[0]) < share, d] = np.nan
    return np.ascontiguousarray(X)


@pytest.mark.parametrize("seed,min_leaf,ties", [(0, 1, False), (1, 4, True), (2, 2, True)])
def test_split_search_with_nan_matches_numpy_reference(seed, min_leaf, ties):
    X, m, v = problem(seed, n=50, ties=ties)
    X = with_nan(X, seed)
    # missingness in x0 carries signal: the better side for NaN rows differs by feature
    m = m + 1.5 * np.isnan(X[:, 0])
    rows = np.arange(X.shape[0], dtype=np.int64)
    got = _proxy_split.proxy_best_split(X, rows, m, v, min_leaf, FLOOR, 1)
    g_ref, f_ref, t_ref, mr_ref, nl_ref = brute_split(X, m, v, min_leaf, full=True)
    assert got[0] == f_ref and got[1] == pytest.approx(t_ref)
    assert got[2] == pytest.approx(g_ref, rel=1e-9)
    assert (got[3], got[4]) == (nl_ref, mr_ref)
    assert got == _proxy_split.proxy_best_split(X, rows, m, v, min_leaf, FLOOR, 2)
    # soft targets, same NaN
    P = np.ascontiguousarray(np.stack([1.0 / (1 + np.exp(-3 * m)), 1.0 / (1 + np.exp(3 * m))], axis=1))
    got = _proxy_split.proxy_best_split_proba(X, rows, P, min_leaf, 1)
    g_ref, f_ref, t_ref, mr_ref, nl_ref = brute_split_proba(X, P, min_leaf, full=True)
    assert (got[0], got[3], got[4]) == (f_ref, nl_ref, mr_ref) and got[1] == pytest.approx(t_ref)
    assert got[2] == pytest.approx(g_ref, rel=1e-9)


def test_split_search_nan_special_cases():
    rows = np.arange(12, dtype=np.int64)
    # only missingness separates the targets: present values left, NaN right
    X = np.ones((12, 1))
    X[8:, 0] = np.nan
    m = np.where(np.isnan(X[:, 0]), 4.0, 0.0)
    f, t, gain, n_left, mr = _proxy_split.proxy_best_split(X, rows, m, np.zeros(12), 2, FLOOR, 1)
    assert (f, t, n_left, mr) == (0, 1.0, 8, True) and gain > 0
    assert brute_split(X, m, np.zeros(12), 2, full=True)[1:] == (0, 1.0, True, 8)
    # a feature without NaN in the node: NaN goes to the larger child
    X = np.arange(12.0)[:, None]
    m = (X[:, 0] > 3.5).astype(float)
    f, t, _, n_left, mr = _proxy_split.proxy_best_split(X, rows, m, np.zeros(12), 1, FLOOR, 1)
    assert (f, t, n_left, mr) == (0, 3.5, 4, True)
    m = (X[:, 0] > 7.5).astype(float)
    assert _proxy_split.proxy_best_split(X, rows, m, np.zeros(12), 1, FLOOR, 1)[3:] == (8, False)
    # an all-NaN feature is never split on
    X = np.column_stack([np.full(12, np.nan), np.arange(12.0)])
    assert _proxy_split.proxy_best_split(X, rows, m, np.zeros(12), 1, FLOOR, 1)[0] == 1


def route_by_hand(tree, X):
    """Leaf of each row by walking tree_ row by row: x <= threshold left, NaN by missing_right."""
    t, out = tree.tree_, []
    for x in X:
        v = 0
        while t["children_left"][v] >= 0:
            xv = x[t["feature"][v]]
            right = bool(t["missing_right"][v]) if np.isnan(xv) else xv > t["threshold"][v]
            v = t["children_right"][v] if right else t["children_left"][v]
        out.append(v)
    return np.asarray(out)


def test_grown_tree_with_nan_equals_brute_force_growth():
    X, m, _ = problem(3, n=70)
    X = with_nan(X, 3, share=0.25)
    m = m + np.isnan(X[:, 1])
    tree = ProxyTree(min_samples_leaf=6, alpha=0.0).fit(X, m)  # no reference: the tree routes NaN
    ref = grown_splits_by_brute_force(X, m, np.zeros(70), np.arange(70), 6, {})
    got = tree_splits(tree, missing=True)
    assert got.keys() == ref.keys()
    for p in ref:
        assert got[p][0] == ref[p][0] and got[p][2] == ref[p][2] and got[p][1] == pytest.approx(ref[p][1])


def test_proxy_tree_routes_nan_where_the_forest_does():
    rng = np.random.default_rng(0)
    X = with_nan(rng.normal(size=(300, 3)), 1, share=0.15)
    y = np.where(np.isnan(X[:, 0]), 2.0, np.nan_to_num(X[:, 0])) + 0.5 * np.nan_to_num(X[:, 1])
    rf = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    tree = ProxyTree(rf, max_leaves=6).fit(X)
    assert tree.supports_missing_
    np.testing.assert_array_equal(tree.apply(X), route_by_hand(tree, X))
    np.testing.assert_array_equal(tree.predict(X), tree.tree_["value"][route_by_hand(tree, X)])
    # the rules say where NaN goes and predict as the tree does
    rules = tree.rules_
    assert "(or missing)" in str(rules)
    np.testing.assert_allclose(rules.predict(X), tree.predict(X))
    # the reference's targets at NaN rows are the forest's own
    np.testing.assert_allclose(tree.reference_mean_, rf.predict(X))
    # a classifier too; and a fresh NaN row in a feature never missing in training
    rfc = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y > 1)
    clf = ProxyTreeClassifier(rfc, max_leaves=5).fit(X)
    np.testing.assert_allclose(clf.predict_proba(X), clf.tree_["value"][route_by_hand(clf, X)])
    Xn = X[:5].copy()
    Xn[:, 2] = np.nan
    np.testing.assert_array_equal(clf.apply(Xn), route_by_hand(clf, Xn))


def test_proxy_tree_refuses_nan_its_reference_cannot_route():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    gb = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, X[:, 0])
    Xn = with_nan(X, 2)
    with pytest.raises(ValueError, match=r"NaN, but the reference model \(GradientBoostingRegressor\) "
                                         "has no rule for missing values"):
        ProxyTree(gb, max_leaves=4).fit(Xn)
    tree = ProxyTree(gb, max_leaves=4).fit(X)
    assert not tree.supports_missing_ and "missing" not in str(tree.rules_)
    with pytest.raises(ValueError, match="no rule for missing values"):
        tree.predict(Xn)
    with pytest.raises(ValueError, match="no rule for missing values"):
        explain_local(gb, Xn[np.isnan(Xn).any(axis=1)][0], X, n_samples=30, random_state=0)


def test_local_explanation_keeps_a_missing_feature_missing():
    rng = np.random.default_rng(2)
    X = with_nan(rng.normal(size=(200, 3)), 3)
    y = np.nan_to_num(X[:, 1]) + np.isnan(X[:, 0])
    rf = RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0).fit(X, y)
    x = np.array([np.nan, 0.3, -0.2])
    exp = explain_local(rf, x, X, n_samples=60, max_leaves=3, random_state=0)
    assert np.isnan(exp.samples[:, 0]).all() and np.isfinite(exp.samples[:, 1:]).all()
    np.testing.assert_allclose(exp.reference_mean, rf.predict(exp.samples))
    assert 0 not in exp.features_used() and np.isfinite(exp.fidelity)
    lime = exp.lime_baseline(n_features=2)
    assert np.isfinite(lime.fidelity) and np.isfinite(lime.predict(exp.samples)).all()


def test_bootstrap_instability_with_nan_the_forest_routes():
    rng = np.random.default_rng(5)
    X = with_nan(rng.normal(size=(150, 3)), 6)
    y = np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1])
    rf = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    mean, std = bootstrap_instability(lambda: ProxyTree(rf, max_leaves=3), X, n_boot=3, random_state=0)
    assert 0.0 <= mean <= 1.0 and std >= 0.0
    gb = GradientBoostingRegressor(n_estimators=3, random_state=0).fit(np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="no rule for missing values"):
        bootstrap_instability(lambda: ProxyTree(gb, max_leaves=3), X, n_boot=2, random_state=0)


def test_non_tree_reference_says_by_its_allow_nan_tag():
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.neighbors import KNeighborsRegressor

    class NanAware(RegressorMixin, BaseEstimator):  # routes NaN itself: reads it as 0
        def fit(self, X, y):
            self.n_features_in_ = np.shape(X)[1]
            return self

        def predict(self, X):
            return np.nan_to_num(np.asarray(X, dtype=float)).sum(axis=1)

        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = True
            return tags

    rng = np.random.default_rng(7)
    X = with_nan(rng.normal(size=(80, 2)), 8)
    tree = ProxyTree(NanAware().fit(X, None), max_leaves=3).fit(X)
    np.testing.assert_allclose(tree.reference_mean_, np.nan_to_num(X).sum(axis=1))
    knn = KNeighborsRegressor(n_neighbors=3).fit(np.nan_to_num(X), np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match=r"reference model \(KNeighborsRegressor\) has no rule"):
        ProxyTree(knn, max_leaves=3).fit(X)


@pytest.mark.parametrize("classifier", [False, True])
def test_printed_rules_are_the_tree_on_new_rows(classifier):
    """The thresholds the rules print are those predict tests, on rows the fit never saw."""
    X, m, _ = problem(5, n=300)
    if classifier:
        rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, m > np.median(m))
        tree = ProxyTreeClassifier(rf, max_leaves=6).fit(X)
    else:
        tree = ProxyTree(min_samples_leaf=10, max_leaves=6).fit(X, m)
    new = np.random.default_rng(9).random((5000, X.shape[1])) * np.ptp(X, axis=0) + X.min(axis=0)
    np.testing.assert_array_equal(tree.predict(new), tree.rules_.predict(new))
    for rule in tree.rules_.rules:
        for c in rule.conditions:  # the text holds the bounds exactly
            for bound in (c.lower, c.upper):
                assert bound is None or repr(bound).removesuffix(".0") in str(c)
