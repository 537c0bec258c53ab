"""
Every plot for every form
=========================

The three plots of ``defrag.plot`` on the three printed forms of one explanation: a tree
of rules (the default), a sum of small trees (``form="sum"``) and an ordered rule list
(``form="list"``). ``rule_coverage`` and ``tradeoff`` draw all three; ``rules_2d`` draws
regions as boxes, which a sum's are not, so it refuses a sum in one line.

The data: a regression on three features where the target is a sum of a step on ``x0``
and a step on ``x1`` (``x2`` is noise), which a sum of two small trees says exactly.
"""

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel
from defrag.plot import rule_coverage, rules_2d, tradeoff

rng = np.random.default_rng(0)
X = rng.random((1200, 3))
y = 3.0 * (X[:, 0] > 0.5) + 1.5 * (X[:, 1] > 0.3) + rng.normal(0, 0.3, 1200)

forest = RandomForestRegressor(n_estimators=50, max_depth=6, random_state=0).fit(X, y)
models = {
    "tree": DefragModel(forest, form="tree", max_conditions=6, random_state=0).fit(X),
    "sum": DefragModel(forest, form="sum", max_conditions=6, random_state=0).fit(X),
    "list": DefragModel(forest, form="list", random_state=0).fit(X),
}
for form, model in models.items():
    print(f"--- form={form!r}")
    print(model)
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in model.evaluate(X, y).items()})

# %%
# ``tradeoff(model)``: each candidate the search weighed, its **conditions printed** (the
# comparisons of its text, ``a < x <= b`` counting two; ``n_conditions``) on the x axis
# against its cross-validated error; the printed one is circled. A tree's search draws
# one series per form (tree and sum).
fig = tradeoff(models["tree"])

# %%
# The same for the list: one series of list sizes, and the kept restart's list (the one
# printed, by default) as its own point.
fig = tradeoff(models["list"])

# %%
# ``rule_coverage`` on a tree: one bar per leaf, in the printed order, the share of the
# rows that reach it (each row reaches one), labelled with its prediction.
fig = rule_coverage(models["tree"], X)

# %%
# On a sum: one bar per leaf of each part (``p2.1`` is part 2's first leaf), the share of
# the rows that reach it, labelled with the value it adds to the base.
fig = rule_coverage(models["sum"], X)

# %%
# On a list: per rule, the share of the rows it covers (light) and the share it predicts
# for as the first rule that holds (dark), then the default.
fig = rule_coverage(models["list"], X)

# %%
# ``rules_2d`` on the tree and the list: the regions' boxes on two features over the
# data. A region with no condition on either feature drawn would be a box around the
# whole frame: it is left out, and the title names it.
fig = rules_2d(models["tree"], X, y, features=(0, 1), figsize=(5.6, 4.6))

# %%
fig = rules_2d(models["list"], X, y, features=(0, 1), figsize=(5.6, 4.6))

# %%
# A sum is refused, in one line that says why:
try:
    rules_2d(models["sum"], X, y)
except ValueError as exc:
    print(exc)
