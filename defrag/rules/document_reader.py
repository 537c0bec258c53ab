"""A JSON document of an explanation (rules/document.py) read back: ``ruleset_fields`` and
``tree_fields`` give the constructors' arguments, from which the classes
(rules/conditions.py, rules/ruleset.py, rules/tree.py) build themselves: this module needs
none of them.

Reading checks the whole document before anything is built: every key known, every
value of its type (an integer is an integer, a boolean a boolean), feature indices within
the feature count (MAX_UNNAMED_FEATURES without one), names that are the features' own
(x0, x1, ... without feature_names), bounds finite numbers or the strings "inf" / "-inf" the writer uses,
probabilities as many as the classes, category codes within the limit, a schema version
this version knows. A bad document raises ``RulesDocumentError`` (a ValueError) naming
the JSON path of the first bad field, e.g. ``rules[2].conditions[0].feature``.
"""
import math
import re

import numpy as np

from ..splits import MAX_CATEGORY, InputEncoding
from .document import SCHEMA, SCHEMA_VERSION, TREE_SCHEMA_VERSION, RulesDocumentError

# items (nodes and leaves) a rule tree's document may hold, and the deepest path
MAX_NODES = 100_000
MAX_TREE_DEPTH = 500
# features a document may have (feature_names, encoding.n_features): the source readers'
# limit (sources/base.py)
MAX_FEATURES = 2**24
# features a document may index when it gives no feature count (no feature_names nor
# encoding): the rule set then has a feature for every index up to the largest, and its
# exports a column for each (a condition on feature 16,777,215 in a 120-byte document made
# to_python() write 207 MB); a model this wide has feature names to give
MAX_UNNAMED_FEATURES = 10_000
# A sum of trees adds integers of its unit, 10**-decimals (rules/tree_nodes.py), in int64
# in predict and SQL and as a double's integer in the exports: a document's base and
# values, and the base plus the largest value of each part, may count at most this many
# units, so that every total is exact in each (a sum whose units passed 2**63 wrapped
# around: predict said 8.55 where the text and to_python said 27)
MAX_UNITS = 2**53
_DTYPE = re.compile(r"^[<>|=]?(b1|i[1248]|u[1248]|f[248])$")
_INFINITE = {"inf": math.inf, "-inf": -math.inf}


def _fail(path, problem):
    raise RulesDocumentError(path, problem)


def _kind(value):
    """How a JSON value is named in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _object(d, path, required, optional):
    """d, a dict whose keys are all known and whose required keys are there."""
    if not isinstance(d, dict):
        _fail(path, f"expected an object; got {_kind(d)}")
    for key in d:
        if key not in required and key not in optional:
            _fail(f"{path}.{key}" if path else str(key), "unknown field")
    for key in required:
        if key not in d:
            _fail(path, f"missing field {key!r}")
    return d


def _evaluation(value, path):
    """An "evaluation" object: names of figures, each a finite number or null."""
    if not isinstance(value, dict):
        _fail(path, f"expected an object; got {_kind(value)}")
    for key, figure in value.items():
        if figure is not None and (isinstance(figure, bool) or not isinstance(figure, (int, float))):
            _fail(f"{path}.{key}", f"expected a number or null; got {_kind(figure)}")
        if figure is not None:
            _finite(figure, f"{path}.{key}")
    return value


def _list(value, path, what="a list", max_len=None):
    if not isinstance(value, list):
        _fail(path, f"expected {what}; got {_kind(value)}")
    if max_len is not None and len(value) > max_len:
        _fail(path, f"expected at most {max_len} entries; got {len(value)}")
    return value


def _bool(value, path):
    if not isinstance(value, bool):
        _fail(path, f"expected true or false; got {_kind(value)}")
    return value


def _int(value, path, low=0, high=None):
    """An integer (never a boolean, nor a number with a fraction) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(path, f"expected an integer; got {_kind(value)} ({_short(value)})")
    if value < low or (high is not None and value > high):
        _fail(path, f"{value} is out of range (expected {low} to {high})" if high is not None
              else f"{value} is out of range (expected at least {low})")
    return value


