"""
A scikit-learn forest, and a tree of the same size
==================================================

A random forest on scikit-learn's breast cancer data, simplified into a few rules. The
question every simplification must answer: do the rules, as printed, predict as well as
the obvious alternative, a decision tree fitted to the forest's predictions with as many
leaves as the rules have regions ("CART-fp")? This example compares the default rule
list, the paper's algorithm as published (``DefragModel.paper``) and that tree.
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from defrag import DefragModel
from defrag.plot import rule_coverage

data = load_breast_cancer(as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, random_state=0)
forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_train, y_train)

# %%
# The default: an ordered rule list fitted to the forest's predictions on the training
# points. The DataFrame's column names appear in the rules.
model = DefragModel(forest, n_components=10, random_state=0).fit(X_train)
print(model)

# %%
# The paper's algorithm as published: every split of the forest, the rules read off the
# mixture's components in weight order, the two-step MAP prediction.
paper = DefragModel.paper(forest, n_components=10, random_state=0).fit(X_train)
print(paper)

# %%
# Test errors. ``error`` is the error of what ``predict`` returns: for the default, the
# printed list; for the paper's preset, the MAP prediction (``error_map``). The tree
# fitted to the forest's predictions gets as many leaves as the list has regions.
cart = DecisionTreeClassifier(max_leaf_nodes=model.n_regions_, random_state=0)
cart.fit(X_train, forest.predict(X_train))
print(f"{'':22s} regions  test error")
print(f"{'forest':22s} {'':7s}  {np.mean(forest.predict(X_test) != y_test):.4f}")
for name, m in (("defrag (rule list)", model), ("defrag (paper)", paper)):
    print(f"{name:22s} {m.n_regions_:7d}  {m.evaluate(X_test, y_test)['error']:.4f}")
print(f"{'CART-fp':22s} {cart.get_n_leaves():7d}  {np.mean(cart.predict(X_test) != y_test):.4f}")

# %%
# What each rule does on the test points: the share of rows it covers, and the share it
# predicts for (the rows for which it is the first rule that holds).
fig = rule_coverage(model, X_test)
