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

"""The deployment recipes of deploy/ (issue 28), tried as far as this machine
allows (no docker, no systemd running, no kubernetes): `make deploy-check`.

ansible-core and kolla-ansible (its modules and group_vars, --no-deps) go into
a throwaway venv under the test's tmp dir. The kolla-ansible playbook gets
`ansible-playbook --syntax-check` inside kolla-ansible's own ansible tree (it
resolves kolla_container and kolla_toolbox there); the OpenStack-Ansible role
runs against localhost, `--check` and then for real, every path under tmp:
it writes nova-drs.conf and the units, the monitor alias into the throwaway
venv, and runs `nova-drs-manage db sync` on a SQLite file. Every nova.conf
fragment is loaded by oslo.config with nova's, nova-drs's and oslo.messaging's
options registered. The helm values are checked as YAML and structurally
(helm itself is a Go binary: not installed here, see deploy/README.md).
"""

import configparser
import copy
import json
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import jinja2
from jinja2 import nodes
from oslo_config import cfg
from oslo_config import generator as config_generator
import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / 'deploy'
KOLLA = DEPLOY / 'kolla'
OSA = DEPLOY / 'openstack-ansible'
HELM = DEPLOY / 'helm'
ANSIBLE_CORE = 'ansible-core==2.19.14'   # kolla-ansible 22: >=2.19,!=2.19.0,<2.21
KOLLA_ANSIBLE = 'kolla-ansible==22.2.0'  # 2026.1
NAMESPACES = ['nova.conf', 'nova_drs', 'oslo.messaging']
DAEMONS = ('nova-loadbalancer', 'nova-drs-collector')
JINJA_LINE = re.compile(r'^\s*\{%.*%\}\s*$', re.M)


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=150, **kwargs)
    assert result.returncode == 0, '%s\n%s%s' % (argv, result.stdout[-3000:],
                                                 result.stderr[-3000:])
    return result.stdout


@pytest.fixture(scope='module')
def ansible_venv(tmp_path_factory):
    venv = tmp_path_factory.mktemp('ansible') / 'venv'
    run([sys.executable, '-m', 'venv', str(venv)])
    pip = [str(venv / 'bin' / 'python'), '-m', 'pip', 'install', '-q',
           '--disable-pip-version-check']
    run(pip + [ANSIBLE_CORE])
    run(pip + ['--no-deps', KOLLA_ANSIBLE])
    return venv


def ini(text):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read_string(JINJA_LINE.sub('', text))
    return parser


def load_yaml(path):
    return yaml.safe_load(path.read_text())


def unit_argv(name):
    return shlex.split(ini((ROOT / 'etc' / 'systemd' / (name + '.service')).read_text())
                       ['Service']['ExecStart'])


def same_command(argv, name):
    """argv runs the daemon as its unit does (same program and options;
    the configuration files' directories may differ)."""
    expected = unit_argv(name)
    strip = [pathlib.PurePath(a).name for a in argv]
    return strip == [pathlib.PurePath(a).name for a in expected]


# -- every file parses, every option exists ------------------------------------

def test_every_yaml_file_parses():
    files = sorted(DEPLOY.rglob('*.yml')) + sorted(DEPLOY.rglob('*.yaml'))
    assert len(files) >= 8
    for path in files:
        assert load_yaml(path) is not None, path


def nova_conf_fragments():
    """(where, ini text) of every nova.conf fragment of the recipes."""
    def from_dict(sections):
        return ''.join('[%s]\n%s\n' % (group, ''.join('%s = %s\n' % item
                                                      for item in opts.items()))
                       for group, opts in sections.items())
    user_vars = load_yaml(OSA / 'user_variables_nova_drs.yml')
    helm = load_yaml(HELM / 'values-nova-drs.yaml')
    secret = helm['extraObjects']['nova_drs_etc']['stringData']['nova-drs.conf']
    return [
        ('kolla config/nova.conf', (KOLLA / 'config' / 'nova.conf').read_text()),
        ('kolla nova-drs.conf.j2',
         (KOLLA / 'roles/nova_drs/templates/nova-drs.conf.j2').read_text()),
        ('osa nova_nova_conf_overrides', from_dict(user_vars['nova_nova_conf_overrides'])),
        ('osa nova-drs.conf.j2', (OSA / 'roles/nova_drs/templates/nova-drs.conf.j2').read_text()),
        ('helm conf.nova', from_dict(helm['conf']['nova'])),
        ('helm nova-drs-etc', secret),
    ]


