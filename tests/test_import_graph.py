"""The package's import graph, read from the source with ast: each room imports only the rooms
listed for it (ROOMS), no cycles, no private names taken from a room above nor from another
module, no imports inside functions but optional dependencies and commented lazy loading
(README, "How the code is laid out")."""
import ast
import os

import pytest

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "defrag")
PACKAGE = "defrag"
# third-party packages that are optional extras: imported where they are used
OPTIONAL = {"dask", "distributed", "pandas", "pyarrow", "matplotlib", "xgboost", "lightgbm",
            "catboost", "skops", "joblib", "tqdm", "IPython", "imodels"}

# The rooms (README, "How the code is laid out": a package of defrag/, or a top-level module)
# and the rooms each may import. The representation (rules) knows nothing of the search of
# printed forms (search), and the search nothing of the fit's stages (fit), which call it.
# "defrag" is the package's __init__ (its estimators load by name, on first use).
_RULE_MODELS = {"evaluation", "rules", "sources", "splits", "utils"}
_FRONT = {"defrag", "cli", "model_files", "plot", "rules", "sources", "utils"}
ROOMS = {
    "utils": set(),
    "splits": {"utils"},
    "sources": {"splits", "utils"},
    "rules": {"splits", "utils"},
    "search": {"rules", "splits", "utils"},
    "evaluation": {"rules", "sources", "utils"},
    "fit": {"evaluation", "rules", "search", "sources", "splits", "utils"},
    "baselines": _RULE_MODELS,
    "proxy": _RULE_MODELS,
    "prototypes": _RULE_MODELS,
    "defrag_model": {"evaluation", "fit", "rules", "search", "sources", "utils"},
    "defrag": {"rules", "splits", "utils"},
    "cli": _FRONT,
    "model_files": _FRONT,
    "plot": _FRONT,
    "__main__": {"cli", "utils"},
}


def _modules_in(package_dir):
    """{dotted module name: (path, is_package)} of every .py, .pyx and .pxd file of the
    package at package_dir."""
    found = {}
    for folder, _, files in os.walk(package_dir):
        rel = os.path.relpath(folder, os.path.dirname(package_dir)).split(os.sep)
        for name in files:
            stem, ext = os.path.splitext(name)
            if ext not in (".py", ".pyx", ".pxd"):
                continue
            if stem == "__init__":
                found[".".join(rel)] = (os.path.join(folder, name), True)
            else:
                found.setdefault(".".join(rel + [stem]), (os.path.join(folder, name), False))
    return found


MODULES = _modules_in(PACKAGE_DIR)


def _is_private(part):
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _commented(lines, first, last):
    """Whether a comment says why: on the import's lines, or above it in the group of
    imports (and comment lines) it belongs to."""
    if any("#" in lines[i - 1] for i in range(first, last + 1)):
        return True
    i = first - 1
    while i >= 1:
        text = lines[i - 1].strip()
        if text.startswith("#"):
            return True
        if not (text.startswith(("from ", "import ")) or text == ""):
            return False
        i -= 1
    return False


def _imports(module):
    """(target dotted path, [imported names], line, inside a function, commented) of each
    import of a .py module, relative imports resolved."""
    path, is_package = MODULES[module]
    with open(path) as f:
        source = f.read()
    lines = source.splitlines()
    package = module if is_package else module.rsplit(".", 1)[0]
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                commented = _commented(lines, child.lineno, child.end_lineno)
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        out.append((alias.name, [], child.lineno, in_function, commented))
                else:
                    if child.level:
                        base = package.split(".")[: len(package.split(".")) - child.level + 1]
                        target = ".".join(base + ([child.module] if child.module else []))
                    else:
                        target = child.module
                    out.append((target, [a.name for a in child.names], child.lineno, in_function, commented))
            visit(child, inner)

    visit(ast.parse(source), False)
    return out


def _edges():
    """{module: {imported package module}} for the package's .py modules."""
    graph = {}
    for module, (path, _) in MODULES.items():
        if not path.endswith(".py"):
            continue
        targets = graph.setdefault(module, set())
        for target, names, *_ in _imports(module):
            if not (target == PACKAGE or target.startswith(PACKAGE + ".")):
                continue
            for name in names or [None]:
                full = f"{target}.{name}" if name else target
                targets.add(full if full in MODULES else target)
    return graph


def room_of(module):
    """The room of a dotted module name: its package under defrag, or its top-level module."""
    parts = module.split(".")
    return PACKAGE if len(parts) == 1 else parts[1]


def room_imports():
    """Imports of a room that ROOMS does not list for the importer's room, and modules in no
    room of ROOMS."""
    bad = []
    for module, targets in sorted(_edges().items()):
        room = room_of(module)
        if room not in ROOMS:
            bad.append(f"{module} is in no room of ROOMS (add its room, with the rooms it may import)")
            continue
        for target in sorted(targets):
            if room_of(target) != room and room_of(target) not in ROOMS[room]:
                bad.append(f"{module} imports {target}: {room} may import {sorted(ROOMS[room]) or 'nothing'}")
    return bad


