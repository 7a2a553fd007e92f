"""Sphinx configuration for probeval's documentation (built with -W: warnings are errors)."""

from __future__ import annotations

import probeval

project = "probeval"
author = "probeval developers"
copyright = "2026, probeval developers"
version = release = probeval.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "matplotlib.sphinxext.plot_directive",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "gallery/*.png"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# The API reference documents the public names of `probeval` (its __all__), not the modules
# that define them, so that moving code between modules never changes a documented path.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# The gallery's figures are drawn while the docs are built: the code shown is the code run.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]
plot_pre_code = "import matplotlib.pyplot as plt\nimport numpy as np\nimport probeval as pe"

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
}
# Registries only on CI machines: no inventory downloads; references stay plain text.
intersphinx_disabled_reftypes = ["*"]
intersphinx_mapping = {}

html_theme = "furo"
html_title = f"probeval {release}"
nitpicky = False