@pytest.fixture(scope='module')
def registered_opts():
    conf = cfg.ConfigOpts()
    for _namespace, groups in config_generator._list_opts(NAMESPACES):
        for group, opts in groups:
            group = getattr(group, 'name', group) or 'DEFAULT'
            for opt in opts:
                opt = copy.copy(opt)
                opt.required = False  # e.g. [cinder] auth_url: not what is tried here
                try:
                    conf.register_opt(opt, group=None if group == 'DEFAULT' else group)
                except cfg.DuplicateOptError:
                    pass
    return conf


@pytest.mark.parametrize('where,text', nova_conf_fragments(), ids=lambda v: str(v)[:30])
def test_nova_conf_fragment_loads_with_oslo_config(where, text, registered_opts, tmp_path):
    """Every option set exists (nova's, nova-drs's or oslo.messaging's) and
    oslo.config reads its value with the option's type."""
    parser = ini(text)
    path = tmp_path / 'fragment.conf'
    path.write_text(JINJA_LINE.sub('', text))
    registered_opts(args=['--config-file', str(path)], project='nova', default_config_files=[],
                    default_config_dirs=[])
    try:
        for group in ['DEFAULT'] + parser.sections():
            items = parser.defaults() if group == 'DEFAULT' else parser[group]
            ns = registered_opts if group == 'DEFAULT' else registered_opts[group]
            for key in items:
                if group != 'DEFAULT' and key in parser.defaults():
                    continue
                assert getattr(ns, key) is not None, (where, group, key)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError) as exc:
        pytest.fail('%s: %s' % (where, exc))
    finally:
        registered_opts.clear()


def test_scheduler_filters_and_weighers_exist():
    from nova_drs import filters
    names = {cls.__name__ for cls in filters.all_filters()}
    user_vars = load_yaml(OSA / 'user_variables_nova_drs.yml')
    assert set(user_vars['nova_scheduler_extra_filters']) <= names
    for where, text in nova_conf_fragments():
        section = ini(text)
        if section.has_option('filter_scheduler', 'enabled_filters'):
            enabled = section['filter_scheduler']['enabled_filters'].split(',')
            assert set(enabled) <= names, where
        if section.has_option('filter_scheduler', 'weight_classes'):
            assert section['filter_scheduler']['weight_classes'] == (
                'nova.scheduler.weights.all_weighers,nova_drs.weights.drs_weighers'), where


# -- api-paste.ini overrides ------------------------------------------------------

def test_osa_paste_overrides_are_etc_nova_drs_api_paste_ini():
    shipped = ini((ROOT / 'etc' / 'nova-drs' / 'api-paste.ini').read_text())
    overrides = load_yaml(OSA / 'user_variables_nova_drs.yml')['nova_api_paste_ini_overrides']
    for section, values in overrides.items():
        for key, value in values.items():
            assert shipped[section][key] == value, (section, key)


def test_helm_paste_inserts_the_filter_after_keystonecontext():
    paste = load_yaml(HELM / 'values-nova-drs.yaml')['conf']['paste']
    shipped = ini((ROOT / 'etc' / 'nova-drs' / 'api-paste.ini').read_text())
    assert paste['filter:drs_loadbalancer'] == dict(shipped['filter:drs_loadbalancer'])
    for name in ('composite:openstack_compute_api_v21',
                 'composite:openstack_compute_api_v21_legacy_v2_compatible'):
        pipeline = paste[name]['keystone'].split()
        at = pipeline.index('drs_loadbalancer')
        assert pipeline[at - 1] == 'keystonecontext'
        assert pipeline[-1] == 'osapi_compute_app_v21'


# -- kolla / kolla-ansible --------------------------------------------------------

