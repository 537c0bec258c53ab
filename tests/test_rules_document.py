"""The rule set document (issue 22, item 5): RuleSet.from_dict / from_json check the whole
document before building anything, and refuse a bad one with RulesDocumentError (a
ValueError) naming the JSON path of the bad field; a depth limit keeps the JSON parser
from recursing.

Fuzzing: hypothesis mutates valid documents (written by fitted models and by hand-built
rule sets: numbers, types, dropped keys, nesting, cut text). Either the loader refuses the
document with RulesDocumentError, or the rule set it builds prints, exports, round-trips
and predicts, with nothing but a ValueError on its inputs. Examples per property: the
bounded "ci" profile of tests/conftest.py; DEFRAG_FUZZ_EXAMPLES=N for a long run.
"""
import copy
import json
import math

import numpy as np
import pytest

from conftest import json_paths
from defrag import Condition, DefragModel, Rule, RuleSet, RuleTree
from defrag.rules import RulesDocumentError
from defrag.splits.inputs import InputEncoding

hypothesis = pytest.importorskip("hypothesis")
pytestmark = pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # arrays on purpose
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def hand_rules():
    """A classification rule set over four features: intervals, a category set with names,
    infinite bounds, string classes, an encoding with categories and zero-as-missing."""
    enc = InputEncoding(4, categorical=[False, True, False, False],
                        categories=[None, np.array(["red", "green", "blue"], dtype=object), None, None],
                        zero_missing=[False, False, False, True])
    rules = [Rule([Condition(0, "a", lower=0.25, upper=0.75, missing=True, missing_seen=False,
                             printed_lower=0.3, printed_upper=0.7),
                   Condition(1, "colour", categories=[0, 2], category_names=["red", "green", "blue"])],
                  "yes", proba=[0.2, 0.8], support=10, weight=0.4, coverage=0.3),
             Rule([Condition(3, "z", upper=-np.inf, zero_missing=True, missing=True)], "no", proba=[0.9, 0.1]),
             Rule([Condition(2, "b", lower=1.5, missing=False)], "yes", proba=[0.4, 0.6])]
    return RuleSet(rules, "no", [0.7, 0.3], feature_names=["a", "colour", "b", "z"],
                   classes=np.array(["no", "yes"]), supports_missing=True, encoding=enc,
                   feature_names_in=["a", "colour", "b", "z"])


def regression_rules():
    rules = [Rule([Condition(0, "x0", upper=0.5), Condition(1, "x1", lower=-1.0, missing=True)], 1.5),
             Rule([Condition(1, "x1", upper=np.inf)], 2.0)]
    return RuleSet(rules, -0.25, feature_names=["x0", "x1"], supports_missing=False)


@pytest.fixture(scope="module")
def fitted_document():
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 1).astype(int)
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    return DefragModel(model, n_restarts=1, random_state=0, form="list").fit(X).rules_.to_dict()


def documents():
    return {"hand": hand_rules().to_dict(), "regression": regression_rules().to_dict()}


