"""The documentation's sources (docs/), read without building Sphinx: the API reference
lists every public name, every name it lists exists, and the build keeps warnings as
errors (the build itself runs in CI: ``make -C docs html``)."""
import importlib
import inspect
import os
import re
import sys

import pytest

import defrag
import defrag.baselines
import defrag.plot
import defrag.proxy

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
API = os.path.join(DOCS, "api.rst")


def autosummary_entries(text):
    """Fully qualified names listed in the ``autosummary`` directives of an .rst text, each
    under the module of the ``currentmodule`` directive before it."""
    names, module, lines, i = [], None, text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\.\. currentmodule::\s*(\S+)\s*$", line)
        if m:
            module = m.group(1)
        elif re.match(r"\.\. autosummary::\s*$", line):
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                entry = lines[i].strip()
                if entry and not entry.startswith(":"):  # an option such as :toctree:
                    assert module is not None, f"autosummary entry {entry!r} before any currentmodule"
                    name = entry.lstrip("~")
                    names.append(name if name.startswith(module + ".") else f"{module}.{name}")
                i += 1
            continue
        i += 1
    return names


@pytest.fixture(scope="module")
def documented():
    with open(API, encoding="utf-8") as f:
        return autosummary_entries(f.read())


def test_parser_reads_autosummary_blocks():
    text = """
.. currentmodule:: pkg

.. autosummary::
   :toctree: generated/
   :template: class.rst

   A
   ~B

Prose
=====

.. currentmodule:: pkg.sub

.. autosummary::

   c
text after
"""
    assert autosummary_entries(text) == ["pkg.A", "pkg.B", "pkg.sub.c"]


def test_reference_lists_every_public_name(documented):
    missing = sorted(set(defrag.__all__) - {n[len("defrag."):] for n in documented
                                             if n.count(".") == 1 and n.startswith("defrag.")})
    assert not missing, f"docs/api.rst does not list these names of defrag.__all__: {missing}"


def test_reference_lists_baselines_proxy_and_plots(documented):
    listed = set(documented)
    wanted = [f"defrag.baselines.{n}" for n in defrag.baselines.__all__]
    # defrag.proxy's names that the package re-exports are listed under defrag
    wanted += [f"defrag.{n}" if n in defrag.__all__ else f"defrag.proxy.{n}" for n in defrag.proxy.__all__]
    wanted += [f"defrag.plot.{name}" for name, f in vars(defrag.plot).items()
               if inspect.isfunction(f) and f.__module__ == "defrag.plot" and not name.startswith("_")]
    missing = sorted(set(wanted) - listed)
    assert not missing, f"docs/api.rst does not list: {missing}"


def test_every_listed_name_exists(documented):
    assert len(documented) == len(set(documented)), "a name is listed twice in docs/api.rst"
    for name in documented:
        module, _, attr = name.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), f"docs/api.rst lists {name}, which does not exist"


def test_build_treats_warnings_as_errors():
    with open(os.path.join(DOCS, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    options = re.search(r"^SPHINXOPTS\s*\?=(.*)$", makefile, re.M)
    assert options and "-W" in options.group(1).split() and "--keep-going" in options.group(1).split()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_docs_extra_names_the_tools():
    import tomllib

    with open(os.path.join(os.path.dirname(DOCS), "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower() for r in extras["docs"]}
    assert {"sphinx", "numpydoc", "pydata-sphinx-theme", "sphinx-gallery", "matplotlib"} <= names


def test_gallery_examples_have_titles():
    """sphinx-gallery needs each example to open with a docstring whose first line is a
    title underlined with '='."""
    examples = os.path.join(os.path.dirname(DOCS), "examples")
    scripts = sorted(f for f in os.listdir(examples) if f.startswith("plot_") and f.endswith(".py"))
    assert len(scripts) >= 9
    for script in scripts:
        with open(os.path.join(examples, script), encoding="utf-8") as f:
            head = f.read(2000)
        assert re.match(r'"""\n[^\n]+\n=+\n', head), f"examples/{script} has no title docstring"
