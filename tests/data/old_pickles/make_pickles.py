"""Wrote the pickles of this folder with the code of commit 6bfbc65 (run from the repository root,
PYTHONPATH=.): models of that layout must keep loading (tests/test_old_pickles.py). Kept as a
record; rerunning it today would write pickles of the current layout."""
import pickle, numpy as np, json
from defrag import DefragModel
rng = np.random.default_rng(0)
X = rng.random((300, 3))

y = ((np.nan_to_num(X[:, 0], nan=0.3) > 0.5) ^ (np.nan_to_num(X[:, 1], nan=0.6) > 0.7)).astype(int)
yr = np.nan_to_num(X[:, 0], nan=0.2) * 2 + (np.nan_to_num(X[:, 2], nan=0.9) > 0.4)
grid = np.linspace(0.05, 0.95, 19)
splits = np.array([(d, t) for d in range(3) for t in grid])
models = {
    "fab": DefragModel(splits, max_rules=5, n_restarts=3, random_state=0).fit(X, y),
    "paper": DefragModel.paper(splits, max_rules=5, n_restarts=3, random_state=0).fit(X, y),
    "emkl": DefragModel(splits, method="em-kl", max_rules=3, n_restarts=2, random_state=0).fit(X, y),
    "regression": DefragModel(splits, max_rules=5, n_restarts=3, random_state=0, task="regression").fit(X, yr),
}
out = {"X": X.tolist()}
for name, m in models.items():
    with open(f"tests/data/old_pickles/{name}.pkl", "wb") as f:
        pickle.dump(m, f, protocol=4)
    out[name] = {"predict": m.predict(X).tolist(), "rules": str(m.rules_),
                 "predict_map": m.predict_map(X).tolist()}
with open("tests/data/old_pickles/ruleset.pkl", "wb") as f:
    pickle.dump(models["fab"].rules_, f, protocol=4)
with open("tests/data/old_pickles/expected.json", "w") as f:
    json.dump(out, f)
