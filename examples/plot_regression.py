"""
Regression: rules for a random forest regressor
===============================================

A random forest regressor on scikit-learn's diabetes data (disease progression one year
after baseline). In regression each rule predicts the mean of the training
targets it is the first match for. ``method="em"`` fits exactly ``max_rules`` rules
instead of letting FAB choose, and ``method="em-kl"`` fits the 2016 mixture of experts.
"""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from defrag import DefragModel
from defrag.plot import tradeoff

data = load_diabetes(as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, random_state=0)
forest = RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=0)
forest.fit(X_train, y_train)
print(f"forest test MSE: {np.mean((forest.predict(X_test) - y_test) ** 2):.0f}")

# %%
# FAB chooses the number of rules.
model = DefragModel(forest, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# EM with a fixed number of rules, for a few sizes, against a tree fitted to the
# model's predictions with as many leaves (CART-fp), each at the conditions it prints
# (a CART tree prints one per inner node).
results = {"defrag (EM)": [], "CART-fp": []}
for k in (2, 4, 6):
    em = DefragModel(forest, method="em", n_components=k, n_restarts=5, random_state=0).fit(X_train)
    results["defrag (EM)"].append((em.n_conditions_, em.evaluate(X_test, y_test)["error"]))
    cart = DecisionTreeRegressor(max_leaf_nodes=em.n_regions_, random_state=0)
    cart.fit(X_train, forest.predict(X_train))
    results["CART-fp"].append((cart.tree_.node_count - cart.get_n_leaves(),
                               float(np.mean((cart.predict(X_test) - y_test) ** 2))))
for name, points in results.items():
    print(name, [(k, round(e)) for k, e in points])
fig = tradeoff(results, error_label="test MSE")

# %%
# The mixture of experts of the 2016 paper: each of the ``max_rules`` experts has a
# region and a Gaussian output, and a softmax gate over the split features weighs them.
# ``predict`` is the experts' weighted prediction; ``rules_`` summarise the regions.
emkl = DefragModel(forest, method="em-kl", n_components=3, n_restarts=5,
                   random_state=0).fit(X_train)
print(emkl.rules_)
print({k: round(v, 3) for k, v in emkl.evaluate(X_test, y_test).items()})
