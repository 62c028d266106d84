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

"""The documentation's references list what the code and its generators list.

Without a Sphinx build (``make docs`` does that): the configuration page's
``show-options`` and the policy page's ``show-policy`` directives are read,
their namespaces resolved as oslo.config's and oslo.policy's Sphinx
extensions resolve them, and what they would render compared with the
output of ``oslo-config-generator --namespace nova_drs`` and
``oslopolicy-sample-generator --namespace nova_drs`` (the commands README
and nova_drs/api/rbac.py document), run in-process. Also: every option the
hand-written pages name exists, every metric of the code is on the metrics
page (and none it lacks), and reno finds every release note.
"""

import configparser
import importlib.metadata
import importlib.util
import pathlib
import re

from oslo_config import cfg
from oslo_config import generator as config_generator
from oslo_policy import generator as policy_generator
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DOCS = ROOT / 'doc' / 'source'
NAMESPACE = 'nova_drs'
CONFIG_PAGE = DOCS / 'reference' / 'config.rst'
POLICY_PAGE = DOCS / 'reference' / 'policy.rst'
DIRECTIVE = re.compile(r'^\.\. (show-options|show-policy)::[ \t]*(\S*)\n'
                       r'((?:[ \t]+\S.*\n|[ \t]*\n)*)', re.M)


def directive(page, name):
    """(options, content lines) of the one ``name`` directive on ``page``."""
    found = [m for m in DIRECTIVE.finditer(page.read_text()) if m.group(1) == name]
    assert len(found) == 1, '%s: expected one %s directive' % (page, name)
    options, content = {}, []
    for line in found[0].group(3).splitlines():
        line = line.strip()
        option = re.match(r':([\w-]+):\s*(.*)', line)
        if option:
            options[option.group(1)] = option.group(2)
        elif line:
            content.append(line)
    return options, content


def generator_namespaces(page, config_file):
    """The namespaces of a generator configuration file named by ``page``,
    found as the Sphinx extensions find it (as given, else from the source
    directory)."""
    for candidate in (pathlib.Path(config_file), DOCS / config_file):
        if candidate.is_file():
            parser = configparser.ConfigParser(strict=False)
            parser.read_string(candidate.read_text())
            return [n.strip() for n in parser['DEFAULT']['namespace'].split(',')]
    pytest.fail('%s: generator configuration %s not found' % (page, config_file))


def page_namespaces(page, name):
    options, content = directive(page, name)
    if 'config-file' in options:
        return generator_namespaces(page, options['config-file'])
    return content


# -- configuration reference -------------------------------------------------

def documented_options(namespaces):
    """(group, option) pairs ``show-options`` renders for ``namespaces``
    (oslo_config.sphinxext reads them through the generator's _list_opts)."""
    pairs = set()
    for _namespace, groups in config_generator._list_opts(namespaces):
        for group, opts in groups:
            group = getattr(group, 'name', group) or 'DEFAULT'
            pairs.update((group, opt.dest) for opt in opts)
    return pairs


def generated_options(tmp_path):
    """(group, option) pairs of ``oslo-config-generator --namespace nova_drs``."""
    sample = tmp_path / 'nova-drs.conf.sample'
    config_generator.main(['--namespace', NAMESPACE, '--output-file', str(sample)])
    pairs, group = set(), None
    for line in sample.read_text().splitlines():
        header = re.match(r'^\[(\w+)\]$', line)
        option = re.match(r'^#(\w+) =( |$)', line)
        if header:
            group = header.group(1)
        elif option:
            pairs.add((group, option.group(1)))
    return pairs


def test_the_configuration_page_lists_every_generated_option(tmp_path):
    namespaces = page_namespaces(CONFIG_PAGE, 'show-options')
    assert namespaces == [NAMESPACE]
    generated = generated_options(tmp_path)
    assert len(generated) > 100, 'oslo-config-generator lists almost nothing'
    assert documented_options(namespaces) == generated


