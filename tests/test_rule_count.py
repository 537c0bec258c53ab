"""Rule counts read the same wherever they are printed (issue 22, item 8): "1 rule and
otherwise", never "1 rules"; the rule set's repr and the plots' titles use the one helper
(defrag.rules.rule_count_text)."""
import numpy as np
import pytest

from defrag.rules import Condition, Rule, RuleSet, rule_count_text


def one_rule_set():
    return RuleSet([Rule([Condition(0, "x0", upper=0.5)], 1)], 0, feature_names=["x0", "x1"])


def test_rule_count_text():
    assert rule_count_text(0) == "0 rules and otherwise"
    assert rule_count_text(1) == "1 rule and otherwise"
    assert rule_count_text(np.int64(3)) == "3 rules and otherwise"


def test_repr_counts_rules_in_words():
    assert repr(one_rule_set()) == "<RuleSet: 1 rule and otherwise>"
    assert "1 rules" not in repr(one_rule_set())


def test_plot_title_counts_rules_in_words():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from defrag import plot

    X = np.random.default_rng(0).random((50, 2))
    fig = plot.rules_2d(one_rule_set(), X, features=(0, 1))
    title = fig.axes[0].get_title()
    assert title.startswith("1 rule and otherwise"), title
