"""
Rules of a random forest on XOR data
====================================

The XOR data of Hara & Hayashi's Synthetic1 (their Figure 6): two features uniform on
the unit square, the class is 1 where exactly one of them exceeds 0.5, and 10% of the
labels are flipped. A 100-tree random forest splits the square into thousands of tiny
regions; defrag prints a tree of rules over the boxes of its mixture's components, and
with ``form="list"`` an ordered rule list: two boxes and the default cover the four
quadrants.

This example draws the picture at the top of the README (``examples/readme_plot.py``
saves this figure as ``docs/rules_2d.png``).
"""

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel
from defrag.plot import rules_2d

rng = np.random.default_rng(0)
X = rng.random((1000, 2))
clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
y = np.where(rng.random(1000) < 0.1, 1 - clean, clean)  # 10% label noise

forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
splits = sum(tree.tree_.node_count // 2 for tree in forest.estimators_)
print(f"the forest has {splits} splits")

# %%
# Fit the rules to the forest's own predictions on X (no ``y``): the rules explain the
# forest, not the data. FAB chooses the number of its components, up to ``n_components``;
# their boxes seed the search. By default the explanation is a tree of rules:
print(DefragModel(forest, random_state=0).fit(X))

# %%
# The boxes themselves read best as an ordered list of rules (``form="list"``), drawn
# below over the data:
model = DefragModel(forest, n_components=10, form="list", random_state=0).fit(X)
print(model)

# %%
# The list is read top to bottom: the first rule that holds predicts, else the last
# line, "otherwise". Two boxes and the default cover the four quadrants. The mixture
# behind the list kept four components (``n_components_``); the list needs three lines
# (``n_regions_`` counts the default: the number of regions, as a tree's leaves).
print("components:", model.n_components_, " regions of the list:", model.n_regions_)
print(model.evaluate(X, y))

# %%
# The rules' boxes over the data (a rule with conditions on other features would be
# drawn dashed: its box is then the projection of its region).
fig = rules_2d(model, X, y, features=(0, 1), figsize=(5.2, 4.4))
