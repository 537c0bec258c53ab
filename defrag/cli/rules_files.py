"""Rules files: the JSON that ``defrag explain --format json`` writes (RuleTree.to_json,
a list's, a tree's or a sum's), read back by the API's reader; a file that is no rules file (a model,
a pickle, binary) is refused by its first bytes before any parsing."""
import json

from ..utils.files import MAX_RULES_BYTES
from .data_files import read_file
from .errors import CommandError
from .models import PICKLE_MAGIC, is_lightgbm_text, is_zip


# what a rules file that is not one may be instead, by its first bytes
_NOT_RULES = (
    (is_lightgbm_text, "a LightGBM model"),
    (lambda path, data: data.startswith(b"{L"), "an XGBoost UBJSON model"),
    (is_zip, "a zip archive (a skops model?)"),
    (lambda path, data: data.startswith(PICKLE_MAGIC), "a pickle or joblib file"),
)


def read_rules(path):
    """The RuleTree or RuleSet of a rules file written by 'defrag explain --format json'. A
    file that is not JSON text (a model, a pickle, binary) is refused before any parsing."""
    from ..rules import from_json  # (defrag's estimators stay unloaded when rules only score)

    data = read_file(path, "rules file", MAX_RULES_BYTES)
    for accepts, what in _NOT_RULES:
        if accepts(path, data):
            raise CommandError(f"{path} is {what}, not a defrag rules file: models go to 'defrag "
                               "explain', rules it writes with --format json to 'defrag predict'")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not a defrag rules file: not UTF-8 text (byte {exc.start})") from None
    if "\0" in text or not text.lstrip("\ufeff \t\r\n").startswith("{"):
        raise CommandError(f"{path} is not a defrag rules file: not JSON text (a rules file is "
                           "a JSON object)")
    text = text.lstrip("\ufeff")
    try:
        doc = json.loads(text)
    except RecursionError:
        raise CommandError(f"{path} is not a defrag rules file: JSON nested too deeply") from None
    except ValueError as exc:
        raise CommandError(f"{path} is not a defrag rules file: not JSON ({exc})") from None
    if isinstance(doc, dict) and "learner" in doc:
        raise CommandError(f"{path} is an XGBoost model, not a defrag rules file: models go to "
                           "'defrag explain', rules it writes with --format json to 'defrag predict'")
    try:
        return from_json(text)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise CommandError(f"{path} is not a valid defrag rules file: {type(exc).__name__}: {exc}") from None
