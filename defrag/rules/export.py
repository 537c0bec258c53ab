"""Rule sets as deliverables besides JSON (rules/document.py): a table per rule, one SQL
``CASE`` expression, a dependency-free Python function, pandas query strings. Each
reproduces ``RuleSet.predict`` (the first rule that holds, else the default) on the data as
a user holds it; rules/dialect.py says how a value is read and writes the conditions.

Every export runs at any size: a rule list is one flat ``CASE`` and a flat sequence of
``if`` statements, whose long conjunctions are grouped (``dialect.grouped``).
"""
import keyword

import numpy as np

from ..splits import ZERO_THRESHOLD
from .dialect import Dialect, data_column_names, feature_readings, query_dialect, sql_dialect


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
    """One row per rule and one for the default (pandas DataFrame); see RuleTree.to_frame."""
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
    index = rs.route(Xc)[:, 0]  # each row's rule, len(rules) for the default
    n = max(len(Xc), 1)
    frame["X_coverage"] = np.append(cover.mean(axis=0) if len(Xc) else np.zeros(len(rs.rules)), np.nan)
    frame["X_support"] = np.bincount(index, minlength=len(rs.rules) + 1)
    frame["X_share"] = frame["X_support"] / n
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != len(Xc):
            raise ValueError(f"y has {y.shape[0]} entries but X has {len(Xc)} rows")
        pred = rs.predictions()[index]
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
