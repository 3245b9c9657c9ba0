"""Sphinx configuration of bayeval's documentation (``make docs``; warnings are errors)."""

import bayeval

project = "bayeval"
author = "the bayeval developers"
release = version = bayeval.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
    "matplotlib.sphinxext.plot_directive",
]

# The notebooks are shown with the outputs they were saved with; `make test` runs them (nbmake).
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

autosummary_generate = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()  # ruff's pydocstyle rules check the docstrings' form
numpydoc_xref_param_type = False

# No network at build time: cross-references to other projects are not resolved.
intersphinx_mapping = {}

plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]

html_theme = "pydata_sphinx_theme"
html_title = f"bayeval {release}"
html_theme_options = {"navigation_with_keys": False}

# -- the API reference: every public name of each subpackage, from its ``__all__`` -------------
API = {
    "bayeval": "Pools, the workflows and the intervals of a fixed sample",
    "bayeval.sampling": "Samplers: which items to label (ask and tell)",
    "bayeval.session": "Durable labelling sessions",
    "bayeval.widget": "The notebook labelling widget",
    "bayeval.measures": "Measures",
    "bayeval.models": "Models of the labels",
    "bayeval.comparison": "Which system is better",
    "bayeval.ondemand": "Many systems, one after another",
    "bayeval.curves": "Precision curves of massive ranked lists",
    "bayeval.intervals": "Intervals of a fixed stratified sample",
    "bayeval.results": "Results",
    "bayeval.plots": "Plots",
    "bayeval.oracles": "Label sources for simulations",
    "bayeval.simulate": "Coverage studies",
    "bayeval.datasets": "Data sets",
}


def _write_api(folder):
    """Write ``api.rst``: a table per subpackage of its public functions and classes.

    Constants and subpackages are left out, and the top level's names that a subpackage
    documents.
    """
    import importlib
    import inspect
    from pathlib import Path

    lines = ["API reference", "=============", ""]
    others = [importlib.import_module(name) for name in API if name != "bayeval"]
    elsewhere = {m for module in others for m in module.__all__}
    for name, title in API.items():
        module = importlib.import_module(name)
        members = [m for m in module.__all__ if not m.isupper() and not m.startswith("_")]
        members = [m for m in members if not inspect.ismodule(getattr(module, m))]
        if name == "bayeval":  # the top level's names documented once, where they live
            members = [m for m in members if m not in elsewhere]
        lines += [
            title,
            "-" * len(title),
            "",
            f".. currentmodule:: {name}",
            "",
            ".. autosummary::",
            "   :toctree: generated",
            "",
        ]
        lines += [f"   {m}" for m in sorted(members, key=str.lower)] + [""]
    Path(folder, "api.rst").write_text("\n".join(lines))


_write_api(__import__("pathlib").Path(__file__).parent)  # before autosummary reads it
