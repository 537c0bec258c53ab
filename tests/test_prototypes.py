"""Tree-space prototypes: proximity kernels against brute force, greedy selections
against naive re-implementations, and the PrototypeExplainer estimator."""
import itertools
import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier,
                              GradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)

from defrag import prototypes as P
from defrag.prototypes import distance as proximity, selection
from defrag.prototypes import PrototypeExplainer


# ------------------------------------------------------------------ brute-force references

def brute_distance(LA, LB, w):
    """1 - sum_t w_t [LA[a, t] == LB[b, t]] / sum_t w_t, tree by tree in Python."""
    w = np.asarray(w, dtype=np.float64)
    out = np.empty((LA.shape[0], LB.shape[0]))
    for a in range(LA.shape[0]):
        for b in range(LB.shape[0]):
            out[a, b] = 1.0 - sum(w[t] for t in range(LA.shape[1]) if LA[a, t] == LB[b, t]) / w.sum()
    return out


def brute_gbt_weights(gb, X):
    """Definition 3 directly from predictions: w_i = Var(learning_rate * tree_i.predict(X))."""
    w = np.array([np.var(gb.learning_rate * t.predict(X)) for t in np.asarray(gb.estimators_).reshape(-1)])
    return w / w.sum()


def data(seed, n=120, d=5, classes=2):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=3, n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, random_state=seed)
    return X, y


# ------------------------------------------------------------------ kernel

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_matches_brute_force_on_random_leaves(seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 40))
    LA = rng.integers(0, 4, (int(rng.integers(1, 30)), T)).astype(np.int32)
    LB = rng.integers(0, 4, (int(rng.integers(1, 30)), T)).astype(np.int32)
    w = rng.random(T).astype(np.float32)
    w[rng.random(T) < 0.3] = 0  # zero-weight trees are skipped
    w[0] = 0.5
    D = P.tree_distance(LA, LB, w, n_threads=2)
    assert D.dtype == np.float32 and D.shape == (LA.shape[0], LB.shape[0])
    np.testing.assert_allclose(D, brute_distance(LA, LB, w), atol=2e-6)


@pytest.mark.parametrize("weighted", [True, False])
def test_kernel_thread_count_and_path_do_not_change_results(weighted, kernel_env):
    rng = np.random.default_rng(5)
    LA = rng.integers(0, 3, (203, 77)).astype(np.int32)
    w = rng.random(77).astype(np.float32) if weighted else np.ones(77, np.float32)
    ref = P.tree_distance(LA, LA, w, n_threads=1)
    for th in (2, 3):
        np.testing.assert_array_equal(P.tree_distance(LA, LA, w, n_threads=th), ref)
    kernel_env(DEFRAG_NO_AVX2="1")  # SSE2 / scalar path: same values
    np.testing.assert_array_equal(P.tree_distance(LA, LA, w, n_threads=2), ref)
    kernel_env()
    np.testing.assert_allclose(ref[:20], brute_distance(LA[:20], LA, w), atol=2e-6)
    # symmetric and zero on the diagonal, exactly
    np.testing.assert_array_equal(ref, ref.T)
    assert np.all(np.diag(ref) == 0)
    # A x B blocks equal the slices of the full matrix
    np.testing.assert_array_equal(P.tree_distance(LA[10:50], LA[100:203], w, 2), ref[10:50, 100:203])


def test_kernel_rejects_bad_input():
    LA = np.zeros((3, 4), np.int32)
    with pytest.raises(ValueError):
        P.tree_distance(LA, LA, np.zeros(4, np.float32))  # weights sum to 0
    with pytest.raises(ValueError):
        P.tree_distance(LA, LA, np.array([1, -1, 1, 1], np.float32))
    with pytest.raises(ValueError):
        P.tree_distance(LA, LA, np.array([1, np.nan, 1, 1], np.float32))
    with pytest.raises(ValueError):
        P.tree_distance(LA, np.zeros((3, 5), np.int32), np.ones(4, np.float32))
    assert P.tree_distance(LA[:0], LA, np.ones(4, np.float32)).shape == (0, 3)


