"""Checks of model files before a library's own loader sees them.

LightGBM's and XGBoost's loaders trust the files they read: a LightGBM model text cut
short makes LightGBM read past its buffer and abort the process, a deeply nested XGBoost
JSON or UBJSON document overflows the stack, a string length in UBJSON is copied without
a bound, and node indices (children, parents, category segments) are followed unchecked
at load or prediction time. The functions here read the same grammar the libraries read,
with every count, index and depth checked, and raise ``ModelFileError`` (a ``ValueError``)
naming the first problem. The aim: what passes them loads and predicts without the library
reading outside what it was given or following an index outside its tree
(tests/test_cli_model_checks.py holds the crash cases found and a fuzz run through the
loaders; the checks follow LightGBM 4.x's and XGBoost 2.x-3.x's readers).

Nothing here imports XGBoost or LightGBM: the libraries see a file only once it passed.
"""
import json
import re
import struct

import numpy as np

__all__ = ["ModelFileError", "check_lightgbm_text", "check_xgboost_json", "read_ubjson",
           "check_xgboost_model", "MAX_TREE_DEPTH", "MAX_NESTING"]

#: Deepest LightGBM tree accepted: LightGBM's dump_model recurses once per level (its C++
#: stack runs out near 10,000 levels) and its JSON is read back by Python's json module
#: (about 1,000 levels of nesting). Real trees are a few dozen levels deep.
MAX_TREE_DEPTH = 512
#: Deepest nesting of a JSON / UBJSON model document (XGBoost's models nest about 8
#: levels deep; its parsers recurse once per level and crash near 100,000).
MAX_NESTING = 64
#: XGBoost refuses category codes at or above 2**24 (they do not round-trip through float32).
_XGB_MAX_CATEGORY = 2**24
_INT32_MAX = 2**31 - 1


class ModelFileError(ValueError):
    """A model file that is malformed, cut short, or not the format it claims to be."""


# ---------------------------------------------------------------------------- numbers
# Space-separated numbers as LightGBM writes them, matched a whole line at a time (its own
# parsers read "1_0", " 1" or "0x1" differently from NumPy, so nothing else passes); at
# most 18 digits an integer, so that NumPy parses each without overflow.
_INT = rb"[+-]?\d{1,18}"
_FLOAT = rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan|INF|NAN|Inf|NaN)"
_INT_LINE = re.compile(_INT + rb"(?: " + _INT + rb")*")
_FLOAT_LINE = re.compile(rb"(?:" + _FLOAT + rb")(?: (?:" + _FLOAT + rb"))*")
_FLOAT_TOKEN = re.compile(_FLOAT)


def _numbers(value, what, count, line, dtype, kind):
    n = value.count(b" ") + 1 if value else 0
    if count is not None and n != count:
        raise ModelFileError(f"{what} has {n} values, {count} expected")
    if n == 0:
        return np.zeros(0, dtype=dtype)
    if not line.fullmatch(value):
        raise ModelFileError(f"{what} holds something that is not {kind}")
    return np.fromstring(value.decode("ascii"), dtype=dtype, sep=" ")  # text mode: not deprecated


def _ints(value, what, count=None, low=-_INT32_MAX - 1, high=_INT32_MAX):
    """The space-separated integers of value (bytes), all within [low, high]."""
    values = _numbers(value, what, count, _INT_LINE, np.int64, "a whole number")
    if values.size and (values.min() < low or values.max() > high):
        raise ModelFileError(f"{what} holds a value outside [{low}, {high}]")
    return values


def _floats(value, what, count=None, finite=False):
    values = _numbers(value, what, count, _FLOAT_LINE, np.float64, "a number")
    if finite and not np.all(np.isfinite(values)):
        raise ModelFileError(f"{what} holds a value that is not finite")
    return values


def _int(value, what, low=0, high=_INT32_MAX):
    return int(_ints(value, what, 1, low, high)[0])


# --------------------------------------------------------------------------- LightGBM
_LGB_OBJECTIVES = {"regression", "regression_l1", "quantile", "huber", "fair", "poisson", "binary",
                   "lambdarank", "rank_xendcg", "multiclass", "multiclassova", "cross_entropy",
                   "cross_entropy_lambda", "mape", "gamma", "tweedie", "custom"}
