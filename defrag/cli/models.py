"""Model files: recognised by their first bytes, checked (defrag.model_files) before a
library's loader sees them, loaded, and read by the same readers as the API
(defrag.sources). No command asks which library a model comes from: its source says
what the commands need (feature names, categorical features, predictions)."""
import io
import os
import subprocess
import sys

from ..model_files import ModelFileError, check_lightgbm_text, check_xgboost_json, check_xgboost_model, read_ubjson
from .data_files import read_file
from .errors import CommandError, library_error, optional_import

# A model file is read once, recognised by its first bytes (not its name), and checked
# before a library's loader sees it: LightGBM's and XGBoost's loaders trust their input
# and can take the process down on a file cut short or nested too deeply
# (defrag.model_files). A pickle runs code when loaded, so it loads only on request.
#
# MODEL_FORMATS: (name, test of (path, bytes), loader(path, bytes) -> model),
# first match wins. A new format is one test, one loader and one entry.

def is_lightgbm_text(path, data):
    return data.startswith((b"tree\n", b"tree\r\n"))


def _is_json(path, data):
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and head[1:].lstrip(b" \t\r\n")[:1] in (b'"', b"}")


def _is_ubjson(path, data):
    # XGBoost writes an object whose first key has an int64 length ('L')
    return data.startswith(b"{L") or (path.lower().endswith(".ubj") and data.startswith(b"{"))


def is_zip(path, data):
    return data.startswith((b"PK\x03\x04", b"PK\x05\x06"))


def _checked(check, data, path, what):
    """check(data), its ModelFileError as one line naming the file."""
    try:
        return check(data)
    except ModelFileError as exc:
        raise CommandError(f"cannot read {path} as {what}: {exc}") from None


def _load_lightgbm_text(path, data):
    text = _checked(check_lightgbm_text, data, path, "a LightGBM model")
    lgb = optional_import("lightgbm", "a LightGBM model file", "\"defrag[lightgbm]\"")
    try:
        return lgb.Booster(model_str=text)
    except Exception as exc:  # noqa: BLE001 - LightGBMError and its Python side's errors
        raise CommandError(f"LightGBM cannot load {path}: {library_error(exc)}") from None


def _load_xgboost(path, doc, raw):
    _checked(check_xgboost_model, doc, path, "an XGBoost model")
    xgb = optional_import("xgboost", "an XGBoost model file", "\"defrag[xgboost]\"")
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(raw))  # the bytes checked, not the file again
    except Exception as exc:  # noqa: BLE001 - XGBoostError (its message may be binary)
        raise CommandError(f"XGBoost cannot load {path}: {library_error(exc)}") from None
    return booster


def _load_json(path, data):
    doc, raw = _checked(check_xgboost_json, data, path, "an XGBoost JSON model")
    if isinstance(doc, dict) and ("rules" in doc or "nodes" in doc) and ("schema" in doc or "schema_version" in doc):
        raise CommandError(f"{path} is a defrag rules file, not a model: score data with it by "
                           "'defrag predict RULES DATA'")
    if not isinstance(doc, dict) or "learner" not in doc:
        raise CommandError(f"{path} is JSON but not an XGBoost model (it has no 'learner')")
    return _load_xgboost(path, doc, raw)


def _load_ubjson(path, data):
    doc = _checked(read_ubjson, data, path, "an XGBoost UBJSON model")
    if not isinstance(doc, dict) or "learner" not in doc:
        raise CommandError(f"{path} is UBJSON but not an XGBoost model (it has no 'learner')")
    return _load_xgboost(path, doc, data)


# Types a skops file of a supported scikit-learn model holds beyond those skops trusts by
# default (numpy arrays, scikit-learn estimators and losses): the trees, and the
# check_array partial of HistGradientBoosting's categorical preprocessing.
SKOPS_TRUSTED = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "functools.partial",
    "sklearn.utils.validation.check_array",
)


def _load_skops(path, data):
    sio = optional_import("skops.io", "a skops file", "\"defrag[skops]\"")
    try:
        untrusted = sorted(set(sio.get_untrusted_types(data=data)) - set(SKOPS_TRUSTED))
    except Exception as exc:  # noqa: BLE001 - a zip that is not a skops file, or a damaged one
        raise CommandError(f"cannot read {path} as a skops file: {library_error(exc)}") from None
    if untrusted:
        listed = ", ".join(untrusted[:5]) + (f" and {len(untrusted) - 5} more" if len(untrusted) > 5 else "")
        raise CommandError(f"{path} holds types defrag does not trust ({listed}); defrag loads skops "
                           "files of scikit-learn tree ensembles")
    try:
        model = sio.loads(data, trusted=list(SKOPS_TRUSTED))
    except Exception as exc:  # noqa: BLE001 - any failure to rebuild is the file's
        raise CommandError(f"cannot load {path} as a skops file: {library_error(exc)}") from None
    return model


