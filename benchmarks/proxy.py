"""Proxy trees: the experiments of sec. 2.2.1 / 4.1-4.2 of Afrabandpey et al.
with a random forest as the reference model.

Usage (from the repository root, with defrag installed or built in place):

    python benchmarks/proxy.py                 # 20 splits / seeds (a few minutes on 2 cores)
    python benchmarks/proxy.py --runs 5        # quicker
    python benchmarks/proxy.py --json out.json # also write every figure as JSON

Parts:

1. smooth1d   Figure 1 setting: x ~ U(-3, 3), n = 100, y = f(x) + N(0, 1), f(x) = x +
              sin(2x) / 2. RMSE to the true f on a grid of 1,000 points vs the number of
              leaves (2..20) for the proxy tree fitted to the forest and for a CART of the
              same size fitted to the noisy y (the same ML tree with zero variance, and
              scikit-learn's DecisionTreeRegressor(max_leaf_nodes=b) for reference).
2. diabetes   scikit-learn's diabetes data, 20 random 75/25 splits: test RMSE (against the
              observed y) vs the number of leaves, proxy vs CART on the data.
3. local      diabetes, 90/10 split: for each test point, explain_local (200 samples,
              scale 1 in standardised units, depth 3, alpha by 5-fold CV) against the
              LIME-style weighted ridge with 2 (and 3) features, on the same samples;
              the same loss is also measured on 1,000 fresh neighbourhood draws.
4. stability  bootstrap instability (eq. 10, 10 resamples, 45 pairs) on each diabetes
              training split of part 3: proxy (the forest refitted on every resample)
              vs CART on the data, both with at most 8 leaves.

A "leaf count b" row uses the largest subtree on the pruning path with at most b leaves;
the mean actual leaf count is printed next to it. Matplotlib is optional: with it,
--plot FILE writes the RMSE curves.
"""
import argparse
import json
import time

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from defrag.proxy import ProxyTree, bootstrap_instability, explain_local, local_fidelity

LEAVES = list(range(2, 21))


def forest(seed):
    return RandomForestRegressor(n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=2)


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def smooth1d(runs):
    f = lambda x: x[:, 0] + 0.5 * np.sin(2 * x[:, 0])
    grid = np.linspace(-3, 3, 1000)[:, None]
    res = {k: np.zeros((runs, len(LEAVES))) for k in ("proxy", "cart", "sk_cart", "leaves_proxy", "leaves_cart")}
    res["forest"] = np.zeros(runs)
    for s in range(runs):
        rng = np.random.default_rng(s)
        x = rng.uniform(-3, 3, (100, 1))
        y = f(x) + rng.standard_normal(100)
        rf = forest(s).fit(x, y)
        res["forest"][s] = rmse(rf.predict(grid), f(grid))
        for i, b in enumerate(LEAVES):
            p = ProxyTree(rf, min_samples_leaf=5, max_leaves=b).fit(x)
            c = ProxyTree(min_samples_leaf=5, max_leaves=b).fit(x, y)
            sk = DecisionTreeRegressor(max_leaf_nodes=b, min_samples_leaf=5, random_state=0).fit(x, y)
            res["proxy"][s, i] = rmse(p.predict(grid), f(grid))
            res["cart"][s, i] = rmse(c.predict(grid), f(grid))
            res["sk_cart"][s, i] = rmse(sk.predict(grid), f(grid))
            res["leaves_proxy"][s, i] = p.n_leaves_
            res["leaves_cart"][s, i] = c.n_leaves_
    return res


