"""defrag: make fitted tree ensembles interpretable.

``DefragModel`` simplifies a fitted random forest or extra-trees ensemble into a
few rules by FAB inference (Hara & Hayashi, AISTATS 2018). ``ProxyTree`` fits a
small CART to the ensemble's predictive mean and variance, globally or around
one point. ``PrototypeExplainer`` picks representative training points per class
under the ensemble's own proximity (greedy submodular selection).
"""
import importlib as _importlib

from .utils.startup import loading as _loading

# What follows loads NumPy and the compiled kernels (about a third of a second): a Ctrl-C
# there, in defrag's command line, is its one line and exit status 130 (utils/startup.py).
with _loading():
    from .utils.config import VERSION as __version__

    # The compiled kernels of the core, each in the room it serves: a clear error when one is not
    # built. (Those of prototypes/ and proxy/ load with their estimators, which import scikit-learn.)
    for _module in ("utils._common", "splits._encoding", "fit._fit", "fit._gate", "rules._rules_eval"):
        try:
            _importlib.import_module(f".{_module}", __name__)
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                f"defrag's compiled core (defrag.{_module}) is not built here. Install the package with "
                "`pip install .` (or build in place: `python setup.py build_ext --inplace`)."
            ) from exc
    del _module

    from .rules import Condition, Rule, RuleSet, RuleTree
    from .splits import SplitTable
    from .utils.config import show_config
    from .utils.memory import DefragMemoryError, max_memory, set_max_memory


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
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
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
    "RuleTree",
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
