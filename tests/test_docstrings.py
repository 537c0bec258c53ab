"""The docstrings of defrag's public API checked as scikit-learn checks its own
(numpydoc.validate), and their Examples run as doctests.

Checked: every name of ``defrag.__all__``. The class docstrings (the estimators, the rule
classes Condition, Rule, RuleSet and RuleTree, SplitTable, DefragMemoryError) and the
functions with every numpydoc rule but those of IGNORED; the classes' public methods with
those but METHODS_IGNORED too (as scikit-learn checks its own: a method needs no See Also,
Examples or extended summary). Each ignored code has its reason. Properties are documented
in their class's Attributes section and not checked one by one.
"""
import doctest
import importlib

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

ESTIMATORS = [
    "defrag.defrag_model.DefragModel",
    "defrag.baselines.born_again.BornAgainTree",
    "defrag.baselines.depth_two.DepthTwoTree",
    "defrag.baselines.intrees.InTrees",
    "defrag.baselines.node_harvest.NodeHarvest",
    "defrag.proxy.estimators.ProxyTree",
    "defrag.proxy.estimators.ProxyTreeClassifier",
    "defrag.prototypes.explainer.PrototypeExplainer",
]
CLASSES = ESTIMATORS + [
    "defrag.rules.conditions.Condition",
    "defrag.rules.ruleset.Rule",
    "defrag.rules.tree.RuleSet",
    "defrag.rules.tree.RuleTree",
    "defrag.splits.table.SplitTable",
    "defrag.utils.memory.DefragMemoryError",
]
FUNCTIONS = [
    "defrag.utils.memory.set_max_memory",
    "defrag.utils.memory.max_memory",
    "defrag.utils.config.show_config",
    "defrag.sources.split_array.split_table_from_array",
    "defrag.sources.split_table_from_estimator",
    "defrag.proxy.stability.bootstrap_instability",
    "defrag.proxy.estimators.explain_local",
    "defrag.proxy.reference.reference_predictions",
    "defrag.proxy.reference.reference_proba",
    "defrag.proxy.stability.tree_dissimilarity",
    "defrag.prototypes.distance.tree_distance",
]

IGNORED = {
    # scikit-learn ignores these two as well (its maintenance/test_docstrings.py)
    "GL01": "the summary may start on the line of the opening quotes",
    "GL02": "the closing quotes may follow the last line",
}
# scikit-learn asks these of the class docstring only
METHODS_IGNORED = {
    "ES01": "a method's summary may say it all",
    "SA01": "See Also is the class's",
    "EX01": "the class's Examples show the methods",
}


def _public_methods():
    """Paths of the public methods the classes define in defrag (scikit-learn's generated
    set_*_request ones excluded)."""
    import inspect

    out = []
    for path in CLASSES:
        module, _, name = path.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        for attr in sorted(dir(cls)):
            if attr.startswith("_") or attr.endswith("_request"):
                continue
            owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
            value = vars(owner)[attr] if owner is not None else None
            if owner is None or not owner.__module__.startswith("defrag") or not (
                    inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod))
                    or callable(getattr(value, "fn", None))):  # available_if
                continue
            out.append(f"{owner.__module__}.{owner.__qualname__}.{attr}")
    return sorted(set(out))


METHODS = _public_methods()


def test_the_methods_are_found():
    assert "defrag.defrag_model.DefragModel.fit" in METHODS
    assert "defrag.fit.readout.MixtureReadoutMixin.evaluate" in METHODS
    assert "defrag.baselines._base.BaselineModel.predict_proba" in METHODS  # behind available_if
    assert "defrag.rules.tree.RuleTree.predictions" in METHODS
    assert "defrag.rules.ruleset.ListForm.table_rows" in METHODS  # a list's, inherited
    assert "defrag.rules.explanation.Explanation.predict" in METHODS  # every form's
    assert "defrag.rules.deliverables.Deliverables.from_dict" in METHODS  # a classmethod
    assert "defrag.rules.deliverables.Deliverables.from_json" in METHODS  # every form's
    assert "defrag.splits.table.SplitTable.ranks" in METHODS
    assert len(METHODS) > 80


def test_every_public_name_is_checked():
    import defrag

    checked = {}
    for path in CLASSES + FUNCTIONS:
        module, _, name = path.rpartition(".")
        checked[name] = getattr(importlib.import_module(module), name)
    missing = set(defrag.__all__) - set(checked)
    assert not missing, f"not checked: {sorted(missing)}"
    for name in defrag.__all__:  # the paths are where the public names are defined
        assert getattr(defrag, name) is checked[name]


@pytest.mark.parametrize("path", METHODS)
def test_method_docstring_follows_numpydoc(path):
    result = numpydoc_validate.validate(path)
    errors = [f"{code}: {message}" for code, message in result["errors"]
              if code not in IGNORED and code not in METHODS_IGNORED]
    assert not errors, f"{path}:\n" + "\n".join(errors)


@pytest.mark.parametrize("path", CLASSES + FUNCTIONS)
def test_docstring_follows_numpydoc(path):
    result = numpydoc_validate.validate(path)
    errors = [f"{code}: {message}" for code, message in result["errors"] if code not in IGNORED]
    assert not errors, f"{path}:\n" + "\n".join(errors)


# DefragMemoryError takes its message as every exception does (BaseException's *args)
@pytest.mark.parametrize("path", [p for p in CLASSES + FUNCTIONS if not p.endswith("DefragMemoryError")])
def test_every_parameter_is_documented_in_the_signature_order(path):
    # numpydoc's PR01/PR02 say a parameter is missing or unknown; the order is read here
    import inspect

    from numpydoc.docscrape import ClassDoc, FunctionDoc

    module, _, name = path.rpartition(".")
    obj = getattr(importlib.import_module(module), name)
    doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
    documented = [n.strip().lstrip("*") for p in doc["Parameters"] + doc["Other Parameters"]
                  for n in p.name.split(",")]
    signature = [n for n in inspect.signature(obj).parameters]
    assert documented == signature


@pytest.mark.parametrize("module", sorted({p.rpartition(".")[0] for p in CLASSES + FUNCTIONS}))
def test_examples_run(module):
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mod) if t.examples]
    assert tests, f"{module} has no examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {module} failed"
