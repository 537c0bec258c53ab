"""A fitted scikit-learn ``Pipeline``: preprocessing steps, then a tree ensemble defrag reads.

The ensemble's splits test the preprocessing's outputs (``cat__aircon_no > 0.5``, a scaled
``area``); ``PipelineSource`` re-expresses every node of its trees over the pipeline's INPUT
columns, so that the rules, ``predict`` and the exports read the rows the pipeline takes:

* a column encoded by ``OneHotEncoder`` or ``OrdinalEncoder`` becomes a categorical
  column of the encoder's categories: a node goes right for the categories whose encoded
  row goes right (``x_aircon_no > 0.5`` is ``aircon in {no}``);
* a column kept (passthrough) or scaled by a monotone map (``StandardScaler``,
  ``MinMaxScaler``, ``MaxAbsScaler``, ``RobustScaler``, ``KBinsDiscretizer`` with ordinal
  codes) keeps its units: ``scaled > t`` is ``x > T`` with T the largest float whose
  transformed value does not go right, found by bisection over the floats through the
  pipeline's own transform (so it is exact, rounding included);
* ``SimpleImputer`` (of NaN) keeps its column; where a missing value then goes is read off
  the pipeline (the imputed value's side), and a missing indicator is ``x is missing``.

Each output column must depend on one input column: ``ColumnTransformer``, nested
``Pipeline`` s and the transformers above. Any other step (its outputs mix or reshape the
input columns, so no condition on an input column says what its split says) makes the
pipeline read over its transformed columns instead (``OutputsSource``): the final model as
it is, its columns named by the steps' ``get_feature_names_out``, the rows transformed by
the steps before they are read (``transformed_rows``); a TypeError naming the step where the
steps have no such names.

Where a missing value goes is read by transforming NaN: an encoder that refuses it leaves
it going left (the pipeline itself refuses such rows). A category the encoder was not
fitted with reads as missing, as for HistGradientBoosting's categories.
"""
import dataclasses

import numpy as np

from ..splits.inputs import InputEncoding
from ..splits.table import IN_SET, NOT_IN_SET, NUMERIC
from .base import SourceModel, Tree, feature_names_in

__all__ = ["accepts", "PipelineSource", "OutputsSource", "NotInvertible", "transforms", "transformed_rows"]

# what an output column is, as a function of the one input column it reads
IDENTITY = "identity"  # the present values as they are (passthrough, an imputer)
MONOTONE = "monotone"  # a non-decreasing map of the present values (a scaler)
CATEGORICAL = "categorical"  # a function of the category (an encoder, then anything per column)

# per-column transformers that map present values by a non-decreasing function
MONOTONE_SCALERS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")
PASSTHROUGH = (None, "passthrough")


def transforms(estimator):
    """The steps of a Pipeline before its last that transform the rows (not passthrough);
    empty for anything else."""
    if type(estimator).__name__ != "Pipeline" or not hasattr(estimator, "steps"):
        return []
    return [step for _, step in estimator.steps[:-1] if not _passes(step)]


def accepts(estimator):
    """A scikit-learn Pipeline with a step that transforms its rows before the last one."""
    return (type(estimator).__module__ or "").startswith("sklearn.") and bool(transforms(estimator))


def _passes(step):
    """passthrough, or the FunctionTransformer without a function that ColumnTransformer
    fits in its place"""
    return step is None or (isinstance(step, str) and step == "passthrough") or (
        _sklearn(step, "FunctionTransformer") and step.func is None)


def _sklearn(step, *names):
    return (type(step).__module__ or "").startswith("sklearn.") and type(step).__name__ in names


@dataclasses.dataclass(frozen=True)
class Column:
    """An output column: the input column it reads (None: none), what it is of it, and the
    categories of a categorical one (the encoder's, missing left out)."""

    source: object
    kind: str
    categories: tuple = None


class NotInvertible(TypeError):
    """A step whose outputs no condition on an input column states: the pipeline is then
    read over its transformed columns (``OutputsSource``) where they have names."""


def _refused(step, why):
    return NotInvertible(f"the Pipeline's {type(step).__name__} step: {why}")


