"""Rules as a reader and a scoring service see them: conditions, rules and ordered rule
sets (``ruleset``: Condition, Rule, RuleSet, printing and prediction), trees of rules and
sums of trees (``tree``: RuleTree), rule lists fitted to
targets (``lists``), and exports to JSON, SQL, Python and tables (``export``). The
condition tests and first matches run in C (``_rules_eval``). Imports ``splits`` and
``utils``."""
from .document import RulesDocumentError
from .lists import RuleList, fit_rule_list, refit_rule_list, refit_rule_lists
from .ruleset import Condition, Rule, RuleSet, rule_count_text
from .tree import Leaf, Node, RuleTree, from_json

__all__ = ["Condition", "Leaf", "Node", "Rule", "RuleList", "RuleSet", "RuleTree", "RulesDocumentError",
           "fit_rule_list", "from_json", "refit_rule_list", "refit_rule_lists", "rule_count_text"]
