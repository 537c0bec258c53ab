"""The binary features of an ensemble: every split ``x_d > t`` (or category test) of every
tree, one bit per sample (``table``: SplitTable, with the rank and bit-packed encodings of
``_encoding``), and how the source model reads the inputs (``inputs``: InputEncoding,
category codes, zero as missing). Imports only ``utils``."""
from .inputs import ZERO_THRESHOLD, InputEncoding, category_label
from .table import (IN_SET, MAX_CATEGORY, NOT_IN_SET, NUMERIC, SplitTable, category_words, float32_threshold,
                    slices)

__all__ = ["IN_SET", "MAX_CATEGORY", "NOT_IN_SET", "NUMERIC", "ZERO_THRESHOLD", "InputEncoding", "SplitTable",
           "category_label", "category_words", "float32_threshold", "slices"]