# characters LightGBM refuses in feature names (they would break its JSON dump)
_LGB_NAME_FORBIDDEN = set('",:[]{}')
_LGB_PARAMETER = re.compile(rb"\[[^\]:]+: .*\]")
_LGB_TREE_LINES = 22  # LightGBM's tree parser reads at most this many key=value lines


def check_lightgbm_text(data):
    """Check a LightGBM model text file (bytes) the way LightGBM's loader reads it, and
    return it as text. Raises ModelFileError on anything the loader would read outside
    the file, refuse with an abort, or take silently wrong (a file cut short, a tree
    whose children are not a tree, an index outside the model)."""
    if b"\0" in data:
        raise ModelFileError("NUL bytes in the text")
    if b"\r" in data:
        raise ModelFileError("CR (Windows) line ends, which shift the tree offsets LightGBM "
                             "reads; save the model again with LightGBM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"not UTF-8 text (byte {exc.start})") from None
    if not data.startswith(b"tree\n"):
        raise ModelFileError("the first line is not 'tree'")
    if not data.endswith(b"\n"):
        raise ModelFileError("the last line has no end: the file is cut short")

    # the header: key=value lines up to the first "Tree=" line (LightGBM's own rule)
    header = {}
    pos = 0
    first_tree = None
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end]
        if line.startswith(b"Tree="):
            first_tree = pos
            break
        if line:
            parts = line.split(b"=")
            key = parts[0]
            if len(parts) > 2 and key not in (b"feature_names", b"monotone_constraints"):
                raise ModelFileError(f"header line {line[:60]!r} has more than one '='")
            header[key] = line[len(key) + 1:] if len(parts) > 1 else b""
        pos = end + 1
    if first_tree is None:
        raise ModelFileError("no 'Tree=' line: the file is cut short")
    trees_end = data.find(b"\nend of trees\n", first_tree - 1)
    if trees_end < 0:
        raise ModelFileError("no 'end of trees' line: the file is cut short")
    trees_end += 1  # the start of the "end of trees" line

    def need(key):
        if key not in header:
            raise ModelFileError(f"the header has no {key.decode()}= line")
        return header[key]

    num_class = _int(need(b"num_class"), "num_class", 1)
    per_iteration = _int(header.get(b"num_tree_per_iteration", need(b"num_class")),
                         "num_tree_per_iteration", 1)
    _int(need(b"label_index"), "label_index", 0)
    n_features = _int(need(b"max_feature_idx"), "max_feature_idx", 0) + 1
    names = need(b"feature_names").split(b" ")
    if len(names) != n_features:
        raise ModelFileError(f"feature_names lists {len(names)} names for max_feature_idx + 1 = "
                             f"{n_features} features")
    for name in names:
        if not name or _LGB_NAME_FORBIDDEN & set(name.decode("utf-8", "replace")):
            raise ModelFileError(f"feature name {name.decode('utf-8', 'replace')!r} is empty or holds "
                                 "a character LightGBM refuses in names")
    infos = need(b"feature_infos").split(b" ")
    if len(infos) != n_features:
        raise ModelFileError(f"feature_infos lists {len(infos)} entries for {n_features} features")
    for info in infos:
        _check_feature_info(info)
    if b"monotone_constraints" in header:
        _ints(header[b"monotone_constraints"], "monotone_constraints", n_features, -1, 1)
    if b"objective" in header:
        _check_lightgbm_objective(header[b"objective"], num_class, per_iteration)
    elif per_iteration != num_class:
        raise ModelFileError(f"num_tree_per_iteration = {per_iteration} but num_class = {num_class}")

    # the trees: at the offsets tree_sizes gives, else one after another
    trees = []
    if b"tree_sizes" in header:
        sizes = _ints(header[b"tree_sizes"], "tree_sizes", None, 1, len(data))
        bounds = first_tree + np.concatenate([[0], np.cumsum(sizes)])
        if bounds[-1] != trees_end:
            raise ModelFileError(f"tree_sizes add up to {int(bounds[-1] - first_tree)} bytes but the "
                                 f"trees take {trees_end - first_tree}: the file is cut or edited")
        for i, (start, stop) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
            fields, used = _lightgbm_tree_block(data, start, stop, i)
            if data[used:stop].strip(b"\n"):
                raise ModelFileError(f"tree {i} has text after its fields")
            trees.append(fields)
    else:
        pos = first_tree
        while pos < trees_end:
            if data[pos:pos + 1] == b"\n":
                pos += 1
                continue
            fields, pos = _lightgbm_tree_block(data, pos, trees_end, len(trees))
            trees.append(fields)
    if not trees:
        raise ModelFileError("no trees")
    if len(trees) % per_iteration:
        raise ModelFileError(f"{len(trees)} trees, not a multiple of num_tree_per_iteration "
                             f"= {per_iteration}: the file is cut or edited")
    for i, fields in enumerate(trees):
        _check_lightgbm_tree(fields, i, n_features)
    _check_lightgbm_tail(data[trees_end:])
    return text