def test_kolla_build_snippet_declares_a_nova_base_plugin():
    parser = ini((KOLLA / 'kolla-build.conf').read_text())
    assert parser.sections() == ['nova-base-plugin-nova-drs']
    source = parser['nova-base-plugin-nova-drs']
    assert source['type'] in ('local', 'git', 'url')
    assert source['location']
    assert source['type'] != 'git' or source['reference']


def test_kolla_template_override_uses_files_of_the_plugin_source():
    text = (KOLLA / 'template-overrides.j2').read_text()
    tree = jinja2.Environment().parse(text)
    assert tree.find(nodes.Extends).template.name == 'parent_template'
    assert [b.name for b in tree.find_all(nodes.Block)] == ['nova_base_footer']
    for used in re.findall(r'/plugins/\*/([\w./-]*\w)', text):
        assert (ROOT / used).is_file(), used


def test_kolla_config_json_runs_the_daemons_as_the_units(tmp_path):
    role = KOLLA / 'roles' / 'nova_drs'
    services = load_yaml(role / 'defaults' / 'main.yml')['nova_drs_services']
    env = jinja2.Environment()
    env.filters['bool'] = lambda value: str(value).lower() in ('true', 'yes', '1')
    template = env.from_string((role / 'templates' / 'config.json.j2').read_text())
    for name in DAEMONS:
        rendered = json.loads(template.render(
            nova_drs_command=services[name]['command'],
            nova_drs_has_credentials=name == 'nova-loadbalancer',
            container_config_directory='/var/lib/kolla/config_files'))
        argv = shlex.split(rendered['command'])
        assert same_command(argv, name), argv
        dests = {f['dest'] for f in rendered['config_files']}
        assert {a for a in argv if a.startswith('/etc/')} == dests


def test_kolla_ansible_playbook_syntax_check(ansible_venv, tmp_path):
    share = ansible_venv / 'share' / 'kolla-ansible' / 'ansible'
    tree = tmp_path / 'ansible'
    shutil.copytree(share, tree, symlinks=True)
    shutil.copy(KOLLA / 'nova-drs.yml', tree)
    shutil.copytree(KOLLA / 'roles' / 'nova_drs', tree / 'roles' / 'nova_drs')
    out = run([str(ansible_venv / 'bin' / 'ansible-playbook'), '--syntax-check',
               '-i', str(tree / 'inventory' / 'multinode'), 'nova-drs.yml'], cwd=tree)
    assert 'playbook: nova-drs.yml' in out


# -- OpenStack-Ansible ------------------------------------------------------------

def osa_run(venv, tmp_path, *extra):
    inventory = tmp_path / 'inventory.ini'
    inventory.write_text(
        '[nova_scheduler]\nlocalhost ansible_connection=local '
        'ansible_python_interpreter=%s ansible_become_method=su\n'
        '[nova_compute]\nlocalhost\n' % (venv / 'bin' / 'python'))
    state = tmp_path / 'state'
    state.mkdir(exist_ok=True)
    nova_conf = tmp_path / 'nova.conf'
    nova_conf.write_text('[drs]\nstate_path = %s\n[drs_database]\n'
                         'connection = sqlite:///%s/drs.sqlite\n' % (state, state))
    variables = {
        'nova_drs_bin': str(pathlib.Path(sys.executable).parent),  # nova-drs's scripts
        'nova_drs_python': str(venv / 'bin' / 'python'),  # the alias goes there
        'nova_drs_nova_conf': str(nova_conf), 'nova_drs_conf_dir': str(tmp_path / 'etc'),
        'nova_drs_state_path': str(state),
        'nova_drs_systemd_dir': str(tmp_path), 'nova_drs_system_user': 'root',
        'nova_drs_system_group': 'root', 'nova_drs_manage_services': False,
        'nova_drs_db_setup': False, 'nova_service_password': 'secret'}
    (tmp_path / 'vars.yml').write_text(yaml.safe_dump(variables))
    return run([str(venv / 'bin' / 'ansible-playbook'), '-i', str(inventory),
                '-e', '@%s' % (tmp_path / 'vars.yml'), *extra, str(OSA / 'nova-drs.yml')])


def test_osa_playbook_syntax_check(ansible_venv):
    run([str(ansible_venv / 'bin' / 'ansible-playbook'), '--syntax-check',
         '-i', 'localhost,', str(OSA / 'nova-drs.yml')])