def find_cycles(graph):
    """The strongly connected components of more than one module (or a self-import)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return cycles


def private_imports():
    """Imports of a private name (a module or an attribute whose name starts with _) that lies
    in a package which is not the importer's own package or one below it."""
    bad = []
    for module, (path, is_package) in MODULES.items():
        if not path.endswith(".py"):
            continue
        package = module if is_package else module.rsplit(".", 1)[0]
        for target, names, line, *_ in _imports(module):
            if not (target == PACKAGE or target.startswith(PACKAGE + ".")):
                continue
            for name in names or [None]:
                parts = (target + (f".{name}" if name else "")).split(".")
                for i, part in enumerate(parts):
                    if _is_private(part):
                        home = ".".join(parts[:i])
                        message = f"{module}:{line} imports {'.'.join(parts[:i + 1])}"
                        if not (home == package or home.startswith(package + ".")) and message not in bad:
                            bad.append(message)
                        break
    return bad


def private_names_from_modules():
    """Imports of a private attribute (a name starting with _) of another Python module of
    the package: what a module shares is public. A compiled extension module (``_x``, a
    .pyx file) and a private module of the importer's own package are modules, not names
    (``private_imports`` judges those)."""
    bad = []
    for module, (path, _) in MODULES.items():
        if not path.endswith(".py"):
            continue
        for target, names, line, *_ in _imports(module):
            if not target.startswith(PACKAGE + ".") or target not in MODULES:
                continue
            for name in names:
                if _is_private(name) and f"{target}.{name}" not in MODULES:
                    bad.append(f"{module}:{line} imports {target}.{name}")
    return bad


def function_imports():
    """Imports inside functions that are neither an optional dependency nor commented."""
    bad = []
    for module, (path, _) in MODULES.items():
        if not path.endswith(".py"):
            continue
        for target, names, line, in_function, commented in _imports(module):
            if in_function and target.split(".")[0] not in OPTIONAL and not commented:
                bad.append(f"{module}:{line} imports {target} inside a function, without a comment")
    return bad


def test_each_room_imports_only_the_rooms_listed_for_it():
    bad = room_imports()
    assert not bad, "\n".join(bad)


def test_the_room_check_finds_one(tmp_path, monkeypatch):
    # the search importing the fit that calls it is refused; the fit importing the search,
    # and a search module importing another, are not
    root = tmp_path / PACKAGE
    for room in ("search", "fit"):
        (root / room).mkdir(parents=True)
        (root / room / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "fit" / "stage.py").write_text("from ..search import path\n")
    (root / "search" / "path.py").write_text("from . import grow\nfrom ..fit.stage import x\n")
    (root / "search" / "grow.py").write_text("")
    monkeypatch.setitem(globals(), "MODULES", _modules_in(str(root)))
    assert room_imports() == [f"{PACKAGE}.search.path imports {PACKAGE}.fit.stage: search may import "
                              "['rules', 'splits', 'utils']"]


def test_no_import_cycles():
    cycles = find_cycles(_edges())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_private_names_from_a_room_above():
    bad = private_imports()
    assert not bad, "\n".join(bad)


def test_no_private_names_from_another_module():
    bad = private_names_from_modules()
    assert not bad, "\n".join(bad)


def test_the_private_name_check_finds_one(tmp_path, monkeypatch):
    # a module that imports a private function of a sibling is refused; the sibling's
    # compiled module (a .pyx) and a private module of the same package are not
    pkg = tmp_path / PACKAGE / "room"
    pkg.mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def _helper():\n    pass\n")
    (pkg / "_kernel.pyx").write_text("")
    (pkg / "_base.py").write_text("")
    (pkg / "b.py").write_text("from . import _kernel\nfrom ._base import *\nfrom .a import _helper\n")
    monkeypatch.setitem(globals(), "MODULES", _modules_in(str(tmp_path / PACKAGE)))
    assert private_names_from_modules() == [f"{PACKAGE}.room.b:3 imports {PACKAGE}.room.a._helper"]


def test_imports_inside_functions_are_optional_or_commented():
    bad = function_imports()
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"a"}}, [["a"]]),
])
def test_cycle_finder(graph, expected):
    assert find_cycles(graph) == expected


def test_every_package_of_the_source_tree_is_installed():
    # pyproject.toml lists the packages a wheel holds: a package of defrag/ left out is
    # absent from an installed defrag (the in-place build imports it from the checkout)
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "pyproject.toml").read_text()
    listed = set(re.findall(r'"(defrag(?:\.\w+)*)"', re.search(r"packages = \[(.*?)\]", text, re.S).group(1)))
    packages = {".".join(p.parent.relative_to(root).parts) for p in (root / "defrag").rglob("__init__.py")}
    assert packages == listed
