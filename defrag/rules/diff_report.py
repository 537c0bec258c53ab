"""The diff's report (rules/diff.py finds what changed): ``ExplanationDiff``, its text (the
headline first, then the details), its HTML table and its JSON document, whose schema is
``JSON_SCHEMA``.
"""
import html
import json

import numpy as np

from ..utils.text import printed_name

# regression's default tolerance: a prediction moved by at most this share of the old
# predictions' spread did not change (a refit on a retrain moves every leaf value a little;
# counting each move made every retrain read as a total change)
RELATIVE_TOL = 0.01

_NUMBER = {"type": "number"}
_COUNT = {"type": "integer", "minimum": 1}
_SHARE = {"type": "number", "minimum": 0, "maximum": 1}
_PREDICTION = {"type": ["number", "string", "boolean"]}
_AMOUNT = {"oneOf": [{"type": "null"}, {"type": "number", "minimum": 0}, {"const": "inf"}]}
_NUMBERS = ("kept", "changed", "added", "removed")
# the tolerance's basis: the code in the JSON, the phrase in the text
TOLERANCE_BASES = {
    "given": "given",
    "old_predictions_std": "of the standard deviation of the old explanation's predictions on the rows",
    "new_predictions_std": "of the standard deviation of the new explanation's predictions on the rows "
                           "(the old ones are constant)",
    "old_values_range": "of the range of the old explanation's values",
    "new_values_range": "of the range of the new explanation's values (the old one has one)",
    "constant": "both explanations predict one value",
}


def _entry(required):
    return {"type": "object", "required": sorted(required), "additionalProperties": False,
            "properties": {k: v for k, v in {
                "old_part": _COUNT, "new_part": _COUNT, "old_region": _COUNT, "new_region": _COUNT, "conditions": {"type": "string"},
                "old_conditions": {"type": "string"}, "new_conditions": {"type": "string"},
                "old_prediction": _PREDICTION, "new_prediction": _PREDICTION,
                "threshold_moves": {"type": "array", "items": {
                    "type": "object", "required": ["feature", "bound", "old", "new"], "additionalProperties": False,
                    "properties": {"feature": {"type": "string"}, "bound": {"enum": ["lower", "upper"]},
                                   "old": _NUMBER, "new": _NUMBER}}}}.items() if k in required}}


# The JSON Schema (draft 2020-12) of ExplanationDiff.to_dict / to_json, for a monitoring job
# to validate the document against
JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "defrag explanation diff", "type": "object",
    "required": ["schema", "version", "headline", "tolerance", "old", "new", "kept", "changed", "added", "removed",
                 "rows"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": "defrag.diff"}, "version": {"const": 2},
        "headline": {"type": "object", "additionalProperties": False,
                     "required": ["n_rows", "prediction_changed", "mean_change", "max_change", "region_changed",
                                  *_NUMBERS],
                     "properties": {"n_rows": {"type": ["integer", "null"], "minimum": 0},
                                    "prediction_changed": {"oneOf": [{"type": "null"}, _SHARE]},
                                    "mean_change": _AMOUNT, "max_change": _AMOUNT,
                                    "region_changed": {"oneOf": [{"type": "null"}, _SHARE]},
                                    **{k: {"type": "integer", "minimum": 0} for k in _NUMBERS}}},
        "tolerance": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["value", "basis", "relative"], "additionalProperties": False,
            "properties": {"value": {"type": "number", "minimum": 0}, "basis": {"enum": sorted(TOLERANCE_BASES)},
                           "relative": {"type": ["number", "null"], "minimum": 0}}}]},
        "old": {"type": "object", "required": ["kind", "n_regions"], "additionalProperties": False,
                "properties": {"kind": {"enum": ["tree", "sum", "list"]}, "n_regions": _COUNT}},
        "new": {"$ref": "#/properties/old"},
        "kept": {"type": "array", "items": _entry({"old_part", "new_part", "old_region", "new_region", "conditions",
                                                   "old_prediction", "new_prediction"})},
        "changed": {"type": "array", "items": _entry({"old_part", "new_part", "old_region", "new_region", "old_conditions",
                                                      "new_conditions", "old_prediction", "new_prediction",
                                                      "threshold_moves"})},
        "added": {"type": "array", "items": _entry({"new_part", "new_region", "conditions", "new_prediction"})},
        "removed": {"type": "array", "items": _entry({"old_part", "old_region", "conditions", "old_prediction"})},
        "rows": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["n_rows", "prediction_changed", "region_changed", "moves"],
            "additionalProperties": False,
            "properties": {"n_rows": {"type": "integer", "minimum": 0}, "prediction_changed": _SHARE,
                           "region_changed": _SHARE,
                           "moves": {"type": "array", "items": {
                               "type": "object", "required": ["old_part", "new_part", "old_region", "new_region", "rows",
                                            "share"],
                               "additionalProperties": False,
                               "properties": {"old_part": _COUNT, "new_part": _COUNT, "old_region": _COUNT,
                                              "new_region": _COUNT,
                                              "rows": _COUNT, "share": _SHARE}}}}}]},
    },
}



