"""The checks the command line runs on a model file before XGBoost's or LightGBM's own
loader sees it (defrag.model_files): what the libraries' loaders or predictors would read
outside the file, follow outside a tree, or recurse on without bound is a ModelFileError
naming it. The unit cases run the checks alone (they load nothing); the fuzz case runs
mutated files through the whole CLI path, loaders included, in a subprocess that must
survive them all."""
import json
import os
import re
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from defrag.model_files import (MAX_TREE_DEPTH, ModelFileError, check_lightgbm_text, check_xgboost_json,
                                check_xgboost_model, read_ubjson)

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
pd = pytest.importorskip("pandas")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """LightGBM and XGBoost models, numeric and categorical, as files and text."""
    d = tmp_path_factory.mktemp("model_checks")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                      "c": pd.Categorical(rng.integers(0, 5, 300))})
    y = ((X["a"] > 0) ^ X["c"].isin([1, 3])).astype(int)
    X.to_csv(d / "data.csv", index=False)
    lgb.LGBMClassifier(n_estimators=3, num_leaves=5, verbose=-1, min_data_per_group=5,
                       cat_smooth=1).fit(X, y).booster_.save_model(str(d / "cat.txt"))
    lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1).fit(
        X[["a", "b"]], (X["a"] * 2).astype(int).clip(-1, 1) + 1).booster_.save_model(str(d / "multi.txt"))
    model = xgb.XGBClassifier(n_estimators=3, max_depth=3, enable_categorical=True, max_cat_to_onehot=1,
                              random_state=0).fit(X, y)
    model.save_model(d / "cat.json")
    model.save_model(d / "cat.ubj")
    xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(
        X[["a", "b"]], (X["a"] * 2).astype(int).clip(-1, 1) + 1).save_model(d / "multi.json")
    return d


def _text(d, name):
    return (d / name).read_bytes()


def _refused(check, data, *words):
    with pytest.raises(ModelFileError) as exc:
        check(data)
    message = str(exc.value)
    assert "\n" not in message
    for w in words:
        assert w in message, message
    return message


# ----------------------------------------------------------------------- LightGBM
def test_lightgbm_files_as_written_pass(models):
    for name in ("cat.txt", "multi.txt"):
        text = _text(models, name)
        assert check_lightgbm_text(text) == text.decode()


def _edit_tree(text, tree, key, value):
    """text with one field of one tree replaced, tree_sizes kept consistent."""
    start = text.index(b"Tree=%d\n" % tree)
    line = text.index(b"\n" + key + b"=", start) + 1
    end = text.index(b"\n", line)
    new = text[:line] + key + b"=" + value + text[end:]
    old_size = len(text)
    sizes = [int(v) for v in re.search(rb"tree_sizes=([\d ]+)\n", new).group(1).split()]
    sizes[tree] += len(new) - old_size
    return re.sub(rb"tree_sizes=[\d ]+\n", b"tree_sizes=" + b" ".join(b"%d" % s for s in sizes) + b"\n",
                  new, count=1)


def _field(text, tree, key):
    start = text.index(b"Tree=%d\n" % tree)
    line = text.index(b"\n" + key + b"=", start) + len(key) + 2
    return text[line:text.index(b"\n", line)]