# CatBoost's binary model format (.cbm) starts with these bytes
CATBOOST_MAGIC = b"CBM1"
# CatBoost's loader trusts its input: a damaged .cbm can make it run without end, so the
# file is first loaded (and exported as the JSON defrag reads) by a child process with a
# time and memory limit; only a file that passed is loaded here.
CATBOOST_CHECK = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import catboost, tempfile, os
model = catboost.CatBoost().load_model(blob=sys.stdin.buffer.read())
with tempfile.TemporaryDirectory() as tmp:
    model.save_model(os.path.join(tmp, "model.json"), format="json")
"""
CATBOOST_CHECK_SECONDS = 120


def _is_catboost(path, data):
    return data.startswith(CATBOOST_MAGIC)


def _load_catboost(path, data):
    catboost = optional_import("catboost", "a CatBoost model file", "\"defrag[catboost]\"")
    try:
        check = subprocess.run([sys.executable, "-c", CATBOOST_CHECK], input=data, capture_output=True,
                               timeout=CATBOOST_CHECK_SECONDS)
    except subprocess.TimeoutExpired:
        raise CommandError(f"cannot read {path} as a CatBoost model: CatBoost's loader ran for over "
                           f"{CATBOOST_CHECK_SECONDS} s on it (a damaged file?)") from None
    if check.returncode != 0:
        lines = [line for line in check.stderr.decode(errors="replace").splitlines() if line.strip()]
        raise CommandError(f"cannot read {path} as a CatBoost model: "
                           f"{lines[-1] if lines else f'its loader failed (exit {check.returncode})'}")
    try:
        return catboost.CatBoost().load_model(blob=data)  # the bytes checked
    except Exception as exc:  # noqa: BLE001 - CatBoostError
        raise CommandError(f"CatBoost cannot load {path}: {library_error(exc)}") from None


MODEL_FORMATS = (
    ("LightGBM model text", is_lightgbm_text, _load_lightgbm_text),
    ("XGBoost JSON", _is_json, _load_json),
    ("XGBoost UBJSON", _is_ubjson, _load_ubjson),
    ("skops", is_zip, _load_skops),
    ("CatBoost", _is_catboost, _load_catboost),
)

# first bytes of a pickle (protocol 2 and later) and of joblib's compressed files
PICKLE_MAGIC = (b"\x80", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda", b"\x1f\x8b", b"BZh",
                 b"\xfd7zXZ", b"\x5d\x00\x00", b"\x04\x22\x4d\x18")


def _load_pickle(path, data):
    joblib = optional_import("joblib", "a pickle or joblib file")
    try:
        model = joblib.load(io.BytesIO(data))  # pickles too
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is the file's
        raise CommandError(f"cannot load {path} as a pickle or joblib file: "
                           f"{type(exc).__name__}: {exc}") from None
    return model


def _not_a_model(path, data):
    """The one-line reason a file that no loader took is refused."""
    if data.startswith(PICKLE_MAGIC):
        return (f"{path} is a pickle or joblib file; loading one runs any code it holds, so defrag "
                "loads it only with --allow-pickle (give it only for files you trust; save "
                "scikit-learn models with skops as .skops to need no flag)")
    hint = {".ubj": "not UBJSON (an XGBoost .ubj model starts with '{L')",
            ".json": "not JSON text of an XGBoost model",
            ".txt": "not a LightGBM model text (which starts with the line 'tree')",
            ".skops": "not a skops file (a zip archive)",
            ".cbm": "not a CatBoost model (which starts with CBM1)"}.get(os.path.splitext(path)[1].lower())
    what = hint or "not a model file defrag reads"
    return (f"{path} is {what}; defrag reads XGBoost JSON or UBJSON, LightGBM model text, CatBoost "
            ".cbm and skops files, and pickle or joblib files only with --allow-pickle")


def load_model(path, allow_pickle=False):
    """The model of a model file (a library's Booster or model object, or a scikit-learn
    estimator). A pickle or joblib file is loaded only when allow_pickle is true."""
    return load_model_bytes(read_file(path, "model file"), path, allow_pickle)


def load_model_bytes(data, path, allow_pickle=False):
    """load_model of a file's bytes (path names it in messages and gives its extension)."""
    for _, accepts, load in MODEL_FORMATS:
        if accepts(path, data):
            return load(path, data)
    if allow_pickle:
        return _load_pickle(path, data)
    raise CommandError(_not_a_model(path, data))


def model_source(model, path):
    """The defrag source of a loaded model, its trees read and checked (an index outside
    a tree is an error here, before any library predicts with it); an unsupported or
    unfitted model is a one-line error."""
    from ..sources import adapt  # the readers import scikit-learn: loaded by the commands that need them

    try:
        source = adapt(model)
        source.trees()
        source.encoding  # noqa: B018 - read (and checked) now, not while predicting
    except (TypeError, ValueError) as exc:  # NotFittedError is a ValueError
        raise CommandError(f"{path}: {exc}") from None
    except (IndexError, KeyError, AttributeError, OverflowError) as exc:  # a malformed model
        raise CommandError(f"{path}: a malformed model ({type(exc).__name__}: {library_error(exc)})") from None
    return source
