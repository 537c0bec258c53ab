"""How ``predict`` reads each feature (``feature_readings``), and the conditions as boolean
expressions on one row in SQL, pandas query syntax or Python (``Dialect``): what every
export (rules/export.py, rules/tree_export.py) writes.

Every export reproduces ``predict`` on the data as a user holds it (the
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
  missing values, an unknown XGBoost category, a category code that is not a whole
  number) the SQL expression is NULL and the Python function raises ValueError; the
  query strings select the rows each rule covers and say nothing of refusals;
- the query strings compare numbers as float64 (``.astype('float64')``: pandas compares
  a float32 column with a float32 copy of the threshold) and test missing values with
  ``.isna()`` (pandas' NA is neither equal nor unequal to itself);
- SQL compares an integer column with a threshold exactly, where ``predict`` rounds the
  value to float64 first: the two differ only for integers beyond 2**53 next to a
  threshold (nanosecond timestamps); cast such a column to a double to match;
- SQL compares a column that was boolean at fit time (``InputEncoding.boolean``) with
  TRUE / FALSE (``"flag" = FALSE`` for ``flag <= 0.5``): a database's BOOLEAN column does
  not compare with a number (DuckDB, PostgreSQL), and SQLite's 0 / 1 equal FALSE / TRUE.

Numbers are written exactly. Python and pandas read ``repr`` of a float (the shortest
decimal that reads back as the same double) as that double, SQL engines not always:
SQLite 3.40 reads 203.2211654444733 as 203.22116544447329 (it scales the digits by
powers of ten in long double, then rounds again). SQL therefore gets a decimal only
where every reading of it is exact (the decimal is the double itself, at most 15
digits: 0.5, 2.25, 100), else the double's exact value as an integer over a power of
two, which IEEE arithmetic computes without rounding, with the shortest decimal as a
comment: ``(CAST(7926335344172073 AS DOUBLE PRECISION) / 9007199254740992 /* 0.88 */)``.

A long conjunction or disjunction (a rule of many conditions, many features refused) is
grouped in parentheses of at most 16 operands (``grouped``), so that no engine parses an
expression nested deeper than a few levels.
"""
import decimal
import math

import numpy as np

from ..splits import ZERO_THRESHOLD
from ..splits.inputs import category_text
from ..utils.validation import checked_names
from .document import json_value


# ------------------------------------------------------------ how a feature is read
class _Feature:
    """How predict reads feature d of an explanation, for the exports."""

    def __init__(self, rs, d):
        enc = rs.encoding
        self.d = d
        conds = [c for c in rs._conditions() if c.feature == d]
        self.zero_missing = any(c.zero_missing for c in conds) or bool(
            enc is not None and enc.zero_missing[d])
        self.lightgbm = bool(enc is not None and enc.lightgbm_reads)
        cats = None if enc is None else enc.categories[d]
        # CatBoost's labels are read by their text (20 and "20" are one category)
        self.text_labels = bool(getattr(enc, "text_labels", False)) and cats is not None
        self.labels = None if cats is None else [category_text(v) if self.text_labels else json_value(v)
                                                 for v in np.asarray(cats, dtype=object).tolist()]
        self.unknown_error = bool(enc is not None and enc.unknown == "error")
        self.categorical = bool(enc is not None and enc.categorical[d]) or any(c.is_set for c in conds)
        # the encoding refuses a code that is not a whole number (without one, predict reads it)
        self.coded_categorical = bool(enc is not None and enc.categorical[d])
        # a NaN here is an error where a condition has no direction for it
        self.missing_error = not rs.supports_missing and any(not c.missing for c in conds)
        # a boolean column (0 / 1 to predict), compared as one in SQL
        boolean = None if enc is None else getattr(enc, "boolean", None)
        self.boolean = boolean is not None and bool(boolean[d])

    @property
    def known_codes(self):
        """Codes of present labels (a label with code 0 is missing where zero is)."""
        return [k for k in range(len(self.labels)) if not (self.zero_missing and k == 0)]


def _is_integer_text(label):
    """Whether a text label is an integer as CatBoost writes one ("42", "-7")."""
    return isinstance(label, str) and label.lstrip("-").isdigit() and str(int(label)) == label


def _code_runs(codes):
    """Consecutive runs (first, last) of sorted integer codes."""
    runs = []
    for c in codes:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return runs


# powers of two in a double's exact value, each an exact 64-bit integer in SQL
_POWER_STEP = 62


