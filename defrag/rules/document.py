"""An explanation (a RuleSet, a RuleTree) as a JSON document (``to_dict`` / ``to_json``):
everything needed to rebuild it and predict as it did (exact bounds, outputs, feature
names, the input encoding), under a schema name and version, and the document's JSON text
read back into Python values (``parse``). Writing reads the attributes of an explanation,
its rules or nodes and their conditions; rules/document_reader.py checks a document and
gives the constructors' arguments.
"""
import functools
import json
import math
import re

import numpy as np

from .tree_nodes import Leaf, walk

SCHEMA = "defrag.rules"
SCHEMA_VERSION = 1
# rule trees and sums of trees (rules/tree.py) write version 2; rule sets stay at 1, so
# that a reader of version 1 still reads every rule set
TREE_SCHEMA_VERSION = 2
# nesting of a document's JSON text: a valid one nests 6 deep
MAX_DEPTH = 32


class RulesDocumentError(ValueError):
    """A document that ``RuleTree.from_dict`` / ``from_json`` refuse. ``path`` is
    the JSON path of the bad field (``rules[2].conditions[0].feature``; "" for the whole
    document), and the message starts with it."""

    def __init__(self, path, problem):
        self.path = path
        super().__init__(f"{path}: {problem}" if path else problem)


