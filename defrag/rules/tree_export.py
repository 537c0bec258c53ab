"""Trees of rules and sums of trees (rules/tree.py) as deliverables besides JSON: one SQL
expression, a dependency-free Python function, pandas query strings (one per region), a
table of the regions. Each reproduces ``RuleTree.predict`` as rules/export.py's exports
reproduce a rule list's (its module doc says how a value is read: missing values,
categories, LightGBM's zero, refusals, exact numbers): a box holds where every condition
holds; anything else, a missing value that no condition lets through included, takes the
"else" branch.

A sum adds its numbers as integers of its unit (10**-decimals, RuleTree.decimals) and
turns the total into a float as predict does (a division by 10**decimals, or a product
by 10**-decimals, both the same double), so that SQL and Python give predict's value;
over two classes the total is compared with one half of the unit count.
"""
import keyword

import numpy as np

from .export import (_column_names, _Dialect, _features, _indented, _sql_double,
                     _sql_identifier, _sql_table, _query_name, _used_features, python_reader)
from .ruleset import Rule
from .tree_nodes import Leaf, Node, to_units


def _box(dialect, node, features):
    return dialect.rule(Rule(node.conditions, None), features)


def _strict_box(dialect, node, features):
    """The box, false (never NA) on a missing value that none of its conditions lets
    through: its negation then holds there, as the "else" branch takes such a row."""
    parts = []
    for c in node.conditions:
        f = features[c.feature]
        if c.missing:
            parts.append(dialect.condition(f, c))
        else:
            parts.append(dialect.all_of([f"{dialect.NOT}({dialect.missing(f)})", dialect.value_test(f, c)]))
    return dialect.all_of(parts)


def _unit_literal(tree, value):
    return str(int(to_units(value, tree.decimals)))


def _scale(tree, total, sql):
    """The float of an integer total of the sum's unit, as predict computes it."""
    k = tree.decimals
    power = 10.0 ** abs(k)
    if sql:
        total = f"CAST({total} AS DOUBLE PRECISION)"
        return f"{total} / {_sql_double(power)}" if k >= 0 else f"{total} * {_sql_double(power)}"
    return f"{total} / {power!r}" if k >= 0 else f"{total} * {power!r}"


# ------------------------------------------------------------------------------ SQL
def _sql_case(tree, node, sql, features, value, pad):
    """CASE WHEN box THEN ... (the "else" chain as further WHENs) ELSE leaf END."""
    if isinstance(node, Leaf):
        return value(node)
    lines = ["CASE"]
    while isinstance(node, Node):
        lines.append(f"{pad}  WHEN {_box(sql, node, features)} THEN "
                     f"{_sql_case(tree, node.then, sql, features, value, pad + '    ')}")
        node = node.otherwise
    lines += [f"{pad}  ELSE {value(node)}", f"{pad}END"]
    return "\n".join(lines)


def to_sql(tree, table=None, column_names=None):
    """One SQL expression that gives ``tree.predict`` on a table holding the columns as a
    DataFrame would (NULL where predict raises)."""
    boxes = tree._boxes()
    names = _column_names(boxes, column_names)
    prefix = "" if table is None else _sql_table(table) + "."
    refs = {d: prefix + _sql_identifier(names[d]) for d in _used_features(boxes)}
    sql = _Dialect("sql", refs)
    features = _features(boxes)
    if tree.form == "tree":
        body = _sql_case(tree, tree.terms[0], sql, features, lambda lf: sql.literal(lf.prediction), "")
    else:
        parts = [f"CAST({_unit_literal(tree, tree.base)} AS BIGINT)"]
        parts += ["(" + _sql_case(tree, root, sql, features, lambda lf: _unit_literal(tree, lf.prediction), "  ")
                  + ")" for root in tree.terms]
        total = "(" + "\n  + ".join(parts) + ")"
        if tree.classes is None:
            body = _scale(tree, total, sql=True)
        else:
            half = 10 ** tree.decimals
            body = (f"CASE WHEN 2 * {total} > {half} THEN {sql.literal(tree.classes[1])} "
                    f"ELSE {sql.literal(tree.classes[0])} END")
    refused = sql.any_of([sql.missing(f) for f in features.values() if f.missing_error]
                         + [sql.unknown(f) for f in features.values()]
                         + [sql.fractional(f) for f in features.values()])
    if refused != sql.FALSE:  # predict raises here
        return f"CASE\n  WHEN {refused} THEN NULL\n  ELSE {body}\nEND"
    return body


# --------------------------------------------------------------------------- Python
def _python_branch(node, py, features, leaf_code, depth):
    """Lines of nested if / else that end in leaf_code(leaf) for the leaf a row reaches."""
    pad = "    " * depth
    if isinstance(node, Leaf):
        return [pad + leaf_code(node)]
    lines, word = [], "if"
    while isinstance(node, Node):
        lines.append(f"{pad}{word} {_box(py, node, features)}:")
        lines += _python_branch(node.then, py, features, leaf_code, depth + 1)
        word, node = "elif", node.otherwise
    lines.append(f"{pad}else:")
    lines += _python_branch(node, py, features, leaf_code, depth + 1)
    return lines


