"""Fingerprints of fitted rules: one line per case with L (splits), K (rules) and a hash of
the fitted parameters and of the printed rules, to check that a change of layout changes
no result, bit for bit.

Usage (from the repository root, with defrag installed or built in place):

    PYTHONPATH=. python benchmarks/fingerprint.py > before.txt   # PYTHONPATH for an in-place build
    ... change the code, rebuild ...
    PYTHONPATH=. python benchmarks/fingerprint.py > after.txt && diff before.txt after.txt

Presets: paper, default and em-kl (4 experts). Cases: the benchmark cases of benchmarks/run.py (synthetic1, cls28, cls50; forests cached
in --cache), scikit-learn's diabetes (regression) and breast_cancer with a random forest, a
gradient boosting and a HistGradientBoosting model, and categorical XGBoost and LightGBM
models when those libraries are installed.
"""
import argparse
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def sklearn_cases():
    from sklearn.datasets import load_breast_cancer, load_diabetes
    from sklearn.ensemble import (GradientBoostingClassifier, HistGradientBoostingClassifier,
                                  RandomForestRegressor)

    X, y = load_diabetes(return_X_y=True)
    yield "diabetes-rf", RandomForestRegressor(50, min_samples_leaf=5, random_state=0).fit(X, y), X
    X, y = load_breast_cancer(return_X_y=True)
    yield "cancer-gb", GradientBoostingClassifier(n_estimators=30, random_state=0).fit(X, y), X
    Xn = X.copy()
    Xn[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    yield "cancer-hgb-nan", HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(Xn, y), Xn


def categorical_cases():
    rng = np.random.default_rng(0)
    n = 2000
    cat = rng.integers(0, 8, n)
    num = rng.normal(size=n)
    y = ((cat % 3 == 0) ^ (num > 0.3)).astype(int)
    X = np.column_stack([cat, num]).astype(np.float64)
    try:
        import pandas as pd
        import xgboost as xgb

        df = pd.DataFrame({"c": pd.Categorical(cat), "x": num})
        model = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True,
                                  tree_method="hist", random_state=0).fit(df, y)
        yield "xgboost-cat", model, df
    except ImportError:
        pass
    try:
        import lightgbm as lgb

        model = lgb.LGBMClassifier(n_estimators=20, num_leaves=8, random_state=0, verbose=-1)
        model.fit(X, y, categorical_feature=[0])
        yield "lightgbm-cat", model, X
    except ImportError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--presets", default="paper,default,em-kl",
                    help="paper (DefragModel.paper: Algorithm 1 on every split, MAP prediction), "
                         "default, and/or em-kl (method='em-kl', the 2016 mixture of experts)")
    args = ap.parse_args()
    from run import load_data

    from defrag import DefragModel

    cases = []
    for case in ("synthetic1", "cls28", "cls50"):
        Xtr, _, _, _, forest = load_data(case, args.cache)
        cases.append((case, forest, Xtr))
    cases += list(sklearn_cases()) + list(categorical_cases())
    for preset in args.presets.split(","):
        make = DefragModel.paper if preset == "paper" else DefragModel
        extra = {"method": "em-kl", "n_components": 4} if preset == "em-kl" else {"n_components": 10}
        for name, model, X in cases:
            m = make(model, n_restarts=args.restarts, random_state=0, **extra).fit(X)
            params = [m.eta_, m.alpha_] + ([m.mean_, m.precision_] if m.task_ == "regression" else [m.gamma_])
            if preset == "em-kl":
                params.append(m.gate_weights_)
            print(f"{preset:7s} {name:16s} L={len(m.splits_):6d} K={m.n_regions_:2d} params={digest(*params)} "
                  f"rules={hashlib.sha256(str(m.rules_).encode()).hexdigest()[:16]} "
                  f"predict={digest(m.predict(X))}")


if __name__ == "__main__":
    main()
