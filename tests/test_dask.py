"""Dask inputs (defrag/fit/dask_rows.py): the fit on a local cluster of 2 worker processes equals
the in-memory fit of the same rows and seed; predictions are lazy Dask arrays."""
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor  # noqa: E402

from conftest import categorical_frame  # noqa: E402
from defrag import DefragModel  # noqa: E402
from defrag.utils.dask_collections import is_dask_collection  # noqa: E402
from defrag.utils.exact import exact_mean, exact_partial, squared_deviations  # noqa: E402

CHUNKS = (1000, 2500, 500, 2000)  # uneven partitions of 6,000 rows
FIT = dict(n_restarts=4, subsample=1500, max_iter=30, random_state=3)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(6000, 8, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               random_state=0)
    return RandomForestClassifier(30, max_depth=6, random_state=0).fit(X, y), X, y


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 6))
    y = 100.0 + np.where(X[:, 0] > 0.3, 2.0, -1.0) * (X[:, 1] > -0.5) + 0.3 * rng.normal(size=6000)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    return RandomForestRegressor(30, max_depth=6, random_state=0).fit(frame, y), frame, y


def assert_same_fit(a, b, exact_outputs=True):
    """b (fitted on Dask) as a (in memory): the same rules as printed, the same restarts
    and mixture bit for bit; regression outputs of the rules to rounding."""
    assert str(a.rules_) == str(b.rules_)
    for name in ("eta_", "alpha_", "mean_", "precision_", "gamma_", "lower_bound_", "restart_n_regions_"):
        if hasattr(a, name):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.subsample_size_ == b.subsample_size_ < a.n_features_in_ * 6000
    compare = np.array_equal if exact_outputs else (lambda u, v: np.allclose(u, v, rtol=1e-12, atol=0))
    assert compare(a.restart_errors_, b.restart_errors_)
    assert compare(a.rules_.predictions().astype(float), b.rules_.predictions().astype(float))
    assert a.rules_.default_share == b.rules_.default_share is not None
    for ra, rb in zip(a.rules_.rules, b.rules_.rules):
        assert (ra.support, ra.weight, ra.coverage, ra.share) == (rb.support, rb.weight, rb.coverage, rb.share)
        for ca, cb in zip(ra.conditions, rb.conditions):
            assert (ca.printed_lower, ca.printed_upper, ca.train_share, ca.missing_seen) == \
                (cb.printed_lower, cb.printed_upper, cb.train_share, cb.missing_seen)


def test_exact_sums_do_not_depend_on_partitions():
    rng = np.random.default_rng(0)
    v = rng.normal(size=5000) * 10.0 ** rng.integers(-30, 30, size=5000)
    from fractions import Fraction

    exact = sum(Fraction(float(x)) for x in v)
    for parts in (1, 3, 17):
        assert exact_mean([exact_partial(p) for p in np.array_split(v, parts)], v.size) == float(exact / v.size)
    mean = exact_mean([exact_partial(v)], v.size)
    assert mean == float(exact / v.size)
    terms = squared_deviations(v, mean)  # the variance's terms, each rounded (fit/rows.py's variance)
    var = exact_mean([exact_partial(p) for p in np.array_split(terms, 7)], v.size)
    assert var == float(sum(Fraction(float(t)) for t in terms) / v.size)
    assert var == pytest.approx(np.var(v), rel=1e-12)


def test_classification_array_with_uneven_chunks(client, classification):
    rf, X, y = classification
    ref = DefragModel(rf, **FIT, form="list").fit(X)
    Xd = da.from_array(X, chunks=(CHUNKS, 8))
    model = DefragModel(rf, **FIT, form="list").fit(Xd)
    assert_same_fit(ref, model)
    assert ref.n_regions_ >= 3, str(ref)
    pred = model.predict(Xd)
    assert is_dask_collection(pred) and pred.chunks[0] == CHUNKS
    assert np.array_equal(pred.compute(), ref.predict(X))
    assert np.array_equal(model.predict_proba(Xd).compute(), ref.predict_proba(X))
    assert np.array_equal(model.rules_.predict(Xd).compute(), ref.rules_.predict(X))
    # y given as a Dask array chunked otherwise: rechunked to X's partitions
    yd = da.from_array(y, chunks=1700)
    assert_same_fit(DefragModel(rf, **FIT, form="list").fit(X, y), DefragModel(rf, **FIT, form="list").fit(Xd, yd))