@pytest.mark.parametrize("model", ["rf", "et"])
def test_rf_distance_matches_leaf_comparison(model):
    X, y = data(0)
    cls = RandomForestClassifier if model == "rf" else ExtraTreesClassifier
    rf = cls(n_estimators=15, max_depth=4, random_state=0).fit(X, y)
    leaves = P.leaf_matrix(rf, X)
    assert leaves.shape == (X.shape[0], 15)
    w = P.tree_weights(rf, leaves, "rf")
    D = P.tree_distance(leaves[:40], leaves, w)
    # brute force straight from the individual trees
    per_tree = np.stack([t.apply(X.astype(np.float32)) for t in rf.estimators_], axis=1)
    ref = brute_distance(per_tree[:40], per_tree, np.ones(15))
    np.testing.assert_allclose(D, ref, atol=1e-6)
    assert D.min() >= 0 and D.max() <= 1
    np.testing.assert_array_equal(np.diag(D[:, :40]), 0)


@pytest.mark.parametrize("classes", [2, 3])
def test_gbt_distance_matches_definition_3(classes):
    X, y = data(1, classes=classes)
    gb = GradientBoostingClassifier(n_estimators=12, max_depth=2, learning_rate=0.3,
                                    random_state=0).fit(X, y)
    leaves = P.leaf_matrix(gb, X)
    K = 1 if classes == 2 else classes
    assert leaves.shape == (X.shape[0], 12 * K)  # multiclass: per-class trees summed over
    w = P.tree_weights(gb, leaves, "gbt")
    w_ref = brute_gbt_weights(gb, X)
    np.testing.assert_allclose(w, w_ref, rtol=1e-5)
    assert np.ptp(w) > 0  # really weighted
    D = P.tree_distance(leaves, leaves, w)
    per_tree = np.stack([t.apply(X.astype(np.float32)) for t in np.asarray(gb.estimators_).reshape(-1)],
                        axis=1)
    np.testing.assert_allclose(D, brute_distance(per_tree, per_tree, w_ref), atol=2e-6)
    np.testing.assert_array_equal(D, D.T)
    assert np.all(np.diag(D) == 0) and D.min() >= 0 and D.max() <= 1


# ------------------------------------------------------------------ selection

def naive_coverage_greedy(D, cand_class, point_class, k, scale):
    """Algorithm 1 line by line: f(M) = sum_s min(1, min_{m in M, c(m)=c(s)} d(s, m)),
    argmax over all unselected candidates of scale[c(s)] (f(P u M) - f(P u M u {s}))."""
    def f_class(M, c):
        pts = np.flatnonzero(point_class == c)
        ms = [m for m in M if cand_class[m] == c]
        return sum(min([1.0] + [float(D[m, x]) for m in ms]) for x in pts)

    M = []
    for _ in range(k):
        best, arg = -1.0, None
        for s in range(D.shape[0]):
            if s in M:
                continue
            c = cand_class[s]
            g = scale[c] * (f_class(M, c) - f_class(M + [s], c))
            if g > best + 1e-12:
                best, arg = g, s
        M.append(arg)
    return M


def random_problem(seed, n=30, q=3):
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    D = (D / D.max()).astype(np.float32)
    cls = rng.integers(0, q, n)
    cls[:q] = np.arange(q)
    return D, cls


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["sm-a", "sm-wa"])
def test_adaptive_greedy_equals_naive_and_plain(seed, method):
    D, cls = random_problem(seed)
    q = 3
    k = 8
    lazy = P.select_submodular(D, cls, cls, q, k, method, lazy=True)
    plain = P.select_submodular(D, cls, cls, q, k, method, lazy=False)
    assert lazy == plain
    sizes = np.bincount(cls, minlength=q)
    scale = 1.0 / sizes if method == "sm-wa" else np.ones(q)
    assert lazy == naive_coverage_greedy(D, cls, cls, k, scale)