def _check_feature_info(info):
    if info == b"none":
        return
    if info.startswith(b"["):
        bounds = info[1:-1].split(b":") if info.endswith(b"]") else []
        if len(bounds) != 2 or not all(_FLOAT_TOKEN.fullmatch(b) for b in bounds):
            raise ModelFileError(f"feature_infos entry {info[:40]!r} is not [min:max]")
        return
    _ints(info.replace(b":", b" "), f"feature_infos entry {info[:40]!r}")


def _check_lightgbm_objective(value, num_class, per_iteration):
    tokens = value.split(b" ")
    name = tokens[0].decode("utf-8", "replace")
    if name not in _LGB_OBJECTIVES:
        raise ModelFileError(f"unknown objective {name!r}")
    params = {}
    for token in tokens[1:]:
        key, sep, number = token.partition(b":")
        if not sep or not _FLOAT_TOKEN.fullmatch(number):
            raise ModelFileError(f"objective parameter {token[:40]!r} is not name:number")
        params[key] = float(number)
    if name in ("multiclass", "multiclassova"):
        if params.get(b"num_class") != num_class or per_iteration != num_class:
            raise ModelFileError(f"objective {value[:60].decode('utf-8', 'replace')!r} does not match "
                                 f"num_class = {num_class}, num_tree_per_iteration = {per_iteration}")
    elif per_iteration != 1 or num_class != 1:
        raise ModelFileError(f"objective {name!r} with num_class = {num_class}, "
                             f"num_tree_per_iteration = {per_iteration}")
    if b"sigmoid" in params and not params[b"sigmoid"] > 0:
        raise ModelFileError("objective sigmoid must be positive")


def _lightgbm_tree_block(data, start, stop, i):
    """The key=value fields of the tree whose "Tree=i" line starts at start, read as
    LightGBM's tree parser reads them (up to a blank line, at most 22 lines), never
    past stop; and where the fields end."""
    end = data.find(b"\n", start, stop)
    if end < 0 or data[start:end] != b"Tree=%d" % i:
        raise ModelFileError(f"tree {i} does not start with a 'Tree={i}' line")
    pos = end + 1
    fields = {}
    for _ in range(_LGB_TREE_LINES):
        if pos >= stop:
            raise ModelFileError(f"tree {i} is cut short (no blank line after its fields)")
        if data[pos:pos + 1] == b"\n":
            break
        end = data.find(b"\n", pos, stop)
        if end < 0:
            raise ModelFileError(f"tree {i} is cut short")
        key, sep, value = data[pos:end].partition(b"=")
        if not sep:
            raise ModelFileError(f"tree {i}: line {data[pos:end][:40]!r} is not key=value")
        fields[key] = value
        pos = end + 1
    return fields, pos


_LGB_NODE_FLOATS = (b"split_gain", b"internal_value", b"internal_weight")
_LGB_LEAF_FLOATS = (b"leaf_weight",)


