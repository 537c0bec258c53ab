"""Every export of the printed explanation against ``predict``, on every case of
benchmarks/quality.py: the default fit and budgets of 3 and 15 comparisons, on the test
rows and on the same rows with a fifth of their values missing (NaN; NULL in SQL); the
ordered list of ``form="list"``, the tree of ``form="tree"``, the sum of ``form="sum"``
(15 comparisons) and the largest tree a fit gives, ``n_regions=300`` (issue 45: SQLite
refused its SQL where the tree nested deep).

Per case and fit, each column says whether the export gives ``predict``'s value on every
row: ``rules_.predict`` (the printed object), the JSON document read back, the Python
function of ``to_python``, the SQL expression of ``to_sql`` in SQLite and in DuckDB (where
installed), and the pandas queries of ``query_strings`` (each row selected by exactly one
query per term, whose leaf gives ``predict``); and whether every count of regions agrees:
the printed header's, ``n_regions_``, ``evaluate()["n_regions"]``, the printed object's
(``len(rules_)``, a list's rules plus its default) and the JSON document's.

    PYTHONPATH=. python benchmarks/exports.py [--cases a,b] [--data DIR]
"""
import argparse
import math
import os
import sqlite3
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402  (the cases, their loading and 70/30 split)

MISSING_SHARE = 0.2
FITS = {"default": {}, "B=3": {"max_conditions": 3}, "B=15": {"max_conditions": 15}, "list": {"form": "list"},
        "tree": {"form": "tree"}, "sum": {"form": "sum", "max_conditions": 15},
        "n_regions=300": {"form": "tree", "n_regions": 300}}


def knocked_out(X, seed=1):
    X = np.array(X, dtype=np.float64)
    X[np.random.default_rng(seed).random(X.shape) < MISSING_SHARE] = np.nan
    return X


def equal(a, b, regression):
    a, b = np.asarray(a), np.asarray(b)
    if regression:
        a, b = a.astype(np.float64), b.astype(np.float64)
        return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    return bool(np.all(a.astype(str) == b.astype(str)))


def python_predictions(rules, frame):
    namespace = {}
    exec(rules.to_python("explained"), namespace)  # noqa: S102 - our own export, run as a user would
    fn = namespace["explained"]
    records = frame.to_dict("records")
    return [fn({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
            for r in records]


def sql_predictions(rules, frame, engine):
    if engine == "sqlite":
        con = sqlite3.connect(":memory:")
        frame.to_sql("t", con, index=False)
        return [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM t ORDER BY rowid")]
    import duckdb

    con = duckdb.connect()
    con.register("t", frame)
    return [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM t").fetchall()]


def queries_agree(rules, frame, predicted, regression):
    """Each row selected by exactly one query of each term; the selected leaves give predict."""
    per_term = rules.query_strings()
    if rules.form == "tree":
        per_term = [per_term]
    leaves_of = [rules.leaves(t) for t in range(len(rules.terms))]
    frame = frame.reset_index(drop=True)
    total = np.full(len(frame), 0.0 if rules.form == "sum" else np.nan)
    label = np.empty(len(frame), dtype=object)
    for t, queries in enumerate(per_term):
        hits = np.zeros(len(frame), dtype=np.int64)
        for query, leaf in zip(queries, leaves_of[t]):
            rows = frame.query(query, engine="python").index.to_numpy()
            hits[rows] += 1
            if rules.form == "sum":
                total[rows] += leaf.prediction
            else:
                label[rows] = leaf.prediction
        if not np.all(hits == 1):
            return False
    if rules.form == "sum":
        total += rules.base
        if rules.classes is not None:  # two classes: the second where the sum passes 1/2
            total = np.where(total > 0.5, rules.classes[1], rules.classes[0])
        # the sum adds decimals of one unit: the float total may differ in the last bit
        return equal(total, predicted, False) if rules.classes is not None else \
            bool(np.allclose(total, np.asarray(predicted, dtype=np.float64), rtol=1e-12, atol=0))
    return equal(label, predicted, regression)


def region_counts_agree(model, X, y):
    import re

    from defrag.rules import from_json

    rules = model.rules_
    header = re.search(r"(\d+) regions?,", str(model))
    own = len(rules)  # its regions (a list's: its rules and its default)
    back = from_json(rules.to_json())
    back_count = back.n_regions
    counts = {int(header.group(1)) if header else -1, model.n_regions_, model.evaluate(X, y)["n_regions"], own,
              back_count}
    return len(counts) == 1


def runs_and_agrees(export, predicted, regression):
    """Whether an export runs (an engine refusing it, as SQLite refused a deep tree's SQL,
    is a disagreement with a note on stderr) and gives predict's values."""
    try:
        got = export()
    except Exception as exc:  # whatever the engine or the export raises is the finding
        print(f"  the export failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}", file=sys.stderr)
        return False
    return got if predicted is None else equal(got, predicted, regression)


def check(model, X, regression):
    import pandas as pd
    from defrag.rules import from_json

    rules = model.rules_
    frame = pd.DataFrame(X, columns=rules.feature_names)
    predicted = model.predict(X)
    out = {"printed": equal(rules.predict(X), predicted, regression),
           "json": runs_and_agrees(lambda: from_json(rules.to_json()).predict(X), predicted, regression),
           "python": runs_and_agrees(lambda: python_predictions(rules, frame), predicted, regression),
           "sqlite": runs_and_agrees(lambda: sql_predictions(rules, frame, "sqlite"), predicted, regression)}
    try:
        import duckdb  # noqa: F401
    except ImportError:
        out["duckdb"] = None
    else:
        out["duckdb"] = runs_and_agrees(lambda: sql_predictions(rules, frame, "duckdb"), predicted, regression)
    # (a list's queries select the rows each rule covers, not those it predicts: not compared)
    out["queries"] = runs_and_agrees(lambda: queries_agree(rules, frame, predicted, regression), None,
                                     regression) if rules.form != "list" else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(quality.CASES))
    ap.add_argument("--data", default=quality.DATA)
    args = ap.parse_args()
    quality.DATA = args.data
    from defrag import DefragModel

    columns = ("printed", "json", "python", "sqlite", "duckdb", "queries", "region counts")
    print("| data | fit | form | regions | conditions | rows | " + " | ".join(columns) + " |")
    print("|" + "---|" * (6 + len(columns)))
    failures, start = 0, time.perf_counter()
    for name in args.cases.split(","):
        data = quality.load(name)
        if data is None:
            print(f"{name}: absent, skipped", file=sys.stderr)
            continue
        X, y, task = data
        s = quality.Split(X, y, task, 0)
        regression = task == "regression"
        for fit, params in FITS.items():
            if fit == "sum" and len(np.unique(y)) > 2 and not regression:
                continue  # a sum classifies two classes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = DefragModel(s.forest, random_state=0, **params).fit(s.Xtr, s.ytr)
            for rows, Xr in (("test", s.Xte), ("test, 20% missing", knocked_out(s.Xte))):
                got = check(model, Xr, regression)
                got["region counts"] = region_counts_agree(model, s.Xte, s.yte)
                failures += sum(v is False for v in got.values())
                cells = ["yes" if v else ("n/a" if v is None else "**NO**") for v in (got[c] for c in columns)]
                form = getattr(model.rules_, "form", "list")
                print(f"| {name} | {fit} | {form} | "
                      f"{model.n_regions_} | {model.n_conditions_} | {rows} | " + " | ".join(cells) + " |")
    print(f"\nexports disagreeing with predict: {failures} ({time.perf_counter() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