def test_lightgbm_trees_that_are_not_trees_are_refused(models):
    text = _text(models, "cat.txt")
    left = [int(v) for v in _field(text, 0, b"left_child").split()]
    right = [int(v) for v in _field(text, 0, b"right_child").split()]
    m = len(left)

    def with_children(lft, rgt):
        t = _edit_tree(text, 0, b"left_child", b" ".join(b"%d" % v for v in lft))
        return _edit_tree(t, 0, b"right_child", b" ".join(b"%d" % v for v in rgt))

    assert check_lightgbm_text(with_children(left, right))  # the edit itself keeps a good file good
    _refused(check_lightgbm_text, with_children([m] + left[1:], right), "left_child", "outside")
    _refused(check_lightgbm_text, with_children([-99] + left[1:], right), "left_child", "outside")
    internal = [i for i, v in enumerate(left) if v > 0]
    cycle = list(left)
    cycle[internal[0]] = 0  # back to the root
    _refused(check_lightgbm_text, with_children(cycle, right), "do not make a tree")
    twice = list(right)
    twice[0] = left[0]
    _refused(check_lightgbm_text, with_children(left, twice), "do not make a tree")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"left_child", b" ".join([b"1"] * (m - 1))),
             "left_child has", f"{m} expected")
    feature = _field(text, 1, b"split_feature").split()
    _refused(check_lightgbm_text, _edit_tree(text, 1, b"split_feature", b" ".join([b"7"] + feature[1:])),
             "split_feature", "outside")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"num_leaves", b"99999999"), "leaf_value has")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"leaf_value", b"1 2"), "leaf_value has 2 values")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"threshold", b" ".join([b"nan"] * m)),
             "threshold", "not finite")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"decision_type", b" ".join([b"12"] * m)),
             "missing-value type")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"cat_boundaries", b"0 5 1"), "cat_boundaries")
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"cat_threshold", b"1"), "cat_threshold")
    categorical = [i for i, v in enumerate(_field(text, 0, b"decision_type").split()) if int(v) & 1]
    assert categorical
    threshold = _field(text, 0, b"threshold").split()
    threshold[categorical[0]] = b"9"
    _refused(check_lightgbm_text, _edit_tree(text, 0, b"threshold", b" ".join(threshold)),
             "categorical split points outside")


def test_lightgbm_header_and_tail_are_checked(models):
    text = _text(models, "multi.txt")

    def sub(pattern, repl):
        out = re.sub(pattern, repl, text, count=1)
        assert out != text
        return out

    _refused(check_lightgbm_text, sub(rb"num_class=3", b"num_class=0"), "num_class")
    _refused(check_lightgbm_text, sub(rb"num_tree_per_iteration=3", b"num_tree_per_iteration=0"),
             "num_tree_per_iteration")
    _refused(check_lightgbm_text, sub(rb"objective=multiclass num_class:3", b"objective="), "objective")
    _refused(check_lightgbm_text, sub(rb"num_class:3", b"num_class:5"), "does not match")
    _refused(check_lightgbm_text, sub(rb"max_feature_idx=1", b"max_feature_idx=7"), "feature_names lists 2")
    _refused(check_lightgbm_text, sub(rb"feature_names=a b", b"feature_names=a b:c"), "refuses")
    _refused(check_lightgbm_text, sub(rb"feature_infos=\[", b"feature_infos=[1"), "feature_infos")
    _refused(check_lightgbm_text, sub(rb"tree_sizes=(\d+)", b"tree_sizes=1\\1"), "tree_sizes add up")
    _refused(check_lightgbm_text, sub(rb"\[boosting: gbdt\]", b"[boosting gbdt]"), "parameter line")
    _refused(check_lightgbm_text, sub(rb"pandas_categorical:\[\]", b"pandas_categorical:[[1, 1]]"),
             "pandas_categorical")
    _refused(check_lightgbm_text, text.replace(b"\n", b"\r\n"), "CR")
    _refused(check_lightgbm_text, b"tree\n" + bytes([0xff, 0x0a]), "not UTF-8")
    # the trees without tree_sizes are read one after another, with the same checks
    plain = re.sub(rb"tree_sizes=[\d ]+\n", b"", text)
    assert check_lightgbm_text(plain)
    _refused(check_lightgbm_text, plain[:plain.index(b"end of trees") - 40] + b"\n\nend of trees\n"
             + plain[plain.index(b"end of trees") + 13:], "tree")


def test_lightgbm_trees_too_deep_to_dump_are_refused(models):
    """LightGBM's dump_model recurses once per level (its C++ stack ends near 10,000)."""
    text = _text(models, "multi.txt").decode()
    head, rest = text.split("Tree=0\n", 1)
    tail = rest[rest.index("end of trees"):]
    head = head.replace("num_class=3", "num_class=1").replace("num_tree_per_iteration=3",
                                                              "num_tree_per_iteration=1")
    head = re.sub(r"objective=.*\n", "objective=regression\n", head)

    def chain(n_leaves):
        m = n_leaves - 1
        join = " ".join
        tree = (f"Tree=0\nnum_leaves={n_leaves}\nnum_cat=0\nsplit_feature={join(['0'] * m)}\n"
                f"threshold={join(['0.5'] * m)}\ndecision_type={join(['2'] * m)}\n"
                f"left_child={join(str(-(i + 1)) for i in range(m))}\n"
                f"right_child={join([str(i + 1) for i in range(m - 1)] + [str(-(m + 1))])}\n"
                f"leaf_value={join(['0.1'] * n_leaves)}\nshrinkage=1\n\n\n")
        return (re.sub(r"tree_sizes=.*\n", f"tree_sizes={len(tree)}\n", head) + tree + tail).encode()

    assert check_lightgbm_text(chain(MAX_TREE_DEPTH))
    _refused(check_lightgbm_text, chain(MAX_TREE_DEPTH + 2), "deeper than")


