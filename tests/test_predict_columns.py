"""RuleSet.predict reads only the features its rules name (issue 23, item 5): the same
predictions, bit for bit, on every dtype and layout (float64 C and Fortran order, strided
views, float32, float16, integers, booleans, DataFrames with mixed and nullable dtypes,
reordered and extra columns), the same NaN errors where the rules' source has no
direction for missing values (on every row, whichever conditions its rules reach), -inf
below every threshold, and no copy of the other columns (tracemalloc's peak)."""
import tracemalloc

import numpy as np
import pytest

import defrag.rules.explanation as reader_module
from defrag import Condition, Rule, RuleSet

pd = pytest.importorskip("pandas")

N_FEATURES = 12


def interval_rules(supports_missing=True, names=True):
    """Rules on features 1, 4, 7 and 10 of 12: intervals (the kernels' dense path)."""
    rules = [Rule([Condition(4, "x4", upper=0.25, missing=True), Condition(7, "x7", lower=-0.5)], 1.0),
             Rule([Condition(1, "x1", lower=0.0, upper=1.5)], 2.0),
             Rule([Condition(10, "x10", upper=-1.0, missing=True), Condition(4, "x4", lower=-2.0)], 3.0)]
    if not supports_missing:
        for r in rules:
            for c in r.conditions:
                c.missing = False
    names_ = [f"x{d}" for d in range(N_FEATURES)]
    return RuleSet(rules, 0.0, feature_names=names_, supports_missing=supports_missing,
                   feature_names_in=names_ if names else None)


def set_rules(supports_missing=True):
    """Rules with category sets on codes (the kernels' condition-by-condition path)."""
    rules = [Rule([Condition(2, "x2", categories=[0, 3], missing=supports_missing),
                   Condition(5, "x5", upper=0.5)], "a"),
             Rule([Condition(9, "x9", categories=[1], negated=True), Condition(5, "x5", lower=-1.0)], "b")]
    return RuleSet(rules, "c", feature_names=[f"x{d}" for d in range(N_FEATURES)],
                   supports_missing=supports_missing)


def zero_rules():
    rules = [Rule([Condition(3, "x3", upper=0.5, zero_missing=True)], 1.0),
             Rule([Condition(3, "x3", lower=-0.5, zero_missing=True, missing=True)], 2.0)]
    return RuleSet(rules, 0.0, feature_names=[f"x{d}" for d in range(N_FEATURES)], supports_missing=True)


def reference(rs, X):
    """The predictions by NumPy (Condition.holds) on X converted to float64 whole, as
    predict converted it before: -inf read as the lowest finite value."""
    X = np.asarray(X, dtype=np.float64)
    X = np.where(np.isneginf(X), -np.finfo(np.float64).max, X)
    out = np.full(X.shape[0], len(rs.rules))
    for r in reversed(range(len(rs.rules))):
        out[rs.rules[r].covers(X)] = r
    return rs.predictions()[np.where(out == len(rs.rules), -1, out)]


def data(n=3000, seed=0, codes=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)) * 1.5
    if codes:
        X[:, [2, 9]] = rng.integers(0, 4, (n, 2))
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.02] = -np.inf
    X[rng.random(X.shape) < 0.02] = np.inf
    X[rng.random(X.shape) < 0.02] = 0.0
    return X


def layouts(X):
    """X in every layout and dtype predict takes, each with what it reads as (float64)."""
    big = np.zeros((2 * X.shape[0], 2 * N_FEATURES + 1))
    big[::2, 1::2][:, :N_FEATURES] = X
    strided = big[::2, 1::2][:, :N_FEATURES]
    finite = np.nan_to_num(X, nan=0.0, posinf=3.0, neginf=-3.0)
    out = {"c": X, "fortran": np.asfortranarray(X), "strided": strided, "reversed-rows": X[::-1],
           "float32": X.astype(np.float32), "float16": X.astype(np.float16),
           "int64-large": (finite * 2**60).astype(np.int64), "int32": (finite * 3).astype(np.int32),
           "uint8": np.abs(finite * 40).astype(np.uint8), "bool": finite > 0,
           "list": X[:50].tolist()}
    return out


@pytest.fixture(params=[7, 65536], ids=["block7", "block65536"])
def block_rows(request, monkeypatch):
    monkeypatch.setattr(reader_module, "BLOCK_ROWS", request.param)
    return request.param


