"""The fit as one chain of stages, the same for rows in memory and on a Dask cluster:

    rows (fit/rows.py, fit/dask_rows.py)
    -> prepare (fit/prepare.py): source, split table, targets, encoded inputs, Problem
    -> search (fit/search.py): the restarts, the kept one
    -> the explanation searched for: a tree of rules or a sum of trees (search/tree_path.py),
       or with form "list" an ordered rule list (search/list_path.py)
    -> rules (fit/readout.py): the explanation as printed (a RuleTree, or a RuleSet; a
       searched one with its path: search/path_readout.py)

``fit_rules`` runs them and returns the fitted attributes of DefragModel (``FitResult``),
with the seconds of each phase.
"""
import dataclasses
import logging
import time
import warnings

import numpy as np

from ..rules.diff import explanation_diff
from ..search.list_path import search_list
from ..search.tree_path import REFERENCE_FORMS, search_tree
from ..sources import matched_source
from ..utils.dask_collections import is_dask_collection
from ..utils.progress import RestartProgress
from ..utils.validation import user_stacklevel
from .dask_rows import DaskRows
from .prepare import prepare
from .readout import read_out
from .rows import InMemoryRows, take_rows
from .search import search

logger = logging.getLogger("defrag")


@dataclasses.dataclass
class FitResult:
    """What a fit leaves: DefragModel's fitted attributes (``attributes()``)."""

    prepared: object  # fit/prepare.py's Prepared
    searched: object  # fit/search.py's Searched
    readout: object  # fit/readout.py's Readout
    n_samples: int
    n_features: int
    names_in: object  # the DataFrame's column names, or None
    seconds: dict  # wall-clock seconds of the phases, in order
    reference: object = None  # a warm start's reference_rules (a RuleTree or RuleSet), or None

    def attributes(self):
        """{name_: value} of the fitted attributes (DefragModel's docstring lists them)."""
        p, s, r = self.prepared, self.searched, self.readout
        best = s.best
        out = dict(task_=p.task, n_features_in_=self.n_features, splits_=p.splits,
                   fitted_to_="y" if p.y_given else "predictions")
        if p.task == "classification":
            out["classes_"] = p.classes
        if self.names_in is not None:
            out["feature_names_in_"] = self.names_in
        out.update(
            # error rates (mean squared errors in regression): the restarts' losses on all
            # rows, or on their own where only theirs were predicted (targets_of_fit_rows)
            restart_errors_=np.array([x.train_error for x in s.results]) / (
                self.n_samples if p.all_row_targets else p.n_fit),
            restart_n_regions_=np.array([x.n_components if x.rule_list is None else len(x.rule_list.rules) + 1
                                       for x in s.results]),
            n_all_splits_=int(p.n_all_splits), subsample_size_=int(p.n_fit),
            lower_bound_=best.lower_bound, lower_bound_phase_=best.phases, n_iter_=int(best.lower_bound.size),
            eta_=r.params["eta"], alpha_=r.params["alpha"], n_components_=int(r.params["alpha"].size))
        if p.task == "regression":
            out.update(mean_=r.params["mean"], precision_=r.params["precision"])
        else:
            out["gamma_"] = r.params["gamma"]
        if "w" in r.params:
            out["gate_weights_"] = r.params["w"]
        out.update(rules_=r.rules, n_regions_=r.n_rules, n_conditions_=r.rules.n_conditions,
                   fit_seconds_=self.seconds)
        if r.path is not None:  # a searched form: every candidate (a tree's, or each size of a list)
            out["path_"] = {k: v for k, v in r.path.items() if k not in ("trees", "rules")}
            out["path_rules_"] = r.path["trees"] if "trees" in r.path else r.path["rules"]
            if self.reference is not None:
                out["reference_kept_"] = bool(r.path["form"][r.path["chosen"]] in REFERENCE_FORMS)
                out["reference_diff_"] = explanation_diff(self.reference, r.rules)
        return out


def rows_of(X, y=None):
    """The rows interface of X and y: on a cluster for Dask collections, else in memory."""
    if is_dask_collection(X) or is_dask_collection(y):
        return DaskRows(X, y)
    return InMemoryRows(X, y)


