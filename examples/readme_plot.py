"""The README's plot: the rules of a random forest on the XOR data of the paper's
Synthetic1 (Figure 6 of Hara & Hayashi, AISTATS 2018), drawn over the data.

    PYTHONPATH=. python examples/readme_plot.py   # writes docs/rules_2d.png
"""
import os

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel
from defrag.plot import rules_2d

rng = np.random.default_rng(0)
X = rng.random((1000, 2))
clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
y = np.where(rng.random(1000) < 0.1, 1 - clean, clean)  # 10% label noise

forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
model = DefragModel(forest, max_rules=10, random_state=0).fit(X)
print(model)
fig = rules_2d(model, X, y, features=(0, 1), figsize=(5.2, 4.4))
out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "rules_2d.png")
fig.savefig(out, dpi=90)
print(f"wrote {out} ({os.path.getsize(out) // 1024} KB)")