def _short(value):
    """A value for a message: a scalar's repr, cut short; a list or object by its kind only
    (its repr could recurse as deep as it nests)."""
    if not isinstance(value, (str, int, float)) or value is None:
        return _kind(value)
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a very large integer"
    return text if len(text) <= 40 else text[:37] + "..."


def _finite(value, path, low=-math.inf, high=math.inf):
    """A finite number in [low, high] (an integer is taken as a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(path, f"expected a number; got {_kind(value)} ({_short(value)})")
    try:
        number = float(value)
    except OverflowError:
        _fail(path, "the number is out of range")
    if not math.isfinite(number):
        _fail(path, "expected a finite number (infinite values are written \"inf\" or \"-inf\")")
    if not low <= number <= high:
        _fail(path, f"{number!r} is out of range (expected {low} to {high})")
    return number


def _bound(value, path):
    """A bound: null, a finite number, or the writer's "inf" / "-inf"."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in _INFINITE:
            _fail(path, f"expected a number, \"inf\" or \"-inf\"; got {_short(value)}")
        return _INFINITE[value]
    return _finite(value, path)


def _optional(d, key, path, read, default=None, **kw):
    """read(d[key]) where the key is there and not null, else default."""
    value = d.get(key)
    return default if value is None else read(value, f"{path}.{key}" if path else key, **kw)


def _names(value, path, max_len=MAX_FEATURES):
    """Feature names: a list of distinct, non-blank strings."""
    names = _list(value, path, "a list of names", max_len)
    seen = set()
    for i, n in enumerate(names):
        if not isinstance(n, str):
            _fail(f"{path}[{i}]", f"expected a string; got {_kind(n)}")
        if not n.strip():
            _fail(f"{path}[{i}]", "an empty name: every feature needs a name that can be printed")
        if n in seen:
            _fail(f"{path}[{i}]", f"names must be unique; repeated: {n!r}")
        seen.add(n)
    return list(names)


def _scalar(value, path):
    """A label or category as JSON holds it: a string, a number or a boolean."""
    if isinstance(value, float) and not math.isfinite(value):
        _fail(path, "expected a finite number (infinite values are written \"inf\" or \"-inf\")")
    if not isinstance(value, (str, int, float)):  # (bool is an int)
        _fail(path, f"expected a string, a number or a boolean; got {_kind(value)}")
    return value


def _values(values, dtype, path):
    """The values of a 1-D array written by _array, as an array of dtype ("object" or a
    NumPy dtype of booleans or numbers), refused where a value does not fit it exactly."""
    values = _list(values, path)
    if dtype == "object":
        out = np.empty(len(values), dtype=object)
        out[:] = [_scalar(v, f"{path}[{i}]") for i, v in enumerate(values)]
        return out
    if not isinstance(dtype, str) or not _DTYPE.match(dtype):
        _fail(path, f"unknown dtype {_short(dtype)} (expected \"object\" or a NumPy dtype of booleans or numbers)")
    dt = np.dtype(dtype)
    items = []
    for i, v in enumerate(values):
        where = f"{path}[{i}]"
        if dt.kind == "b":
            items.append(_bool(v, where))
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            items.append(_int(v, where, int(info.min), int(info.max)))
        elif isinstance(v, str) and v in _INFINITE:
            items.append(_INFINITE[v])
        else:
            number = _finite(v, where)
            if not math.isfinite(float(np.array(number, dtype=dt))):  # float16 / float32 range
                _fail(where, f"{number!r} does not fit {dt.name}")
            items.append(number)
    return np.asarray(items, dtype=dt)


def _unique(arr, path):
    if len({(type(v), v) if isinstance(v, str) else v for v in arr.tolist()}) != len(arr):
        _fail(path, "values must be distinct")
    return arr


