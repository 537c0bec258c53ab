"""The ``defrag`` command line (also ``python -m defrag``).

    defrag explain MODEL DATA    rules that explain a fitted model on a data file
    defrag predict RULES DATA    score a data file with rules saved as JSON
    defrag diff OLD NEW DATA     what changed between two explanations saved as JSON
    defrag demo                  a random forest on a bundled data set, simplified
    defrag config                how the compiled kernels were built

MODEL: an XGBoost model file (.json or .ubj), a LightGBM model text file, a CatBoost model
file (.cbm), or a scikit-learn ensemble (or Pipeline) saved with skops (.skops); a pickle
or joblib file only with
--allow-pickle, since unpickling runs any code the file holds. DATA: CSV, or Parquet with
pyarrow. Each file is read once (a pipe works). Every error with the user's files is one
line on stderr and exit status 2; standard output that fails (a full disk, a closed pipe)
one line and 1; Ctrl-C one line and 130.

One module per concern: app (the parser, main and exit statuses), a module per command
(explain, predict, diff, demo, config: NAME, add_parser, run; listed in app.COMMANDS),
models (model files, read by defrag.sources as the API reads models), rules_files,
data_files, columns (a data file's columns as the model reads them), output (formats,
progress, standard output) and errors.
"""
from ..utils.startup import loading

# (a Ctrl-C while the commands load: one line and exit status 130, as in main)
with loading():
    from .errors import CommandError
    from .app import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "CommandError", "build_parser", "main"]
