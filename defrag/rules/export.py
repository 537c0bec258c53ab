"""Rule sets as deliverables: JSON (and back), a table per rule, one SQL ``CASE``
expression, a dependency-free Python function, pandas query strings.

Every export reproduces ``RuleSet.predict`` on the data as a user holds it (the
DataFrame given to ``predict``): the first rule that holds, else the default. What
``predict`` does before comparing is written into each export:

- a missing value (SQL ``NULL``, NaN, None) takes the condition's ``missing`` side;
  where the source model reads zero as missing (LightGBM ``missing_type`` Zero), so
  does the export (``|x| <= 1e-35``);
- a categorical feature whose categories are known (from the model or the fitted
  DataFrame) holds category labels; a label outside them is missing (or, for
  XGBoost, whose encoding refuses it, an error); a categorical feature without known
  categories holds integer category codes (LightGBM truncates them toward zero);
- LightGBM reads ``|x| <= 1e-35`` as 0: a threshold inside that band is compared as
  LightGBM compares it;
- where ``predict`` refuses a value (NaN where the source model has no direction for
  missing values, an unknown XGBoost category) the SQL expression is NULL and the
  Python function raises ValueError.

Thresholds are written exactly (Python's ``repr`` of the float: the shortest decimal
that reads back as the same double).
"""
import json
import math

import numpy as np

from ..splits.inputs import ZERO_THRESHOLD, InputEncoding
from .ruleset import Condition, Rule, RuleSet

SCHEMA = "defrag.rules"
SCHEMA_VERSION = 1


