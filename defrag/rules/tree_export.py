"""Trees of rules and sums of trees (rules/tree.py) as deliverables besides JSON: one SQL
expression, a dependency-free Python function, pandas query strings (one per region), a
table of the regions. Each reproduces ``RuleTree.predict`` as rules/export.py's exports
reproduce a rule list's (rules/dialect.py says how a value is read: missing values,
categories, LightGBM's zero, refusals, exact numbers): a box holds where every condition
holds; anything else, a missing value that no condition lets through included, takes the
"else" branch.

A sum adds its numbers as integers of its unit (10**-decimals, RuleTree.decimals) and
turns the total into a float as predict does (a division by 10**decimals, or a product
by 10**-decimals, both the same double), so that SQL and Python give predict's value;
over two classes the total is compared with one half of the unit count.

The SQL and Python stay shallow at any size (a fit's tree 30 boxes deep, a document's
chain of thousands): they do not nest a CASE or an ``if`` per box, which SQLite refuses
from about 18 levels and Python from 100, but follow each tree's heavy path (``_plan``):
at each box the side with fewer leaves is tested first and the other side continues the
same CASE or block, so that nesting and the tests before a leaf are bounded by log2 of
the leaves; past SQL_NESTING (PYTHON_NESTING) nested levels a side's leaves join their
parent's CASE (block), each led by the side's test. Their size stays linear in the tree's where the nesting suffices and
grows by at most that logarithm where it does not. Query strings repeat each leaf's path
(one self-contained query per region), grouped as every long conjunction is (dialect.grouped).
"""
import numpy as np

from ..utils.memory import check_memory
from .dialect import data_column_names, feature_readings, grouped, query_dialect, sql_dialect, sql_double
from .export import checked_function_name, python_module, python_reader
from .tree_nodes import Leaf, Node, to_units, walk


def _box(dialect, node, features):
    return dialect.box(node.conditions, features)


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
        return f"{total} / {sql_double(power)}" if k >= 0 else f"{total} * {sql_double(power)}"
    return f"{total} / {power!r}" if k >= 0 else f"{total} * {power!r}"


# ------------------------------------------------------------- the order of the tests
def _leaf_counts(roots):
    """{id(item): the leaves at or below it} of every node and leaf of the trees at roots."""
    counts = {}
    for root in roots:
        for item in reversed(list(walk(root))):  # (a node after everything below it)
            counts[id(item)] = 1 if isinstance(item, Leaf) else counts[id(item.then)] + counts[id(item.otherwise)]
    return counts


def _side_test(dialect, node, features, then):
    """True exactly where a row takes node's "then" side (then) or its "else" side: the
    box, or its negation, which must hold (not be NA) on a missing value that the "else"
    side takes (Python's box is never NA)."""
    if then:
        return _box(dialect, node, features)
    return f"{dialect.NOT}({(_box if dialect.coded else _strict_box)(dialect, node, features)})"


def _plan(node, counts, test, nesting):
    """The tests of one SQL CASE or one Python block that gives the leaf a row reaches
    from node, read in order, the first that holds deciding: ([(tests, item)], last leaf),
    item a Leaf or, while nesting > 0, a Node whose own CASE or block decides.

    It follows node's heavy path: at each box the side with fewer leaves (ties: "then")
    is tested first, by the box or its negation (``_side_test``), and the other side
    continues the list, so a side's test needs none of the path's earlier tests (a row
    that passed one of them has been answered). A side below nesting 0 is written into
    the list, its test leading each of its own tests. A row thus meets at most log2 of
    the leaves nested CASEs or blocks, and each leaf is led by at most log2(leaves) tests
    of the sides it lies on: the text's depth stays bounded however deep the tree."""
    entries = []
    while isinstance(node, Node):
        then_first = counts[id(node.then)] <= counts[id(node.otherwise)]
        light, heavy = (node.then, node.otherwise) if then_first else (node.otherwise, node.then)
        first = test(node, then_first)
        if isinstance(light, Leaf) or nesting > 0:
            entries.append(([first], light))
        else:  # (recursion only into lighter sides: at most log2(leaves) deep)
            inner, last = _plan(light, counts, test, 0)
            entries += [([first] + tests, leaf) for tests, leaf in inner] + [([first], last)]
        node = heavy
    return entries, node