def set_at(doc, path, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def refused(doc, path):
    """The RulesDocumentError of doc; its path must be path."""
    with pytest.raises(RulesDocumentError) as info:
        RuleTree.from_dict(doc)
    assert info.value.path == path, str(info.value)
    assert str(info.value).startswith(path)
    return info.value


# ------------------------------------------------------- the issue's reproductions
@pytest.mark.parametrize("value", [2.7, "3", -1, 99, 4, 2**40, True, None, [1]])
def test_a_feature_index_must_be_an_integer_within_the_features(value):
    doc = set_at(documents()["hand"], ("rules", 2, "conditions", 0, "feature"), value)
    refused(doc, "rules[2].conditions[0].feature")


def test_each_reproduction_of_the_issue_is_a_clean_error():
    cases = [
        (("rules", 0, "conditions", 0, "lower"), "nan", "rules[0].conditions[0].lower"),
        (("rules", 0, "conditions", 0, "lower"), "0.3", "rules[0].conditions[0].lower"),
        (("rules", 0, "conditions", 0, "upper"), float("nan"), "rules[0].conditions[0].upper"),
        (("rules", 0, "conditions", 0, "upper"), 10**400, "rules[0].conditions[0].upper"),
        (("rules", 0, "proba"), [0.5, 0.25, 0.25], "rules[0].proba"),
        (("default_proba",), [1.0], "default_proba"),
        (("schema_version",), -5, "schema_version"),
        (("schema_version",), 1.0, "schema_version"),
        (("schema_version",), True, "schema_version"),
        (("rules", 0, "conditions", 1, "codes"), [-5], "rules[0].conditions[1].codes[0]"),
        (("rules", 0, "conditions", 1, "codes"), [2**40], "rules[0].conditions[1].codes[0]"),
        (("rules", 0, "conditions", 1, "codes"), [1.0], "rules[0].conditions[1].codes[0]"),
        (("rules", 0, "conditions", 0, "missing"), 1, "rules[0].conditions[0].missing"),
        (("supports_missing",), "yes", "supports_missing"),
        (("rules", 0, "prediction"), "maybe", "rules[0].prediction"),
        (("rules", 0, "support"), 3.5, "rules[0].support"),
        (("rules", 0, "conditions", 0, "name"), "b", "rules[0].conditions[0].name"),
        (("feature_names",), ["a", "a", "b", "z"], "feature_names[1]"),
        (("feature_names",), ["a", "colour", "b"], "encoding.n_features"),
        (("encoding", "categorical"), [0, 1, 0, 0], "encoding.categorical[0]"),
        (("encoding", "categories", 1, "dtype"), "M8[ns]", "encoding.categories[1].values"),
        (("encoding", "unknown"), "ignore", "encoding.unknown"),
        (("classes",), ["no", "no"], "classes"),
    ]
    for path, value, where in cases:
        refused(set_at(documents()["hand"], path, value), where)
    doc = documents()["hand"]
    del doc["rules"][1]["conditions"][0]["feature"]
    refused(doc, "rules[1].conditions[0]")
    doc = documents()["hand"]
    doc["rules"][0]["colour"] = 1
    refused(doc, "rules[0].colour")
    doc = documents()["regression"]
    doc["rules"][0]["proba"] = [1.0]
    refused(doc, "rules[0].proba")
    refused(set_at(documents()["regression"], ("rules", 1, "prediction"), "nan"), "rules[1].prediction")


def test_deep_nesting_and_bad_text_are_clean_errors():
    for text in ["[" * 5000 + "]" * 5000, '{"rules": ' + "[" * 100_000 + "]" * 100_000 + "}",
                 '{"rules": [], "default_prediction": ' + "1" * 5000 + "}", "{", b"\xff\xfe", "null"]:
        with pytest.raises(RulesDocumentError):
            RuleTree.from_json(text)
    # quotes and brackets inside strings do not count as nesting
    rs = RuleSet([Rule([Condition(0, 'a"[[[{', upper=1.0)], 1.0)], 0.0, feature_names=['a"[[[{'])
    assert RuleTree.from_json(rs.to_json()).feature_names == ['a"[[[{']
    with pytest.raises(TypeError):
        RuleTree.from_json(12)


def test_the_writers_infinities_read_back():
    for rs in (hand_rules(), regression_rules()):
        text = rs.to_json()
        assert "Infinity" not in text and "NaN" not in text
        back = RuleTree.from_json(text)
        assert back.to_dict() == rs.to_dict()
        assert str(back) == str(rs)
    doc = documents()["regression"]
    doc["rules"][0]["prediction"] = "inf"
    assert RuleTree.from_dict(doc).rules[0].prediction == math.inf


def test_valid_documents_load_as_before(fitted_document):
    back = RuleTree.from_dict(copy.deepcopy(fitted_document))
    assert back.to_dict() == fitted_document


# --------------------------------------------------------------------- fuzzing
NUMBERS = st.one_of(st.integers(-3, 10), st.sampled_from([2**31, -(2**31), 2**40, 2**63, 10**30, 10**400]),
                    st.floats(allow_nan=True, allow_infinity=True, width=64))
OTHERS = st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.just([]), st.just({}),
                   st.lists(st.integers(-2, 5), max_size=3),
                   st.sampled_from(["inf", "-inf", "nan", "1e400", "-0", "object", "<f8", "|b1", "error"]))


def nested(depth, inner):
    for _ in range(depth):
        inner = [inner]
    return inner


class Mutated(tuple):
    """(name of the document, the mutated document or its text, the path changed), shown
    briefly (hypothesis would print 5,000 nested lists recursively)."""

    def __repr__(self):
        name, doc, path = self
        if "nest" in path:
            return f"Mutated({name!r}, path={path!r})"
        text = doc if isinstance(doc, str) else json.dumps(doc)
        return f"Mutated({name!r}, path={path!r}, {text[:2000]!r})"