def _described(step, columns):
    """The Columns a fitted step makes of its input Columns."""
    if _passes(step):
        return list(columns)
    if isinstance(step, str) and step == "drop":
        return []
    if _sklearn(step, "Pipeline"):
        for _, inner in step.steps:
            columns = _described(inner, columns)
        return columns
    if _sklearn(step, "ColumnTransformer"):
        return _column_transformer(step, columns)
    n_in = getattr(step, "n_features_in_", None)
    if n_in is not None and n_in != len(columns):
        raise _refused(step, f"it reads {n_in} columns where {len(columns)} reach it")
    if _sklearn(step, "OneHotEncoder", "OrdinalEncoder"):
        out = []
        counts = getattr(step, "_n_features_outs", None) if _sklearn(step, "OneHotEncoder") else \
            [1] * len(columns)
        if counts is None or len(counts) != len(columns):
            raise _refused(step, "its output columns per input column are unknown")
        for column, categories, count in zip(columns, step.categories_, counts):
            if column.kind != IDENTITY:
                raise _refused(step, "it encodes a column that an earlier step changed")
            present = tuple(c for c in np.asarray(categories, dtype=object).tolist() if not _is_missing(c))
            out += [Column(column.source, CATEGORICAL, present)] * int(count)
        return out
    if _sklearn(step, *MONOTONE_SCALERS) or (_sklearn(step, "KBinsDiscretizer") and step.encode == "ordinal"):
        if _sklearn(step, "MinMaxScaler") and step.feature_range[0] > step.feature_range[1]:
            raise _refused(step, "its feature_range is decreasing")
        return [c if c.kind == CATEGORICAL else Column(c.source, MONOTONE) for c in columns]
    if _sklearn(step, "SimpleImputer"):
        if not _is_missing(step.missing_values):
            raise _refused(step, f"it imputes the value {step.missing_values!r}, not NaN")
        kept = [c for c, stat in zip(columns, step.statistics_)
                if getattr(step, "keep_empty_features", False) or not _is_missing(stat)]
        indicator = getattr(step, "indicator_", None)
        added = [] if indicator is None else [
            columns[j] if columns[j].kind == CATEGORICAL else Column(columns[j].source, MONOTONE)
            for j in indicator.features_]
        return kept + added
    if hasattr(step, "get_feature_names_out"):
        raise _refused(step, "its outputs are no per-column map of the inputs defrag inverts")
    raise _refused(step, "it has no get_feature_names_out")


def _column_transformer(ct, columns):
    inputs = getattr(ct, "_transformer_to_input_indices", None)
    if inputs is None:
        raise _refused(ct, "its columns per transformer are unknown")
    width = max([s.stop for s in ct.output_indices_.values()] + [0])
    out = [None] * width
    for name, step, _ in ct.transformers_:
        made = _described(step, [columns[j] for j in inputs[name]])
        where = ct.output_indices_[name]
        if len(made) != where.stop - where.start:
            raise _refused(step, f"it makes {where.stop - where.start} columns where "
                                 f"{len(made)} were expected")
        out[where] = made
    return out


def _is_missing(value):
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pandas' NA reads as missing too
    except (TypeError, ValueError):
        return False


def _float_keys(x):
    """Each float64 as an int64 that orders as the floats do (-0.0 before 0.0)."""
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, np.int64(-(2**63)) - bits - 1, bits)


def _key_floats(k):
    k = np.asarray(k, dtype=np.int64)
    return np.where(k < 0, np.int64(-(2**63)) - k - 1, k).view(np.float64)


def _goes_right(kind, threshold, codes, missing_right, v):
    """Where a node sends values v (float64 as its model reads them)."""
    if kind == NUMERIC:
        right = v > threshold
    else:
        right = np.isin(v, codes) ^ (kind == NOT_IN_SET)
    return np.where(np.isnan(v), bool(missing_right), right)