def test_the_sample_configuration_page_reads_the_same_namespace():
    conf = (ROOT / 'etc' / 'nova-drs' / 'nova-drs-config-generator.conf').read_text()
    assert re.search(r'^namespace = %s$' % NAMESPACE, conf, re.M)


# -- policy reference --------------------------------------------------------

def documented_rules(namespaces):
    """Rule names ``show-policy`` renders (oslo_policy.sphinxext reads them
    through the generator's get_policies_dict)."""
    return {rule.name for rules in policy_generator.get_policies_dict(namespaces).values()
            for rule in rules}


def generated_rules(tmp_path):
    """Rule names of ``oslopolicy-sample-generator --namespace nova_drs``."""
    sample = tmp_path / 'policy.yaml.sample'
    policy_generator.generate_sample(
        args=['--namespace', NAMESPACE, '--output-file', str(sample)], conf=cfg.ConfigOpts())
    return set(re.findall(r'^#"([^"]+)":', sample.read_text(), re.M))


def test_the_policy_page_lists_every_generated_rule(tmp_path):
    namespaces = page_namespaces(POLICY_PAGE, 'show-policy')
    assert namespaces == [NAMESPACE]
    generated = generated_rules(tmp_path)
    assert len(generated) >= 1, 'oslopolicy-sample-generator lists no rule'
    assert documented_rules(namespaces) == generated


# -- the entry points both generators load ------------------------------------

@pytest.mark.parametrize('group', ['oslo.config.opts', 'oslo.policy.policies'])
def test_the_entry_point_is_declared_installed_and_lists_something(group):
    parser = configparser.ConfigParser()
    parser.read(ROOT / 'setup.cfg')
    declared = dict(line.split('=', 1) for line in
                    parser['entry_points'][group].strip().splitlines())
    assert NAMESPACE in {name.strip() for name in declared}, (
        'setup.cfg [entry_points] %s has no %s' % (group, NAMESPACE))
    installed = importlib.metadata.entry_points(group=group, name=NAMESPACE)
    assert installed, 'reinstall nova-drs (pip install -e .): %s not installed' % group
    assert len(list(next(iter(installed)).load()())) >= 1


# -- the hand-written pages --------------------------------------------------

def test_every_option_a_page_names_exists():
    known = documented_options([NAMESPACE])
    named = set()
    for page in DOCS.rglob('*.rst'):
        for target in re.findall(r':oslo\.config:option:`([^`]+)`', page.read_text()):
            target = re.sub(r'^.*<(.+)>$', r'\1', target)
            named.add(tuple(target.split('.', 1)) if '.' in target else ('DEFAULT', target))
    assert named, 'no page names an option'
    assert named - known == set()


def test_the_metrics_page_lists_every_metric_of_the_code():
    code = ''.join(p.read_text() for p in (ROOT / 'nova_drs' / 'observability').glob('*.py'))
    declared = set(re.findall(r"'(nova_drs_[a-z_]+)'", code))
    page = (DOCS / 'admin' / 'metrics.rst').read_text()
    listed = {re.sub('_total$', '', m) for m in re.findall(r'``(nova_drs_[a-z_]+)``', page)}
    assert len(declared) > 10
    assert declared == listed


def test_reno_finds_every_release_note():
    from reno import config as reno_config
    from reno import loader

    spec = importlib.util.spec_from_file_location('reno_merges', DOCS / '_ext' / 'reno_merges.py')
    reno_merges = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reno_merges)
    reno_merges.patch_aggregator()
    conf = reno_config.Config(str(ROOT), 'releasenotes')
    with loader.Loader(conf) as notes:
        found = {pathlib.Path(name).name for version in notes.versions
                 for name, _sha in notes[version]}
    assert found == {p.name for p in (ROOT / 'releasenotes' / 'notes').glob('*.yaml')}