@pytest.mark.parametrize("make", [interval_rules, set_rules, zero_rules])
def test_every_layout_and_dtype_predicts_as_before(make, block_rows):
    rs = make() if make is not interval_rules else interval_rules(names=False)
    X = data(codes=make is set_rules, n=3000 if block_rows > 1000 else 100)
    for name, Xl in layouts(X).items():
        expected = reference(rs, np.asarray(Xl, dtype=np.float64))
        got = rs.predict(Xl)
        np.testing.assert_array_equal(got, expected, err_msg=name)
        assert got.dtype == rs.predictions().dtype
        if block_rows > 1000:
            np.testing.assert_array_equal(rs.predict(Xl, n_threads=2), got)


def test_dataframes_of_mixed_and_nullable_dtypes(block_rows):
    rs = interval_rules()
    X = data(n=500)
    frame = pd.DataFrame(X, columns=[f"x{d}" for d in range(N_FEATURES)])
    frame["x4"] = frame["x4"].astype(np.float32)
    frame["x1"] = pd.array(np.round(np.nan_to_num(X[:, 1], posinf=9, neginf=-9)), dtype="Int64")
    frame.loc[::7, "x1"] = pd.NA
    frame["x7"] = frame["x7"].astype("Float64")
    expected = reference(rs, np.column_stack([pd.to_numeric(frame[c], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan) for c in frame.columns]))
    np.testing.assert_array_equal(rs.predict(frame), expected)
    # reordered, with an extra column: matched by name
    shuffled = frame[frame.columns[::-1]].assign(extra=1.0)
    np.testing.assert_array_equal(rs.predict(shuffled), expected)
    # text is refused by its dtype, as before, in any fitted column
    for col in ("x4", "x0"):
        with pytest.raises(TypeError, match=f"'{col}' holds string values"):
            rs.predict(frame.assign(**{col: "text"}))


def test_nan_is_refused_on_every_row_where_the_source_has_no_direction(block_rows):
    for rs in (interval_rules(supports_missing=False, names=False), set_rules(supports_missing=False)):
        X = np.nan_to_num(data(n=200, codes=True), nan=0.5, posinf=3.0, neginf=-3.0)
        X[150, [2, 9]] = 1  # set_rules: both rules fail on their first condition, before x5
        rs.predict(X)  # no NaN: fine
        # a NaN in a row whose rules fail before they reach the feature is refused all the same
        used = sorted({c.feature for r in rs.rules for c in r.conditions})
        for d in used:
            for Xl in (X.copy(), X.astype(np.float32), np.asfortranarray(X)):
                Xl[150, d] = np.nan
                with pytest.raises(ValueError, match="no rule for missing values"):
                    rs.predict(Xl)
        Xu = X.copy()
        Xu[:, [d for d in range(N_FEATURES) if d not in used]] = np.nan  # features no rule names
        np.testing.assert_array_equal(rs.predict(Xu), rs.predict(X))


def test_minus_infinity_is_below_every_threshold():
    rs = interval_rules(names=False)
    X = np.zeros((3, N_FEATURES))
    X[:, 7] = 5.0
    X[0, 4] = -np.inf  # x4 <= 0.25 and x7 > -0.5: rule 1
    X[1, [4, 1]] = [np.inf, -np.inf]  # x1 > 0 fails, x4 > -2 holds but x10 <= -1 fails
    X[2, [4, 10]] = [1.0, -np.inf]  # rule 3: x10 <= -1 and x4 > -2
    for Xl in (X, np.asfortranarray(X), X.astype(np.float32)):
        np.testing.assert_array_equal(rs.predict(Xl), [1.0, 0.0, 3.0])


def traced_peak(f):
    tracemalloc.start()
    try:
        out = f()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("layout", ["c", "fortran", "float32", "strided"])
def test_no_copy_of_the_columns_no_rule_names(layout):
    """The peak beyond the input: the output, the first matches (int32) and one block of
    the used columns; converting all 12 columns would take 12 columns' worth."""
    rs = interval_rules(names=False)
    n = 200_000
    X = np.random.default_rng(0).normal(size=(n, N_FEATURES))
    X = {"c": X, "fortran": np.asfortranarray(X), "float32": X.astype(np.float32),
         "strided": np.repeat(X, 2, axis=1)[:, ::2]}[layout]
    rs.predict(X[:10])
    got, peak = traced_peak(lambda: rs.predict(X))
    column = 8 * n
    block = 8 * reader_module.BLOCK_ROWS * len({c.feature for r in rs.rules for c in r.conditions})
    assert peak <= got.nbytes + 4 * n + block + column // 2, (layout, peak / column)
    np.testing.assert_array_equal(got, reference(rs, X))