class PipelineSource(SourceModel):
    """A fitted Pipeline of per-column transformers and a tree ensemble (``final``, its
    SourceModel), read over the pipeline's input columns (module docstring)."""

    def __init__(self, estimator, final):
        super().__init__(estimator)
        self.final = final
        self.library = final.library
        self.n_features_field = "the Pipeline's n_features_in_"
        self.is_boosting = final.is_boosting
        self.checks_trees = final.checks_trees
        n_in = getattr(estimator, "n_features_in_", None)
        if n_in is None:
            raise TypeError("the Pipeline has no n_features_in_: fit it before passing it")
        self.preprocessing = estimator[:-1]
        made = _described(self.preprocessing, [Column(j, IDENTITY) for j in range(int(n_in))])
        if len(made) != final.n_features:
            raise ValueError(f"the Pipeline's steps make {len(made)} columns but its "
                             f"{final.describe()} reads {final.n_features}")
        names = feature_names_in(estimator)
        # a DataFrame's columns that the steps drop (an id, a date) are not read: its other
        # columns are matched by name, and the pipeline takes rows without those
        self.inputs = sorted({c.source for c in made}) if names is not None else list(range(int(n_in)))
        self._names = None if names is None else [names[c] for c in self.inputs]
        self._n_in = len(self.inputs)
        position = {c: k for k, c in enumerate(self.inputs)}
        made = [dataclasses.replace(c, source=position[c.source]) for c in made]
        self.columns = made
        self.kinds = {}  # input column: (kind, categories)
        for column in made:
            kind = "categorical" if column.kind == CATEGORICAL else "numeric"
            seen = self.kinds.setdefault(column.source, (kind, column.categories))
            if seen[0] != kind:
                name = self._name(column.source)
                raise NotInvertible(f"the Pipeline reads input column {name} both as categories and as "
                                    "numbers")
        final_encoding = final.encoding
        for j, column in enumerate(made):
            if column.kind != CATEGORICAL and (final_encoding.categorical[j] or final_encoding.zero_missing[j]):
                raise NotInvertible(f"the Pipeline's {final.describe()} reads its column {j} (from input "
                                    f"column {self._name(column.source)}) by category or with zero as missing")
        self._accepts_missing = False

    def _name(self, j):
        names = self.feature_names
        return repr(names[j]) if names is not None else f"x{j}"

    # -- the input columns
    @property
    def n_features(self):
        return self._n_in

    @property
    def feature_names(self):
        return self._names

    @property
    def supports_missing(self):
        self.trees()  # (reading the trees finds whether the pipeline takes a missing value)
        return bool(self.final.supports_missing or self._accepts_missing)

    @property
    def encoding(self):
        categorical = np.zeros(self._n_in, dtype=bool)
        categories = [None] * self._n_in
        for j in range(self._n_in):
            kind, cats = self.kinds.get(j, (None, None))
            if kind == "categorical":
                categorical[j] = True
                categories[j] = np.array(cats, dtype=object) if _texts(cats) else np.array(cats)
            elif kind is None:  # a column of an array the pipeline drops: read as nothing
                categories[j] = np.array([], dtype=object)
        return InputEncoding(self._n_in, categorical, categories, lookup_numbers=True, unknown="missing")

    def describe(self):
        return f"Pipeline ending in {self.final.describe()}"

    def leaves(self, X):
        """The final model's leaves of the transformed rows (X: the pipeline's input rows)."""
        return self.final.leaves(self._transformed(X))

    @property
    def has_leaves(self):
        return self.final.has_leaves

    # -- the pipeline's outputs of constructed input rows
    def _template(self):
        """One input value per column that the pipeline takes: a category of an encoded
        column, 0 for the others."""
        values = []
        for j in range(self._n_in):
            kind, cats = self.kinds.get(j, (None, None))
            values.append(cats[0] if kind == "categorical" and cats else 0.0)
        return values

    def _rows(self, n, column_values):
        """n input rows: the template, with the columns of column_values ({column: n values})
        set; a DataFrame where the pipeline was fitted on one."""
        template = self._template()
        names = self.feature_names
        data = {}
        for j in range(self._n_in):
            if j in column_values:
                values = column_values[j]
            else:
                values = [template[j]] * n
            arr = np.asarray(values, dtype=object) if _texts(values) else np.asarray(values)
            if arr.dtype.kind not in "fiubO":
                arr = arr.astype(object)
            data[j] = arr
        if names is not None:
            import pandas as pd  # a pipeline fitted on a DataFrame: pandas is there

            return pd.DataFrame({names[j]: data[j] for j in range(self._n_in)})
        kinds = {a.dtype.kind for a in data.values()}
        dtype = object if "O" in kinds else np.float64
        return np.column_stack([data[j].astype(dtype) for j in range(self._n_in)]) if self._n_in else \
            np.zeros((n, 0))

    def _transformed(self, X):
        """The preprocessing's output of input rows X, as a dense float64 array."""
        Z = self.preprocessing.transform(X)
        if hasattr(Z, "toarray"):
            Z = Z.toarray()
        return np.asarray(Z, dtype=np.float64)

    def _coded(self, X):
        """X's outputs as the final model reads them (its encoding)."""
        return self.final.encoding.transform(self._transformed(X), "the Pipeline's output", allow_inf=True)

    def _missing_row(self, j):
        """The final model's reading of the outputs of a row with input column j missing, or
        None where the pipeline refuses it."""
        try:
            outputs = self._transformed(self._rows(1, {j: [np.nan]}))
            coded = self.final.encoding.transform(outputs, "the Pipeline's output", allow_inf=True)
        except (TypeError, ValueError):
            return None
        if self.final.supports_missing or not np.isnan(outputs).any():  # (an imputer, an encoder)
            self._accepts_missing = True
        return coded[0]

    # -- the trees, node by node over the input columns
    def _read_trees(self):
        """The final model's trees, each node's test restated over the input columns: the
        distinct tests once each (a forest repeats them), then every node by lookup."""
        trees = self.final.trees()
        internal = [np.flatnonzero(~tree.is_leaf) for tree in trees]

        def joined(name):
            return np.concatenate([getattr(tree, name)[i] for tree, i in zip(trees, internal)]) if trees else \
                np.zeros(0)

        output = joined("feature").astype(np.int64)
        threshold, kind, missing_right = joined("threshold"), joined("kind").astype(np.uint8), \
            joined("missing_right").astype(np.uint8)
        sets = [tuple(tree.cat_codes[tree.cat_ptr[i]:tree.cat_ptr[i + 1]].tolist())
                for tree, at in zip(trees, internal) for i in at[tree.kind[at] != NUMERIC]]
        set_id = np.zeros(output.size, dtype=np.int64)
        if sets:  # (a final model with category sets: each set numbered)
            distinct = {key: k for k, key in enumerate(dict.fromkeys(sets))}
            set_id[kind != NUMERIC] = [distinct[key] + 1 for key in sets]
            set_of = {k + 1: np.array(key, dtype=np.int64) for key, k in distinct.items()}
        tests = np.column_stack([output, threshold.view(np.int64), kind, missing_right, set_id])
        unique, inverse = np.unique(tests, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        u_output, u_threshold, u_kind = unique[:, 0], unique[:, 1].copy().view(np.float64), unique[:, 2]
        u_missing, u_set = unique[:, 3], unique[:, 4]
        u_source = np.array([self.columns[j].source for j in u_output], dtype=np.int64)
        missing_rows = {int(c): self._missing_row(int(c)) for c in np.unique(u_source)}

        def test(u):
            codes = set_of[int(u_set[u])] if u_set[u] else None
            return int(u_kind[u]), float(u_threshold[u]), codes, int(u_missing[u])

        def missing_goes(u, c):
            miss = missing_rows[c]
            return miss is not None and bool(_goes_right(*test(u), miss[u_output[u]:u_output[u] + 1])[0])

        n_unique = unique.shape[0]
        new_threshold = np.zeros(n_unique)
        new_kind = np.zeros(n_unique, dtype=np.uint8)
        new_missing = np.zeros(n_unique, dtype=np.uint8)
        new_sets = [np.zeros(0, dtype=np.int64)] * n_unique
        numeric = []
        for c in np.unique(u_source):
            c = int(c)
            at = np.flatnonzero(u_source == c)
            kind_c, cats = self.kinds[c]
            for u in at:
                new_missing[u] = missing_goes(u, c)
            if kind_c == "numeric":
                numeric.append(at)
                continue
            coded = self._coded(self._rows(len(cats), {c: list(cats)}))  # one row per category
            for u in at:
                right = np.flatnonzero(_goes_right(*test(u), coded[:, u_output[u]]))
                if 2 * right.size <= len(cats):
                    new_kind[u], new_sets[u] = IN_SET, right
                else:
                    new_kind[u], new_sets[u] = NOT_IN_SET, np.setdiff1d(np.arange(len(cats)), right)
        if numeric:
            at = np.concatenate(numeric)
            new_threshold[at] = self._bisected(u_source[at], u_output[at], u_threshold[at])
        sizes = np.array([s.size for s in new_sets], dtype=np.int64)
        out, start = [], 0
        for tree, nodes in zip(trees, internal):
            u = inverse[start:start + nodes.size]
            start += nodes.size
            out.append(_rewritten(tree, nodes, u_source[u], new_threshold[u], new_kind[u], new_missing[u],
                                  sizes[u], [new_sets[k] for k in u[new_kind[u] != NUMERIC]]))
        return out

    def _bisected(self, column, output, threshold):
        """For numeric tests ``output > threshold`` of outputs of the input columns, the input
        threshold T: the largest float whose output the test sends left (``x > T`` goes
        right), -max where every float goes right and +inf where none does."""
        n = column.size
        biggest = np.finfo(np.float64).max

        def values(x, query):
            rows = self._rows(query.size, {c: _where_column(column[query], c, x) for c in np.unique(column)})
            with np.errstate(over="ignore", invalid="ignore"):  # (scaling floats near the largest)
                return self._coded(rows)[np.arange(query.size), output[query]]

        def right(x, query):
            v = values(x, query)
            return ~np.isnan(v) & (v > threshold[query])

        every = np.arange(n)
        # a bracket of the answer from the line through the outputs of 0 and 1 (exact up to
        # rounding for an affine scaler), checked; the whole range of floats elsewhere
        at = values(np.r_[np.zeros(n), np.ones(n)], np.r_[every, every])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            guess = (threshold - at[:n]) / (at[n:] - at[:n])
            spread = 1e-9 * (np.abs(guess) + 1.0)
            below, above = guess - spread, guess + spread
        usable = np.isfinite(below) & np.isfinite(above) & (np.abs(above) < biggest) & (np.abs(below) < biggest)
        below, above = np.where(usable, below, 0.0), np.where(usable, above, 0.0)
        goes = right(np.r_[below, above, np.full(n, -biggest), np.full(n, biggest)], np.r_[every, every, every, every])
        right_at_lo, left_at_hi = goes[2 * n:3 * n], ~goes[3 * n:]
        bracketed = usable & ~goes[:n] & goes[n:2 * n]
        # invariant: lo goes left (or is -max), hi goes right (or is +max) (keys of floats)
        lo = np.where(bracketed, _float_keys(below), _float_keys(-biggest))
        hi = np.where(bracketed, _float_keys(above), _float_keys(biggest))
        for _ in range(66):
            open_ = hi > lo + 1
            if not open_.any():
                break
            mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # (hi - lo overflows int64)
            query = np.flatnonzero(open_)
            goes = right(_key_floats(mid[query]), query)
            hi[query] = np.where(goes, mid[query], hi[query])
            lo[query] = np.where(goes, lo[query], mid[query])
        T = _key_floats(lo)
        T = np.where(right_at_lo, -biggest, T)
        return np.where(left_at_hi, np.inf, T)

def _rewritten(tree, nodes, feature, threshold, kind, missing_right, sizes, sets):
    """tree with its internal nodes (in order) testing the input columns as given; sets: the
    category sets of its set nodes, in node order."""
    n = tree.n_nodes
    arrays = dict(feature=np.full(n, -1, dtype=np.int64), threshold=np.zeros(n), kind=np.zeros(n, dtype=np.uint8),
                  missing_right=np.zeros(n, dtype=np.uint8))
    for name, values in (("feature", feature), ("threshold", threshold), ("kind", kind),
                         ("missing_right", missing_right)):
        arrays[name][nodes] = values
    node_sizes = np.zeros(n, dtype=np.int64)
    node_sizes[nodes] = sizes
    cat_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(node_sizes, out=cat_ptr[1:])
    cat_codes = np.concatenate(sets) if sets else np.zeros(0, dtype=np.int64)
    return dataclasses.replace(tree, cat_ptr=cat_ptr, cat_codes=cat_codes.astype(np.int64), **arrays)


def _where_column(column, c, x):
    """x on the rows whose column is c, 0 elsewhere (a value the column takes)."""
    return np.where(column == c, x, 0.0)


def _texts(values):
    """Whether values (their first 50) hold anything but numbers: kept as objects."""
    return any(isinstance(v, (str, bytes)) for v in list(values)[:50]) or \
        any(not isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)) for v in list(values)[:50])


