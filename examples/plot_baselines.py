"""
The paper's comparison: defrag and the baselines
================================================

Hara & Hayashi compare defrag with four earlier methods, all in ``defrag.baselines``
behind the same API: Born-Again Trees (one tree that mimics the ensemble), inTrees (an
ordered rule list from the ensemble's root paths), Node Harvest (a convex combination
of shallow nodes) and a depth-2 tree. Their question: how many rules does each need for
a given test error? Here on the XOR data of their Synthetic1, smaller than in the paper.
"""

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest
from defrag.plot import tradeoff

rng = np.random.default_rng(0)


def xor_data(n):
    X = rng.random((n, 2))
    clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
    return X, np.where(rng.random(n) < 0.1, 1 - clean, clean)  # 10% label noise


X_train, y_train = xor_data(500)
X_test, y_test = xor_data(1000)
forest = RandomForestClassifier(n_estimators=100, min_samples_split=11, random_state=0)
forest.fit(X_train, y_train)
print(f"forest test error: {np.mean(forest.predict(X_test) != y_test):.3f}")

# %%
# Each method takes the fitted forest first and is fitted with ``fit(X, y)``;
# ``evaluate`` reports the same measures for all: test error, fidelity to the forest, the
# regions (``n_regions``: a list's rules and its default, a tree's leaves) and where the
# test rows fall in them, among which ``overlap_share``: the share of the rows more than
# one rule holds for (0 for a tree's leaves; in a list, the rows the rules' order decides).
models = {
    "defrag": DefragModel(forest, random_state=0),
    "defrag (paper)": DefragModel.paper(forest, random_state=0),
    "BATrees": BornAgainTree(forest, random_state=0),
    "inTrees": InTrees(forest),
    "NH": NodeHarvest(forest),
    "DTree2": DepthTwoTree(forest),
}
results = {}
print(f"{'':15s} regions  error  overlap_share")
for name, model in models.items():
    scores = model.fit(X_train, y_train).evaluate(X_test, y_test)
    results[name] = [(scores["n_conditions"], scores["error"])]
    print(f"{name:15s} {scores['n_regions']:7d}  {scores['error']:.3f}  {scores['overlap_share']:.2f}")

# %%
# Conditions printed against test error, one point per method (the layout of the paper's
# Figure 5): the lower left is best.
fig = tradeoff(results)

# %%
# The rules of Born-Again Trees, for comparison with defrag's (one rule per leaf).
print(models["BATrees"].rules_)
