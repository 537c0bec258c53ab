"""scikit-learn's HistGradientBoostingClassifier / Regressor (predictor node arrays).

Numeric nodes go left when x <= num_threshold, on float64 inputs. A categorical node
goes left for the categories in its raw_left_cat_bitsets row and right for the other
known ones; codes are the positions in the estimator's encoder categories, and an
unknown category is missing. Missing values go where missing_go_to_left says.
"""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..splits.inputs import InputEncoding
from ..splits.table import IN_SET, NUMERIC
from ..utils.validation import as_2d_float
from .base import SourceModel, Tree, feature_names_in, walk_tree

NAMES = ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor")


def accepts(est):
    return (type(est).__module__ or "").startswith("sklearn.") and type(est).__name__ in NAMES


def _bitset_rows_to_sets(rows):
    """(sizes, codes) of bitset rows of uint32 words (scikit-learn's layout: code c is
    bit c % 32 of word c // 32)."""
    rows = np.ascontiguousarray(np.asarray(rows).astype("<u4"))
    bits = np.unpackbits(rows.view(np.uint8), axis=1, bitorder="little")
    return bits.sum(axis=1), np.nonzero(bits)[1]


class HistGradientBoostingSource(SourceModel):
    library = "scikit-learn"
    supports_missing = True
    is_boosting = True

    def __init__(self, estimator):
        check_is_fitted(estimator)
        super().__init__(estimator)
        self.column = self._input_columns()

    @property
    def n_features(self):
        return int(self.estimator.n_features_in_)

    @property
    def feature_names(self):
        return feature_names_in(self.estimator)

    @property
    def has_categorical(self):
        cat = getattr(self.estimator, "is_categorical_", None)
        return cat is not None and bool(np.any(cat))

    def _input_columns(self):
        """Input column of each feature index the predictors use: with categorical
        features, the estimator's ColumnTransformer puts them first."""
        est = self.estimator
        n = est.n_features_in_
        pre = getattr(est, "_preprocessor", None)
        if pre is None:
            return np.arange(n)
        column = np.full(n, -1, dtype=np.int64)
        for name, _, cols in pre.transformers_:
            if name in pre.output_indices_:
                column[pre.output_indices_[name]] = np.arange(n)[cols]
        if np.any(column < 0):
            raise ValueError("cannot map the HistGradientBoosting features back to its input columns")
        return column

    def _categories(self):
        """(InputEncoding, known-category bitsets, their row per feature), or Nones."""
        est = self.estimator
        if getattr(est, "is_categorical_", None) is None:
            return None, None, None
        if getattr(est, "_preprocessor", None) is None:
            raise TypeError("defrag reads HistGradientBoosting categories from the estimator's "
                            "internal OrdinalEncoder, which this scikit-learn version does not "
                            "have; refit the model with a newer scikit-learn")
        encoder = est._preprocessor.named_transformers_["encoder"]
        categories = [None] * est.n_features_in_
        first = self.column[est._preprocessor.output_indices_["encoder"]]
        for j, cats in zip(first, encoder.categories_):
            cats = np.asarray(cats)
            if cats.size and cats[-1] != cats[-1]:  # the encoder lists NaN last
                cats = cats[:-1]
            categories[j] = cats
        encoding = InputEncoding(est.n_features_in_, categories=categories, lookup_numbers=True,
                                 unknown="missing")
        known, known_row = est._bin_mapper.make_known_categories_bitsets()
        return encoding, known, known_row

    @property
    def encoding(self):
        encoding = self._categories()[0]
        return InputEncoding(self.n_features) if encoding is None else encoding

    def _read_trees(self):
        _, known, known_row = self._categories()
        trees = []
        for per_class in self.estimator._predictors:  # iterations x classes
            for output, predictor in enumerate(per_class):
                nodes = predictor.nodes
                internal = nodes["is_leaf"] == 0
                feature_idx = nodes["feature_idx"][internal]
                if feature_idx.size and (feature_idx.min() < 0 or feature_idx.max() >= self.column.size):
                    raise ValueError(f"a split of the model tests feature {int(feature_idx.max())}, outside "
                                     f"the {self.column.size} features its trees read: the model is malformed")
                cat = internal & (nodes["is_categorical"] == 1)
                sizes, codes = np.zeros(nodes.size, dtype=np.int64), None
                if cat.any():
                    left = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][cat]]
                    sizes[cat], codes = _bitset_rows_to_sets(known[known_row[nodes["feature_idx"][cat]]] & ~left)
                trees.append(Tree.build(
                    np.where(internal, nodes["left"].astype(np.int64), -1),
                    np.where(internal, nodes["right"].astype(np.int64), -1),
                    self.column[nodes["feature_idx"]], nodes["num_threshold"],
                    nodes["missing_go_to_left"] == 0, nodes["value"],
                    kind=np.where(cat, IN_SET, NUMERIC), set_sizes=sizes, set_codes=codes,
                    n_node_samples=nodes["count"], output=output, gain=nodes["gain"]))
        return trees

    def leaves(self, X):
        """The trees walked level by level in NumPy (the model has no apply)."""
        if self.has_categorical:
            raise TypeError("prototypes of a HistGradientBoosting model with categorical features "
                            "are not supported")

        X = as_2d_float(X, allow_nan=True)  # the trees send NaN their own way
        columns = [walk_tree(tree, X) for tree in self.trees()]
        return np.stack(columns, axis=1) if columns else np.zeros((X.shape[0], 0), dtype=np.intp)