# ------------------------------------------------------------------------ XGBoost
def test_ubjson_reads_as_xgboost_writes_it(models):
    """The UBJSON reader gives the document XGBoost's own JSON gives (float32 values)."""
    booster = xgb.Booster()
    booster.load_model(models / "cat.ubj")
    ubj = read_ubjson(bytes(booster.save_raw(raw_format="ubj")))
    js = json.loads(bytes(booster.save_raw(raw_format="json")))

    def same(a, b, path=""):
        if isinstance(b, dict):
            assert isinstance(a, dict) and set(a) == set(b), path
            for k in b:
                same(a[k], b[k], f"{path}/{k}")
        elif isinstance(b, list) and not isinstance(a, np.ndarray):
            assert isinstance(a, list) and len(a) == len(b), path
            for i, (u, v) in enumerate(zip(a, b)):
                same(u, v, f"{path}[{i}]")
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a.astype(np.float32), np.asarray(b, dtype=np.float32), err_msg=path)
        else:
            assert a == b or np.float32(a) == np.float32(b), (path, a, b)

    same(ubj, js)
    check_xgboost_model(ubj)


def test_xgboost_documents_nested_or_sized_beyond_the_file_are_refused():
    """XGBoost's parsers recurse per level and trust every length (a segfault each)."""
    deep = b'{"learner":' + b"[" * 100000 + b"]" * 100000 + b"}"
    _refused(check_xgboost_json, deep, "deeper than 64")
    _refused(check_xgboost_json, b'{"learner":' + b"[" * 100 + b"]" * 100 + b"}", "deeper than 64")
    key = b"L" + struct.pack(">q", 7) + b"learner"
    _refused(read_ubjson, b"{" + key + b"[" * 100000, "nesting deeper")
    _refused(read_ubjson, b"{" + key + b"[$d#L" + struct.pack(">q", 10**15) + b"\0" * 8, "runs past")
    _refused(read_ubjson, b"{" + key + b"SL" + struct.pack(">q", 2**62) + b"ab}", "runs past")
    _refused(read_ubjson, b"{" + key + b"Z}junk", "after the document")
    _refused(read_ubjson, b"{" + key + b"[$d#L" + struct.pack(">q", 2) + b"\0" * 4, "runs past")
    _refused(read_ubjson, b"{\xff\xfe", "int64")
    _refused(check_xgboost_json, b"\xff{}", "not UTF-8")
    assert read_ubjson(b"{" + key + b"[$l#L" + struct.pack(">q", 2) + struct.pack(">ii", 3, -4) + b"}") == \
        {"learner": pytest.approx(np.array([3, -4]))}


def _xgb_doc(d, name):
    return json.loads((d / name).read_text())


def _tree(doc, i=0):
    return doc["learner"]["gradient_booster"]["model"]["trees"][i]


@pytest.mark.parametrize("edit, words", [
    (lambda t, m: t["left_children"].__setitem__(0, 10**6), "left_children"),
    (lambda t, m: t["right_children"].__setitem__(0, -5), "right_children"),
    (lambda t, m: t["parents"].__setitem__(2, 10**6), "parents"),
    (lambda t, m: t["parents"].__setitem__(2, 2), "parents disagree"),
    (lambda t, m: t["left_children"].__setitem__(1, 0), "do not make a tree"),
    (lambda t, m: t["split_indices"].__setitem__(0, 3), "num_feature"),
    (lambda t, m: t["split_conditions"].pop(), "split_conditions has"),
    (lambda t, m: t["tree_param"].__setitem__("num_nodes", "1000000"), "entries for 1000000 nodes"),
    (lambda t, m: t.__setitem__("id", 2), "id"),
    (lambda t, m: t["categories_segments"].__setitem__(0, 10**6), "categories_segments"),
    (lambda t, m: t["categories"].__setitem__(0, 2**24), "categories"),
    (lambda t, m: t["tree_param"].__setitem__("size_leaf_vector", "3"), "vector leaves"),
    (lambda t, m: m["tree_info"].__setitem__(0, 5), "tree_info"),
    (lambda t, m: m["iteration_indptr"].__setitem__(1, 9), "iteration_indptr"),
    (lambda t, m: m["gbtree_model_param"].__setitem__("num_trees", "9"), "num_trees"),
    (lambda t, m: m["cats"]["sorted_idx"].__setitem__(0, 10), "sorted_idx"),
    (lambda t, m: m["cats"]["feature_segments"].__setitem__(-1, 99), "feature_segments"),
])
def test_xgboost_indices_outside_the_model_are_refused(models, edit, words):
    doc = _xgb_doc(models, "cat.json")
    check_xgboost_model(doc)
    model = doc["learner"]["gradient_booster"]["model"]
    tree = next(t for t in model["trees"] if any(t["split_type"]))
    edit(tree, model)
    _refused(check_xgboost_model, doc, words)