def _condition(d, path, n_features, names, encoding=None):
    _object(d, path, ("feature", "name"),
            ("lower", "upper", "categories", "codes", "negated", "missing", "zero_missing", "train_share",
             "category_names", "printed_lower", "printed_upper", "missing_seen"))
    if names is None:
        feature = _int(d["feature"], f"{path}.feature", 0)
        if feature >= MAX_UNNAMED_FEATURES:
            _fail(f"{path}.feature", f"feature {feature} is beyond the {MAX_UNNAMED_FEATURES} features a "
                                     "document without feature_names may index: give feature_names (one "
                                     "name per feature, in order)")
    else:
        feature = _int(d["feature"], f"{path}.feature", 0, n_features - 1)
    name = d["name"]
    if not isinstance(name, str):
        _fail(f"{path}.name", f"expected a string; got {_kind(name)}")
    if names is not None and name != names[feature]:
        _fail(f"{path}.name", f"{_short(name)} is not the name of feature {feature} ({names[feature]!r})")
    if names is None and name != f"x{feature}":
        # predict and the exports read feature `feature` by its position (column x<feature>)
        _fail(f"{path}.name", f"{_short(name)} names feature {feature}, but the document has no "
                              "feature_names to say which column that is: predict and the exports read "
                              f"the feature's position (x{feature}). Give feature_names (one name per "
                              f"feature, in order), or name it 'x{feature}'")
    codes = d.get("codes")
    if codes is not None:
        codes = [_int(c, f"{path}.codes[{i}]", 0, MAX_CATEGORY)
                 for i, c in enumerate(_list(codes, f"{path}.codes", "a list of category codes"))]
        for key in ("lower", "upper", "printed_lower", "printed_upper"):
            if d.get(key) is not None:
                _fail(f"{path}.{key}", "a condition on a category set has no bounds")
        if encoding is not None and not encoding["categorical"][feature]:
            # predict would read the number as a code, the exports refuse its fraction
            _fail(f"{path}.codes", f"a category set on feature {feature}, which the encoding reads as a "
                                   "number (encoding.categorical is false there)")
    elif d.get("lower") is None and d.get("upper") is None:
        _fail(path, "a condition needs a bound (lower, upper) or a category set (codes)")
    elif encoding is not None and encoding["categories"][feature] is not None:
        # its codes are the order of labels, not numbers: predict and the exports differ on them
        _fail(f"{path}.{'lower' if d.get('lower') is not None else 'upper'}",
              f"a bound on feature {feature}, whose values are category labels "
              "(encoding.categories gives them): a condition on them tests a category set (codes)")
    labels = d.get("categories")
    if labels is not None:
        if codes is None:
            _fail(f"{path}.categories", "category labels without a category set (codes)")
        for i, v in enumerate(_list(labels, f"{path}.categories")):
            _scalar(v, f"{path}.categories[{i}]")
    lower, upper = _bound(d.get("lower"), f"{path}.lower"), _bound(d.get("upper"), f"{path}.upper")
    printed = {}
    for key, bound in (("printed_lower", lower), ("printed_upper", upper)):
        printed[key] = _bound(d.get(key), f"{path}.{key}")
        if printed[key] is not None and bound is None:
            _fail(f"{path}.{key}", f"a printed bound where the condition has none ({key[8:]} is null)")
    category_names = d.get("category_names")
    if category_names is not None:
        for i, n in enumerate(_list(category_names, f"{path}.category_names")):
            if not isinstance(n, str):
                _fail(f"{path}.category_names[{i}]", f"expected a string; got {_kind(n)}")
    return dict(
        feature=feature, name=name, lower=lower, upper=upper,
        train_share=_optional(d, "train_share", path, _finite, low=0.0, high=1.0),
        missing=_optional(d, "missing", path, _bool, False), categories=codes,
        negated=_optional(d, "negated", path, _bool, False), category_names=category_names,
        zero_missing=_optional(d, "zero_missing", path, _bool, False),
        missing_seen=_optional(d, "missing_seen", path, _bool, True), **printed)