def _check_lightgbm_tree(f, i, n_features):
    where = f"tree {i}"

    def need(key):
        if key not in f:
            raise ModelFileError(f"{where} has no {key.decode()}")
        return f[key]

    n_leaves = _int(need(b"num_leaves"), f"{where} num_leaves", 1)
    n_cat = _int(need(b"num_cat"), f"{where} num_cat", 0)
    m = n_leaves - 1
    _floats(need(b"leaf_value"), f"{where} leaf_value", n_leaves, finite=True)
    if b"shrinkage" in f:
        _floats(f[b"shrinkage"], f"{where} shrinkage", 1, finite=True)
    linear = _int(f.get(b"is_linear", b"0"), f"{where} is_linear", 0, 1)
    if b"leaf_count" in f:
        _ints(f[b"leaf_count"], f"{where} leaf_count", n_leaves, 0)
    for key in _LGB_LEAF_FLOATS:
        if key in f:
            _floats(f[key], f"{where} {key.decode()}", n_leaves)
    if m == 0 and not linear:
        return
    left = _ints(need(b"left_child"), f"{where} left_child", m, -n_leaves, max(m - 1, 0))
    right = _ints(need(b"right_child"), f"{where} right_child", m, -n_leaves, max(m - 1, 0))
    _ints(need(b"split_feature"), f"{where} split_feature", m, 0, n_features - 1)
    threshold = _floats(need(b"threshold"), f"{where} threshold", m, finite=True)
    if b"internal_count" in f:
        _ints(f[b"internal_count"], f"{where} internal_count", m, 0)
    for key in _LGB_NODE_FLOATS:
        if key in f:
            _floats(f[key], f"{where} {key.decode()}", m)
    decision = _ints(f.get(b"decision_type", b" ".join([b"0"] * m)), f"{where} decision_type", m, 0, 15)
    if np.any((decision >> 2) & 3 == 3):
        raise ModelFileError(f"{where} decision_type has an unknown missing-value type")
    _check_lightgbm_shape(left, right, n_leaves, where)
    categorical = (decision & 1).astype(bool)
    if n_cat:
        bounds = _ints(need(b"cat_boundaries"), f"{where} cat_boundaries", n_cat + 1, 0)
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0):
            raise ModelFileError(f"{where} cat_boundaries must rise from 0")
        _ints(need(b"cat_threshold"), f"{where} cat_threshold", int(bounds[-1]), 0, 2**32 - 1)
    if np.any(categorical):
        index = threshold[categorical]
        if np.any(index != np.trunc(index)) or np.any(index < 0) or np.any(index >= n_cat):
            raise ModelFileError(f"{where}: a categorical split points outside its {n_cat} category sets")
    if linear:
        _floats(f.get(b"leaf_const", b" ".join([b"0"] * n_leaves)), f"{where} leaf_const", n_leaves)
        if b"num_features" in f:
            counts = _ints(f[b"num_features"], f"{where} num_features", n_leaves, 0, n_features)
            total = int(counts.sum())
            if b"leaf_features" in f:
                _ints(f[b"leaf_features"], f"{where} leaf_features", total, 0, n_features - 1)
            if b"leaf_coeff" in f:
                _floats(f[b"leaf_coeff"], f"{where} leaf_coeff", total)


def _check_lightgbm_shape(left, right, n_leaves, where):
    """The children (node index >= 0, leaf ~index < 0) make one tree from node 0: every
    other node and every leaf reached exactly once, at most MAX_TREE_DEPTH levels."""
    m = n_leaves - 1
    children = np.concatenate([left, right])
    nodes = children[children >= 0]
    leaves = ~children[children < 0]
    if (np.any(nodes == 0) or np.any(np.bincount(nodes, minlength=m)[1:] != 1)
            or np.any(np.bincount(leaves, minlength=n_leaves) != 1)):
        raise ModelFileError(f"{where}: left_child / right_child do not make a tree (a node or "
                             "leaf is reached twice, or never)")
    frontier = np.array([0])
    seen = 1
    for _ in range(MAX_TREE_DEPTH):
        kids = np.concatenate([left[frontier], right[frontier]])
        frontier = kids[kids >= 0]
        seen += frontier.size
        if frontier.size == 0:
            break
    else:
        raise ModelFileError(f"{where} is deeper than {MAX_TREE_DEPTH} levels")
    if seen != m:
        raise ModelFileError(f"{where}: left_child / right_child hold a cycle")


def _check_lightgbm_tail(tail):
    """What follows the trees: a parameters section LightGBM parses line by line, and the
    pandas_categorical line its Python package reads as JSON."""
    lines = tail.split(b"\n")
    # LightGBM writes the parameters after the trees (and its Python package then the
    # pandas categories): without them the file was cut after the trees
    if b"parameters:" not in lines:
        raise ModelFileError("no 'parameters:' section after the trees: the file is cut short")
    start = lines.index(b"parameters:")
    if b"end of parameters" not in lines[start:]:
        raise ModelFileError("no 'end of parameters' line: the file is cut short")
    stop = lines.index(b"end of parameters", start)
    for line in lines[start + 1:stop]:  # LightGBM splits each at ':' and reads both parts
        if line and not _LGB_PARAMETER.fullmatch(line):
            raise ModelFileError(f"parameter line {line[:40]!r} is not [name: value]")
    last = [line for line in lines if line]
    pandas = [line for line in last if line.startswith(b"pandas_categorical:")]
    if pandas:
        if len(pandas) > 1 or last[-1] != pandas[0]:
            raise ModelFileError("pandas_categorical must be the last line")
        try:
            cats = json.loads(pandas[0][len(b"pandas_categorical:"):])
        except (ValueError, RecursionError):
            raise ModelFileError("the pandas_categorical line is not JSON: the file is cut short") from None
        if cats is not None and not (isinstance(cats, list) and all(
                isinstance(c, list) and all(isinstance(v, (str, int, float)) for v in c)
                and len(set(c)) == len(c) for c in cats)):
            raise ModelFileError("pandas_categorical must be a list of lists of distinct categories")


