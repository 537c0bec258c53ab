"""Tree-space prototypes: a few representative training points per class under the
ensemble's own proximity (Tan, Soloviev, Hooker & Wells, "Tree Space Prototypes").

One concern per module: ``distance`` (RF and GBT tree distances, the C proximity kernel),
``selection`` (greedy submodular and supervised selection), ``explainer``
(PrototypeExplainer, the estimator).
"""
from .distance import leaf_matrix, tree_distance, tree_weights
from .explainer import DISTANCES, METHODS, NearestPrototypes, PrototypeExplainer
from .selection import select_submodular, select_supervised

__all__ = ["DISTANCES", "METHODS", "NearestPrototypes", "PrototypeExplainer", "leaf_matrix", "select_submodular",
           "select_supervised", "tree_distance", "tree_weights"]