def _prediction(value, path, classes):
    """A rule's output: a class label among classes, or a regression value (a finite
    number, or the writer's "inf" / "-inf")."""
    if classes is None:
        if isinstance(value, str):
            if value not in _INFINITE:
                _fail(path, f"expected a number; got {_short(value)}")
            return _INFINITE[value]
        return _finite(value, path)
    _scalar(value, path)
    if not any(type(value) is type(c) and value == c for c in classes.tolist()) and \
            not any(value == c and not isinstance(c, bool) and not isinstance(value, bool) and
                    not isinstance(c, str) and not isinstance(value, str) for c in classes.tolist()):
        _fail(path, f"{_short(value)} is not one of the classes")
    return value


def _proba(value, path, classes):
    if classes is None:
        if value is not None:
            _fail(path, "class probabilities without classes")
        return None
    if value is None:
        _fail(path, "missing class probabilities (the rule set has classes)")
    p = _list(value, path, "a list of probabilities")
    if len(p) != len(classes):
        _fail(path, f"expected {len(classes)} probabilities (one per class); got {len(p)}")
    return [_finite(v, f"{path}[{i}]", 0.0, 1.0) for i, v in enumerate(p)]


def _rule(d, path, n_features, names, classes, encoding=None):
    _object(d, path, ("conditions", "prediction"), ("proba", "support", "weight", "coverage"))
    conditions = [_condition(c, f"{path}.conditions[{i}]", n_features, names, encoding)
                  for i, c in enumerate(_list(d["conditions"], f"{path}.conditions"))]
    return dict(conditions=conditions, prediction=_prediction(d["prediction"], f"{path}.prediction", classes),
                proba=_proba(d.get("proba"), f"{path}.proba", classes),
                support=_optional(d, "support", path, _int, 0),
                weight=_optional(d, "weight", path, _finite, 0.0),
                coverage=_optional(d, "coverage", path, _finite, low=0.0, high=1.0))


def _encoding(d, path):
    """InputEncoding's arguments of an encoding's dict."""
    _object(d, path, ("n_features", "categorical", "categories", "lookup_numbers", "unknown", "zero_missing"),
            ("lightgbm_reads", "text_labels", "boolean"))
    n = _int(d["n_features"], f"{path}.n_features", 1, MAX_FEATURES)

    def flags(key):
        values = _list(d[key], f"{path}.{key}", "a list of booleans")
        if len(values) != n:
            _fail(f"{path}.{key}", f"expected {n} entries (one per feature); got {len(values)}")
        return [_bool(v, f"{path}.{key}[{i}]") for i, v in enumerate(values)]

    categorical, zero_missing = flags("categorical"), flags("zero_missing")
    categories = _list(d["categories"], f"{path}.categories")
    if len(categories) != n:
        _fail(f"{path}.categories", f"expected {n} entries (one per feature); got {len(categories)}")
    read = []
    for i, c in enumerate(categories):
        where = f"{path}.categories[{i}]"
        if c is None:
            read.append(None)
            continue
        _object(c, where, ("dtype", "values"), ())
        read.append(_unique(_values(c["values"], c["dtype"], f"{where}.values"), f"{where}.values"))
    unknown = d["unknown"]
    if unknown not in ("missing", "error"):
        _fail(f"{path}.unknown", f"expected \"missing\" or \"error\"; got {_short(unknown)}")
    return dict(n_features=n, categorical=categorical, categories=read,
                lookup_numbers=_bool(d["lookup_numbers"], f"{path}.lookup_numbers"), unknown=unknown,
                zero_missing=zero_missing, lightgbm_reads=_optional(d, "lightgbm_reads", path, _bool, False),
                text_labels=_optional(d, "text_labels", path, _bool, False),
                boolean=flags("boolean") if d.get("boolean") is not None else None)


