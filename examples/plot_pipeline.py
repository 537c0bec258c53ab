"""
A scikit-learn Pipeline: rules over the input columns
=====================================================

A random forest behind a ``ColumnTransformer`` that one-hot encodes two text columns and
scales a number. ``DefragModel(pipeline)`` reads the fitted pipeline: a split on a one-hot
column (``cat__aircon_no > 0.5``) prints as a condition on the input column
(``aircon in {no}``), a split on the scaled area prints in square metres, and ``predict``
takes the rows the pipeline takes.
"""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from defrag import DefragModel

rng = np.random.default_rng(0)
n = 1000
X = pd.DataFrame({
    "aircon": rng.choice(["yes", "no"], n),
    "area": rng.uniform(20, 200, n).round(1),  # square metres
    "town": rng.choice(["north", "south", "east"], n),
    "rooms": rng.integers(1, 6, n),
})
# sold within a month: small flats with air conditioning, and anything in the east
y = ((X.aircon == "yes") & (X.area < 90)) | (X.town == "east")
y = y ^ (rng.random(n) < 0.05)  # 5% noise
X_train, X_test, y_train, y_test = X[:800], X[800:], y[:800], y[800:]

pre = ColumnTransformer([
    ("cat", OneHotEncoder(handle_unknown="ignore"), ["aircon", "town"]),
    ("num", StandardScaler(), ["area"]),
    ("keep", "passthrough", ["rooms"]),
])
pipeline = Pipeline([("pre", pre), ("forest", RandomForestClassifier(n_estimators=30, max_depth=6,
                                                                     random_state=0))])
pipeline.fit(X_train, y_train)
print("the forest reads:", ", ".join(pipeline[:-1].get_feature_names_out()))

# %%
# The explanation speaks of the input columns: category conditions on ``aircon`` and
# ``town``, and ``area`` in square metres (each threshold is the scaled split mapped back
# through the scaler, exactly).
model = DefragModel(pipeline, random_state=0).fit(X_train)
print(model)

# %%
# ``predict`` takes the raw rows, as the pipeline does, and is the printed text.
agree = np.mean(model.predict(X_test) == pipeline.predict(X_test))
print(f"the rules agree with the pipeline on {agree:.1%} of the test rows")
print({k: round(v, 3) for k, v in model.evaluate(X_test, y_test).items()})

# %%
# With ``DefragModel`` as the pipeline's last step instead, it sees the encoded columns, so
# its conditions read them: ``cat__town_east > 0.5``. Those names (rather than ``x3``) reach
# it only where the transformer outputs a DataFrame (``set_output(transform="pandas")``, which
# needs ``OneHotEncoder(sparse_output=False)``). Explaining the fitted pipeline, as above,
# gives the input columns.
dense = ColumnTransformer([
    ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["aircon", "town"]),
    ("num", StandardScaler(), ["area"]),
    ("keep", "passthrough", ["rooms"]),
]).set_output(transform="pandas")
last_step = Pipeline([("pre", dense), ("rules", DefragModel(RandomForestClassifier(n_estimators=30, max_depth=6,
                                                                                   random_state=0),
                                                            random_state=0))])
last_step.fit(X_train, y_train)
print(last_step[-1])