def test_osa_role_check_mode_writes_nothing(ansible_venv, tmp_path):
    out = osa_run(ansible_venv, tmp_path, '--check')
    assert 'failed=0' in out
    assert not (tmp_path / 'etc').exists()
    assert not list(tmp_path.glob('*.service'))
    assert not (tmp_path / 'state' / 'drs.sqlite').exists()


def test_osa_role_applies_into_tmp(ansible_venv, tmp_path):
    osa_run(ansible_venv, tmp_path)
    assert (tmp_path / 'state' / 'drs.sqlite').is_file(), 'db sync did not run'
    purelib = run([str(ansible_venv / 'bin' / 'python'), '-c',
                   'import sysconfig; print(sysconfig.get_paths()["purelib"])']).strip()
    assert (pathlib.Path(purelib) / 'nova_drs-monitor.pth').read_text() == (
        ROOT / 'etc' / 'nova-drs' / 'nova_drs-monitor.pth').read_text()
    conf = ini((tmp_path / 'etc' / 'nova-drs.conf').read_text())
    assert conf['drs_auth']['password'] == 'secret'
    analyze = shutil.which('systemd-analyze')
    for name in DAEMONS:
        unit = tmp_path / (name + '.service')
        argv = shlex.split(ini(unit.read_text())['Service']['ExecStart'])
        assert same_command(argv, name), argv
        assert pathlib.Path(argv[0]).is_file()
        shipped = ini((ROOT / 'etc' / 'systemd' / (name + '.service')).read_text())
        rendered = ini(unit.read_text())
        for section in shipped.sections():
            for key in set(shipped[section]) - {'ExecStart', 'User', 'Group'}:
                assert rendered[section][key] == shipped[section][key], (name, key)
        if analyze:
            result = subprocess.run([analyze, 'verify', str(unit)], capture_output=True,
                                    text=True, timeout=60)
            assert (result.returncode, result.stdout + result.stderr) == (0, '')
    again = osa_run(ansible_venv, tmp_path)
    assert re.search(r'changed=0 ', again), again[-1500:]


# -- openstack-helm ---------------------------------------------------------------

def test_helm_extra_objects_run_the_daemons_as_the_units():
    values = load_yaml(HELM / 'values-nova-drs.yaml')
    objects = values['extraObjects']
    for obj in objects.values():
        assert {'apiVersion', 'kind', 'metadata'} <= set(obj) and obj['metadata']['name']
    deployments = {o['metadata']['name']: o for o in objects.values()
                   if o['kind'] == 'Deployment'}
    assert set(deployments) == set(DAEMONS)
    for name, obj in deployments.items():
        pod = obj['spec']['template']['spec']
        assert obj['spec']['selector']['matchLabels'] == obj['spec']['template'][
            'metadata']['labels']
        (container,) = pod['containers']
        assert same_command(container['command'], name), container['command']
        assert container['image'] == '{{ .Values.images.tags.nova_scheduler }}'
        mounted = {m['mountPath'] for m in container['volumeMounts']}
        volumes = {v['name'] for v in pod['volumes']}
        assert {m['name'] for m in container['volumeMounts']} <= volumes
        for path in (a for a in container['command'] if a.startswith('/etc/')):
            assert path in mounted or str(pathlib.PurePath(path).parent) in mounted, path
    assert deployments['nova-loadbalancer']['spec']['replicas'] == 1
    job = objects['nova_drs_db_sync']['spec']['template']['spec']['containers'][0]
    assert job['command'][0] == 'nova-drs-manage' and job['command'][-2:] == ['db', 'sync']


def test_helm_image_tags_and_dockerfile():
    tags = load_yaml(HELM / 'values-nova-drs.yaml')['images']['tags']
    assert len(set(tags.values())) == 1
    dockerfile = (HELM / 'Dockerfile').read_text()
    assert re.search(r'^FROM \$\{NOVA_IMAGE\}$', dockerfile, re.M)
    default = re.search(r'^ARG CONSTRAINTS=(\S+)$', dockerfile, re.M).group(1)
    assert (ROOT / default).is_file()
    assert 'tools/install-monitor-alias.py' in dockerfile
