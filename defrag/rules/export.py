"""Rule sets as deliverables besides JSON (rules/document.py): a table per rule, one SQL
``CASE`` expression, a dependency-free Python function, pandas query strings.

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

Every export runs at any size: a rule list is one flat ``CASE`` and a flat sequence of
``if`` statements, and a long conjunction or disjunction (a rule of many conditions, many
features refused) is grouped in parentheses of at most 16 operands (``grouped``), so that
no engine parses an expression nested deeper than a few levels.
"""
import decimal
import keyword
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


def to_sql(rs, table=None, column_names=None):
    """One SQL ``CASE WHEN ... THEN ... ELSE ... END`` expression (see the module doc)."""
    sql, features = sql_dialect(rs, table, column_names)
    lines = ["CASE"]
    refused = sql.refused(features)
    if refused != sql.FALSE:  # predict raises here
        lines.append(f"  WHEN {refused} THEN NULL")
    for r in rs.rules:
        lines.append(f"  WHEN {sql.box(r.conditions, features)} THEN {sql.literal(r.prediction)}")
    if len(lines) > 1:
        lines.append(f"  ELSE {sql.literal(rs.default_prediction)}")
    else:  # no rule and nothing refused: a CASE needs a WHEN
        lines.append(f"  WHEN {sql.TRUE} THEN {sql.literal(rs.default_prediction)}")
    lines.append("END")
    return "\n".join(lines)


def query_strings(rs, column_names=None):
    """pandas ``DataFrame.query`` expressions, one per rule: the rows the rule covers
    (the rows it predicts for are those it covers and no earlier rule does)."""
    q, features = query_dialect(rs, column_names)
    return [q.box(r.conditions, features) for r in rs.rules]


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


# --------------------------------------------------------------------------- Python
# the helpers an exported function may call, each emitted only where the rules use it
# (_python_helpers): (name, the names it calls, its source)
_PYTHON_HELPERS = (
    ("_missing", (), '''
def _missing(v):
    return v is None or type(v).__name__ in ("NAType", "NaTType") or (isinstance(v, float) and v != v)
'''),
    ("_number", ("_missing",), '''
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
'''),
    ("_code", ("_number",), '''
def _code(v, name, zero_missing=False, lightgbm=False):
    """A category code given as a number (LightGBM truncates it toward zero)."""
    v = _number(v, name)
    if v == v and math.isfinite(v) and v != int(v):
        if not lightgbm:
            raise ValueError("column %r is categorical: %r is not an integer code" % (name, v))
        v = float(int(v))
    return math.nan if zero_missing and v == 0 else v
'''),
    ("_text", (), '''
def _text(v, name):
    """A categorical value's text as CatBoost writes it (an integral float as its integer)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, bytes):
        return v.decode("utf-8")
    try:
        return str(operator.index(v))  # an integer exactly (NumPy's too), beyond 2**53 as well
    except TypeError:
        pass
    try:
        number = float(v)
    except (TypeError, ValueError):
        return str(v)
    if number.is_integer():
        return str(int(number))
    raise ValueError("column %r is categorical: %r is not an integer or text" % (name, v))
'''),
    ("_label", ("_missing", "_text"), '''
def _label(v, name, codes, unknown_error=False, zero_missing=False, text=False):
    """The code of a category label (NaN: missing, or a label the model never saw); text:
    the label is the value's text."""
    if _missing(v):
        return math.nan
    code = codes.get(_text(v, name) if text else v)
    if code is None:
        if unknown_error:
            raise ValueError("column %r has a category the model was not trained with: %r" % (name, v))
        return math.nan
    return math.nan if zero_missing and code == 0 else float(code)
'''),
)
_CALLS = {name: calls for name, calls, _ in _PYTHON_HELPERS}


def _python_helpers(used):
    """The imports, constants and helper functions that the helpers in used call, and
    nothing else (a rule set on numeric columns needs _number and _missing)."""
    need, stack = set(), list(used)
    while stack:
        name = stack.pop()
        if name not in need:
            need.add(name)
            stack.extend(_CALLS[name])
    text = "\n\n".join(src.strip("\n") for name, _, src in _PYTHON_HELPERS if name in need)
    head = [f"import {m}" for m in ("math", "operator") if f"{m}." in text]
    if "ZERO" in text:
        head += ["", f"ZERO = {ZERO_THRESHOLD!r}"] if head else [f"ZERO = {ZERO_THRESHOLD!r}"]
    return "\n".join(head) + "\n\n" + text if head else text


