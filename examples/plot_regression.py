"""
Regression: rules for a random forest regressor
===============================================

A random forest regressor on scikit-learn's diabetes data (disease progression one year
after baseline). In regression each region of the tree of rules predicts the forest's
mean prediction over its training rows. ``n_regions=K`` asks for K regions,
``max_conditions=B`` for at most B printed comparisons, where a sum of small trees
competes with the trees; ``method="em-kl"`` fits the 2016 mixture of experts.
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
# The default: a tree of rules, its size chosen by cross-validation.
model = DefragModel(forest, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# A budget of 7 printed comparisons: in regression a sum of small trees (a base plus
# one value from each part) competes with the trees, and the one of lowest
# cross-validated error is printed.
budget = DefragModel(forest, max_conditions=7, random_state=0).fit(X_train)
print(budget)
print({k: round(v, 3) for k, v in budget.evaluate(X_test, y_test).items()})

# %%
# A fixed number of regions, for a few sizes, against a tree fitted to the forest's
# predictions with as many leaves (CART-fp), each at the conditions it prints (a CART
# tree prints one per inner node). ``with_size`` reads each size off the default fit's
# path, without a refit.
results = {"defrag": [], "CART-fp": []}
for k in (2, 4, 6):
    sized = model.with_size(n_regions=k)
    results["defrag"].append((sized.n_conditions_, sized.evaluate(X_test, y_test)["error"]))
    cart = DecisionTreeRegressor(max_leaf_nodes=sized.n_regions_, random_state=0)
    cart.fit(X_train, forest.predict(X_train))
    results["CART-fp"].append((cart.tree_.node_count - cart.get_n_leaves(),
                               float(np.mean((cart.predict(X_test) - y_test) ** 2))))
for name, points in results.items():
    print(name, [(k, round(e)) for k, e in points])
fig = tradeoff(results, error_label="test MSE")

# %%
# The mixture of experts of the 2016 paper: each of the ``n_components`` experts has a
# region and a Gaussian output, and a softmax gate over the split features weighs them.
# ``predict`` is the experts' weighted prediction; ``rules_`` summarise the regions.
emkl = DefragModel(forest, method="em-kl", n_components=3, n_restarts=5,
                   random_state=0).fit(X_train)
print(emkl.rules_)
print({k: round(v, 3) for k, v in emkl.evaluate(X_test, y_test).items()})
