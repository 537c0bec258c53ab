"""
A scikit-learn forest, and a tree of the same size
==================================================

A random forest on scikit-learn's breast cancer data, simplified into a few rules. The
question every simplification must answer: do the rules, as printed, predict as well as
the obvious alternative, a decision tree fitted to the forest's predictions with as many
leaves as the rules have regions ("CART-fp")? This example compares the default tree of
rules, the same under a budget of conditions, the paper's algorithm as published
(``DefragModel.paper``) and that tree.
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
# The default: a tree of rules fitted to the forest's predictions on the training
# points, its size chosen by cross-validation. The DataFrame's column names appear in
# the rules; the header counts regions (leaves) and the comparisons printed.
model = DefragModel(forest, n_components=10, random_state=0).fit(X_train)
print(model)

# %%
# A budget: the explanation of lowest cross-validated error that prints at most 3
# comparisons.
budget = DefragModel(forest, max_conditions=3, random_state=0).fit(X_train)
print(budget)

# %%
# The paper's algorithm as published: every split of the forest, the rules read off the
# mixture's components in weight order, the two-step MAP prediction.
paper = DefragModel.paper(forest, n_components=10, random_state=0).fit(X_train)
print(paper)

# %%
# Test errors. ``error`` is the error of what ``predict`` returns: for the default, the
# printed tree; for the paper's preset, the MAP prediction (``error_mixture_map``). The tree
# fitted to the forest's predictions gets as many leaves as the default has regions;
# ``mean_checks`` is the comparisons a reader makes per test row.
cart = DecisionTreeClassifier(max_leaf_nodes=model.n_regions_, random_state=0)
cart.fit(X_train, forest.predict(X_train))
print(f"{'':22s} regions  conditions  checks/row  test error")
print(f"{'forest':22s} {'':7s}  {'':10s}  {'':10s}  {np.mean(forest.predict(X_test) != y_test):.4f}")
for name, m in (("defrag (tree)", model), ("defrag (budget 3)", budget), ("defrag (paper)", paper)):
    s = m.evaluate(X_test, y_test)
    checks = f"{s['mean_checks']:10.2f}" if "mean_checks" in s else f"{'':10s}"
    print(f"{name:22s} {s['n_regions']:7d}  {s['n_conditions']:10d}  {checks}  {s['error']:.4f}")
depth = np.mean(cart.decision_path(X_test).sum(axis=1) - 1)
print(f"{'CART-fp':22s} {cart.get_n_leaves():7d}  {cart.get_n_leaves() - 1:10d}  {depth:10.2f}  "
      f"{np.mean(cart.predict(X_test) != y_test):.4f}")

# %%
# The same search can print an ordered rule list (``form="list"``): the first rule that
# holds predicts, else the default. For a list, ``rule_coverage`` shows what each rule
# does on the test points: the share of rows it covers, and the share it predicts for
# (the rows for which it is the first rule that holds).
ordered = DefragModel(forest, form="list", random_state=0).fit(X_train)
print(ordered)
fig = rule_coverage(ordered, X_test)