@st.composite
def mutations(draw, docs):
    """A Mutated document."""
    name = draw(st.sampled_from(sorted(docs)))
    doc = copy.deepcopy(docs[name])
    kind = draw(st.sampled_from(["number", "type", "drop", "nest", "wrap", "duplicate", "stringify", "cut"]))
    if kind == "cut":
        text = json.dumps(doc)
        return Mutated((name, text[: draw(st.integers(0, len(text) - 1))], ("text",)))
    path = draw(st.sampled_from(json_paths(doc)[1:]))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, old = path[-1], parent[path[-1]]
    if kind == "drop":
        del parent[key]
    elif kind == "number":
        parent[key] = draw(NUMBERS)
    elif kind == "type":
        parent[key] = draw(OTHERS)
    elif kind == "nest":
        depth = draw(st.sampled_from([1, 2, 50, 5000]))
        parent[key] = nested(depth, old)
        path = path + ("nest", depth)
    elif kind == "wrap":
        parent[key] = {"value": old}
    elif kind == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(old))
    else:  # the value written as text, or text as a number
        parent[key] = str(old) if not isinstance(old, str) else len(old)
    return Mutated((name, doc, path))


def check_loaded(rs):
    """A rule set the loader accepted: it prints, exports, round-trips and predicts; its
    inputs may be refused with a ValueError, nothing else."""
    text = str(rs)
    assert text.count("\n") >= len(rs.rules)
    again = RuleTree.from_json(rs.to_json())
    assert str(again) == text
    n = rs._n_features()
    if n > 64:  # a feature index far out (the rules' own count): not scored here
        hypothesis.event("loaded: many features")
        return
    compile(rs.to_python(), "<rules>", "exec")
    rs.to_sql()
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (40, n)).astype(np.float64)
    X[rng.random(X.shape) < 0.2] = np.nan
    for data in (X, np.nan_to_num(X)):
        try:
            predicted = rs.predict(data)
        except ValueError as exc:
            hypothesis.event(f"predict refused: {str(exc)[:40]}")
            continue
        assert predicted.shape == (len(data),)
        first = rs.route(rs.encode(data))[:, 0]
        np.testing.assert_array_equal(predicted, rs.predictions()[first])
    hypothesis.event("loaded")


DOCS = documents()


@given(mutations(DOCS))
def test_fuzzed_documents_load_or_raise_a_document_error(mutated):
    name, doc, path = mutated
    try:
        rs = RuleTree.from_json(doc) if isinstance(doc, str) else RuleTree.from_dict(doc)
    except RulesDocumentError as exc:
        hypothesis.event(f"refused at {exc.path.split('[')[0].split('.')[0] or 'document'}")
        return
    check_loaded(rs)


@given(mutations(DOCS))
def test_fuzzed_json_text_loads_or_raises_a_document_error(mutated):
    name, doc, path = mutated
    try:
        text = doc if isinstance(doc, str) else json.dumps(doc)  # NaN and Infinity literals included
    except RecursionError:  # the test's own writer, on 5,000 nested lists: write them by hand
        text = json.dumps(set_at(doc, path[:-2], "@@")).replace('"@@"', "[" * 5000 + "]" * 5000)
    try:
        rs = RuleTree.from_json(text)
    except RulesDocumentError:
        return
    check_loaded(rs)


def test_fuzzed_fitted_documents(fitted_document):
    @given(mutations({"fitted": fitted_document}))
    def run(mutated):
        name, doc, path = mutated
        try:
            rs = RuleTree.from_json(doc) if isinstance(doc, str) else RuleTree.from_dict(doc)
        except RulesDocumentError:
            return
        check_loaded(rs)

    run()


def test_an_evaluation_object_is_read_as_a_check_and_ignored():
    rs = RuleSet([Rule([Condition(0, "x0", upper=0.5)], 1.5)], 0.25, feature_names=["x0"])
    d = rs.to_dict()
    d["evaluation"] = {"n_rows": 10, "error": 0.1, "model_error": None, "fidelity": 0.9}
    assert RuleTree.from_json(json.dumps(d)).to_dict() == rs.to_dict()
    for bad, where in (([0.1], "evaluation"), ({"error": "low"}, "evaluation.error"),
                       ({"error": True}, "evaluation.error")):
        d["evaluation"] = bad
        with pytest.raises(RulesDocumentError, match=where):
            RuleTree.from_json(json.dumps(d))
