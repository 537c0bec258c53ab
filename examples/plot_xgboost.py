"""
XGBoost: a model with a categorical feature
===========================================

An XGBoost classifier trained on a pandas DataFrame with a categorical column
(``enable_categorical=True``). defrag reads the model's JSON: its float32 ``x < t``
splits, where each sends missing values (``default_left``), and its category sets,
which the rules print with the category names (``colour not in {black, green}``).
Install with ``pip install "defrag[xgboost]"``.
"""

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier
from xgboost import XGBClassifier

from defrag import DefragModel

rng = np.random.default_rng(0)
n = 2000
X = pd.DataFrame({
    "income": rng.gamma(2.0, 20.0, n),
    "age": rng.integers(18, 80, n).astype(float),
    "colour": pd.Categorical(rng.choice(["red", "green", "blue", "black"], n)),
})
risk = X["colour"].isin(["red", "blue"]) & (X["age"] > 40)
y = np.where(rng.random(n) < 0.05, ~risk, risk).astype(int)  # 5% label noise
X_train, X_test, y_train, y_test = X[:1500], X[1500:], y[:1500], y[1500:]

booster = XGBClassifier(n_estimators=50, max_depth=3, enable_categorical=True,
                        tree_method="hist", random_state=0).fit(X_train, y_train)
print(f"XGBoost test error: {np.mean(booster.predict(X_test) != y_test):.3f}")

# %%
# The rules, fitted to XGBoost's predictions on the training rows.
model = DefragModel(booster, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# A tree with as many leaves fitted to XGBoost's predictions (CART-fp), on the
# category codes (a tree of scikit-learn reads numbers only).
codes = X.assign(colour=X["colour"].cat.codes)
cart = DecisionTreeClassifier(max_leaf_nodes=model.n_regions_, random_state=0)
cart.fit(codes[:1500], booster.predict(X_train))
print(f"CART-fp, {cart.get_n_leaves()} leaves: test error {np.mean(cart.predict(codes[1500:]) != y_test):.3f}")

# %%
# ``predict`` codes a DataFrame as XGBoost does: the categorical column by the
# categories it was trained with, whatever their order in the new data.
rows = pd.DataFrame({"income": [30.0, 30.0], "age": [60.0, 60.0],
                     "colour": pd.Categorical(["blue", "green"], categories=["green", "blue", "red", "black"])})
print(model.predict(rows), booster.predict(rows))