def diabetes_global(runs):
    X, y = load_diabetes(return_X_y=True)
    res = {k: np.zeros((runs, len(LEAVES))) for k in ("proxy", "cart", "sk_cart", "leaves_proxy", "leaves_cart")}
    res["forest"] = np.zeros(runs)
    res["proxy_cv"], res["proxy_cv_leaves"] = np.zeros(runs), np.zeros(runs)
    res["cart_cv"], res["cart_cv_leaves"] = np.zeros(runs), np.zeros(runs)
    for s in range(runs):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s)
        rf = forest(s).fit(Xtr, ytr)
        res["forest"][s] = rmse(rf.predict(Xte), yte)
        for i, b in enumerate(LEAVES):
            p = ProxyTree(rf, min_samples_leaf=5, max_leaves=b).fit(Xtr)
            c = ProxyTree(min_samples_leaf=5, max_leaves=b).fit(Xtr, ytr)
            sk = DecisionTreeRegressor(max_leaf_nodes=b, min_samples_leaf=5, random_state=0).fit(Xtr, ytr)
            res["proxy"][s, i] = rmse(p.predict(Xte), yte)
            res["cart"][s, i] = rmse(c.predict(Xte), yte)
            res["sk_cart"][s, i] = rmse(sk.predict(Xte), yte)
            res["leaves_proxy"][s, i] = p.n_leaves_
            res["leaves_cart"][s, i] = c.n_leaves_
        p = ProxyTree(rf, min_samples_leaf=5, random_state=s).fit(Xtr)
        c = ProxyTree(min_samples_leaf=5, random_state=s).fit(Xtr, ytr)
        res["proxy_cv"][s], res["proxy_cv_leaves"][s] = rmse(p.predict(Xte), yte), p.n_leaves_
        res["cart_cv"][s], res["cart_cv_leaves"][s] = rmse(c.predict(Xte), yte), c.n_leaves_
    return res


class ForestProxy(BaseEstimator):
    """Fit the forest to (X, y), then the proxy to the forest (for the bootstrap)."""

    def __init__(self, max_leaves=8, seed=0):
        self.max_leaves = max_leaves
        self.seed = seed

    def fit(self, X, y):
        rf = RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=self.seed,
                                   n_jobs=2).fit(X, y)
        self.proxy_ = ProxyTree(rf, min_samples_leaf=5, max_leaves=self.max_leaves).fit(X)
        self.tree_ = self.proxy_.tree_
        return self


def diabetes_local(seed=0):
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.1, random_state=seed)
    rf = forest(seed).fit(Xtr, ytr)
    scale = Xtr.std(axis=0)
    out = {k: [] for k in ("proxy", "lime2", "lime3", "proxy_fresh", "lime2_fresh", "lime3_fresh",
                           "proxy_features", "proxy_leaves")}
    for i, x in enumerate(Xte):
        e = explain_local(rf, x, scale, n_samples=200, scale=1.0, max_depth=3, random_state=1000 + i)
        lime2, lime3 = e.lime_baseline(2), e.lime_baseline(3)
        out["proxy"].append(e.loss)
        out["lime2"].append(lime2.loss)
        out["lime3"].append(lime3.loss)
        # the same loss on 1,000 fresh draws from the neighbourhood (out of sample)
        u = np.random.default_rng(5000 + i).standard_normal((1000, x.size))
        Z = x + u * scale
        f, w = rf.predict(Z), np.exp(-0.5 * np.sum(u ** 2, axis=1))
        out["proxy_fresh"].append(local_fidelity(e.tree.predict(Z), f, w))
        out["lime2_fresh"].append(local_fidelity(lime2.predict(Z), f, w))
        out["lime3_fresh"].append(local_fidelity(lime3.predict(Z), f, w))
        out["proxy_features"].append(len(e.features_used()))
        out["proxy_leaves"].append(e.tree.n_leaves_)
    out = {k: np.asarray(v, dtype=float) for k, v in out.items()}
    t = time.perf_counter()
    out["instability_proxy"] = bootstrap_instability(lambda: ForestProxy(8, seed), Xtr, ytr, n_boot=10,
                                                     random_state=seed)
    out["instability_cart"] = bootstrap_instability(lambda: ProxyTree(min_samples_leaf=5, max_leaves=8),
                                                    Xtr, ytr, n_boot=10, random_state=seed)
    out["instability_sk_cart"] = bootstrap_instability(
        lambda: DecisionTreeRegressor(max_leaf_nodes=8, min_samples_leaf=5, random_state=0),
        Xtr, ytr, n_boot=10, random_state=seed)
    out["instability_seconds"] = time.perf_counter() - t
    return out