def sql_double(value):
    """A float as SQL text that SQLite and DuckDB (and any engine with IEEE doubles) read
    as exactly that double; see the module doc."""
    value = float(value)
    text = repr(value)
    if value == 0:
        # -0.0 (a condition's bound, a prediction): DuckDB reads the literal -0.0 as +0
        return "0.0" if math.copysign(1.0, value) > 0 else "(CAST(0 AS DOUBLE PRECISION) * -1)"
    exact = decimal.Decimal(text)
    _, digits, exponent = exact.normalize().as_tuple()
    if exact == decimal.Decimal(value) and len(digits) <= 15 and -22 <= exponent <= 22:
        # digits and power of ten both exact, the quotient a double: no rounding anywhere
        return text
    numerator, denominator = value.as_integer_ratio()  # the denominator a power of two
    shift = denominator.bit_length() - 1
    op = "/"
    if shift == 0:  # a whole number beyond 15 digits: an odd integer times a power of two
        shift = (numerator & -numerator).bit_length() - 1
        numerator >>= shift
        op = "*"
    steps = [_POWER_STEP] * (shift // _POWER_STEP) + ([shift % _POWER_STEP] if shift % _POWER_STEP else [])
    scaled = "".join(f" {op} {2 ** k}" for k in steps)
    return f"(CAST({numerator} AS DOUBLE PRECISION){scaled} /* {text} */)"


# the most operands one pair of parentheses joins (see grouped)
GROUP = 16


def grouped(parts, op):
    """parts joined by op in parentheses, in nested groups of at most GROUP where there are
    more: an engine reads ``a AND b AND c ...`` as a tree as deep as the chain is long
    (SQLite refuses one of 1,000, pandas' query recurses once per operand), and the
    groups bound that depth by log16 of the count; a short chain reads as it is."""
    parts = list(parts)
    while len(parts) > GROUP:
        parts = [p[0] if len(p) == 1 else "(" + op.join(p) + ")"
                 for p in (parts[i:i + GROUP] for i in range(0, len(parts), GROUP))]
    return "(" + op.join(parts) + ")"


class Dialect:
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
        value = json_value(value)
        if isinstance(value, bool):
            return ("TRUE" if value else "FALSE") if self.sql else repr(value)
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'" if self.sql else repr(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be written as a literal here")
        if isinstance(value, float) and self.sql:
            return sql_double(value)
        return repr(value)

    def is_null(self, x):
        if self.kind == "query":  # (x != x is NA, not True, for pandas' NA)
            return f"{x}.isna()"
        return f"{x} IS NULL" if self.sql else f"{x} != {x}"

    def in_labels(self, f, labels, negate=False):
        """Feature f's value among labels (literals written here). Text labels (CatBoost's):
        the value's text, or for an integer label the number itself (42.0 reads as "42",
        which CAST(x AS TEXT) would write as "42.0")."""
        x = self.refs[f.d]
        items = [self.literal(v) for v in labels]
        if not f.text_labels or self.coded:
            return self.in_list(x, items, negate)
        text = f"CAST({x} AS TEXT)" if self.sql else f"{x}.astype('str')"
        numbers = [v for v in labels if _is_integer_text(v)]
        member = self.any_of([self.in_list(text, items)] + ([self.in_list(x, numbers)] if numbers else []))
        return f"{self.NOT}({member})" if negate else member

    def number(self, x):
        """x as predict compares it: a float64 (pandas compares a float32 column with a
        float32 copy of a Python float, NumPy 2's rule)."""
        return f"{x}.astype('float64')" if self.kind == "query" else x

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
        return parts[0] if len(parts) == 1 else grouped(parts, self.OR)

    def all_of(self, parts):
        parts = [p for p in parts if p != self.TRUE]
        if self.FALSE in parts:
            return self.FALSE
        if not parts:
            return self.TRUE
        return parts[0] if len(parts) == 1 else grouped(parts, self.AND)

    # -------------------------------------------------------------- one feature
    def missing(self, f):
        """True where predict reads feature f as missing (never NULL itself)."""
        x = self.refs[f.d]
        parts = [self.is_null(x)]
        if self.coded:
            return parts[0]  # the function reads zeros and unknown labels as NaN
        if f.labels is not None:
            known = [f.labels[k] for k in f.known_codes]
            parts.append(self.in_labels(f, known, negate=True) if known else self.TRUE)
        elif f.zero_missing and f.boolean and self.sql:
            parts.append(f"{x} = FALSE")
        elif f.zero_missing:
            # codes are truncated before zero is read as missing: (-1, 1) is code 0
            band = "1" if (f.categorical and f.lightgbm) else self.literal(ZERO_THRESHOLD)
            parts.append(f"{self.abs(x)} {'<' if band == '1' else '<='} {band}")
        return self.any_of(parts)

    def fractional(self, f):
        """True where predict refuses a present category code that is not a whole number
        (a categorical feature without labels that LightGBM does not truncate)."""
        if not self.sql or f.labels is not None or not f.coded_categorical or f.lightgbm or f.boolean:
            return self.FALSE  # (a boolean is never fractional, and ROUND refuses one)
        x = self.refs[f.d]
        return f"({x} IS NOT NULL AND {x} <> ROUND({x}))"

    def unknown(self, f):
        """True where predict refuses a present label (XGBoost's unknown categories)."""
        if self.coded or f.labels is None or not f.unknown_error:
            return self.FALSE
        x = self.refs[f.d]
        return self.all_of([f"{x} IS NOT NULL" if self.sql else f"{x}.notna()",
                            self.in_labels(f, f.labels, negate=True)])

    # ------------------------------------------------------------ one condition
    def bound(self, f, op, t):
        """x > t (op '>') or x <= t (op '<='), on a present value as predict reads it."""
        x = self.number(self.refs[f.d])
        if f.boolean and self.sql:  # the values 0 and 1 that pass, as booleans
            passing = [v for v in (0, 1) if (v > t if op == ">" else v <= t)]
            if len(passing) == 2:
                return f"{x} IS NOT NULL"
            return f"{x} = {'TRUE' if passing[0] else 'FALSE'}" if passing else self.FALSE
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
            return self.in_labels(f, [f.labels[k] for k in inside]) if inside else self.FALSE
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

    def box(self, conditions, features):
        """True where every condition holds."""
        return self.all_of([self.condition(features[c.feature], c) for c in conditions])

    def refused(self, features):
        """True where predict raises (FALSE where it never does): a missing value that a
        condition has no direction for, an unknown label, a fractional code."""
        return self.any_of([self.missing(f) for f in features.values() if f.missing_error]
                           + [self.unknown(f) for f in features.values()]
                           + [self.fractional(f) for f in features.values()])


def feature_readings(rs):
    """{feature: how predict reads it} of the features an explanation's conditions read."""
    return {d: _Feature(rs, d) for d in rs._used_features()}


def data_column_names(rs, column_names):
    """Names of the data's columns, by feature index (never empty nor repeated): the
    fitted ones, renamed by the exports' column_names (a list, or a dict by fitted name)."""
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
        return checked_names([column_names.get(n, n) for n in names], "column_names")
    column_names = checked_names(column_names, "column_names")
    if len(column_names) != n:
        raise ValueError(f"column_names has {len(column_names)} names but the rules have {n} features")
    return column_names


def _sql_identifier(name, what="column name"):
    """A quoted SQL identifier (a double quote doubled); ValueError for an empty one or one
    holding NUL, which no SQL engine takes."""
    name = str(name)
    if not name or "\x00" in name:
        raise ValueError(f"the {what} {name!r} cannot be an SQL identifier"
                         f"{' (it holds a NUL character)' if name else ''}")
    return '"' + name.replace('"', '""') + '"'


def _sql_table(table):
    """The quoted, dot-separated parts of a table name: "s.t" (schema s, table t) is
    "s"."t"; a tuple or list gives the parts as they are (a part holding a dot)."""
    parts = table.split(".") if isinstance(table, str) else [str(p) for p in table]
    if not parts:
        raise ValueError("table must name a table: a string such as 'schema.table' or a tuple of parts")
    return ".".join(_sql_identifier(p, "table name part") for p in parts)


def sql_dialect(rs, table=None, column_names=None):
    """The SQL Dialect of an explanation's columns (quoted, qualified by table) and how
    predict reads each of its features (``feature_readings``)."""
    names = data_column_names(rs, column_names)
    prefix = "" if table is None else _sql_table(table) + "."
    return Dialect("sql", {d: prefix + _sql_identifier(names[d]) for d in rs._used_features()}), feature_readings(rs)


def query_dialect(rs, column_names=None):
    """The pandas query Dialect of an explanation's columns and how predict reads each of
    its features (``feature_readings``)."""
    names = data_column_names(rs, column_names)
    return Dialect("query", {d: _query_name(names[d]) for d in rs._used_features()}), feature_readings(rs)



def _query_name(name):
    """A column name in pandas query syntax: in backticks, a backtick doubled. ValueError
    for a name pandas cannot read back there (it turns a quoted name into a Python
    identifier: line breaks, tabs, some combining and compatibility characters fail),
    tried with pandas itself where it is installed."""
    ref = "`" + name.replace("`", "``") + "`"
    try:
        import pandas as pd  # optional: the strings are for pandas
    except ImportError:
        readable = name.isprintable()
    else:
        try:
            readable = len(pd.DataFrame({name: [1.0]}).query(f"{ref} == {ref}")) == 1
        except Exception:  # whatever pandas raises for a name it cannot parse
            readable = False
    if not readable:
        raise ValueError(f"the column name {name!r} cannot be written in a pandas query string (pandas "
                         "reads a name in backticks as a Python identifier): rename the column, or "
                         "give query_strings another name for it (column_names=)")
    return ref

