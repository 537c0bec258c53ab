"""The paper's baselines (Hara & Hayashi, sec. 7) behind one API: each takes a fitted
tree ensemble (any source DefragModel reads) as its first argument, is fitted with
``fit(X, y)`` and exposes ``rules_`` (a RuleSet), ``predict``, ``predict_proba``
(classification) and ``evaluate(X, y)`` with DefragModel's keys.

- ``BornAgainTree`` (Breiman & Shang 1996): one tree that mimics the ensemble.
- ``InTrees`` (Deng 2014, R package inTrees): an ordered rule list (STEL) from the
  ensemble's root paths.
- ``NodeHarvest`` (Meinshausen 2010, R package nodeHarvest): a convex combination of
  shallow nodes.
- ``DepthTwoTree`` ("DTree2"): a CART of depth 2.
"""
from .born_again import BornAgainTree
from .depth_two import DepthTwoTree
from .intrees import InTrees
from .node_harvest import NodeHarvest

__all__ = ["BornAgainTree", "DepthTwoTree", "InTrees", "NodeHarvest"]