def table(title, res, runs):
    print(f"\n{title} (mean over {runs} runs; forest RMSE {res['forest'].mean():.4f})")
    print(f"{'b':>3} {'proxy':>9} {'cart(ML)':>9} {'sk CART':>9} {'diff':>8} {'wins':>5} {'leaves p/c':>11}")
    for i, b in enumerate(LEAVES):
        p, c, sk = res["proxy"][:, i], res["cart"][:, i], res["sk_cart"][:, i]
        print(f"{b:>3} {p.mean():9.4f} {c.mean():9.4f} {sk.mean():9.4f} {np.mean(c - p):8.4f} "
              f"{int(np.sum(p < c)):>2}/{runs:<2} {res['leaves_proxy'][:, i].mean():5.1f}/{res['leaves_cart'][:, i].mean():<5.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    args = ap.parse_args()
    t0 = time.perf_counter()
    s1 = smooth1d(args.runs)
    table("1-D smooth function: RMSE to the true f vs leaves", s1, args.runs)
    s2 = diabetes_global(args.runs)
    table("diabetes: test RMSE vs leaves", s2, args.runs)
    print(f"alpha by 5-fold CV: proxy RMSE {s2['proxy_cv'].mean():.4f} ({s2['proxy_cv_leaves'].mean():.1f} leaves), "
          f"CART on data {s2['cart_cv'].mean():.4f} ({s2['cart_cv_leaves'].mean():.1f} leaves)")
    loc = diabetes_local()
    n = loc["proxy"].size
    print(f"\nlocal fidelity on {n} diabetes test points (locally weighted squared loss, mean [median]):")
    print(f"  {'':<24} {'the 200 fitting samples':>24} {'1,000 fresh samples':>22}")
    for k, label in (("proxy", "proxy tree, depth 3"), ("lime2", "LIME-style, 2 features"),
                     ("lime3", "LIME-style, 3 features")):
        print(f"  {label:<24} {loc[k].mean():12.2f} [{np.median(loc[k]):8.2f}] "
              f"{loc[k + '_fresh'].mean():10.2f} [{np.median(loc[k + '_fresh']):8.2f}]")
    print(f"  proxy uses {loc['proxy_features'].mean():.2f} features, {loc['proxy_leaves'].mean():.2f} leaves on average; "
          f"proxy <= LIME-2 on {int(np.sum(loc['proxy'] <= loc['lime2']))}/{n} points")
    print("\nbootstrap instability (eq. 10, 10 resamples, 45 pairs, <= 8 leaves), mean +- std:")
    for k, label in (("instability_proxy", "proxy (forest refitted)"), ("instability_cart", "CART on data (ML)"),
                     ("instability_sk_cart", "sklearn CART on data")):
        print(f"  {label:<24} {loc[k][0]:.3f} +- {loc[k][1]:.3f}")
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    if args.json:
        conv = lambda d: {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
        with open(args.json, "w") as fh:
            json.dump({"leaves": LEAVES, "smooth1d": conv(s1), "diabetes": conv(s2), "local": conv(loc)}, fh)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, res, title in ((axes[0], s1, "1-D smooth: RMSE to f"), (axes[1], s2, "diabetes: test RMSE")):
            for key, label in (("proxy", "proxy (to forest)"), ("cart", "CART (to data)")):
                ax.plot(LEAVES, res[key].mean(axis=0), marker="o", label=label)
            ax.axhline(res["forest"].mean(), color="gray", ls="--", label="forest")
            ax.set_xlabel("leaves")
            ax.set_title(title)
            ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)


if __name__ == "__main__":
    main()