@pytest.mark.parametrize("seed", range(3))
def test_uniform_greedy_is_greedy_per_class(seed):
    D, cls = random_problem(seed, n=31)
    chosen = P.select_submodular(D, cls, cls, 3, 7, "sm-u")
    assert chosen == P.select_submodular(D, cls, cls, 3, 7, "sm-u", lazy=False)
    budget = selection._uniform_budget(7, np.bincount(cls, minlength=3))
    assert budget.sum() == 7 and budget.max() - budget.min() <= 1
    np.testing.assert_array_equal(np.bincount(cls[chosen], minlength=3), budget)
    for c in range(3):  # within a class: plain single-class greedy k-medoids
        idx = np.flatnonzero(cls == c)
        sub = naive_coverage_greedy(D[np.ix_(idx, idx)], np.zeros(idx.size, int), np.zeros(idx.size, int),
                                    int(budget[c]), np.ones(1))
        assert [x for x in chosen if cls[x] == c] == list(idx[sub])


def test_uniform_budget_respects_small_classes():
    np.testing.assert_array_equal(selection._uniform_budget(10, np.array([1, 20, 20])), [1, 5, 4])
    np.testing.assert_array_equal(selection._uniform_budget(2, np.array([5, 9, 7])), [0, 1, 1])


def test_lazy_equals_plain_with_ties():
    # integer-valued distances: many exactly tied gains
    rng = np.random.default_rng(3)
    D = (rng.integers(0, 4, (40, 40)) / 4).astype(np.float32)
    D = np.minimum(D, D.T)
    np.fill_diagonal(D, 0)
    cls = rng.integers(0, 2, 40)
    for method in ("sm-a", "sm-wa", "sm-u"):
        assert P.select_submodular(D, cls, cls, 2, 40, method) == \
            P.select_submodular(D, cls, cls, 2, 40, method, lazy=False)


@pytest.mark.parametrize("seed", range(5))
def test_sm_a_reaches_1_minus_1_over_e_of_optimum(seed):
    D, cls = random_problem(seed, n=10, q=2)
    k = 3

    def g(M):  # eq. (4) with phantom exemplars at distance 1
        total = 0.0
        for x in range(10):
            ds = [float(D[m, x]) for m in M if cls[m] == cls[x]]
            total += 1.0 - min([1.0] + ds)
        return total

    best = max(g(list(M)) for M in itertools.combinations(range(10), k))
    chosen = P.select_submodular(D, cls, cls, 2, k, "sm-a")
    assert g(chosen) >= (1 - 1 / math.e) * best - 1e-9
    assert best > 0


@pytest.mark.parametrize("seed", range(3))
def test_sg_is_greedy_on_balanced_accuracy_and_never_lowers_it(seed):
    X, y = data(seed, n=80)
    rf = RandomForestClassifier(n_estimators=20, random_state=seed).fit(X, y)
    ex = PrototypeExplainer(rf, n_prototypes=15, method="sg").fit(X, y)
    trace = ex.sg_trace_
    assert len(ex.prototypes_) == len(trace) <= 15
    assert np.all(np.diff(trace) > 0)
    # the trace is the real training balanced accuracy of each prefix
    for m in range(1, len(trace) + 1):
        sub = PrototypeExplainer(rf, n_prototypes=m, method="sg").fit(X, y)
        np.testing.assert_array_equal(sub.prototypes_, ex.prototypes_[:m])
        assert sub.score(X, y) == pytest.approx(trace[m - 1])
    # naive check of the last step: no single extra point improves on the final set
    leaves = P.leaf_matrix(rf, X)
    D = P.tree_distance(leaves, leaves, np.ones(20, np.float32))
    if len(trace) < 15:
        from sklearn.metrics import balanced_accuracy_score
        protos = list(ex.prototypes_)
        for s in range(len(y)):
            if s in protos:
                continue
            M = sorted(protos + [s])
            pred = y[np.array(M)[np.argmin(D[:, M], axis=1)]]
            assert balanced_accuracy_score(y, pred) <= trace[-1] + 1e-12


# ------------------------------------------------------------------ estimator

@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    return X[idx[:300]], y[idx[:300]], X[idx[300:]], y[idx[300:]]


