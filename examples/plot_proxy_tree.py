"""
Proxy trees: a small tree fitted to the forest, with its uncertainty
====================================================================

``ProxyTree`` fits a small regression tree to what a reference model predicts, rather
than to the noisy data (Afrabandpey et al., interpretability utility): a node's score is
the expected Gaussian log-likelihood under the model's predictive mean and variance (for
a forest, the spread of its trees' predictions), and the tree is pruned to
``max_leaves`` (or by cross-validation). ``explain_local`` fits a shallow one around a
single point and compares it with a LIME-style linear explanation.
"""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from defrag import ProxyTree, bootstrap_instability

data = load_diabetes()
print("features:", ", ".join(f"x{i} = {name}" for i, name in enumerate(data.feature_names)))
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, random_state=0)
forest = RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=0)
forest.fit(X_train, y_train)

# %%
# The proxy tree's targets come from the forest: ``fit(X)`` takes no y. Its rules print
# as ``DefragModel``'s do, one per leaf.
proxy = ProxyTree(forest, max_leaves=6, random_state=0).fit(X_train)
print(proxy.rules_)


def mse(pred):
    return float(np.mean((pred - y_test) ** 2))


cart = DecisionTreeRegressor(max_leaf_nodes=6, random_state=0).fit(X_train, y_train)
print(f"test MSE: forest {mse(forest.predict(X_test)):.0f}, proxy tree {mse(proxy.predict(X_test)):.0f}, "
      f"CART on the data (6 leaves) {mse(cart.predict(X_test)):.0f}")

# %%
# Stability: trees fitted to bootstrap resamples of the training data differ less when
# they are fitted to the forest than when they are fitted to the data (eq. 10's
# dissimilarity, mean and standard deviation over the pairs of 10 resamples).
for name, factory in (("proxy tree", lambda: ProxyTree(forest, max_leaves=6)),
                      ("CART on y", lambda: DecisionTreeRegressor(max_leaf_nodes=6))):
    y = None if name == "proxy tree" else y_train
    mean, sd = bootstrap_instability(factory, X_train, y, n_boot=10, random_state=0)
    print(f"{name:10s} instability {mean:.3f} +- {sd:.3f}")

# %%
# A local explanation of the forest around one test point: a depth-3 proxy tree fitted
# on a Gaussian neighbourhood, against a LIME-style ridge regression on two features.
# ``loss`` is the locally weighted squared loss against the forest (lower is better);
# ``fidelity`` the weighted R^2 against it (higher is better).
local = proxy.explain_local(X_test[0], random_state=0)
print(local.rules)
print(f"local loss: tree {local.loss:.1f}, LIME baseline "
      f"{local.lime_baseline(n_features=2).loss:.1f}")
