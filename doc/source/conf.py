# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Sphinx configuration of the nova-drs documentation (make docs, tox -e docs).

Run from the repository root (reno reads the git history there):
``sphinx-build -E -W --keep-going -b html doc/source doc/build/html``.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

extensions = [
    "openstackdocstheme",
    "myst_parser",
    "oslo_config.sphinxext",
    "oslo_config.sphinxconfiggen",
    "oslo_policy.sphinxext",
    "oslo_policy.sphinxpolicygen",
    # sphinxcontrib.openapi with the renderer of reference/api.rst.
    "openapi_renderer",
    "sphinxcontrib.mermaid",
    # admin/clusters: the table of nova_drs.aggregate_keys.
    "aggregate_keys_table",
    # Before reno.sphinxext: lets reno scan this repository's merges.
    "reno_merges",
    "reno.sphinxext",
]

project = "nova-drs"
copyright = "nova-drs developers"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_ext", "_generated"]
pygments_style = "native"

# The existing Markdown pages use "#"-anchored links to their own headings.
myst_heading_anchors = 3
# trust-model.md draws with Mermaid (sphinxcontrib-mermaid: mermaid.js draws it
# in the reader's browser).
myst_fence_as_directive = ["mermaid"]
# The Markdown pages' ```ini / ```sh blocks and the OpenAPI examples.
highlight_language = "none"

# Generator configurations shared with the command-line tools; the samples
# are written to _generated (made by the build, ignored by git) and shown by
# reference/config-sample and reference/policy-sample.
config_generator_config_file = [
    ("../../etc/nova-drs/nova-drs-config-generator.conf", "_generated/nova-drs"),
]
policy_generator_config_file = [
    ("../../etc/nova-drs/nova-drs-policy-generator.conf", "_generated/nova-drs"),
]

html_theme = "openstackdocs"
openstackdocs_repo_name = "openstack/nova-drs"
openstackdocs_auto_name = False
openstackdocs_use_storyboard = False
html_theme_options = {"display_badge": False}

# Every cross-reference must resolve (with -W a dangling one fails the build).
nitpicky = True