# ---------------------------------------------------------------------------- XGBoost
def check_xgboost_json(data):
    """The document of an XGBoost JSON model file (bytes), nesting at most MAX_NESTING
    deep (checked on the text, before any parser recurses on it), and the bytes to give
    XGBoost (its loader wants the file to start with '{')."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"not UTF-8 text (byte {exc.start})") from None
    text = text.lstrip("\ufeff \t\r\n")
    raw = text.encode("utf-8")
    if _json_depth(raw) > MAX_NESTING:
        raise ModelFileError(f"nesting deeper than {MAX_NESTING} levels")
    try:
        doc = json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ModelFileError("JSON nested too deeply") from None
    except ValueError as exc:
        raise ModelFileError(f"not JSON: {exc}") from None
    return doc, raw


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _json_depth(raw):
    """The deepest nesting of brackets in JSON text, strings left out."""
    bare = np.frombuffer(_JSON_STRING.sub(b'""', raw), dtype=np.uint8)
    step = (np.isin(bare, (ord("{"), ord("["))).astype(np.int64)
            - np.isin(bare, (ord("}"), ord("]"))))
    return int(np.cumsum(step).max()) if step.size else 0


# UBJSON as XGBoost reads and writes it: objects with 'L'-sized keys, arrays plain,
# counted ('#L') or typed ('$' type '#L'), numbers big-endian.
_UBJ_NUMBERS = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8", b"d": ">f4",
                b"D": ">f8", b"C": ">i1"}


class _UBJReader:
    def __init__(self, data):
        self.data = memoryview(data)
        self.pos = 0

    def fail(self, message):
        raise ModelFileError(f"not UBJSON: {message} at byte {self.pos}")

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            self.fail(f"{n} bytes needed, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def marker(self):
        return bytes(self.take(1))

    def length(self):
        if self.marker() != b"L":
            self.fail("a length must be an int64 ('L')")
        n = struct.unpack(">q", self.take(8))[0]
        if n < 0 or n > len(self.data) - self.pos:
            self.fail(f"length {n} runs past the end of the file")
        return n

    def string(self):
        raw = bytes(self.take(self.length()))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail("a string is not UTF-8")

    def value(self, depth):
        if depth > MAX_NESTING:
            self.fail(f"nesting deeper than {MAX_NESTING} levels")
        m = self.marker()
        if m == b"{":
            out = {}
            while self.data[self.pos:self.pos + 1] != b"}":
                if self.pos >= len(self.data):
                    self.fail("an object is cut short")
                key = self.string()
                out[key] = self.value(depth + 1)
            self.pos += 1
            return out
        if m == b"[":
            return self.array(depth)
        if m in _UBJ_NUMBERS:
            dtype = np.dtype(_UBJ_NUMBERS[m])
            v = np.frombuffer(self.take(dtype.itemsize), dtype=dtype)[0]
            return float(v) if dtype.kind == "f" else int(v)
        if m == b"S":
            return self.string()
        if m in (b"T", b"F"):
            return m == b"T"
        if m == b"Z":
            return None
        self.fail(f"unknown marker {m!r}")

    def array(self, depth):
        nxt = self.data[self.pos:self.pos + 1]
        if nxt == b"$":
            self.pos += 1
            kind = self.marker()
            if kind not in _UBJ_NUMBERS or kind == b"C":
                self.fail(f"typed array of {kind!r}")
            if self.marker() != b"#":
                self.fail("a typed array needs a count ('#')")
            dtype = np.dtype(_UBJ_NUMBERS[kind])
            n = self.length()
            if n * dtype.itemsize > len(self.data) - self.pos:
                self.fail(f"typed array of {n} values runs past the end of the file")
            values = np.frombuffer(self.take(n * dtype.itemsize), dtype=dtype)
            return values.astype(dtype.newbyteorder("="))
        if nxt == b"#":
            self.pos += 1
            n = self.length()  # each value takes at least one byte: length() bounds it
            return [self.value(depth + 1) for _ in range(n)]
        out = []
        while self.data[self.pos:self.pos + 1] != b"]":
            if self.pos >= len(self.data):
                self.fail("an array is cut short")
            out.append(self.value(depth + 1))
        self.pos += 1
        return out


def read_ubjson(data):
    """The document of UBJSON bytes as XGBoost writes them (typed arrays as NumPy
    arrays); every length checked against the bytes left, nesting at most MAX_NESTING."""
    reader = _UBJReader(data)
    doc = reader.value(1)
    if reader.pos != len(data):
        reader.fail("bytes after the document")
    return doc


def _get(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            raise ModelFileError(f"no {'/'.join(keys)} field")
        obj = obj[key]
    return obj


def _count(value, what, low=0, high=_INT32_MAX):
    """An XGBoost integer field: a JSON number or a decimal string (XGBoost writes
    parameters as strings)."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        value = int(value)
    if isinstance(value, (np.integer,)):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ModelFileError(f"{what} must be a whole number in [{low}, {high}], got {value!r}")
    return value