def inverted(estimator):
    """Whether a Pipeline's steps are all per-column maps that PipelineSource restates
    (``_described``; the final model's own reading is checked when it is read)."""
    try:
        _described(estimator[:-1], [Column(j, IDENTITY) for j in range(int(estimator.n_features_in_))])
    except NotInvertible:
        return False
    return True


def output_names(estimator):
    """get_feature_names_out of a Pipeline's steps before the last (a list of str), or None
    where a step has none."""
    try:
        return [str(n) for n in estimator[:-1].get_feature_names_out()]
    except (AttributeError, TypeError, ValueError):
        return None


def transformed_rows(estimator, X):
    """X as the last step of a Pipeline read over its transformed columns reads it: the
    steps' output, a DataFrame of their output names where pandas is there; X itself for
    any other model."""
    if not accepts(estimator) or inverted(estimator):
        return X
    Z = estimator[:-1].transform(X)
    if hasattr(Z, "toarray"):
        Z = Z.toarray()
    if hasattr(Z, "columns"):  # (set_output(transform="pandas"): named already)
        return Z
    try:  # optional: the names the rules print and predict matches
        import pandas as pd
    except ImportError:
        return np.asarray(Z)
    return pd.DataFrame(np.asarray(Z), columns=output_names(estimator))


class OutputsSource(SourceModel):
    """A fitted Pipeline whose steps defrag cannot restate over its input columns (``why``,
    a NotInvertible), read over its transformed columns: the final model's trees and
    reading, named by the steps' get_feature_names_out; the rows given to it are the
    transformed ones (``transformed_rows``). TypeError, naming the step, where the steps
    have no output names."""

    def __init__(self, estimator, final, why):
        names = output_names(estimator)
        if names is None:
            raise TypeError(
                f"{why}: defrag cannot state it in terms of the pipeline's input columns, and the steps have no "
                "get_feature_names_out to name the columns they make. The steps defrag restates are "
                "ColumnTransformer, Pipeline, OneHotEncoder, OrdinalEncoder, SimpleImputer, StandardScaler, "
                "MinMaxScaler, MaxAbsScaler, RobustScaler, ordinal KBinsDiscretizer and passthrough") from None
        if len(names) != final.n_features:
            raise ValueError(f"the Pipeline's steps name {len(names)} columns but its {final.describe()} reads "
                             f"{final.n_features}")
        super().__init__(final.estimator)
        self.pipeline = estimator
        self.final = final
        self.names = names
        self.why = str(why)
        self.library = final.library
        self.n_features_field = final.n_features_field
        self.supports_missing = final.supports_missing
        self.is_boosting = final.is_boosting
        self.checks_trees = final.checks_trees
        self.BOOSTER_OBJECTIVES = final.BOOSTER_OBJECTIVES

    @property
    def n_features(self):
        return self.final.n_features

    @property
    def feature_names(self):
        return self.names

    @property
    def encoding(self):
        return self.final.encoding

    def _read_trees(self):
        return self.final.trees()

    def leaves(self, X):
        return self.final.leaves(self._plain(X))

    @property
    def has_leaves(self):
        return self.final.has_leaves

    @property
    def booster_objective(self):
        return self.final.booster_objective

    def describe(self):
        return f"Pipeline ending in {self.final.describe()}, read over its transformed columns"

    def transformed(self, X):
        """The pipeline's input rows X as this source reads them (``transformed_rows``)."""
        return transformed_rows(self.pipeline, X)

    def _plain(self, X):
        """X as the final model was fitted: by name where it was fitted on a DataFrame, else
        an array (without scikit-learn's warning of names it was not fitted with)."""
        if hasattr(X, "columns") and self.final.feature_names is None:
            return X.to_numpy()
        return X

    def predict(self, X):
        return self.final.predict(self._plain(X))

    def predict_proba(self, X):
        return self.final.predict_proba(self._plain(X))
