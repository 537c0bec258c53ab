"""
LightGBM: a regression with missing values
==========================================

A LightGBM regressor on Friedman's first regression problem, with 5% of the values
missing. defrag reads the model's ``dump_model()``: its ``x <= t`` splits, and where each
sends missing values (``missing_type`` NaN, None or Zero). Install with
``pip install "defrag[lightgbm]"``.
"""

import numpy as np
import pandas as pd
from lightgbm import LGBMRegressor
from sklearn.datasets import make_friedman1
from sklearn.tree import DecisionTreeRegressor

from defrag import DefragModel

X, y = make_friedman1(n_samples=2000, n_features=6, noise=1.0, random_state=0)
X = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
X = X.mask(np.random.default_rng(0).random(X.shape) < 0.05)  # 5% missing
X_train, X_test, y_train, y_test = X[:1500], X[1500:], y[:1500], y[1500:]

lgbm = LGBMRegressor(n_estimators=200, learning_rate=0.05, num_leaves=15, verbose=-1,
                     random_state=0).fit(X_train, y_train)
print(f"LightGBM test MSE: {np.mean((lgbm.predict(X_test) - y_test) ** 2):.2f}")

# %%
# A tree of rules fitted to LightGBM's predictions. Each region (leaf) predicts
# LightGBM's mean prediction over its training rows.
model = DefragModel(lgbm, n_components=10, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# A regression tree of as many leaves, fitted to LightGBM's predictions (CART-fp; it
# routes missing values as scikit-learn's trees do).
cart = DecisionTreeRegressor(max_leaf_nodes=model.n_regions_, random_state=0)
cart.fit(X_train, lgbm.predict(X_train))
print(f"CART-fp, {cart.get_n_leaves()} leaves: test MSE {np.mean((cart.predict(X_test) - y_test) ** 2):.2f}")

# %%
# Where the fit's time went (seconds per phase).
print({phase: round(seconds, 3) for phase, seconds in model.fit_seconds_.items()})