# ----------------------------------------------------------------------------- JSON
def _plain(value):
    """A JSON value of a label, a category or a number (NumPy scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "inf", "-inf", "nan": strict JSON has no such numbers
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) to JSON: labels and "
                    "categories must be numbers, strings or booleans")


def _number(value):
    """A float written by _plain (a bound, a threshold) back as a float."""
    return None if value is None else float(value)


def _array(values):
    """A 1-D array to JSON: its values and its dtype (so that it reads back as it was)."""
    arr = np.asarray(values)
    kind = "object" if arr.dtype == object or arr.dtype.kind in "US" else arr.dtype.str
    return {"dtype": kind, "values": [_plain(v) for v in arr.tolist()]}


def _from_array(d):
    if d["dtype"] == "object":
        out = np.empty(len(d["values"]), dtype=object)
        out[:] = d["values"]
        return out
    return np.asarray(d["values"], dtype=np.dtype(d["dtype"]))


def _labels_array(values):
    """Labels (classes) read back: strings as a NumPy string array, as fitting made them."""
    arr = np.asarray(values)
    return arr.astype(object) if arr.dtype.kind not in "USbifu" else arr


def condition_to_dict(c):
    return {
        "feature": c.feature, "name": c.name, "lower": _plain(c.lower), "upper": _plain(c.upper),
        "categories": c._labels() if c.is_set else None,
        "codes": None if not c.is_set else list(c.categories),
        "negated": c.negated, "missing": c.missing, "zero_missing": c.zero_missing,
        "train_share": c.train_share,
        "category_names": None if c.category_names is None else list(c.category_names),
        "printed_lower": _plain(c.printed_lower), "printed_upper": _plain(c.printed_upper),
        "missing_seen": c.missing_seen,
    }


def condition_from_dict(d):
    set_cond = d.get("codes") is not None
    return Condition(
        d["feature"], d["name"], _number(d.get("lower")), _number(d.get("upper")),
        train_share=d.get("train_share"), missing=d.get("missing", False),
        categories=d["codes"] if set_cond else None, negated=d.get("negated", False),
        category_names=d.get("category_names"), zero_missing=d.get("zero_missing", False),
        printed_lower=_number(d.get("printed_lower")), printed_upper=_number(d.get("printed_upper")),
        missing_seen=d.get("missing_seen", True))


def rule_to_dict(r):
    return {
        "conditions": [condition_to_dict(c) for c in r.conditions],
        "prediction": _plain(r.prediction),
        "proba": None if r.proba is None else [float(p) for p in r.proba],
        "support": r.support, "weight": r.weight, "coverage": r.coverage,
    }


def rule_from_dict(d):
    prediction = d["prediction"]
    if isinstance(prediction, str) and d.get("proba") is None:  # a regression output "inf"
        prediction = float(prediction)
    return Rule([condition_from_dict(c) for c in d["conditions"]], prediction, d.get("proba"),
                d.get("support", 0), d.get("weight", 0.0), coverage=d.get("coverage"))


def encoding_to_dict(enc):
    if enc is None:
        return None
    return {
        "n_features": enc.n_features, "categorical": enc.categorical.tolist(),
        "categories": [None if c is None else _array(c) for c in enc.categories],
        "lookup_numbers": enc.lookup_numbers, "unknown": enc.unknown,
        "zero_missing": enc.zero_missing.tolist(), "lightgbm_reads": bool(enc.lightgbm_reads),
    }


def encoding_from_dict(d):
    if d is None:
        return None
    return InputEncoding(d["n_features"], d["categorical"],
                         [None if c is None else _from_array(c) for c in d["categories"]],
                         d["lookup_numbers"], d["unknown"], d["zero_missing"],
                         lightgbm_reads=d.get("lightgbm_reads", False))


def ruleset_to_dict(rs):
    classes = None if rs.classes is None else _array(rs.classes)
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "rules": [rule_to_dict(r) for r in rs.rules],
        "default_prediction": _plain(rs.default_prediction),
        "default_proba": None if rs.default_proba is None else [float(p) for p in rs.default_proba],
        "feature_names": rs.feature_names,
        "feature_names_in": getattr(rs, "feature_names_in", None),
        "classes": None if classes is None else classes["values"],
        "classes_dtype": None if classes is None else classes["dtype"],
        "supports_missing": rs.supports_missing,
        "encoding": encoding_to_dict(rs.encoding),
    }


def ruleset_from_dict(d):
    if not isinstance(d, dict) or "rules" not in d:
        raise ValueError("not a defrag rule set: a dict with 'rules' is expected")
    if d.get("schema", SCHEMA) != SCHEMA:
        raise ValueError(f"not a defrag rule set: schema {d.get('schema')!r}")
    version = d.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"rule set schema version {version!r} is newer than this defrag "
                         f"reads ({SCHEMA_VERSION}): upgrade defrag")
    classes = d.get("classes")
    if classes is not None:
        classes = _from_array({"dtype": d.get("classes_dtype") or "object", "values": classes})
        if classes.dtype == object and all(isinstance(c, str) for c in classes):
            classes = classes.astype(str)
    default = d["default_prediction"]
    if isinstance(default, str) and d.get("default_proba") is None:
        default = float(default)
    return RuleSet([rule_from_dict(r) for r in d["rules"]], default, d.get("default_proba"),
                   d.get("feature_names"), classes, supports_missing=d.get("supports_missing", False),
                   encoding=encoding_from_dict(d.get("encoding")),
                   feature_names_in=d.get("feature_names_in"))


def to_json(rs, indent=None):
    return json.dumps(ruleset_to_dict(rs), indent=indent, allow_nan=False, ensure_ascii=False)


def from_json(text):
    return ruleset_from_dict(json.loads(text))


# ------------------------------------------------------------ how a feature is read
class _Feature:
    """How predict reads feature d of a rule set, for the exports."""

    def __init__(self, rs, d):
        enc = rs.encoding
        self.d = d
        conds = [c for r in rs.rules for c in r.conditions if c.feature == d]
        self.zero_missing = any(c.zero_missing for c in conds) or bool(
            enc is not None and enc.zero_missing[d])
        self.lightgbm = bool(enc is not None and enc.lightgbm_reads)
        cats = None if enc is None else enc.categories[d]
        self.labels = None if cats is None else [_plain(v) for v in np.asarray(cats).tolist()]
        self.unknown_error = bool(enc is not None and enc.unknown == "error")
        self.categorical = bool(enc is not None and enc.categorical[d]) or any(c.is_set for c in conds)
        # a NaN here is an error where a condition has no direction for it
        self.missing_error = not rs.supports_missing and any(not c.missing for c in conds)

    @property
    def known_codes(self):
        """Codes of present labels (a label with code 0 is missing where zero is)."""
        return [k for k in range(len(self.labels)) if not (self.zero_missing and k == 0)]


def _used_features(rs):
    return sorted({c.feature for r in rs.rules for c in r.conditions})


def _code_runs(codes):
    """Consecutive runs (first, last) of sorted integer codes."""
    runs = []
    for c in codes:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return runs


class _Dialect:
    """Boolean expressions on one row in SQL or in pandas query syntax (raw values), or
    in Python on the values the generated function has read (coded)."""

    def __init__(self, kind, refs):
        self.kind, self.refs = kind, refs
        self.sql = kind == "sql"
        self.coded = kind == "python"
        self.AND, self.OR, self.NOT = (" AND ", " OR ", "NOT ") if self.sql else (" and ", " or ", "not ")
        self.TRUE, self.FALSE = {"sql": ("1 = 1", "1 = 0"), "query": ("index == index", "index != index"),
                                 "python": ("True", "False")}[kind]

    def literal(self, value):
        value = _plain(value)
        if isinstance(value, bool):
            return ("TRUE" if value else "FALSE") if self.sql else repr(value)
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'" if self.sql else repr(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be written as a literal here")
        return repr(value)

    def is_null(self, x):
        return f"{x} IS NULL" if self.sql else f"{x} != {x}"

    def in_list(self, x, items, negate=False):
        if self.coded:
            body = "{" + ", ".join(items) + "}"
            return f"{x} {'not in' if negate else 'in'} {body}"
        body = f"({', '.join(items)})" if self.sql else f"[{', '.join(items)}]"
        return f"{x} {'NOT IN' if negate and self.sql else 'not in' if negate else 'IN' if self.sql else 'in'} {body}"

    def abs(self, x):
        return f"ABS({x})" if self.sql else f"abs({x})"

    def any_of(self, parts):
        parts = [p for p in parts if p != self.FALSE]
        if not parts:
            return self.FALSE
        return parts[0] if len(parts) == 1 else "(" + self.OR.join(parts) + ")"

    def all_of(self, parts):
        parts = [p for p in parts if p != self.TRUE]
        if self.FALSE in parts:
            return self.FALSE
        if not parts:
            return self.TRUE
        return parts[0] if len(parts) == 1 else "(" + self.AND.join(parts) + ")"

    # -------------------------------------------------------------- one feature
    def missing(self, f):
        """True where predict reads feature f as missing (never NULL itself)."""
        x = self.refs[f.d]
        parts = [self.is_null(x)]
        if self.coded:
            return parts[0]  # the function reads zeros and unknown labels as NaN
        if f.labels is not None:
            known = [self.literal(f.labels[k]) for k in f.known_codes]
            parts.append(self.in_list(x, known, negate=True) if known else self.TRUE)
        elif f.zero_missing:
            # codes are truncated before zero is read as missing: (-1, 1) is code 0
            band = "1" if (f.categorical and f.lightgbm) else self.literal(ZERO_THRESHOLD)
            parts.append(f"{self.abs(x)} {'<' if band == '1' else '<='} {band}")
        return self.any_of(parts)

    def unknown(self, f):
        """True where predict refuses a present label (XGBoost's unknown categories)."""
        if self.coded or f.labels is None or not f.unknown_error:
            return self.FALSE
        x = self.refs[f.d]
        known = [self.literal(v) for v in f.labels]
        return self.all_of([f"{x} IS NOT NULL" if self.sql else f"{x} == {x}",
                            self.in_list(x, known, negate=True)])

    # ------------------------------------------------------------ one condition
    def bound(self, f, op, t):
        """x > t (op '>') or x <= t (op '<='), on a present value as predict reads it."""
        x = self.refs[f.d]
        if f.lightgbm and abs(t) <= ZERO_THRESHOLD and not self.coded:
            # LightGBM reads |x| <= 1e-35 as 0: 0 > t holds for t < 0
            z = self.literal(ZERO_THRESHOLD)
            if op == ">":
                return f"{x} >= -{z}" if t < 0 else f"{x} > {z}"
            return f"{x} < -{z}" if t < 0 else f"{x} <= {z}"
        return f"{x} {op} {self.literal(float(t))}"

    def value_test(self, f, c):
        """The condition on a present value (None: it needs no present-value guard)."""
        x = self.refs[f.d]
        if not c.is_set:
            lower = None if c.lower is None or c.lower == -np.inf else c.lower
            upper = None if c.upper is None or c.upper == np.inf else c.upper
            if lower == np.inf or upper == -np.inf:
                return self.FALSE
            parts = ([] if lower is None else [self.bound(f, ">", lower)]) + \
                    ([] if upper is None else [self.bound(f, "<=", upper)])
            return self.all_of(parts)
        codes = list(c.categories)
        if f.labels is not None and not self.coded:
            known = f.known_codes
            inside = [k for k in known if (k in codes) != c.negated]
            return self.in_list(x, [self.literal(f.labels[k]) for k in inside]) if inside else self.FALSE
        if f.lightgbm and not self.coded:  # truncated codes: code k is the range (k-1, k+1) at 0, else [k, k+1)
            runs = [f"{x} {'>' if a == 0 else '>='} {a - 1 if a == 0 else a}{self.AND}{x} < {b + 1}"
                    for a, b in _code_runs(codes)]
            member = self.any_of([f"({r})" for r in runs])
        else:
            member = self.in_list(x, [str(k) for k in codes]) if codes else self.FALSE
        if not c.negated:
            return member
        return self.TRUE if member == self.FALSE else f"{self.NOT}({member})"

    def condition(self, f, c):
        missing = self.missing(f)
        test = self.value_test(f, c)
        if c.missing:
            return self.any_of([missing, test])
        if test == self.FALSE:
            return self.FALSE
        # NOT(missing) guards tests that a missing value could pass (a negated set, a
        # label outside the known ones, a zero read as missing); a plain comparison or
        # IN list is false (NULL in SQL, which no CASE takes) on a missing value
        if missing != self.is_null(self.refs[f.d]) or test.startswith(self.NOT):
            return self.all_of([f"{self.NOT}({missing})", test])
        return test

    def rule(self, rule, features):
        return self.all_of([self.condition(features[c.feature], c) for c in rule.conditions])


def _features(rs):
    return {d: _Feature(rs, d) for d in _used_features(rs)}


def _column_names(rs, column_names):
    """Names of the data's columns, by feature index."""
    names = getattr(rs, "feature_names_in", None) or rs.feature_names
    n = rs._n_features()
    if names is None:
        names = [f"x{d}" for d in range(n)]
    if column_names is None:
        return list(names)
    if isinstance(column_names, dict):
        unknown = [k for k in column_names if k not in names]
        if unknown:
            raise ValueError(f"column_names renames columns the rules do not have: {unknown[:5]}")
        return [column_names.get(n, n) for n in names]
    column_names = [str(c) for c in column_names]
    if len(column_names) != n:
        raise ValueError(f"column_names has {len(column_names)} names but the rules have {n} features")
    return column_names


def _sql_identifier(name):
    return '"' + str(name).replace('"', '""') + '"'


def to_sql(rs, table=None, column_names=None):
    """One SQL ``CASE WHEN ... THEN ... ELSE ... END`` expression (see the module doc)."""
    names = _column_names(rs, column_names)
    prefix = "" if table is None else _sql_identifier(table) + "."
    refs = {d: prefix + _sql_identifier(n) for d, n in enumerate(names)}
    sql = _Dialect("sql", refs)
    features = _features(rs)
    lines = ["CASE"]
    refused = sql.any_of([sql.missing(f) for f in features.values() if f.missing_error]
                         + [sql.unknown(f) for f in features.values()])
    if refused != sql.FALSE:  # predict raises here
        lines.append(f"  WHEN {refused} THEN NULL")
    for r in rs.rules:
        lines.append(f"  WHEN {sql.rule(r, features)} THEN {sql.literal(r.prediction)}")
    lines.append(f"  ELSE {sql.literal(rs.default_prediction)}")
    lines.append("END")
    return "\n".join(lines)


def query_strings(rs, column_names=None):
    """pandas ``DataFrame.query`` expressions, one per rule: the rows the rule covers
    (the rows it predicts for are those it covers and no earlier rule does)."""
    names = _column_names(rs, column_names)
    refs = {d: "`" + n.replace("`", "``") + "`" for d, n in enumerate(names)}
    q = _Dialect("query", refs)
    features = _features(rs)
    return [q.rule(r, features) for r in rs.rules]


# --------------------------------------------------------------------------- Python
_PYTHON_PRELUDE = '''
import math

ZERO = {zero!r}


def _missing(v):
    return v is None or type(v).__name__ in ("NAType", "NaTType") or (isinstance(v, float) and v != v)


def _number(v, name, zero_missing=False, lightgbm=False):
    """A numeric value as the rules read it (NaN: missing)."""
    if _missing(v):
        return math.nan
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError("column %r must be numeric; got %r" % (name, v)) from None
    if abs(v) <= ZERO and (zero_missing or lightgbm):
        return math.nan if zero_missing else 0.0
    return v


def _code(v, name, zero_missing=False, lightgbm=False):
    """A category code given as a number (LightGBM truncates it toward zero)."""
    v = _number(v, name)
    if v == v and math.isfinite(v) and v != int(v):
        if not lightgbm:
            raise ValueError("column %r is categorical: %r is not an integer code" % (name, v))
        v = float(int(v))
    return math.nan if zero_missing and v == 0 else v


def _label(v, name, codes, unknown_error=False, zero_missing=False):
    """The code of a category label (NaN: missing, or a label the model never saw)."""
    if _missing(v):
        return math.nan
    code = codes.get(v)
    if code is None:
        if unknown_error:
            raise ValueError("column %r has a category the model was not trained with: %r" % (name, v))
        return math.nan
    return math.nan if zero_missing and code == 0 else float(code)
'''


def to_python(rs, name="predict"):
    """Source of a dependency-free function ``name(row)`` that returns what
    ``rs.predict`` returns for one row: a mapping from column name to value (a dict, a
    pandas Series), or a sequence of the values in the columns' order."""
    if not name.isidentifier():
        raise ValueError(f"name must be a Python identifier; got {name!r}")
    columns = _column_names(rs, None)
    features = _features(rs)
    refs = {d: f"x{d}" for d in features}
    py = _Dialect("python", refs)
    out = [f'"""Rules exported by defrag: {name}(row) reproduces RuleSet.predict."""',
           _PYTHON_PRELUDE.format(zero=ZERO_THRESHOLD).strip("\n"), "", f"COLUMNS = {columns!r}"]
    for f in features.values():
        if f.labels is not None:
            out.append(f"CODES_{f.d} = {{{', '.join(f'{py.literal(v)}: {k}' for k, v in enumerate(f.labels))}}}")
    out += ["", "", f"def {name}(row):",
            '    """The prediction of the first rule that holds for row, else the default."""',
            "    if hasattr(row, 'keys'):",
            "        try:",
            "            values = [row[c] for c in COLUMNS]",
            "        except KeyError as exc:",
            "            raise ValueError('row lacks column %r' % (exc.args[0],)) from None",
            "    else:",
            "        values = list(row)",
            "        if len(values) != len(COLUMNS):",
            "            raise ValueError('row has %d values but the rules read %d columns' % (len(values), len(COLUMNS)))"]
    for f in features.values():
        col = repr(columns[f.d])
        if f.labels is not None:
            read = f"_label(values[{f.d}], {col}, CODES_{f.d}, {f.unknown_error}, {f.zero_missing})"
        elif f.categorical:
            read = f"_code(values[{f.d}], {col}, {f.zero_missing}, {f.lightgbm})"
        else:
            read = f"_number(values[{f.d}], {col}, {f.zero_missing}, {f.lightgbm})"
        out.append(f"    x{f.d} = {read}")
        if f.missing_error:
            out += [f"    if x{f.d} != x{f.d}:",
                    f"        raise ValueError('column %r is missing, and the model the rules come "
                    f"from has no rule for missing values' % ({col},))"]
    for r in rs.rules:
        out += [f"    if {py.rule(r, features)}:", f"        return {py.literal(r.prediction)}"]
    out.append(f"    return {py.literal(rs.default_prediction)}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------ the table
def to_frame(rs, X=None, y=None):
    """One row per rule and one for the default (pandas DataFrame); see RuleSet.to_frame."""
    import pandas as pd

    rows = [{"rule": r.condition_text(), "n_conditions": len(r.conditions), "prediction": r.prediction,
             "support": r.support, "weight": r.weight, "coverage": r.coverage} for r in rs.rules]
    rows.append({"rule": "otherwise", "n_conditions": 0, "prediction": rs.default_prediction,
                 "support": None, "weight": None, "coverage": None})
    if rs.classes is not None:
        for row, p in zip(rows, rs.probabilities()):
            for c, pc in zip(rs.classes, p):
                row[f"proba_{c}"] = float(pc)
    frame = pd.DataFrame(rows)
    if X is None:
        return frame
    Xc = rs.encode(X)
    cover = rs.covering(Xc)
    first = rs.first_match(Xc)
    index = np.where(first < 0, len(rs.rules), first)
    n = max(len(Xc), 1)
    frame["X_coverage"] = np.append(cover.mean(axis=0) if len(Xc) else np.zeros(len(rs.rules)), np.nan)
    frame["X_support"] = np.bincount(index, minlength=len(rs.rules) + 1)
    frame["X_share"] = frame["X_support"] / n
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != len(Xc):
            raise ValueError(f"y has {y.shape[0]} entries but X has {len(Xc)} rows")
        pred = rs.predictions()[first]
        if rs.classes is not None:
            right = np.bincount(index, weights=(pred == y).astype(float), minlength=len(rs.rules) + 1)
            with np.errstate(invalid="ignore", divide="ignore"):
                frame["precision"] = right / frame["X_support"].to_numpy()
            frame["error"] = 1.0 - frame["precision"]
        else:
            sq = np.bincount(index, weights=(pred.astype(float) - y.astype(float)) ** 2,
                             minlength=len(rs.rules) + 1)
            with np.errstate(invalid="ignore", divide="ignore"):
                frame["error"] = sq / frame["X_support"].to_numpy()  # mean squared error
    return frame