def fit_rules(config, estimator, X, y=None, feature_names=None):
    """The stages on X and y (config: fit/config.py's FitConfig): a FitResult. A DataFrame's
    columns are matched by name to the model's feature names (sources.matched_source)."""
    clock = PhaseClock()
    source, X = matched_source(estimator, X)
    rows = rows_of(X, y)
    with verbose_logging(config.verbose):
        if rows.distributed:
            if config.subsample_size(rows.n_samples) >= rows.n_samples:
                # restarts on every row: all of them in this process, as in memory
                logger.info("Dask input: subsample=%r keeps all %d rows; X and y are computed here",
                            config.subsample, rows.n_samples)
                rows = rows.in_memory()
            elif not config.rule_list:
                raise ValueError("form='paper' prunes the paper's rules on all rows in one process: not "
                                 "supported with a Dask X and a subsample; use form='restarts', or compute X")
        prepared = prepare(config, source, rows, feature_names, clock)
        n_classes = prepared.fit_target.n_classes
        for name in ("n_regions", "max_regions"):
            cap = getattr(config, name)
            if n_classes and cap is not None and cap < n_classes:
                warnings.warn(f"{name}={cap} is below the {n_classes} classes: at most {cap} of them can be "
                              "predicted", UserWarning, stacklevel=user_stacklevel())
        if config.form == "sum" and prepared.fit_target.n_classes > 2:
            raise ValueError(f"form='sum' adds one number per part: it explains a regression or two classes, "
                             f"not {prepared.fit_target.n_classes}; use form='auto' or 'tree'")
        if prepared.subsampled:
            logger.info("restarts fitted on %d of %d rows", prepared.n_fit, rows.n_samples)
        # one bar of the restarts once the fit has run 2 s (utils/progress.py)
        with RestartProgress(config.n_restarts, config.verbose, start=clock.start) as progress:
            searched = search(config, prepared, rows, progress)
        clock.lap("restarts")
        if config.searched:  # the list, from every restart's components
            searched.searched = search_list(config, prepared, searched.component_etas, searched.best.rule_list,
                                            _coded_predict(prepared, source, rows))
            clock.lap("search")
        elif config.tree_searched:  # the tree (or sum of trees), from every restart's components
            soft, soft_classes = _ensemble_predictions(prepared, source, rows)
            searched.searched = search_tree(config, prepared, searched.component_etas, soft, soft_classes)
            clock.lap("search")
        readout = read_out(config, prepared, searched, rows)
        clock.lap("rules")
        logger.info("fit in %.3f s: %s", sum(clock.seconds.values()),
                    ", ".join(f"{k} {v:.3f} s" for k, v in clock.seconds.items()))
    return FitResult(prepared, searched, readout, rows.n_samples, rows.n_features, rows.names_in, clock.seconds,
                     config.reference_rules)


def _ensemble_predictions(prepared, source, rows):
    """(the ensemble's predictions of the restarts' rows: class probabilities in
    classification, columns in the ensemble's classes, or values; those classes), the
    targets the searched tree is grown on; (None, None) where the ensemble gives none of
    them (a raw Booster, a split array) or the rows are not at hand as it reads them (a
    Dask X with categories)."""
    p = prepared
    if not source.has_predict or (p.task == "classification" and not source.has_proba):
        return None, None
    if p.splits.encoding.trivial:  # the coded rows are the model's inputs as they are
        X = p.X_fit
        if rows.names_in is not None and source.feature_names is not None:  # as the model was fitted: by name
            import pandas as pd  # a DataFrame's names: pandas is there

            X = pd.DataFrame(X, columns=rows.names_in)
    elif not rows.distributed:
        X = rows.X_input if p.fit_rows is None else take_rows(rows.X_input, p.fit_rows)
    else:
        return None, None
    if p.task == "classification":
        return np.asarray(source.predict_proba(X), dtype=np.float64), source.classes
    return np.asarray(source.predict(X), dtype=np.float64).ravel(), None


def _coded_predict(prepared, source, rows):
    """The ensemble's predictions of coded rows, for the searched list's second candidate
    (search/list_path.py): in regression with y given, where the model predicts and the
    coded rows are its inputs as they are (no category codes, no zero as missing); else
    None."""
    if (prepared.task != "regression" or rows.y_input is None or not source.has_predict
            or not prepared.splits.encoding.trivial):
        return None
    names = rows.names_in

    def predict(X):
        if names is not None:  # as the model was fitted: by column name
            import pandas as pd  # a DataFrame's names: pandas is there

            X = pd.DataFrame(X, columns=names)
        return np.asarray(source.predict(X), dtype=np.float64).ravel()

    return predict


class PhaseClock:
    """Wall-clock seconds of the phases of a fit, in order (fit_seconds_)."""

    def __init__(self):
        self.seconds = {}
        self.start = self._last = time.perf_counter()

    def lap(self, name):
        now = time.perf_counter()
        self.seconds[name] = now - self._last
        self._last = now


class verbose_logging:
    """Shows the 'defrag' logger's INFO records on stderr while verbose > 0 ("auto": a
    progress bar only, utils/progress.py)."""

    def __init__(self, verbose):
        self.verbose = 0 if isinstance(verbose, str) else verbose
        self.handler = None

    def __enter__(self):
        # a handler of our own only where no logger on the way up has one: with the root
        # logger configured (logging.basicConfig) every line would print twice
        if self.verbose and not logger.hasHandlers():
            self.handler = logging.StreamHandler()
            self.handler.setFormatter(logging.Formatter("[defrag] %(message)s"))
            logger.addHandler(self.handler)
        if self.verbose:
            self.level = logger.level
            logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            logger.removeHandler(self.handler)
        if self.verbose:
            logger.setLevel(self.level)
        return False
