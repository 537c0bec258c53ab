"""Sphinx configuration of defrag's documentation.

Build from the repository root: ``pip install ".[docs]" && make -C docs html``, or after an
in-place build (``python setup.py build_ext --inplace``) ``make -C docs html`` alone. A
checkout built in place documents itself: its root (the folder above docs/) comes first on
the path, so that neither an installed defrag nor another checkout's takes its place (an
editable install of another checkout would otherwise win). A checkout that is not built in
place (a fresh clone after ``pip install .``, as in CI) documents the installed package.
"""
import glob
import importlib.machinery
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _built_in_place(root):
    """Whether the checkout at root holds its compiled extensions (an in-place build)."""
    return any(glob.glob(os.path.join(root, "defrag", "**", "*" + suffix), recursive=True)
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


if _built_in_place(ROOT):
    sys.path.insert(0, ROOT)  # this checkout's defrag, for autodoc and the gallery alike
sys.path.insert(1, os.path.join(HERE, "sphinxext"))

import defrag  # noqa: E402 - after the path is set

if _built_in_place(ROOT) and os.path.dirname(os.path.dirname(os.path.abspath(defrag.__file__))) != ROOT:
    raise RuntimeError(f"the docs of {ROOT} would document another defrag: {defrag.__file__}")

project = "defrag"
author = "the defrag developers"
copyright = "the defrag developers"  # noqa: A001 - Sphinx's name
release = defrag.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
default_role = "literal"  # `x` in the guide is code, as in the README
nitpicky = False

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"
# numpydoc renders the Parameters / Attributes / Returns sections; the classes' method
# tables come from the autosummary template (_templates/autosummary/class.rst), not
# from numpydoc, so that every listed method has a page.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True


# -- Gallery -----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",          # every plot_*.py is executed at build time
    "ignore_pattern": r"readme_plot\.py",   # writes docs/rules_2d.png for the README
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    # defrag.plot draws without pyplot: sphinxext/defrag_figures.py saves its Figures
    "image_scrapers": ("matplotlib", "defrag_figures.scraper"),
    "backreferences_dir": None,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
}



# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"defrag {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False

# Examples draw with matplotlib's non-interactive backend; their own warnings are theirs.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")


def _skip_member(app, what, name, obj, skip, options):
    """Leave out the set_*_request methods scikit-learn's metadata routing adds to
    estimators whose fit takes more than X and y: their docstrings are scikit-learn's."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
