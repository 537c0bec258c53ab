"""defrag: make fitted tree ensembles interpretable.

``DefragModel`` simplifies a fitted random forest or extra-trees ensemble into a
few rules by FAB inference (Hara & Hayashi, AISTATS 2018). ``ProxyTree`` fits a
small CART to the ensemble's predictive mean and variance, globally or around
one point. ``PrototypeExplainer`` picks representative training points per class
under the ensemble's own proximity (greedy submodular selection).
"""
__version__ = "0.1.0"

from importlib import import_module as _import_module

# The compiled kernels, one module per concern: a clear error when one is not built.
for _module in ("_common", "_encoding", "_fit", "_gate", "_proximity", "_proxy_split", "_rules_eval"):
    try:
        _import_module(f".{_module}", __name__)
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"defrag's compiled core (defrag.{_module}) is not built here. Install the package with "
            "`pip install .` (or build in place: `python setup.py build_ext --inplace`)."
        ) from exc
del _module

from ._config import show_config
from ._memory import DefragMemoryError, max_memory, set_max_memory
from ._rules import Condition, Rule, RuleSet
from ._splits import SplitTable

# The estimators import scikit-learn (and with it scipy: about 120 MB and a second of
# start-up), so they load on first use. A scoring service that only unpickles a
# RuleSet and calls predict never pays for them.
_LAZY = {
    "DefragModel": "defrag_model",
    "split_table_from_array": "sources",
    "split_table_from_estimator": "sources",
    "PrototypeExplainer": "prototypes",
    "tree_distance": "prototypes",
    "ProxyTree": "proxy",
    "ProxyTreeClassifier": "proxy",
    "bootstrap_instability": "proxy",
    "explain_local": "proxy",
    "reference_predictions": "proxy",
    "reference_proba": "proxy",
    "tree_dissimilarity": "proxy",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'defrag' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Condition",
    "DefragMemoryError",
    "DefragModel",
    "PrototypeExplainer",
    "ProxyTree",
    "ProxyTreeClassifier",
    "Rule",
    "RuleSet",
    "SplitTable",
    "set_max_memory",
    "max_memory",
    "show_config",
    "split_table_from_array",
    "split_table_from_estimator",
    "bootstrap_instability",
    "explain_local",
    "reference_predictions",
    "reference_proba",
    "tree_dissimilarity",
    "tree_distance",
]