def python_reader(columns, features, docstring):
    """The start of an exported module's body (rules/tree_export.py's too): the helpers
    the columns' readers call, COLUMNS and the category codes, and ``predict(row)`` up to
    reading each feature the rules test into x<d>."""
    py = Dialect("python", {d: f"x{d}" for d in features})
    lines, used = [], set()
    for f in features.values():
        col = repr(columns[f.d])
        if f.labels is not None:
            read, helper = f"_label(values[{f.d}], {col}, CODES_{f.d}, {f.unknown_error}, {f.zero_missing}, " \
                           f"{f.text_labels})", "_label"
        elif f.categorical:
            read, helper = f"_code(values[{f.d}], {col}, {f.zero_missing}, {f.lightgbm})", "_code"
        else:
            read, helper = f"_number(values[{f.d}], {col}, {f.zero_missing}, {f.lightgbm})", "_number"
        used.add(helper)
        lines.append(f"    x{f.d} = {read}")
        if f.missing_error:
            lines += [f"    if x{f.d} != x{f.d}:",
                      f"        raise ValueError('column %r is missing, and the model the rules come "
                      f"from has no rule for missing values' % ({col},))"]
    body = [_python_helpers(used), ""] if used else []
    body.append(f"COLUMNS = {columns!r}")
    for f in features.values():
        if f.labels is not None:
            body.append(f"CODES_{f.d} = {{{', '.join(f'{py.literal(v)}: {k}' for k, v in enumerate(f.labels))}}}")
    body += ["", "def predict(row):",
             f'    """{docstring}"""',
             "    if hasattr(row, 'keys'):",
             "        try:",
             "            values = [row[c] for c in COLUMNS]",
             "        except KeyError as exc:",
             "            raise ValueError('row lacks column %r' % (exc.args[0],)) from None",
             "    else:",
             "        values = list(row)",
             "        if len(values) != len(COLUMNS):",
             "            raise ValueError('row has %d values but the rules read %d columns' % (len(values), len(COLUMNS)))"]
    return body + lines, py


def _indented(text, prefix="    "):
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def checked_function_name(name):
    """name, the exported function's: ValueError unless a Python identifier that is not a
    keyword."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"name must be a Python identifier that is not a keyword; got {name!r}")
    return name


def python_module(name, body, doc):
    """The exported module: doc, then ``_defrag_rules()`` holding body (python_reader's
    lines and what follows them), which returns the function bound to name."""
    body = body + ["", f"predict.__name__ = predict.__qualname__ = {name!r}", "return predict"]
    out = [f'"""{doc}"""', "", "", "def _defrag_rules():", _indented("\n".join(body)), "", "",
           f"{name} = _defrag_rules()"]
    return "\n".join(out) + "\n"


def to_python(rs, name="predict"):
    """Source of a dependency-free function ``name(row)`` that returns what
    ``rs.predict`` returns for one row: a mapping from column name to value (a dict, a
    pandas Series), or a sequence of the values in the columns' order.

    Everything the function needs is built inside ``_defrag_rules()``, which returns it,
    so that any identifier works as ``name`` (``ZERO``, ``COLUMNS``, ``math``...): the
    module binds only ``_defrag_rules`` and ``name``. A keyword cannot name a function."""
    checked_function_name(name)
    features = feature_readings(rs)
    body, py = python_reader(data_column_names(rs, None), features,
                             "The prediction of the first rule that holds for row, else the default.")
    for r in rs.rules:
        body += [f"    if {py.box(r.conditions, features)}:", f"        return {py.literal(r.prediction)}"]
    body.append(f"    return {py.literal(rs.default_prediction)}")
    return python_module(name, body, f"Rules exported by defrag: {name}(row) reproduces RuleSet.predict.")


# ------------------------------------------------------------------------ the table
def to_frame(rs, X=None, y=None):
    """One row per rule and one for the default (pandas DataFrame); see RuleSet.to_frame."""
    import pandas as pd

    rows = [{"rule": r.condition_text(), "n_conditions": len(r.conditions), "prediction": r.prediction,
             "support": r.support, "weight": r.weight, "coverage": r.coverage, "share": r.share}
            for r in rs.rules]
    rows.append({"rule": "otherwise", "n_conditions": 0, "prediction": rs.default_prediction,
                 "support": rs.default_support, "weight": None, "coverage": None, "share": rs.default_share})
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
