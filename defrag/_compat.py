"""Module paths of earlier layouts, for pickles: a model pickled by an earlier version
names the classes of its parts by the modules they lived in (``defrag._rules.RuleSet``,
``defrag._splits.SplitTable``, ``defrag._inputs.InputEncoding``, before the package had
rooms). Each old path is answered by a module that reads its names from the new home,
made on first import, so that ``pickle.load`` finds them; nothing else uses these paths.
(``defrag/model.py``, DefragModel's module before ``defrag_model.py``, is a file of its own.)
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

MOVED = {  # old module: the new modules that hold its names
    "defrag._rules": ("defrag.rules.ruleset", "defrag.rules.conditions", "defrag.rules.extract"),
    "defrag._rule_list": ("defrag.rules.lists",),
    "defrag._export": ("defrag.rules.document", "defrag.rules.export"),
    "defrag._splits": ("defrag.splits.table",),
    "defrag._inputs": ("defrag.splits.inputs",),
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of MOVED; each is a module whose attributes are its new home's."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return None  # the default: an empty module of that name

    def exec_module(self, module):
        homes = [importlib.import_module(name) for name in MOVED[module.__name__]]
        module.__doc__ = f"Moved to {', '.join(MOVED[module.__name__])}; kept for pickles of earlier versions."

        def __getattr__(name):
            for home in homes:
                if hasattr(home, name):
                    return getattr(home, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__


def install():
    """Answer the old paths (once per process)."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())


__all__ = ["MOVED", "install"]