def to_python(tree, name="predict"):
    """Source of a dependency-free function ``name(row)`` that returns ``tree.predict`` of
    one row (a mapping by column name, or a sequence in the columns' order), built as
    rules/export.py's to_python builds a rule list's."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"name must be a Python identifier that is not a keyword; got {name!r}")
    boxes = tree._boxes()
    columns = _column_names(boxes, None)
    features = _features(boxes)
    body, py = python_reader(columns, features, "The prediction of the tree (or sum of trees) for row.")
    if tree.form == "tree":
        body += _python_branch(tree.terms[0], py, features, lambda lf: f"return {py.literal(lf.prediction)}", 1)
    else:
        body.append(f"    total = {_unit_literal(tree, tree.base)}")
        for root in tree.terms:
            body += _python_branch(root, py, features,
                                   lambda lf: f"total += {_unit_literal(tree, lf.prediction)}", 1)
        if tree.classes is None:
            body.append(f"    return {_scale(tree, 'total', sql=False)}")
        else:
            body.append(f"    return {py.literal(tree.classes[1])} if 2 * total > {10 ** tree.decimals} "
                        f"else {py.literal(tree.classes[0])}")
    body += ["", f"predict.__name__ = predict.__qualname__ = {name!r}", "return predict"]
    out = [f'"""A rule tree exported by defrag: {name}(row) reproduces RuleTree.predict."""', "", "",
           "def _defrag_rules():", _indented("\n".join(body)), "", "", f"{name} = _defrag_rules()"]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- query strings
def _leaf_paths(node, q, features, path=()):
    """(leaf, its path's expressions) of every leaf below node, in reading order."""
    if isinstance(node, Leaf):
        return [(node, list(path))]
    return (_leaf_paths(node.then, q, features, path + (_box(q, node, features),))
            + _leaf_paths(node.otherwise, q, features,
                          path + (f"{q.NOT}({_strict_box(q, node, features)})",)))


def query_strings(tree, column_names=None):
    """pandas ``DataFrame.query`` expressions selecting the rows of each region: one per
    leaf of a tree, in reading order; for a sum, one list per term."""
    boxes = tree._boxes()
    names = _column_names(boxes, column_names)
    q = _Dialect("query", {d: _query_name(names[d]) for d in _used_features(boxes)})
    features = _features(boxes)
    per_term = [[q.all_of(path) for _, path in _leaf_paths(root, q, features)] for root in tree.terms]
    return per_term[0] if tree.form == "tree" else per_term


# ------------------------------------------------------------------------ the table
def _path_texts(node, path=()):
    if isinstance(node, Leaf):
        return [(node, " and ".join(path) or "always")]
    box = " and ".join(c.text() for c in node.conditions)
    return _path_texts(node.then, path + (box if len(node.conditions) == 1 else f"({box})",)) + \
        _path_texts(node.otherwise, path + (f"not ({box})",))


def to_frame(tree, X=None, y=None):
    """One row per region (a tree's leaves, a sum's leaves of each term) as a pandas
    DataFrame: term, region, its path, prediction (a sum: the value the term adds),
    support and share of the training rows, proba_<class> (a tree in classification);
    given X, X_support and X_share; given y too (a tree), error (classification: the share
    misclassified; regression: mean squared error) on those rows."""
    import pandas as pd

    rows = []
    for t, root in enumerate(tree.terms):
        for k, (leaf, text) in enumerate(_path_texts(root)):
            row = {"term": t, "region": k, "path": text, "prediction": leaf.prediction, "support": leaf.support,
                   "share": leaf.share}
            if leaf.proba is not None:
                row.update({f"proba_{c}": float(p) for c, p in zip(tree.classes, leaf.proba)})
            rows.append(row)
    frame = pd.DataFrame(rows)
    if X is None:
        return frame
    leaves = tree.route(tree.encode(X))
    n = max(len(leaves), 1)
    counts = np.concatenate([np.bincount(leaves[:, t], minlength=len(tree.leaves(t))) for t in range(len(tree.terms))])
    frame["X_support"] = counts
    frame["X_share"] = counts / n
    if y is not None and tree.form == "tree":
        y = np.asarray(y)
        if y.shape[0] != len(leaves):
            raise ValueError(f"y has {y.shape[0]} entries but X has {len(leaves)} rows")
        pred = tree.predictions()[leaves[:, 0]]
        wrong = (pred != y).astype(float) if tree.classes is not None else \
            (pred.astype(float) - y.astype(float)) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            frame["error"] = np.bincount(leaves[:, 0], weights=wrong, minlength=len(frame)) / counts
    return frame