@pytest.mark.parametrize("method", ["sm-a", "sm-wa", "sm-u"])
@pytest.mark.parametrize("distance", ["rf", "gbt", "euclidean"])
def test_all_prototypes_is_1nn(cancer, distance, method):
    Xtr, ytr, Xte, yte = cancer
    Xtr, ytr = Xtr[:120], ytr[:120]
    est = (GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0) if distance == "gbt"
           else RandomForestClassifier(n_estimators=20, max_depth=5, random_state=0)).fit(Xtr, ytr)
    ex = PrototypeExplainer(est, n_prototypes=len(ytr), method=method, distance=distance).fit(Xtr, ytr)
    assert sorted(ex.prototypes_) == list(range(len(ytr)))
    # 1-NN under the same distance (ties to the lower training index)
    if distance == "euclidean":
        D = proximity.euclidean_distances(Xte, Xtr)
    else:
        lt, lr = P.leaf_matrix(est, Xte), P.leaf_matrix(est, Xtr)
        D = P.tree_distance(lt, lr, P.tree_weights(est, lr, distance))
    np.testing.assert_array_equal(ex.predict(Xte), ytr[np.argmin(D, axis=1)])


def test_estimator_end_to_end(cancer):
    Xtr, ytr, Xte, yte = cancer
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(Xtr, ytr)
    for method in ("sm-a", "sm-wa", "sm-u"):
        ex = PrototypeExplainer(rf, n_prototypes=6, method=method).fit(Xtr)  # classes from rf
        assert ex.distance_ == "rf" and len(ex.prototypes_) == 6 == len(set(ex.prototypes_))
        np.testing.assert_array_equal(ex.prototype_labels_, rf.predict(Xtr)[ex.prototypes_])
        assert ex.score(Xte, yte) > 0.85
        if method == "sm-u":
            assert sorted(np.bincount(ex.prototype_labels_)) == [3, 3]
    idx, labels, dist = ex.explain(Xte[:5], n_neighbors=3)
    assert idx.shape == labels.shape == dist.shape == (5, 3)
    assert np.all(np.diff(dist, axis=1) >= 0)
    np.testing.assert_array_equal(labels[:, 0], ex.predict(Xte[:5]))
    pos = {p: i for i, p in enumerate(ex.prototypes_)}
    cols = np.vectorize(pos.get)(idx)
    np.testing.assert_array_equal(dist, np.take_along_axis(ex.transform(Xte[:5]), cols, axis=1))
    i1, l1, d1 = ex.explain(Xte[0])
    assert i1.shape == (3,)
    gb = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(Xtr, ytr)
    assert PrototypeExplainer(gb, n_prototypes=4).fit(Xtr, ytr).distance_ == "gbt"


def test_max_candidates(cancer):
    Xtr, ytr, _, _ = cancer
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(Xtr, ytr)
    ex = PrototypeExplainer(rf, n_prototypes=5, max_candidates=50, random_state=1).fit(Xtr, ytr)
    cand = np.sort(np.random.RandomState(1).choice(len(ytr), 50, replace=False))
    assert set(ex.prototypes_) <= set(cand)


