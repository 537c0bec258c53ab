"""Rules documents a careless or hostile writer hands defrag (issue 40): a 120-byte
document may not make the rule set as wide as 16,777,216 features (to_python() wrote
207 MB for it), and a condition may not print one name while predict and the exports
read another column."""
import json

import numpy as np
import pytest

from defrag import Condition, Rule, RuleSet, RuleTree
from defrag.rules import RulesDocumentError
from defrag.rules.document_reader import MAX_UNNAMED_FEATURES


def document(feature, name, **extra):
    return {"rules": [{"conditions": [{"feature": feature, "name": name, "lower": 0.0}], "prediction": 1.0}],
            "default_prediction": 0.0, **extra}


def test_a_small_document_cannot_index_a_huge_feature_without_names():
    text = json.dumps(document(2 ** 24 - 1, f"x{2 ** 24 - 1}"))
    assert len(text) < 150
    with pytest.raises(RulesDocumentError, match=r"rules\[0\]\.conditions\[0\]\.feature: feature 16777215 is "
                                                  r"beyond the 10000 features .* give feature_names"):
        RuleTree.from_json(text)
    # the stated bound, not less: the largest index it allows reads, its exports stay small
    last = RuleTree.from_json(json.dumps(document(MAX_UNNAMED_FEATURES - 1, f"x{MAX_UNNAMED_FEATURES - 1}")))
    assert last._n_features() == MAX_UNNAMED_FEATURES
    assert len(last.to_python()) < 200_000
    # with feature_names the names are the bound (and the document as long as they are)
    names = [f"f{j}" for j in range(MAX_UNNAMED_FEATURES + 5)]
    wide = RuleTree.from_json(json.dumps(document(len(names) - 1, names[-1], feature_names=names)))
    assert wide._n_features() == len(names)


def test_a_condition_must_print_the_name_of_the_column_it_reads():
    with pytest.raises(RulesDocumentError, match=r"rules\[0\]\.conditions\[0\]\.name: 'income' names feature 1, "
                                                  r"but the document has no feature_names"):
        RuleTree.from_json(json.dumps(document(1, "income")))
    with pytest.raises(RulesDocumentError, match=r"'income' is not the name of feature 1 \('b'\)"):
        RuleTree.from_json(json.dumps(document(1, "income", feature_names=["a", "b"])))
    with pytest.raises(RulesDocumentError, match=r"'income' is not the name of feature 1 \('b'\)"):
        RuleTree.from_json(json.dumps(document(1, "income", feature_names_in=["a", "b"])))
    # by position, named as the position: read as before
    rules = RuleTree.from_json(json.dumps(document(1, "x1")))
    np.testing.assert_array_equal(rules.predict(np.array([[5.0, -1.0], [-1.0, 5.0]])), [0.0, 1.0])


def test_a_rule_set_built_with_feature_names_prints_them():
    with pytest.raises(ValueError, match=r"names feature 1 'income', but feature_names calls it 'b'"):
        RuleSet([Rule([Condition(1, "income", lower=0.0)], 1.0)], 0.0, feature_names=["a", "b"])
    with pytest.raises(ValueError, match=r"feature 2, outside the 2 features of feature_names"):
        RuleSet([Rule([Condition(2, "c", lower=0.0)], 1.0)], 0.0, feature_names=["a", "b"])


def test_a_rule_set_without_feature_names_writes_the_names_it_prints():
    rules = RuleSet([Rule([Condition(1, "income", lower=0.0)], 1.0)], 0.0)
    doc = rules.to_dict()
    assert doc["feature_names"] == ["x0", "income"]
    back = RuleTree.from_json(rules.to_json())
    assert str(back) == str(rules)
    X = np.array([[5.0, -1.0], [-1.0, 5.0]])
    np.testing.assert_array_equal(back.predict(X), rules.predict(X))
    # named by position: nothing to add
    assert RuleSet([Rule([Condition(1, "x1", lower=0.0)], 1.0)], 0.0).to_dict()["feature_names"] is None
    clash = RuleSet([Rule([Condition(0, "a", lower=0.0)], 1.0), Rule([Condition(0, "b", upper=1.0)], 2.0)], 0.0)
    with pytest.raises(ValueError, match="feature 0 is named both 'a' and 'b'"):
        clash.to_json()
