"""
Multiclass: rules with class probabilities
==========================================

A random forest on scikit-learn's wine data (three cultivars). Each region of the tree of
rules predicts a class, with the forest's mean class probabilities there;
``predict_proba`` returns them. ``rules_.to_frame`` gives one row per region with its
path, its support and, on test data, its share and error.
"""

import pandas as pd
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from defrag import DefragModel

data = load_wine(as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, random_state=0, stratify=data.target)
forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_train, y_train)

model = DefragModel(forest, n_components=10, random_state=0).fit(X_train)
print(model)
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# Class probabilities of the first test points, from the region each falls in.
print(pd.DataFrame(model.predict_proba(X_test[:5]), columns=model.classes_, index=X_test.index[:5]))

# %%
# One row per region: its path, prediction, training support, and on the test data its
# share of the rows and its error there.
frame = model.rules_.to_frame(X_test, y_test)
print(frame[["path", "prediction", "support", "X_share", "error"]].to_string())