def test_bad_input(cancer):
    Xtr, ytr, _, _ = cancer
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="n_prototypes"):
        PrototypeExplainer(rf, n_prototypes=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="larger than"):
        PrototypeExplainer(rf, n_prototypes=len(ytr) + 1).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="method"):
        PrototypeExplainer(rf, method="pam").fit(Xtr, ytr)
    with pytest.raises(ValueError, match="distance"):
        PrototypeExplainer(rf, distance="cosine").fit(Xtr, ytr)
    reg = RandomForestRegressor(n_estimators=5, random_state=0).fit(Xtr, ytr + 0.5)
    with pytest.raises(ValueError, match="not a classifier"):
        PrototypeExplainer(reg).fit(Xtr)
    gbr = GradientBoostingRegressor(n_estimators=5).fit(Xtr, ytr + 0.5)
    with pytest.raises(ValueError, match="not a classifier"):
        PrototypeExplainer(gbr).fit(Xtr)
    with pytest.raises(ValueError, match="class labels"):
        PrototypeExplainer(rf).fit(Xtr, ytr + 0.5)
    with pytest.raises(ValueError, match="features"):
        PrototypeExplainer(rf).fit(Xtr[:, :5], ytr)
    ex = PrototypeExplainer(rf, n_prototypes=3).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="features"):
        ex.predict(Xtr[:, :5])
    with pytest.raises(ValueError, match="entries"):
        PrototypeExplainer(rf).fit(Xtr, ytr[:-1])
    with pytest.raises(ValueError, match="gradient boosting"):
        PrototypeExplainer(rf, distance="gbt").fit(Xtr, ytr)
    with pytest.raises(ValueError, match="estimator"):
        PrototypeExplainer(None).fit(Xtr, ytr)
    with pytest.raises(TypeError):
        PrototypeExplainer(object()).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="requires y to be passed"):  # an unfitted forest, nothing to fit it on
        PrototypeExplainer(RandomForestClassifier()).fit(Xtr)
    assert PrototypeExplainer(None, distance="euclidean", n_prototypes=2).fit(Xtr, ytr).prototypes_.size == 2
    # Euclidean prototypes of any fitted classifier's predictions
    from sklearn.linear_model import LogisticRegression
    lr = LogisticRegression(max_iter=50).fit(Xtr[:, :3], ytr)
    ex = PrototypeExplainer(lr, distance="euclidean", n_prototypes=4).fit(Xtr[:, :3])
    np.testing.assert_array_equal(ex.prototype_labels_, lr.predict(Xtr[:, :3])[ex.prototypes_])
    with pytest.raises(TypeError, match="apply"):
        PrototypeExplainer(lr).fit(Xtr[:, :3])


def naive_sg(D, y, k):
    """SG line by line: add the point maximising training balanced accuracy of the
    nearest-prototype rule (ties to the lower index); stop when nothing improves."""
    from sklearn.metrics import balanced_accuracy_score
    M, best = [], 0.0
    while len(M) < k:
        scores = []
        for s in range(len(y)):
            if s in M:
                scores.append(-1.0)
                continue
            Ms = np.array(sorted(M + [s]))
            scores.append(balanced_accuracy_score(y, y[Ms[np.argmin(D[:, Ms], axis=1)]]))
        s = int(np.argmax(scores))
        if not scores[s] > best + 1e-12:
            break
        M.append(s)
        best = scores[s]
    return M


@pytest.mark.parametrize("seed", range(3))
def test_sg_equals_naive(seed):
    rng = np.random.default_rng(seed)
    pts = rng.random((45, 2))
    y = ((pts[:, 0] + 0.3 * rng.standard_normal(45)) > 0.5).astype(int) + (pts[:, 1] > 0.7)
    D = np.round(np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)) * 8) / 16  # many ties
    D = D.astype(np.float32)
    chosen, trace = P.select_supervised(D, y, np.arange(45), y, 3, 12)
    assert chosen == naive_sg(D, y, 12)
    assert np.all(np.diff(trace) > 0)


def test_results_do_not_depend_on_threads(cancer):
    Xtr, ytr, Xte, _ = cancer
    gb = GradientBoostingClassifier(n_estimators=30, random_state=0).fit(Xtr, ytr)
    one = PrototypeExplainer(gb, n_prototypes=12, n_jobs=1).fit(Xtr, ytr)
    two = PrototypeExplainer(gb, n_prototypes=12, n_jobs=2).fit(Xtr, ytr)
    np.testing.assert_array_equal(one.prototypes_, two.prototypes_)
    np.testing.assert_array_equal(one.transform(Xte), two.transform(Xte))


def test_constant_boosting_model_is_rejected():
    from types import SimpleNamespace
    # a source model whose two trees hold 0.05 (0.5 times the learning rate) at every node
    source = SimpleNamespace(leaf_values=lambda: [np.full(3, 0.05), np.full(3, 0.05)])
    leaves = np.array([[1, 2], [2, 1], [1, 1]], dtype=np.int32)
    with pytest.raises(ValueError, match="constant"):
        proximity.source_tree_weights(source, leaves, "gbt")