def _as_array(values, what, kinds, kind):
    """values (a JSON list, or a typed UBJSON array) as a 1-d NumPy array of one of kinds."""
    if not isinstance(values, (list, np.ndarray)):
        raise ModelFileError(f"{what} must be a list of {kind}")
    arr = values if isinstance(values, np.ndarray) else np.array(values) if values else np.zeros(0, np.int64)
    # a list mixing types, holding strings, None, lists or ints beyond 64 bits has dtype
    # object or str; floats in an index list make it float; true/false make it bool
    if arr.ndim != 1 or arr.dtype.kind not in kinds:
        raise ModelFileError(f"{what} must be a list of {kind}")
    return arr


def _index_array(values, what, n=None, low=None, high=None):
    arr = _as_array(values, what, "iu", "whole numbers").astype(np.int64)
    if n is not None and arr.size != n:
        raise ModelFileError(f"{what} has {arr.size} entries for {n} nodes")
    if arr.size and ((low is not None and arr.min() < low) or (high is not None and arr.max() > high)):
        raise ModelFileError(f"{what} holds an index outside [{low}, {high}]")
    return arr


def _number_array(values, what, n):
    arr = _as_array(values, what, "iuf", "numbers")
    if arr.size != n:
        raise ModelFileError(f"{what} has {arr.size} entries for {n} nodes")
    return arr


_XGB_NODE_NUMBERS = ("loss_changes", "sum_hessian", "base_weights", "split_conditions")
_XGB_ROOT_PARENT = (-1, _INT32_MAX)


