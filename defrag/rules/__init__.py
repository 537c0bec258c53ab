"""Rules as a reader and a scoring service see them: conditions and rules (``ruleset``:
Condition, Rule, what only an ordered list has), the one class of every explanation, an
ordered list, a tree of rules or a sum of trees (``tree``: RuleTree, and RuleSet, which
builds a list), rule lists fitted to
targets (``lists``), and exports to JSON, SQL, Python and tables (``export``). The
condition tests and first matches run in C (``_rules_eval``). Imports ``splits`` and
``utils``."""
from .document import RulesDocumentError
from .lists import RuleList, fit_rule_list, refit_rule_list, refit_rule_lists
from .conditions import Condition
from .ruleset import Rule, rule_count_text
from .tree import Leaf, Node, RuleSet, RuleTree, from_json

__all__ = ["Condition", "Leaf", "Node", "Rule", "RuleList", "RuleSet", "RuleTree", "RulesDocumentError",
           "fit_rule_list", "from_json", "refit_rule_list", "refit_rule_lists", "rule_count_text"]