def definition3_from_margins(stages, K, centre_first=False):
    """Definition 3 from predictions: tree i's output on S is the raw score its round
    adds in its class column (stages: the raw scores after each round, (n, K) each;
    trees round-major, classes within a round). centre_first: the first round's trees
    also carry the initial score (LightGBM), a constant that the variance ignores only
    once taken out. Returns the normalised weights."""
    n = stages[0].shape[0]
    stages = [np.zeros((n, K))] + [np.asarray(s).reshape(n, K) for s in stages]
    outputs = [stages[r + 1][:, c] - stages[r][:, c] for r in range(len(stages) - 1)
               for c in range(K)]
    if centre_first:
        outputs[:K] = [o - o.mean() for o in outputs[:K]]
    w = np.array([np.var(o) for o in outputs])
    return w / w.sum()


@pytest.mark.parametrize("classes", [2, 3])
def test_gbt_distance_of_an_xgboost_model_matches_definition_3(classes):
    xgb = pytest.importorskip("xgboost")
    X, y = data(2, classes=classes)
    model = xgb.XGBClassifier(n_estimators=8, max_depth=2, learning_rate=0.3).fit(X, y)
    leaves = P.leaf_matrix(model, X)
    K = 1 if classes == 2 else classes
    assert leaves.shape == (X.shape[0], 8 * K)
    w_ref = definition3_from_margins(
        [model.predict(X, output_margin=True, iteration_range=(0, r + 1)) for r in range(8)], K)
    w = P.tree_weights(model, leaves, "gbt")
    np.testing.assert_allclose(w, w_ref, rtol=1e-3, atol=1e-6)
    assert np.ptp(w) > 0
    ex = PrototypeExplainer(model, n_prototypes=4).fit(X, y)
    assert ex.distance_ == "gbt"
    np.testing.assert_allclose(ex.tree_weights_, w, rtol=1e-6)
    # an XGBoost random forest is no boosting model
    rf = xgb.XGBRFClassifier(n_estimators=5, max_depth=2).fit(X, y)
    assert PrototypeExplainer(rf, n_prototypes=4).fit(X, y).distance_ == "rf"
    with pytest.raises(ValueError, match="gradient boosting"):
        PrototypeExplainer(rf, n_prototypes=4, distance="gbt").fit(X, y)


@pytest.mark.parametrize("classes", [2, 3])
def test_gbt_distance_of_a_lightgbm_model_matches_definition_3(classes):
    lgb = pytest.importorskip("lightgbm")
    X, y = data(3, classes=classes)
    model = lgb.LGBMClassifier(n_estimators=8, num_leaves=4, learning_rate=0.3, min_child_samples=5,
                               verbose=-1).fit(X, y)
    leaves = P.leaf_matrix(model, X)
    K = 1 if classes == 2 else classes
    assert leaves.shape == (X.shape[0], 8 * K)
    # LightGBM folds the initial score into the first round's trees
    w_ref = definition3_from_margins(
        [model.predict(X, raw_score=True, num_iteration=r + 1) for r in range(8)], K,
        centre_first=True)
    w = P.tree_weights(model, leaves, "gbt")
    np.testing.assert_allclose(w, w_ref, rtol=1e-6, atol=1e-9)
    assert np.ptp(w) > 0
    ex = PrototypeExplainer(model, n_prototypes=4).fit(X, y)
    assert ex.distance_ == "gbt"
    assert ex.predict(X).shape == (X.shape[0],)
    forest = lgb.LGBMClassifier(boosting_type="rf", n_estimators=5, num_leaves=4, bagging_freq=1,
                                bagging_fraction=0.8, min_child_samples=5, verbose=-1).fit(X, y)
    assert PrototypeExplainer(forest, n_prototypes=4).fit(X, y).distance_ == "rf"


def test_dataframe_input_goes_to_the_estimator_with_its_names():
    pd = pytest.importorskip("pandas")
    import warnings

    X, y = data(4)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names"
        ex = PrototypeExplainer(rf, n_prototypes=4).fit(df, y)
        by_frame = ex.predict(df)
        ex.transform(df.iloc[:3])
    with pytest.warns(UserWarning, match="feature names"):  # an array: the estimator's own warning
        np.testing.assert_array_equal(by_frame, ex.predict(X))
    # columns in another order are matched by name
    np.testing.assert_array_equal(ex.predict(df[df.columns[::-1]]), by_frame)