# ------------------------------------------------------------------------------ SQL
# CASEs nested in a tree's CASE: SQLite's parser refuses 19 nested CASEs (measured with
# boxes of every condition kind: it took 16), and a sum's two classes and the refusals
# add two levels; 8 nest every tree of up to 2**9 leaves without repeating a test
SQL_NESTING = 8


def _sql_case(node, sql, features, counts, value, pad, nesting=None):
    """CASE WHEN test THEN ... ELSE leaf END, in _plan's order (value(leaf): its text)."""
    if isinstance(node, Leaf):
        return value(node)
    nesting = SQL_NESTING if nesting is None else nesting
    entries, last = _plan(node, counts, lambda n, then: _side_test(sql, n, features, then), nesting)
    lines = ["CASE"]
    for tests, item in entries:
        result = value(item) if isinstance(item, Leaf) else \
            _sql_case(item, sql, features, counts, value, pad + "    ", nesting - 1)
        lines.append(f"{pad}  WHEN {sql.all_of(tests)} THEN {result}")
    lines += [f"{pad}  ELSE {value(last)}", f"{pad}END"]
    return "\n".join(lines)


def to_sql(tree, table=None, column_names=None):
    """One SQL expression that gives ``tree.predict`` on a table holding the columns as a
    DataFrame would (NULL where predict raises)."""
    sql, features = sql_dialect(tree, table, column_names)
    counts = _leaf_counts(tree.terms)
    if tree.form == "tree":
        body = _sql_case(tree.terms[0], sql, features, counts, lambda lf: sql.literal(lf.prediction), "")
    else:
        parts = [f"CAST({_unit_literal(tree, tree.base)} AS BIGINT)"]
        parts += ["(" + _sql_case(root, sql, features, counts, lambda lf: _unit_literal(tree, lf.prediction), "  ")
                  + ")" for root in tree.terms]
        total = grouped(parts, "\n  + ")
        if tree.classes is None:
            body = _scale(tree, total, sql=True)
        else:
            half = 10 ** tree.decimals
            body = (f"CASE WHEN 2 * {total} > {half} THEN {sql.literal(tree.classes[1])} "
                    f"ELSE {sql.literal(tree.classes[0])} END")
    refused = sql.refused(features)
    if refused != sql.FALSE:  # predict raises here
        return f"CASE\n  WHEN {refused} THEN NULL\n  ELSE {body}\nEND"
    return body


# --------------------------------------------------------------------------- Python
# blocks nested in a tree's function (Python allows 100 levels of indentation)
PYTHON_NESTING = 16


def _python_block(node, py, features, counts, leaf_code, depth, nesting=None):
    """Lines of ``if test:`` blocks in _plan's order, each ending in leaf_code(leaf) (a
    return), then leaf_code of the last leaf."""
    pad = "    " * depth
    nesting = PYTHON_NESTING if nesting is None else nesting
    entries, last = _plan(node, counts, lambda n, then: _side_test(py, n, features, then), nesting)
    lines = []
    for tests, item in entries:
        lines.append(f"{pad}if {py.all_of(tests)}:")
        lines += [f"{pad}    {leaf_code(item)}"] if isinstance(item, Leaf) else \
            _python_block(item, py, features, counts, leaf_code, depth + 1, nesting - 1)
    lines.append(pad + leaf_code(last))
    return lines


def _term_features(root):
    return sorted({c.feature for n in walk(root) if isinstance(n, Node) for c in n.conditions})