def test_xgboost_models_without_trees_are_refused(models):
    doc = _xgb_doc(models, "multi.json")
    check_xgboost_model(doc)
    doc["learner"]["objective"]["softmax_multiclass_param"]["num_class"] = "5"
    _refused(check_xgboost_model, doc, "num_class")
    doc = _xgb_doc(models, "multi.json")
    doc["learner"]["gradient_booster"] = {"name": "gblinear", "model": {"weights": [0.0]}}
    _refused(check_xgboost_model, doc, "gblinear", "no trees")
    _refused(check_xgboost_model, {"rules": []}, "learner")


# -------------------------------------------------------------------------- fuzz
FUZZ = textwrap.dedent("""
    import json, random, re, sys, warnings
    import numpy as np, pandas as pd
    warnings.filterwarnings("ignore")
    from defrag.cli import columns, errors, models
    d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    X = pd.read_csv(d + "/data.csv")
    X["c"] = X["c"].astype("category")
    files = {"cat.txt": X, "multi.txt": X[["a", "b"]], "cat.json": X, "multi.json": X[["a", "b"]],
             "cat.ubj": X}
    NUMBER = re.compile(rb"-?\\d+(\\.\\d+)?([eE]-?\\d+)?")
    NEW = [b"0", b"1", b"-1", b"2", b"-2", b"7", b"100", b"-100", b"99999999999", b"1e308", b"nan",
           b"", b"3 4", b"2147483647", b"-2147483648", b"16777216", b"0.5"]
    counts = {0: 0, 2: 0}
    for k in range(n):
        name = rng.choice(sorted(files))
        data = open(d + "/" + name, "rb").read()
        for _ in range(rng.randint(1, 3)):
            if name.endswith(".ubj"):
                i = rng.randrange(len(data))
                data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
            else:
                m = rng.choice(list(NUMBER.finditer(data)))
                data = data[:m.start()] + rng.choice(NEW) + data[m.end():]
        path = "fuzz" + name[name.index("."):]
        try:
            model = models.load_model_bytes(data, path)
            source = models.model_source(model, path)
            frame = columns.prepare_frame(files[name], columns.categorical_columns(source),
                                          for_library=source.reads_pandas_categoricals)
            try:
                source.predict(frame)  # as a fit asks the model (explain turns its errors into one line)
            except Exception as exc:
                raise errors.CommandError(errors.library_error(exc))
            counts[0] += 1
        except errors.CommandError as exc:
            line = errors.one_line(exc)
            assert line and len(line) < 1000 and "[bt]" not in line, line
            counts[2] += 1
    print(json.dumps(counts))
""")


def test_mutated_model_files_never_take_the_process_down(models):
    """Numbers changed at random in LightGBM and XGBoost JSON files, bytes in UBJSON ones,
    through loading, checking the trees and predicting: a model or a one-line error,
    never a crash (DEFRAG_FUZZ_EXAMPLES sets the count, DEFRAG_FUZZ_SEED the seed)."""
    n = int(os.environ.get("DEFRAG_FUZZ_EXAMPLES", "150"))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    seed = os.environ.get("DEFRAG_FUZZ_SEED", "0")
    res = subprocess.run([sys.executable, "-c", FUZZ, str(models), str(n), seed], capture_output=True,
                         text=True, timeout=600, env=env, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    counts = json.loads(res.stdout.splitlines()[-1])
    assert counts["0"] + counts["2"] == n and counts["2"] > n // 2
