"""
CatBoost: symmetric trees and one-hot categories
================================================

A CatBoost classifier with a categorical column that CatBoost one-hot encodes
(``one_hot_max_size``): its symmetric (oblivious) trees test one split per level, and a
one-hot split becomes a category set in the rules. Models that use CTR features (target
statistics of categories, CatBoost's default for categories with many values) are
refused with an error that says why. Install with ``pip install "defrag[catboost]"``.
"""

import numpy as np
import pandas as pd
from catboost import CatBoostClassifier

from defrag import DefragModel

rng = np.random.default_rng(1)
n = 2000
X = pd.DataFrame({
    "temperature": rng.normal(20.0, 8.0, n),
    "humidity": rng.uniform(0.0, 100.0, n),
    "site": rng.choice(["north", "south", "east", "west"], n),
})
failure = ((X["temperature"] > 28) & (X["site"] != "north")) | (X["humidity"] > 85)
y = np.where(rng.random(n) < 0.05, ~failure, failure).astype(int)
X_train, X_test, y_train, y_test = X[:1500], X[1500:], y[:1500], y[1500:]

catboost = CatBoostClassifier(iterations=100, depth=4, one_hot_max_size=4, cat_features=["site"],
                              random_seed=0, verbose=0, thread_count=1, allow_writing_files=False)
catboost.fit(X_train, y_train)
print(f"CatBoost test error: {np.mean(catboost.predict(X_test) != y_test):.3f}")

# %%
# The rules, fitted to CatBoost's predictions. defrag hashes the category values as
# CatBoost does, so the DataFrame goes in as it is.
model = DefragModel(catboost, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# Here the rules speak of the two numeric features only: the site, one categorical
# feature with a handful of one-hot splits, weighs little in the mixture against
# features with many splits (see "Features with few splits" in the user guide's
# methods page). The category sets are among the splits the mixture was fitted on:
table = model.splits_
print(f"{len(table)} splits, {int(np.count_nonzero(table.kind))} of them category sets")

# %%
# A model whose categories are encoded by target statistics (CTR) has no readable
# split on them: defrag refuses it and says why.
ctr = CatBoostClassifier(iterations=20, depth=3, one_hot_max_size=1, cat_features=["site"],
                         random_seed=0, verbose=0, thread_count=1, allow_writing_files=False)
ctr.fit(X_train, y_train)
try:
    DefragModel(ctr).fit(X_train)
except ValueError as error:
    print("ValueError:", error)