def check_xgboost_model(doc):
    """Check the parsed document of an XGBoost model (JSON or UBJSON) for what XGBoost's
    loader and predictor follow unchecked: counts against array lengths, children and
    parents within their tree, one tree from the root, split features within
    num_feature, category segments within the category list, tree_info within the
    outputs, iteration_indptr within the trees."""
    if not isinstance(doc, dict) or "learner" not in doc:
        raise ModelFileError("no 'learner': not an XGBoost model")
    version = doc.get("version")
    if version is not None and not (isinstance(version, list) and len(version) == 3 and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in version)):
        raise ModelFileError(f"version must be three whole numbers, got {str(version)[:40]}")
    learner = _get(doc, "learner")
    param = _get(learner, "learner_model_param")
    n_features = _count(_get(param, "num_feature"), "learner_model_param.num_feature")
    n_outputs = max(1, _count(param.get("num_class", 0), "learner_model_param.num_class"),
                    _count(param.get("num_target", 1), "learner_model_param.num_target"))
    names = learner.get("feature_names") or []
    if names and len(names) != n_features:
        raise ModelFileError(f"feature_names lists {len(names)} names for num_feature = {n_features}")
    objective = learner.get("objective") or {}
    classes = (objective.get("softmax_multiclass_param") or {}).get("num_class") \
        if isinstance(objective, dict) else None
    if classes is not None and _count(classes, "softmax_multiclass_param.num_class") != \
            _count(param.get("num_class", 0), "learner_model_param.num_class"):
        raise ModelFileError("the objective's num_class differs from learner_model_param.num_class")
    booster = _get(learner, "gradient_booster")
    name = _get(booster, "name")
    if name == "dart":
        model = _get(booster, "gbtree", "model")
    elif name == "gbtree":
        model = _get(booster, "model")
    else:
        raise ModelFileError(f"XGBoost's {name!r} booster has no trees; defrag explains "
                             "gbtree and dart models")
    trees = _get(model, "trees")
    if not isinstance(trees, list) or not trees:
        raise ModelFileError("no trees")
    num_trees = _count(_get(model, "gbtree_model_param", "num_trees"), "gbtree_model_param.num_trees")
    if num_trees != len(trees):
        raise ModelFileError(f"gbtree_model_param.num_trees = {num_trees} but {len(trees)} trees")
    # the output each tree adds to: XGBoost indexes its outputs with it unchecked
    _index_array(_get(model, "tree_info"), "tree_info", len(trees), 0, n_outputs - 1)
    if "iteration_indptr" in model:
        indptr = _index_array(model["iteration_indptr"], "iteration_indptr", None, 0, len(trees))
        if indptr.size == 0 or indptr[0] != 0 or indptr[-1] != len(trees) or np.any(np.diff(indptr) < 0):
            raise ModelFileError("iteration_indptr does not cut the trees into iterations")
    if name == "dart":
        _number_array(_get(booster, "weight_drop"), "weight_drop", len(trees))
    if model.get("cats"):
        _check_xgboost_cats(model["cats"], n_features)
    for i, tree in enumerate(trees):
        _check_xgboost_tree(tree, f"tree {i}", n_features)
        if _count(_get(tree, "id"), f"tree {i} id") != i:  # XGBoost places a tree by its id
            raise ModelFileError(f"tree {i} has id {tree['id']!r}; the trees' ids must be 0, 1, 2, ...")


def _check_xgboost_tree(tree, where, n_features):
    if not isinstance(tree, dict):
        raise ModelFileError(f"{where} is not a JSON object")
    tp = _get(tree, "tree_param")
    n = _count(_get(tp, "num_nodes"), f"{where} num_nodes", 1)
    if "num_feature" in tp and _count(tp["num_feature"], f"{where} num_feature") != n_features:
        raise ModelFileError(f"{where} num_feature differs from learner_model_param.num_feature")
    if _count(tp.get("size_leaf_vector", 1), f"{where} size_leaf_vector") > 1:
        raise ModelFileError(f"{where} has vector leaves (multi-target trees), which defrag does not read")
    deleted = _count(tp.get("num_deleted", 0), f"{where} num_deleted")
    if deleted:  # pruned in place: XGBoost keeps them, unreachable, among the nodes
        raise ModelFileError(f"{where} has deleted nodes (num_deleted = {deleted}), which defrag does not read")
    left = _index_array(_get(tree, "left_children"), f"{where} left_children", n, -1, n - 1)
    right = _index_array(_get(tree, "right_children"), f"{where} right_children", n, -1, n - 1)
    parents = _index_array(_get(tree, "parents"), f"{where} parents", n, -1, _INT32_MAX)
    split = _index_array(_get(tree, "split_indices"), f"{where} split_indices", n, 0, 2**32 - 1)
    _index_array(_get(tree, "default_left"), f"{where} default_left", n, 0, 1)
    for key in _XGB_NODE_NUMBERS:
        _number_array(_get(tree, key), f"{where} {key}", n)
    if parents[0] not in _XGB_ROOT_PARENT or np.any(parents[1:] < 0) or np.any(parents[1:] >= n):
        raise ModelFileError(f"{where} parents point outside the tree")
    internal = left >= 0
    if np.any(internal != (right >= 0)):
        raise ModelFileError(f"{where}: a node has one child")
    children = np.concatenate([left[internal], right[internal]])
    reached = np.bincount(children, minlength=n)
    # every node but the root is one node's child, and the children hold no cycle
    if np.any(children == 0) or np.any(reached[1:] != 1):
        raise ModelFileError(f"{where}: left_children / right_children do not make a tree")
    frontier, seen = np.array([0]), 1
    while frontier.size:
        frontier = frontier[internal[frontier]]
        frontier = np.concatenate([left[frontier], right[frontier]])
        seen += frontier.size
        if seen > n:
            break
    if seen != n:
        raise ModelFileError(f"{where}: left_children / right_children hold a cycle")
    if np.any(parents[children] != np.concatenate([np.flatnonzero(internal)] * 2)):
        raise ModelFileError(f"{where}: parents disagree with the children")
    if np.any(split[internal] >= n_features):
        raise ModelFileError(f"{where}: a split feature is outside num_feature = {n_features}")
    if "split_type" in tree:
        _check_xgboost_categories(tree, where, n, internal)