def test_regression_dataframe_keeps_feature_names(client, regression):
    rf, frame, y = regression
    names = list(frame.columns)
    ref = DefragModel(rf, **FIT, form="list").fit(frame)
    ddf = dd.from_pandas(frame, npartitions=3).repartition(divisions=[0, 700, 4200, 5999])
    model = DefragModel(rf, **FIT, form="list").fit(ddf)
    assert_same_fit(ref, model, exact_outputs=False)
    assert list(model.feature_names_in_) == names and "f0" in str(model.rules_)
    assert np.allclose(model.predict(ddf).compute(), ref.predict(frame), rtol=1e-12, atol=0)
    # a y Series partitioned as X
    ys = dd.from_pandas(pd.Series(y), npartitions=3).repartition(divisions=[0, 700, 4200, 5999])
    assert_same_fit(DefragModel(rf, **FIT, form="list").fit(frame, y), DefragModel(rf, **FIT, form="list").fit(ddf, ys),
                    exact_outputs=False)


def test_categorical_dataframe_and_em_kl(client):
    X, y = categorical_frame(0, n=3000)
    hgb = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype", random_state=0).fit(X, y)
    kw = dict(FIT, subsample=800, n_restarts=2, max_iter=10)
    ddf = dd.from_pandas(X, npartitions=4)
    for method in ("fab", "em-kl"):
        form = "auto" if method == "em-kl" else "list"
        ref = DefragModel(hgb, method=method, **kw, form=form).fit(X)
        model = DefragModel(hgb, method=method, **kw, form=form).fit(ddf)
        assert_same_fit(ref, model, exact_outputs=False)
        assert np.allclose(model.predict(ddf).compute(), ref.predict(X), rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", ["classification", "regression"])
def test_tree_of_the_models_predictions_on_a_subsample(client, classification, regression, case):
    # the tree reads the model's predictions of the subsample's rows (fit/prepare.py's
    # targets_of_fit_rows), whose summary (classes; mean and variance) it takes: on a
    # cluster as in memory, though there every partition's targets are made
    rf, X, _ = classification if case == "classification" else regression
    Xd = (da.from_array(X, chunks=(CHUNKS, 8)) if case == "classification"
          else dd.from_pandas(X, npartitions=3).repartition(divisions=[0, 700, 4200, 5999]))
    ref = DefragModel(rf, **FIT).fit(X)
    model = DefragModel(rf, **FIT).fit(Xd)
    assert ref.rules_.form == model.rules_.form == "tree" and ref.subsample_size_ == 1500
    assert str(ref.rules_) == str(model.rules_)
    for name in ("eta_", "alpha_", "mean_", "precision_", "gamma_", "lower_bound_", "restart_errors_"):
        if hasattr(ref, name):
            assert np.array_equal(getattr(ref, name), getattr(model, name)), name
    assert np.array_equal(model.predict(Xd).compute(), ref.predict(X))


def test_small_input_is_fitted_in_memory(client, classification):
    rf, X, y = classification
    kw = dict(FIT, subsample="auto", form="restarts")  # 6,000 rows: every restart on all rows
    ref = DefragModel(rf, **kw).fit(X)
    model = DefragModel(rf, **kw).fit(da.from_array(X, chunks=2000))
    assert model.subsample_size_ == 6000
    assert_same_fit(ref, model)


def test_bad_dask_input(client, classification):
    rf, X, y = classification
    Xd = da.from_array(X, chunks=(CHUNKS, 8))
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        DefragModel(rf, **FIT, form="list").fit(Xd[Xd[:, 0] > -100])
    with pytest.raises(ValueError, match="entries but X has"):
        DefragModel(rf, **FIT, form="list").fit(Xd, da.from_array(y[:-1]))
    with pytest.raises(ValueError, match="partitions"):
        DefragModel(rf, **FIT, form="list").fit(dd.from_pandas(pd.DataFrame(X), npartitions=3),
                                   dd.from_pandas(pd.Series(y), npartitions=2))
    with pytest.raises(ValueError, match="form='paper'"):
        DefragModel(rf, form="paper", **FIT).fit(Xd)
    with pytest.raises(TypeError, match="X is not"):
        DefragModel(rf, **FIT, form="list").fit(X, da.from_array(y))
    with pytest.raises(ValueError, match="2-D"):
        DefragModel(rf, **FIT, form="list").fit(da.from_array(X[:, 0]))
    model = DefragModel(rf, **FIT, form="list").fit(X)
    with pytest.raises(TypeError, match="Dask"):
        model.evaluate(Xd, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(Xd[:, :5])
