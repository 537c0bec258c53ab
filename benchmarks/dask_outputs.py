"""How far the regression outputs of a fit on Dask are from the in-memory fit of the same
rows and random_state (docs/user_guide/dask.rst): the rules' outputs and the restarts'
errors are sums of per-partition sums on Dask, NumPy's pairwise sums in memory.

Usage (from the repository root, defrag built in place, dask[distributed] installed):

    PYTHONPATH=. python benchmarks/dask_outputs.py [--quick]

Cases: targets about 0, about 100 and about 1e6 (with spread 1), the forest's own
predictions (y=None), and targets of +-1 whose region means are near 0, each on uneven
partitions; printed per case: the largest relative
difference of a rule's output, the same relative to the mean absolute target, and of a
restart's error; then the largest of all. --quick: two cases.
"""
import argparse
import warnings

import numpy as np

CHUNKS = [(1000, 2500, 500, 2000), (3000, 3000), (700,) * 8 + (400,)]


def cases(quick):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 6))
    signal = np.where(X[:, 0] > 0.3, 2.0, -1.0) * (X[:, 1] > -0.5) + 0.3 * rng.normal(size=6000)
    out = [("y about 0", X, signal - signal.mean(), CHUNKS[0]), ("y about 100", X, 100.0 + signal, CHUNKS[1])]
    if not quick:
        # +-1 about region means of 0.001: the outputs are near 0 against the targets
        coin = rng.choice([-1.0, 1.0], size=6000) + 0.001 * (X[:, 0] > 0)
        out += [("y about 1e6", X, 1e6 + signal, CHUNKS[2]), ("y about 0, 9 parts", X, signal - signal.mean(), CHUNKS[2]),
                ("y=None (predictions)", X, None, CHUNKS[0]), ("y +-1, outputs near 0", X, coin, CHUNKS[2])]
    return out


def relative(a, b, scale=None):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    den = np.abs(a) if scale is None else np.full(a.shape, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(a == b, 0.0, np.abs(a - b) / den)
    return float(np.max(r, initial=0.0))


def measure(quick=False, n_workers=2):
    import dask.array as da
    import distributed
    from sklearn.ensemble import RandomForestRegressor

    from defrag import DefragModel

    rows = []
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster, \
            distributed.Client(cluster):
        for name, X, y, chunks in cases(quick):
            target = X[:, 0] - X[:, 0].mean() if y is None else y
            forest = RandomForestRegressor(30, max_depth=6, random_state=0).fit(X, target)
            fit = dict(n_restarts=4, subsample=1500, max_iter=30, random_state=3, task="regression")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = DefragModel(forest, **fit).fit(X, y)
                Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
                yd = None if y is None else da.from_array(y, chunks=(chunks,))
                got = DefragModel(forest, **fit).fit(Xd, yd)
            same = str(ref.rules_) == str(got.rules_)
            outs_a, outs_b = ref.rules_.predictions(), got.rules_.predictions()
            scale = float(np.mean(np.abs(target if y is None else y)))
            rows.append((name, same, relative(outs_a, outs_b), relative(outs_a, outs_b, scale),
                         relative(ref.restart_errors_, got.restart_errors_)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = measure(args.quick)
    for name, same, rel, rel_scale, err in rows:
        print(f"{name:22s} same printed rules: {same}; outputs: {rel:.3g} relative "
              f"({rel_scale:.3g} of the mean |y|); restart errors: {err:.3g} relative")
    print(f"largest: outputs {max(r[2] for r in rows):.3g} relative, {max(r[3] for r in rows):.3g} of the "
          f"mean |y|; restart errors {max(r[4] for r in rows):.3g}")


if __name__ == "__main__":
    main()