def json_value(value):
    """A JSON value of a label, a category or a number (NumPy scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "inf", "-inf", "nan": strict JSON has no such numbers
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) to JSON: labels and "
                    "categories must be numbers, strings or booleans")


def _array(values):
    """A 1-D array to JSON: its values and its dtype (so that it reads back as it was)."""
    arr = np.asarray(values)
    kind = "object" if arr.dtype == object or arr.dtype.kind in "US" else arr.dtype.str
    return {"dtype": kind, "values": [json_value(v) for v in arr.tolist()]}


def condition_to_dict(c):
    return {
        "feature": c.feature, "name": c.name, "lower": json_value(c.lower), "upper": json_value(c.upper),
        "categories": c._labels() if c.is_set else None,
        "codes": None if not c.is_set else list(c.categories),
        "negated": c.negated, "missing": c.missing, "zero_missing": c.zero_missing,
        "train_share": c.train_share,
        "category_names": None if c.category_names is None else list(c.category_names),
        "printed_lower": json_value(c.printed_lower), "printed_upper": json_value(c.printed_upper),
        "missing_seen": c.missing_seen,
    }


def rule_to_dict(r):
    return {
        "conditions": [condition_to_dict(c) for c in r.conditions],
        "prediction": json_value(r.prediction),
        "proba": None if r.proba is None else [float(p) for p in r.proba],
        "support": r.support, "weight": r.weight, "coverage": r.coverage,
    }


def encoding_to_dict(enc):
    if enc is None:
        return None
    return {
        "n_features": enc.n_features, "categorical": enc.categorical.tolist(),
        "categories": [None if c is None else _array(c) for c in enc.categories],
        "lookup_numbers": enc.lookup_numbers, "unknown": enc.unknown,
        "zero_missing": enc.zero_missing.tolist(), "lightgbm_reads": bool(enc.lightgbm_reads),
        **({"text_labels": True} if getattr(enc, "text_labels", False) else {}),
        # (optional fields, written where they hold: older readers refuse what they cannot read)
        **({"boolean": enc.boolean.tolist()} if getattr(enc, "boolean", None) is not None
           and enc.boolean.any() else {}),
    }


def _written_names(rs):
    """The feature names a document of rs gives: its feature_names; for a rule set without
    any names whose conditions name features otherwise than by position (x0, x1, ...),
    those names (x<d> where no condition names feature d), so that the document says
    which feature each printed name is, as the reader requires."""
    if rs.feature_names is not None or getattr(rs, "feature_names_in", None) is not None:
        return rs.feature_names
    named = {}
    for c in rs._conditions():
        if named.setdefault(c.feature, c.name) != c.name:
            raise ValueError(f"feature {c.feature} is named both {named[c.feature]!r} and {c.name!r} by the "
                             "rule set's conditions, which has no feature_names: give feature_names")
    if all(name == f"x{d}" for d, name in named.items()):
        return None
    names = [named.get(d, f"x{d}") for d in range(rs._n_features())]
    if len(set(names)) != len(names):
        raise ValueError("the rule set's conditions name its features without feature_names, and "
                         "those names repeat the positions' (x0, x1, ...): give feature_names")
    return names


def _shared_fields(rs):
    """The fields every document ends with: names, classes, missing values, encoding."""
    classes = None if rs.classes is None else _array(rs.classes)
    return {
        "feature_names": _written_names(rs),
        "feature_names_in": rs.feature_names_in,
        "classes": None if classes is None else classes["values"],
        "classes_dtype": None if classes is None else classes["dtype"],
        "supports_missing": rs.supports_missing,
        "encoding": encoding_to_dict(rs.encoding),
    }


def ruleset_to_dict(rs):
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "rules": [rule_to_dict(r) for r in rs.rules],
        "default_prediction": json_value(rs.default_prediction),
        "default_proba": None if rs.default_proba is None else [float(p) for p in rs.default_proba],
        "decimals": rs.decimals, **_shared_fields(rs),
    }


def tree_to_dict(tree):
    """A RuleTree as a JSON-ready dict: its nodes and leaves in one flat list (each term's
    in reading order, an inner node before its "then" and "else" items, which it names by
    index), the terms' roots, a sum's base and decimals, and the fields of a rule set."""
    nodes, roots = [], []
    for root in tree.terms:
        order = list(walk(root))
        index = {id(x): len(nodes) + i for i, x in enumerate(order)}
        roots.append(len(nodes))
        for x in order:
            if isinstance(x, Leaf):
                item = {"prediction": json_value(x.prediction), "support": x.support}
                if x.proba is not None:
                    item["proba"] = [float(p) for p in x.proba]
                if x.share is not None:
                    item["share"] = x.share
            else:
                item = {"conditions": [condition_to_dict(c) for c in x.conditions],
                        "then": index[id(x.then)], "else": index[id(x.otherwise)]}
            nodes.append(item)
    return {
        "schema": SCHEMA, "schema_version": TREE_SCHEMA_VERSION, "form": tree.form,
        "nodes": nodes, "terms": roots,
        "base": None if tree.base is None else json_value(tree.base), "decimals": tree.decimals,
        **_shared_fields(tree),
    }


# ------------------------------------------------------------------- JSON text
def nesting_depth(text):
    """The deepest nesting of lists and objects in JSON text (strings skipped), in
    vectorised passes: the text is checked before a recursive parser reads it."""
    stripped = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    codes = np.frombuffer(stripped.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.isin(codes, (ord("["), ord("{"))).astype(np.int64) - np.isin(codes, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


def parse(text):
    """A document's JSON text as Python values; RulesDocumentError for text that is not
    JSON or nests deeper than MAX_DEPTH."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RulesDocumentError("", f"the document is not UTF-8 text: {exc}") from None
    if not isinstance(text, str):
        raise TypeError(f"from_json reads JSON text (str or bytes); got {type(text).__name__}")
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise RulesDocumentError("", f"the document nests {depth} deep; a rule set nests at most "
                                     f"{MAX_DEPTH} deep")
    repeated = []
    try:
        value = json.loads(text, object_pairs_hook=functools.partial(_object_of_pairs, repeated))
    except ValueError as exc:  # JSONDecodeError, an integer too long to read
        raise RulesDocumentError("", f"not JSON: {exc}") from None
    except RecursionError:  # (MAX_DEPTH keeps the parser far from it)
        raise RulesDocumentError("", "the document nests too deep") from None
    if repeated:
        path, key = _repeated_key(value)
        raise RulesDocumentError(f"{path}.{key}" if path else key, "the key is repeated in its object: JSON readers differ on "
                                                "which value counts, so a document gives each key once")
    return value


class _Repeated(dict):
    """A JSON object that gave a key more than once (``key``: the first such)."""
    key = None


def _object_of_pairs(repeated, pairs):
    """json.loads's object_pairs_hook: the object as a dict, a _Repeated one (noted in
    repeated) where a key comes twice (json.loads would keep the last value silently)."""
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    seen = set()
    out = _Repeated(d)
    out.key = next(k for k, _ in pairs if k in seen or seen.add(k))
    repeated.append(out)
    return out


def _repeated_key(value):
    """(JSON path, key) of the first object in value (reading order) with a repeated key."""
    stack = [("", value)]
    while stack:  # (iterative: the document nests at most MAX_DEPTH deep anyway)
        path, item = stack.pop()
        if isinstance(item, _Repeated):
            return path, item.key
        if isinstance(item, dict):
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(item.items()))]
        elif isinstance(item, list):
            stack += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item)))]
    return "", None