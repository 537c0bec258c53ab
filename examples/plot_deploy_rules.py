"""
Deploying rules: JSON, SQL, Python and a table
==============================================

The rules are a deliverable of their own. ``model.rules_`` (a ``RuleTree``: a tree of
rules) saves and loads itself as JSON, and exports itself as one SQL expression, as a Python
function without dependencies, as pandas query strings and as a table; every export
predicts as ``rules_.predict`` does, row for row, missing values included. This example checks that
on data with missing values (a random forest routes them): the SQL runs in SQLite.
"""

import json
import sqlite3

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel
from defrag.rules import from_json

rng = np.random.default_rng(0)
n = 3000
X = pd.DataFrame({"tenure months": rng.uniform(0.0, 72.0, n).round(1),
                  "monthly charge": rng.uniform(20.0, 120.0, n).round(2)})
churn = (X["tenure months"] < 24) & (X["monthly charge"] > 70)
y = np.where(rng.random(n) < 0.05, ~churn, churn).astype(int)
X.loc[rng.random(n) < 0.05, "monthly charge"] = np.nan  # missing values, routed by the model

forest = RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=0).fit(X, y)
model = DefragModel(forest, random_state=0).fit(X)
print(model.rules_)

# %%
# JSON keeps everything the rules need (exact thresholds, feature names, how the
# inputs are coded, a schema version): a condition holds the forest's real threshold
# (``upper``) beside the printed one, the shortest decimal that puts every training point
# on the same side; ``defrag.rules.from_json`` predicts identically and
# imports neither scikit-learn nor pandas.
text = model.rules_.to_json(indent=2)
rules = from_json(text)
print(json.loads(text)["nodes"][0]["conditions"][0])
print("same predictions:", np.array_equal(rules.predict(X), model.predict(X)))

# %%
# One standard SQL expression (nested ``CASE WHEN ... END``) over a table that holds the columns
# (missing values as NULL). Run in SQLite on every row:
sql = rules.to_sql(table="customers")
print(sql)
with sqlite3.connect(":memory:") as db:
    X.to_sql("customers", db, index=False)
    in_sql = np.array([row[0] for row in db.execute(f"SELECT {sql} FROM customers")])
print("SQL = predict:", np.array_equal(in_sql, rules.predict(X)))

# %%
# A Python function without dependencies, for a row given as a dict (or a pandas Series,
# or a list in column order); missing values are ``None`` or NaN.
source = rules.to_python("churn")
print(source[source.index("COLUMNS = "):])  # the function; helpers that read values come before it
namespace = {}
exec(source, namespace)
in_python = np.array([namespace["churn"](row) for row in X.to_dict("records")])
print("Python = predict:", np.array_equal(in_python, rules.predict(X)))

# %%
# pandas ``DataFrame.query`` expressions select the rows of each region (a leaf of the
# tree), and ``to_frame`` is one row per region with its path, its support and, on data,
# its share and error.
for query in rules.query_strings():
    print(query, "->", len(X.query(query)), "rows")
print(rules.to_frame(X, y)[["path", "prediction", "support", "X_share", "error"]].to_string())
