"""Crafted rule-tree and sum documents the reader used to accept (issue 45, finding 6 and
the documents' and diff's part of finding 9): what the reader accepts predicts, prints,
exports and diffs alike, in time and memory linear in its size, under the memory guard;
what it cannot hold exactly it refuses with the JSON path named."""
import copy
import json
import time
import tracemalloc

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel, DefragMemoryError, max_memory
from defrag.rules import Leaf, Node, RulesDocumentError, RuleTree, from_json
from defrag.rules import tree as tree_module
from defrag import Condition


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(400, random_state=0)
    forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    return X, y, forest


@pytest.fixture(scope="module")
def sum_document(friedman):
    X, y, forest = friedman
    return json.loads(DefragModel(forest, max_conditions=7, form="sum").fit(X, y).rules_.to_json())


@pytest.fixture(scope="module")
def tree_document(friedman):
    X, y, forest = friedman
    return json.loads(DefragModel(forest, form="tree").fit(X, y).rules_.to_json())


def refused(doc, path):
    with pytest.raises(RulesDocumentError) as info:
        from_json(json.dumps(doc))
    assert info.value.path == path, str(info.value)
    return str(info.value)


def balanced(depth, lo=0.0, hi=1.0):
    """A complete tree of boxes on x0 over [lo, hi): 2**depth - 1 boxes."""
    if depth == 0:
        return Leaf((lo + hi) / 2)
    mid = (lo + hi) / 2
    return Node([Condition(0, "x0", upper=mid)], balanced(depth - 1, lo, mid), balanced(depth - 1, mid, hi))


# ------------------------------------------------------------------- memory and time
def test_predict_of_a_large_tree_takes_its_output_and_a_bounded_block(monkeypatch):
    tree = from_json(RuleTree([balanced(12)], feature_names=["x0", "x1"]).to_json())  # 4,095 boxes
    X = np.random.RandomState(0).rand(20_000, 2)
    monkeypatch.setattr(tree_module, "ROUTE_BLOCK_BYTES", 1 << 20)
    tracemalloc.start()
    try:
        p = tree.predict(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # rows x boxes booleans would be 82 MB
    assert peak < 6 * 2**20, peak
    np.testing.assert_array_equal(p, (np.floor(X[:, 0] * 2**12) + 0.5) / 2**12)
    namespace = {}
    exec(tree.to_python(), namespace)
    assert [namespace["predict"](list(x)) for x in X[:300]] == list(p[:300])
    np.testing.assert_array_equal(tree.apply(X), np.floor(X[:, 0] * 2**12))


def test_an_output_past_the_memory_guard_is_refused_before_it_is_allocated():
    tree = RuleTree([balanced(10)], feature_names=["x0", "x1"])  # 1,024 leaves
    X = np.random.RandomState(0).rand(100_000, 2)
    with max_memory("50M"), pytest.raises(DefragMemoryError, match="RuleTree.covering"):
        tree.covering(X)  # 100,000 x 1,024 booleans


def test_a_sum_of_many_terms_predicts_without_rows_by_terms_of_items(sum_document):
    doc = copy.deepcopy(sum_document)
    doc["nodes"] = [{"prediction": 0.001, "support": 1}] * 20_000
    doc["terms"] = list(range(20_000))
    started = time.perf_counter()
    tree = from_json(json.dumps(doc))
    assert time.perf_counter() - started < 10  # (a quadratic check of the roots took minutes at 100,000)
    X = np.random.RandomState(0).rand(500, 10)
    tracemalloc.start()
    try:
        p = tree.predict(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 * 2**20, peak  # rows x terms items were 80 MB, and a copy per term
    np.testing.assert_array_equal(p, np.full(500, sum_document["base"] + 20.0))


def test_the_roots_of_many_terms_are_checked_in_linear_time(sum_document):
    doc = copy.deepcopy(sum_document)
    n = 100_000
    doc["nodes"] = [{"prediction": 0.0, "support": 1}] * n
    doc["terms"] = list(range(n))
    doc["terms"][-1] = 0  # a root twice: found without a search of the roots per term
    started = time.perf_counter()
    refused(doc, f"terms[{n - 1}]")
    assert time.perf_counter() - started < 10