def _classes(d):
    values = d.get("classes")
    if values is None:
        if d.get("classes_dtype") is not None:
            _fail("classes_dtype", "a dtype without classes")
        return None
    dtype = d.get("classes_dtype") or "object"
    classes = _unique(_values(values, dtype, "classes"), "classes")
    if not len(classes):
        _fail("classes", "expected at least one class")
    for i, c in enumerate(classes.tolist()):
        if isinstance(c, float) and not math.isfinite(c):
            # (a label predict returns, but no SQL literal nor JSON number holds)
            _fail(f"classes[{i}]", "a class label must be a finite number, a string or a boolean")
    # NumPy's strings drop trailing NULs ('\x00' would become ''): such labels stay objects
    if classes.dtype == object and all(isinstance(c, str) and not c.endswith("\x00") for c in classes):
        classes = classes.astype(str)
    return classes


# the fields every document has besides its rules or tree ("evaluation": figures of how
# good the rules were where they were written, `defrag explain`'s; read as a check only)
_HEADER = ("schema", "schema_version", "feature_names", "feature_names_in", "classes", "classes_dtype",
           "supports_missing", "encoding", "evaluation")


def _version(d, what, key, default=SCHEMA_VERSION):
    """The document's schema version, checked (what: "rule set" or "rule tree"; key: the
    field every such document has; default: the version of a document without one)."""
    if not isinstance(d, dict) or key not in d:
        _fail("", f"not a defrag {what}: a JSON object with {key!r} is expected")
    if d.get("schema", SCHEMA) != SCHEMA:
        _fail("schema", f"not a defrag {what}: schema {_short(d.get('schema'))}")
    version = d.get("schema_version", default)
    if isinstance(version, bool) or not isinstance(version, int):
        _fail("schema_version", f"expected an integer; got {_kind(version)}")
    if version > TREE_SCHEMA_VERSION:
        _fail("schema_version", f"version {version} is newer than this defrag reads ({TREE_SCHEMA_VERSION}): "
                                "upgrade defrag")
    if version < 1:
        _fail("schema_version", f"unknown version {version} (versions start at 1)")
    return version