def to_python(tree, name="predict"):
    """Source of a dependency-free function ``name(row)`` that returns ``tree.predict`` of
    one row (a mapping by column name, or a sequence in the columns' order), built as
    rules/export.py's to_python builds a rule list's; a sum's terms are functions of the
    values they read, ``_term_<k>``."""
    checked_function_name(name)
    features = feature_readings(tree)
    counts = _leaf_counts(tree.terms)
    body, py = python_reader(data_column_names(tree, None), features,
                             "The prediction of the tree (or sum of trees) for row.")
    if tree.form == "tree":
        body += _python_block(tree.terms[0], py, features, counts, lambda lf: f"return {py.literal(lf.prediction)}", 1)
    else:
        terms = []
        body.append(f"    total = {_unit_literal(tree, tree.base)}")
        for k, root in enumerate(tree.terms):
            if isinstance(root, Leaf):
                body.append(f"    total += {_unit_literal(tree, root.prediction)}")
                continue
            args = ", ".join(f"x{d}" for d in _term_features(root))
            body.append(f"    total += _term_{k}({args})")
            terms += ["", f"def _term_{k}({args}):"]
            terms += _python_block(root, py, features, counts,
                                   lambda lf: f"return {_unit_literal(tree, lf.prediction)}", 1)
        if tree.classes is None:
            body.append(f"    return {_scale(tree, 'total', sql=False)}")
        else:
            body.append(f"    return {py.literal(tree.classes[1])} if 2 * total > {10 ** tree.decimals} "
                        f"else {py.literal(tree.classes[0])}")
        body += terms
    return python_module(name, body, f"A rule tree exported by defrag: {name}(row) reproduces RuleTree.predict.")


# ----------------------------------------------------------------- query strings
def _leaf_paths(root, then_text, else_text, what):
    """(leaf, the texts of its path from root: then_text(node) where the path takes a
    node's "then" side, else_text(node) where it takes the "else" side) of every leaf, in
    reading order, without recursion. Each leaf repeats its path: the text grows as the
    leaves times the depth (a chain of n boxes: n**2 / 2), so its size is checked against
    the memory limit before it is written (``what``: the export, for the message)."""
    links, stack, leaves, size = [], [(root, -1, 0)], [], 0
    while stack:  # links[k]: (text, the link above, the path's characters)
        item, up, chars = stack.pop()
        if isinstance(item, Leaf):
            leaves.append((item, up))
            size += chars + 8
            continue
        for text, child in ((else_text(item), item.otherwise), (then_text(item), item.then)):
            links.append((text, up, chars + len(text) + 5))
            stack.append((child, len(links) - 1, links[-1][2]))
    check_memory(float(size), what, "to_sql, to_python or to_json (whose size is linear in the tree's)")
    out = []
    for leaf, up in leaves:
        path = []
        while up >= 0:
            path.append(links[up][0])
            up = links[up][1]
        out.append((leaf, path[::-1]))
    return out


def query_strings(tree, column_names=None):
    """pandas ``DataFrame.query`` expressions selecting the rows of each region: one per
    leaf of a tree, in reading order; for a sum, one list per term."""
    q, features = query_dialect(tree, column_names)
    per_term = [[q.all_of(path) for _, path in _leaf_paths(
        root, lambda n: _side_test(q, n, features, True), lambda n: _side_test(q, n, features, False),
        "RuleTree.query_strings")] for root in tree.terms]
    return per_term[0] if tree.form == "tree" else per_term


# ------------------------------------------------------------------------ the table
def _path_texts(root):
    def box(node):
        text = " and ".join(c.text() for c in node.conditions)
        return text if len(node.conditions) == 1 else f"({text})"

    return [(leaf, " and ".join(path) or "always") for leaf, path in _leaf_paths(
        root, box, lambda n: f"not ({' and '.join(c.text() for c in n.conditions)})", "RuleTree.to_frame")]


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