def json_prediction(v):
    """A prediction as JSON: a number (an infinite one as the rules documents write it,
    "inf" or "-inf": strict JSON has none), or a class label as it is (its string
    otherwise)."""
    if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v) if np.isfinite(v) else repr(float(v))
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    return v if isinstance(v, str) else str(v)


def json_amount(v):
    """A change's size as JSON: None, a number, or "inf"."""
    return None if v is None else float(v) if np.isfinite(v) else "inf"


def _show(v):
    """A prediction in the text: a number to 6 significant digits, a label as it is."""
    return f"{v:.6g}" if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)


class ExplanationDiff:
    """What changed from an old explanation to a new one (``diff``); see the module's
    docstring for how regions are matched. Attributes: ``kept``, ``changed``, ``added``,
    ``removed`` (lists of dicts, as ``to_dict`` gives them), ``n_rows`` (rows of X, or
    None without X), ``prediction_changed`` and ``region_changed`` (shares of those rows,
    or None), ``moves`` (the largest moves of rows between regions); in regression
    ``tolerance`` (a prediction changed where it moved by more than it), ``tolerance_basis``
    (a key of TOLERANCE_BASES) and on X ``mean_change`` and ``max_change`` (the mean and
    largest absolute change of a row's prediction); None in classification."""

    def __init__(self, kept, changed, added, removed, old_regions, new_regions, sum_form, kinds,
                 n_rows=None, prediction_changed=None, region_changed=None, moves=(), parts=(1, 1),
                 tolerance=None, tolerance_basis=None, mean_change=None, max_change=None):
        self.kept, self.changed, self.added, self.removed = kept, changed, added, removed
        # the regions compared: a sum's, those of each part (the combinations, its
        # n_regions, are not what the diff pairs), counted as the diff lists them
        self.old_regions, self.new_regions = old_regions, new_regions
        self.parts = parts
        self.sum_form, self.kinds = sum_form, kinds
        self.n_rows, self.prediction_changed, self.region_changed = n_rows, prediction_changed, region_changed
        self.moves = list(moves)
        self.tolerance, self.tolerance_basis = tolerance, tolerance_basis
        self.mean_change, self.max_change = mean_change, max_change

    @property
    def unchanged(self):
        """No region changed, was added or removed (predictions may have been refitted)."""
        return not (self.changed or self.added or self.removed)

    def to_dict(self):
        """A JSON-ready dict (``to_json``), schema version 2::

            {
              "schema": "defrag.diff", "version": 2,
              "headline": {"n_rows": int | null, "prediction_changed": share | null,
                           "mean_change": A, "max_change": A, "region_changed": share | null,
                           "kept": int, "changed": int, "added": int, "removed": int},
              "tolerance": null | {"value": number, "basis": str, "relative": number | null},
              "old": {"kind": "tree" | "sum" | "list", "n_regions": int},
              "new": {"kind": ..., "n_regions": int},
              "kept":    [{"old_part": int, "new_part": int, "old_region": int, "new_region": int,
                           "conditions": str,
                           "old_prediction": P, "new_prediction": P}],
              "changed": [{"old_part": int, "new_part": int, "old_region": int, "new_region": int,
                           "old_conditions": str, "new_conditions": str,
                           "old_prediction": P, "new_prediction": P,
                           "threshold_moves": [{"feature": str, "bound": "lower" | "upper",
                                                "old": number, "new": number}]}],
              "added":   [{"new_part": int, "new_region": int, "conditions": str, "new_prediction": P}],
              "removed": [{"old_part": int, "old_region": int, "conditions": str, "old_prediction": P}],
              "rows": null | {"n_rows": int, "prediction_changed": number in [0, 1],
                              "region_changed": number in [0, 1],
                              "moves": [{"old_part": int, "new_part": int, "old_region": int,
                                         "new_region": int,
                                         "rows": int, "share": number in [0, 1]}]}
            }

        Regions and parts are numbered from 1 in reading order (a list's default is its
        last region); "conditions" is the region's description as text ("otherwise" for a
        list's default); P is a number, or a class label (a string where it is not a JSON
        number or boolean; an infinite number "inf" or "-inf"). "headline" is what the text
        leads with: on the rows (null without them) the share whose prediction changed and in
        regression the mean and largest absolute change of a prediction (A: a number, "inf",
        or null in classification or without rows), the share whose region changed, then
        the numbers of regions kept, changed, added and removed. "tolerance" (null in
        classification): a regression prediction changed where it moved by more than
        "value"; "basis" says what it is relative to (a key of ``TOLERANCE_BASES``:
        "given" where ``tol`` was) and "relative" is the share of that spread it is
        (RELATIVE_TOL; null where given). "moves": the largest moves (rules/diff.py's MAX_MOVES) of rows between regions
        that are not matched, largest first; "rows" is null where no rows were given.
        "n_regions" counts the regions the diff compares: a sum's, those of each of its parts
        added up (not their combinations, the sum's own n_regions). A
        sum's parts are paired by the regions they share, so old_part and new_part may
        differ (a tree's or a list's: 1). ``JSON_SCHEMA`` (this module) is the same as a JSON Schema."""
        rows = None
        if self.n_rows is not None:
            rows = {"n_rows": int(self.n_rows), "prediction_changed": float(self.prediction_changed),
                    "region_changed": float(self.region_changed), "moves": [dict(m) for m in self.moves]}
        headline = {"n_rows": None if self.n_rows is None else int(self.n_rows),
                    "prediction_changed": None if self.n_rows is None else float(self.prediction_changed),
                    "mean_change": json_amount(self.mean_change), "max_change": json_amount(self.max_change),
                    "region_changed": None if self.n_rows is None else float(self.region_changed),
                    **{k: len(getattr(self, k)) for k in _NUMBERS}}
        tolerance = None
        if self.tolerance is not None:
            tolerance = {"value": float(self.tolerance), "basis": self.tolerance_basis,
                         "relative": None if self.tolerance_basis == "given" else RELATIVE_TOL}
        return {"schema": "defrag.diff", "version": 2, "headline": headline, "tolerance": tolerance,
                "old": {"kind": self.kinds[0], "n_regions": int(self.old_regions)},
                "new": {"kind": self.kinds[1], "n_regions": int(self.new_regions)},
                "kept": [dict(x) for x in self.kept], "changed": [dict(x) for x in self.changed],
                "added": [dict(x) for x in self.added], "removed": [dict(x) for x in self.removed],
                "rows": rows}

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    def _size(self, side):
        """The regions of one side as the diff counts them (a sum's: those of its parts)."""
        kind, regions, parts = self.kinds[side], (self.old_regions, self.new_regions)[side], self.parts[side]
        if kind == "sum":
            return f"sum of {parts} part{'' if parts == 1 else 's'} with {regions} regions in all"
        return f"{kind} of {regions} regions"

    def _label(self, part, region):
        return f"part {part} region {region}" if self.sum_form else f"region {region}"

    def _tolerance_text(self):
        """The tolerance as the text states it."""
        if self.tolerance_basis in ("given", "constant"):
            return f"{self.tolerance:.4g}: {TOLERANCE_BASES[self.tolerance_basis]}"
        return f"{self.tolerance:.4g}: {RELATIVE_TOL:.0%} {TOLERANCE_BASES[self.tolerance_basis]}"

    def headline(self):
        """The lines the text leads with: on the rows (where given) the share whose prediction
        changed, by how much and beyond which tolerance (regression), and the share whose
        region changed; the two explanations' sizes; the regions kept, changed, added and
        removed (in regression without rows, the tolerance a kept region's prediction moved
        beyond)."""
        out = []
        if self.n_rows is not None:
            line = f"on {self.n_rows} rows: prediction changed on {100 * self.prediction_changed:.1f}%"
            if self.tolerance is not None:
                line += (f" (by more than {self._tolerance_text()}), mean absolute change "
                         f"{self.mean_change:.4g}, largest {self.max_change:.4g}")
            out.append(f"{line}; region changed on {100 * self.region_changed:.1f}%")
        out.append(f"old: {self._size(0)}; new: {self._size(1)}")
        counts = (f"{len(self.kept)} kept, {len(self.changed)} changed, {len(self.added)} added, "
                  f"{len(self.removed)} removed")
        if self.tolerance is not None and self.n_rows is None:
            counts += f"; a prediction changed where it moved by more than {self._tolerance_text()}"
        out.append(counts)
        return out

    def _moved(self, x):
        """Whether a kept region's prediction changed (regression: beyond the tolerance)."""
        a, b = x["old_prediction"], x["new_prediction"]
        if self.tolerance is None or isinstance(a, str) or isinstance(b, str):
            return a != b
        return abs(a - b) > self.tolerance

    def lines(self):
        """The diff as text lines (``str``): the headline, then the details."""
        out = self.headline()
        for x in self.changed:
            moves = ", ".join(f"{printed_name(m['feature'])} {'>' if m['bound'] == 'lower' else '<='} "
                              f"{m['old']:.6g} -> "
                              f"{m['new']:.6g}" for m in x["threshold_moves"])
            out.append(f"~ {self._label(x['old_part'], x['old_region'])} -> {self._label(x['new_part'], x['new_region'])}: "
                       f"{moves or 'the same thresholds'}; prediction {_show(x['old_prediction'])} -> "
                       f"{_show(x['new_prediction'])}")
        for x in self.removed:
            out.append(f"- old {self._label(x['old_part'], x['old_region'])}: {x['conditions']} => "
                       f"{_show(x['old_prediction'])}")
        for x in self.added:
            out.append(f"+ new {self._label(x['new_part'], x['new_region'])}: {x['conditions']} => "
                       f"{_show(x['new_prediction'])}")
        for x in self.kept:
            if self._moved(x):
                out.append(f"= {self._label(x['old_part'], x['old_region'])} -> "
                           f"{self._label(x['new_part'], x['new_region'])} kept; prediction "
                           f"{_show(x['old_prediction'])} -> {_show(x['new_prediction'])}")
        if self.moves:
            out.append("rows that moved between regions:")
            for m in self.moves:
                out.append(f"  {m['rows']} rows ({100 * m['share']:.1f}%) from old "
                           f"{self._label(m['old_part'], m['old_region'])} to new "
                           f"{self._label(m['new_part'], m['new_region'])}")
        return out

    def __str__(self):
        return "\n".join(self.lines())

    def __repr__(self):
        return (f"<ExplanationDiff: {len(self.kept)} kept, {len(self.changed)} changed, {len(self.added)} added, "
                f"{len(self.removed)} removed>")

    def _repr_html_(self):
        """A table: one row per region kept, changed, added or removed, then the rows' moves."""
        esc = html.escape

        def row(cells):
            return "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in cells) + "</tr>"

        head = ["", "old", "new", "old conditions", "new conditions", "threshold moves", "old prediction",
                "new prediction"]
        body = []
        for x in self.changed:
            moves = "; ".join(f"{m['feature']} {m['bound']} {m['old']:.6g} -> {m['new']:.6g}"
                              for m in x["threshold_moves"])
            body.append(row(["changed", self._label(x["old_part"], x["old_region"]),
                             self._label(x["new_part"], x["new_region"]), x["old_conditions"], x["new_conditions"],
                             moves, x["old_prediction"], x["new_prediction"]]))
        for x in self.removed:
            body.append(row(["removed", self._label(x["old_part"], x["old_region"]), "", x["conditions"], "", "",
                             x["old_prediction"], ""]))
        for x in self.added:
            body.append(row(["added", "", self._label(x["new_part"], x["new_region"]), "", x["conditions"], "", "",
                             x["new_prediction"]]))
        for x in self.kept:
            body.append(row(["kept", self._label(x["old_part"], x["old_region"]),
                             self._label(x["new_part"], x["new_region"]), x["conditions"], x["conditions"], "",
                             x["old_prediction"], x["new_prediction"]]))
        parts = ['<div class="defrag-diff">', *(f"<p>{esc(line)}</p>" for line in self.headline()),
                 "<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>",
                 *body, "</tbody></table>"]
        if self.n_rows is not None:
            if self.moves:
                parts.append("<table><thead><tr><th>from old</th><th>to new</th><th>rows</th><th>share</th></tr>"
                             "</thead><tbody>")
                parts += [row([self._label(m["old_part"], m["old_region"]), self._label(m["new_part"], m["new_region"]),
                               m["rows"], f"{100 * m['share']:.1f}%"]) for m in self.moves]
                parts.append("</tbody></table>")
        parts.append("</div>")
        return "\n".join(parts)