def _check_xgboost_categories(tree, where, n, internal):
    split_type = _index_array(tree["split_type"], f"{where} split_type", n, 0, 1)
    nodes = _index_array(_get(tree, "categories_nodes"), f"{where} categories_nodes", None, 0, n - 1)
    segments = _index_array(_get(tree, "categories_segments"), f"{where} categories_segments",
                            nodes.size, 0)
    sizes = _index_array(_get(tree, "categories_sizes"), f"{where} categories_sizes", nodes.size, 1)
    codes = _index_array(_get(tree, "categories"), f"{where} categories", None, 0, _XGB_MAX_CATEGORY - 1)
    if np.any(np.diff(nodes) <= 0) or not np.array_equal(nodes, np.flatnonzero(split_type == 1)):
        raise ModelFileError(f"{where}: categories_nodes must list the categorical nodes in order")
    if np.any(~internal[nodes]):
        raise ModelFileError(f"{where}: a leaf is marked categorical")
    if np.any(segments + sizes > codes.size):
        raise ModelFileError(f"{where}: categories_segments / categories_sizes point outside categories")


_XGB_CAT_TYPES = {9: (-2**7, 2**7 - 1), 10: (0, 2**8 - 1), 11: (-2**15, 2**15 - 1), 12: (-2**15, 2**16 - 1),
                  13: (-2**31, 2**31 - 1), 14: (-2**31, 2**32 - 1), 15: (-2**63, 2**63 - 1),
                  16: (-2**63, 2**64 - 1)}  # XGBoost's CatIndexType ids (unsigned ones may come bit cast)


def _check_xgboost_cats(cats, n_features):
    """The categories XGBoost (3.1 and later) stores to re-code DataFrames: per feature
    its categories (strings cut at offsets, or numbers), feature_segments their running
    count, sorted_idx per feature a permutation that sorts them. XGBoost searches them
    through sorted_idx unchecked."""
    if not isinstance(cats, dict):
        raise ModelFileError("cats is not a JSON object")
    enc = _get(cats, "enc")
    if not isinstance(enc, list) or (enc and len(enc) != n_features):
        raise ModelFileError(f"cats/enc lists {len(enc) if isinstance(enc, list) else '?'} features "
                             f"for num_feature = {n_features}")
    counts = []
    for j, column in enumerate(enc):
        where = f"cats/enc[{j}]"
        if not isinstance(column, dict):
            raise ModelFileError(f"{where} is not a JSON object")
        if "offsets" in column:
            values = _index_array(_get(column, "values"), f"{where}/values", None, -128, 255)
            offsets = _index_array(column["offsets"], f"{where}/offsets", None, 0, values.size)
            if offsets.size and (offsets[0] != 0 or offsets[-1] != values.size or np.any(np.diff(offsets) < 0)):
                raise ModelFileError(f"{where}/offsets do not cut its values")
            if not offsets.size and values.size:
                raise ModelFileError(f"{where} has values but no offsets")
            counts.append(max(offsets.size - 1, 0))
        else:
            kind = _count(_get(column, "type"), f"{where}/type", 0, 100)
            if kind not in _XGB_CAT_TYPES:
                raise ModelFileError(f"{where}/type {kind} is not a category type XGBoost reads")
            low, high = _XGB_CAT_TYPES[kind]
            counts.append(_index_array(_get(column, "values"), f"{where}/values", None, low, high).size)
    segments = _index_array(_get(cats, "feature_segments"), "cats/feature_segments", None, 0, _INT32_MAX)
    if enc and not np.array_equal(segments, np.concatenate([[0], np.cumsum(counts)])):
        raise ModelFileError("cats/feature_segments do not count the categories of cats/enc")
    total = int(segments[-1]) if segments.size else 0
    order = _index_array(_get(cats, "sorted_idx"), "cats/sorted_idx", total, 0, _INT32_MAX)
    for j, (start, stop) in enumerate(zip(segments[:-1].tolist(), segments[1:].tolist())):
        if not np.array_equal(np.sort(order[start:stop]), np.arange(stop - start)):
            raise ModelFileError(f"cats/sorted_idx of feature {j} is not a permutation of its categories")
