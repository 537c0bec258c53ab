"""A rule set as a JSON document (``RuleSet.to_dict`` / ``from_dict``, ``to_json`` /
``from_json``): everything needed to rebuild it and predict as it did (exact bounds,
outputs, feature names, the input encoding), under a schema name and version.

Writing reads the attributes of a rule set, its rules and conditions; reading gives the
constructors' arguments (``ruleset_fields``), from which the classes (rules/conditions.py,
rules/ruleset.py) build themselves: this module needs none of them.
"""
import math

import numpy as np

from ..splits import InputEncoding

SCHEMA = "defrag.rules"
SCHEMA_VERSION = 1


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


def condition_fields(d):
    """Condition's constructor arguments of a condition's dict."""
    set_cond = d.get("codes") is not None
    return dict(
        feature=d["feature"], name=d["name"], lower=_number(d.get("lower")), upper=_number(d.get("upper")),
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


def rule_fields(d):
    """Rule's constructor arguments of a rule's dict, its conditions as condition_fields."""
    prediction = d["prediction"]
    if isinstance(prediction, str) and d.get("proba") is None:  # a regression output "inf"
        prediction = float(prediction)
    return dict(conditions=[condition_fields(c) for c in d["conditions"]], prediction=prediction,
                proba=d.get("proba"), support=d.get("support", 0), weight=d.get("weight", 0.0),
                coverage=d.get("coverage"))


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


def ruleset_fields(d):
    """RuleSet's constructor arguments of a rule set's dict, its rules as rule_fields."""
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
    return dict(rules=[rule_fields(r) for r in d["rules"]], default_prediction=default,
                default_proba=d.get("default_proba"), feature_names=d.get("feature_names"), classes=classes,
                supports_missing=d.get("supports_missing", False),
                encoding=encoding_from_dict(d.get("encoding")), feature_names_in=d.get("feature_names_in"))