def _header(d):
    """(the constructors' shared arguments but the encoding, the encoding's arguments or
    None, the feature count or None, the names conditions must carry or None, classes)
    of a document, checked."""
    names = _optional(d, "feature_names", "", _names)
    names_in = _optional(d, "feature_names_in", "", _names)
    encoding = _optional(d, "encoding", "", _encoding)
    counts = {key: n for key, n in (("feature_names", None if names is None else len(names)),
                                    ("feature_names_in", None if names_in is None else len(names_in)),
                                    ("encoding.n_features", None if encoding is None else encoding["n_features"]))
              if n is not None}
    if len(set(counts.values())) > 1:
        key = list(counts)[-1]
        _fail(key, "the feature counts disagree: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
    n_features = next(iter(counts.values()), None)
    _optional(d, "evaluation", "", _evaluation)
    classes = _classes(d)
    # the names conditions must carry: feature_names, else the DataFrame columns, else
    # none (x0, x1, ...: the positions)
    named = names if names is not None else names_in
    if named is None and n_features is not None:  # an encoding alone gives the count
        named = [f"x{j}" for j in range(n_features)]
    shared = dict(feature_names=names, classes=classes,
                  supports_missing=_optional(d, "supports_missing", "", _bool, False), feature_names_in=names_in)
    return shared, encoding, n_features, named, classes


def ruleset_fields(d):
    """RuleSet's arguments (of a list) of a list's dict, its rules as dicts of Rule's
    arguments and theirs of Condition's, after checking the whole document
    (RulesDocumentError naming the bad field's JSON path)."""
    if _version(d, "rule set", "rules") > SCHEMA_VERSION:
        _fail("schema_version", "a rule set's document is version 1")
    _object(d, "", ("rules", "default_prediction"), _HEADER + ("default_proba", "decimals"))
    shared, encoding, n_features, named, classes = _header(d)
    rules = [_rule(r, f"rules[{i}]", n_features, named, classes, encoding)
             for i, r in enumerate(_list(d["rules"], "rules"))]
    fields = dict(rules=rules, default_prediction=_prediction(d["default_prediction"], "default_prediction", classes),
                  default_proba=_proba(d.get("default_proba"), "default_proba", classes),
                  decimals=_optional(d, "decimals", "", _int, low=-300, high=300), **shared)
    # built last: everything is checked
    fields["encoding"] = None if encoding is None else InputEncoding(**encoding)
    return fields


def tree_fields(d):
    """RuleTree's constructor arguments of a rule tree's dict: its terms as nested dicts
    ({"conditions": [Condition's arguments], "then": item, "else": item} or a leaf's
    {"prediction", "proba", "support", "share"}), after checking the whole document: every
    inner node's items come after it, and every item but the roots is named once, so the
    nodes form trees (RulesDocumentError naming the bad field's JSON path)."""
    if _version(d, "rule tree", "nodes", TREE_SCHEMA_VERSION) != TREE_SCHEMA_VERSION:
        _fail("schema_version", f"a rule tree's document is version {TREE_SCHEMA_VERSION} (version 1 is a "
                                "rule set's)")
    _object(d, "", ("nodes", "terms", "form"), _HEADER + ("base", "decimals"))
    shared, encoding, n_features, named, classes = _header(d)
    form = d["form"]
    if form not in ("tree", "sum"):
        _fail("form", f"expected \"tree\" or \"sum\"; got {_short(form)}")
    nodes = _list(d["nodes"], "nodes", max_len=MAX_NODES)
    roots = [_int(r, f"terms[{i}]", 0, max(len(nodes) - 1, 0)) for i, r in enumerate(_list(d["terms"], "terms"))]
    if not roots or not nodes:
        _fail("terms", "a rule tree has at least one term and one node")
    if form == "tree" and len(roots) != 1:
        _fail("terms", f"a tree of rules has one term; got {len(roots)}")
    base = _optional(d, "base", "", _finite)
    if (base is None) != (form == "tree"):
        _fail("base", "a sum of trees has a base, a tree of rules none")
    decimals = _optional(d, "decimals", "", _int, low=-300, high=300)
    if form == "sum" and decimals is None:  # (the writer gives them: its numbers are integers of that unit)
        _fail("decimals", "a sum of trees gives the decimals its numbers are held in")
    if form == "sum" and classes is not None and len(classes) != 2:
        _fail("classes", "a sum of trees classifies two classes")
    named_by = {}  # item -> the item that names it
    for i, item in enumerate(nodes):
        where = f"nodes[{i}]"
        if not isinstance(item, dict):
            _fail(where, f"expected an object; got {_kind(item)}")
        if "conditions" in item:
            _object(item, where, ("conditions", "then", "else"), ())
            for key in ("then", "else"):
                child = _int(item[key], f"{where}.{key}", i + 1, len(nodes) - 1)
                if child in named_by:
                    _fail(f"{where}.{key}", f"nodes[{child}] is already a branch of nodes[{named_by[child]}]")
                named_by[child] = i
    for t, r in enumerate(roots):
        if r in named_by:  # (a root named before is a branch, or an earlier term's root)
            _fail(f"terms[{t}]", f"nodes[{r}] is a branch or another term's root")
        named_by[r] = -1
    unnamed = [i for i in range(len(nodes)) if i not in named_by]
    if unnamed:
        _fail(f"nodes[{unnamed[0]}]", "no term reaches this node")

    def read_item(i):
        """An item's fields, its branches still indices."""
        item, where = nodes[i], f"nodes[{i}]"
        if "conditions" in item:
            conds = [_condition(c, f"{where}.conditions[{j}]", n_features, named, encoding)
                     for j, c in enumerate(_list(item["conditions"], f"{where}.conditions"))]
            if not conds:
                _fail(f"{where}.conditions", "a node tests at least one condition")
            return {"conditions": conds, "then": item["then"], "else": item["else"]}
        _object(item, where, ("prediction",), ("proba", "support", "share"))
        if form == "sum":
            prediction, proba = _finite(item["prediction"], f"{where}.prediction"), None
            if item.get("proba") is not None:
                _fail(f"{where}.proba", "a sum's leaves add values: they have no class probabilities")
        elif classes is None:  # (a tree's writer has no infinite leaf: they are its model's predictions)
            if isinstance(item["prediction"], str) and item["prediction"] in _INFINITE:
                _fail(f"{where}.prediction", "a leaf's value must be a finite number")
            prediction, proba = _finite(item["prediction"], f"{where}.prediction"), None
            if item.get("proba") is not None:
                _fail(f"{where}.proba", "class probabilities without classes")
        else:
            prediction = _prediction(item["prediction"], f"{where}.prediction", classes)
            proba = _proba(item.get("proba"), f"{where}.proba", classes)
        return {"prediction": prediction, "proba": proba, "support": _optional(item, "support", where, _int, 0),
                "share": _optional(item, "share", where, _finite, low=0.0, high=1.0)}

    items = [read_item(i) for i in range(len(nodes))]
    depth, term = [0] * len(nodes), [0] * len(nodes)
    for t, r in enumerate(roots):
        term[r] = t
    for i in range(len(nodes)):  # branches come after their node: one pass in order
        if "conditions" in items[i]:
            for key in ("then", "else"):
                depth[items[i][key]] = depth[i] + 1
                term[items[i][key]] = term[i]
                if depth[i] + 1 > MAX_TREE_DEPTH:
                    _fail(f"nodes[{i}].{key}", f"the tree is deeper than {MAX_TREE_DEPTH} nodes")
    if form == "sum":
        _sum_units(base, decimals, items, term, len(roots), classes is not None)
    for i in reversed(range(len(nodes))):  # branches before their node: each built once
        if "conditions" in items[i]:
            items[i]["then"], items[i]["else"] = items[items[i]["then"]], items[items[i]["else"]]

    fields = dict(terms=[items[r] for r in roots], base=base, decimals=decimals, **shared)
    fields["encoding"] = None if encoding is None else InputEncoding(**encoding)
    return fields


def _sum_units(base, decimals, items, term, n_terms, classification):
    """RulesDocumentError where a sum's numbers (base, the leaves' values of items, in
    term[i]'s part) cannot be held in its unit exactly: a number, or the base plus the
    largest value of each part, more than MAX_UNITS units; a total beyond a double's range."""
    leaves = [i for i, item in enumerate(items) if "prediction" in item]
    values = np.array([base] + [items[i]["prediction"] for i in leaves], dtype=np.float64)
    # (as to_units scales them: a product by 10**decimals, or a division by 10**-decimals)
    units = np.abs(values) * 10.0 ** decimals if decimals >= 0 else np.abs(values) / 10.0 ** -decimals
    unit = f"10**{-decimals}"
    over = np.flatnonzero(~(units <= MAX_UNITS))
    if over.size:
        k = int(over[0])
        path = "base" if k == 0 else f"nodes[{leaves[k - 1]}].prediction"
        _fail(path, f"{float(values[k])!r} is {units[k]:.3g} units of {unit} (decimals {decimals}); a sum holds at most "
                    f"2**53 units of its unit, which predict and every export add exactly: fewer decimals")
    largest = np.zeros(n_terms, dtype=np.float64)
    np.maximum.at(largest, np.array([term[i] for i in leaves], dtype=np.int64), np.rint(units[1:]))
    total = int(np.rint(units[0])) + sum(int(u) for u in largest.tolist())
    if total > MAX_UNITS:
        _fail("decimals", f"the base and the largest value of each part add up to {total:.3g} units of {unit} "
                          f"(decimals {decimals}); a sum holds at most 2**53 units of its unit, which predict "
                          "and every export add exactly: fewer decimals or parts")
    if not math.isfinite(total * 10.0 ** -decimals):
        _fail("decimals", "the base and the largest value of each part add up beyond a double's range")
    if classification and 10 ** decimals > MAX_UNITS:
        _fail("decimals", f"decimals {decimals}: a sum of two classes compares its total with one half, "
                          "10**decimals / 2 units, which must be at most 2**53 units")