@pytest.mark.parametrize("classes", [2, 3])
def test_gbt_distance_of_a_hist_gradient_boosting_model_matches_definition_3(classes):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = data(5, classes=classes)
    model = HistGradientBoostingClassifier(max_iter=8, max_leaf_nodes=4, learning_rate=0.3,
                                           early_stopping=False, random_state=0).fit(X, y)
    # the walk reaches the model's own leaves, NaN included (each node's missing
    # direction): their values add up to the raw predictions
    X_nan = X.copy()
    X_nan[::7, 1] = np.nan
    trained_nan = HistGradientBoostingClassifier(max_iter=8, max_leaf_nodes=4,
                                                 early_stopping=False, random_state=0).fit(X_nan, y)
    nodes = model._predictors[0][0].nodes  # points exactly at the first tree's thresholds
    internal = np.flatnonzero(~nodes["is_leaf"].astype(bool))
    X_at = np.repeat(X[:1], internal.size, axis=0)
    X_at[np.arange(internal.size), nodes["feature_idx"][internal]] = nodes["num_threshold"][internal]
    for m, Xm in ((model, X), (model, X_at), (trained_nan, X_nan)):
        L = P.leaf_matrix(m, Xm)
        values = [p.nodes["value"] for ps in m._predictors for p in ps]
        K = 1 if classes == 2 else classes
        raw = np.asarray(m.decision_function(Xm)).reshape(-1, K)
        summed = np.stack([sum(values[r * K + c][L[:, r * K + c]] for r in range(8))
                           for c in range(K)], axis=1)
        offset = raw - summed  # the baseline prediction, the same for every row
        np.testing.assert_allclose(offset, np.broadcast_to(offset[:1], raw.shape), atol=1e-9)
    leaves = P.leaf_matrix(model, X)
    assert leaves.shape == (X.shape[0], 8 * K)
    w_ref = definition3_from_margins(list(model.staged_decision_function(X)), K)
    w = P.tree_weights(model, leaves, "gbt")
    np.testing.assert_allclose(w, w_ref, rtol=1e-6, atol=1e-12)
    assert PrototypeExplainer(model, n_prototypes=4).fit(X, y).distance_ == "gbt"


def test_hist_gradient_boosting_with_categorical_features_is_a_clear_error():
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = data(6)
    df = pd.DataFrame(X[:, :2], columns=["a", "b"])
    df["colour"] = pd.Categorical(np.where(X[:, 2] > 0, "red", "blue"))
    model = HistGradientBoostingClassifier(max_iter=3, categorical_features="from_dtype").fit(df, y)
    with pytest.raises(TypeError, match="non-numeric"):
        PrototypeExplainer(model, n_prototypes=2).fit(df, y)
    X[:, 2] = (X[:, 2] > 0).astype(float)  # the same feature coded 0 / 1
    model = HistGradientBoostingClassifier(max_iter=3, categorical_features=[2]).fit(X, y)
    with pytest.raises(TypeError, match="categorical"):
        PrototypeExplainer(model, n_prototypes=2).fit(X, y)


def test_labels_from_a_forest_with_n_jobs_are_predicted_on_one_thread(monkeypatch):
    # without y the forest's labels are the classes: its joblib threads would sum the
    # trees' probabilities in the order they finish; the model keeps its own n_jobs
    X, y = make_classification(200, 6, random_state=0)
    rf = RandomForestClassifier(n_estimators=10, n_jobs=2, random_state=0).fit(X, y)
    seen = []
    original = RandomForestClassifier.predict
    monkeypatch.setattr(RandomForestClassifier, "predict", lambda self, Z: seen.append(self.n_jobs) or original(self, Z))
    explainer = PrototypeExplainer(rf, n_prototypes=4).fit(X)
    assert seen == [1] and rf.n_jobs == 2
    np.testing.assert_array_equal(np.unique(explainer.classes_), np.unique(original(rf, X)))
