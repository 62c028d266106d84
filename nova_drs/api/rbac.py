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

"""oslo.policy rules of the loadbalancer API, enforced by nova's enforcer.

Named rbac (who may call what): elsewhere in nova-drs "policy" is a
cluster's DRS policy or a decision algorithm.

Every rule defaults to ``role:admin``. The rules are registered into nova's
own enforcer, so operators override them in nova's policy file like any nova
rule, and ``oslopolicy-sample-generator --namespace nova_drs`` lists them.
"""

from nova import policy as nova_policy
from oslo_policy import policy

from nova_drs.api import faults

PREFIX = 'nova_drs:loadbalancer:%s'
ADMIN = 'role:admin'


def _rule(name, method, path, description):
    return policy.DocumentedRuleDefault(
        name=PREFIX % name, check_str=ADMIN, description=description,
        operations=[{'method': method, 'path': path}], scope_types=['project'])


HOST_LIST = PREFIX % 'host:list'
HOST_SHOW = PREFIX % 'host:show'
SUSPEND_HOST = PREFIX % 'suspend_host'
UNSUSPEND_HOST = PREFIX % 'unsuspend_host'
WAKE_TEST = PREFIX % 'wake_test'
SET_POWER = PREFIX % 'set_power'
CLEAR_WAKE_FAILED = PREFIX % 'clear_wake_failed'
ENTER_MAINTENANCE = PREFIX % 'enter_maintenance'
EXIT_MAINTENANCE = PREFIX % 'exit_maintenance'
RULE_LIST = PREFIX % 'rule:list'
RULE_SHOW = PREFIX % 'rule:show'
RULE_CREATE = PREFIX % 'rule:create'
RULE_DELETE = PREFIX % 'rule:delete'
PLAN_SHOW = PREFIX % 'plan:show'
PLAN_APPROVE = PREFIX % 'plan:approve'
PLAN_REJECT = PREFIX % 'plan:reject'
POLICY_LIST = PREFIX % 'policy:list'
SCALE_SERVER = PREFIX % 'scale_server'
SCALE_SHOW = PREFIX % 'scale:show'
ENERGY_REPORT = PREFIX % 'energy:report'
EXPLAIN = PREFIX % 'explain'

_ACTION = '/loadbalancer/action'
_RULES = [
    _rule('host:list', 'GET', '/loadbalancer',
          'List compute hosts with their DRS state and latest statistics.'),
    _rule('host:show', 'GET', '/loadbalancer/{host}',
          'Show one compute host with its DRS state and latest statistics.'),
    _rule('suspend_host', 'POST', _ACTION,
          'Ask the DRS daemon to evacuate and suspend a host (suspend_host).'),
    _rule('unsuspend_host', 'POST', _ACTION,
          'Ask the DRS daemon to wake a host, or cancel a suspend (unsuspend_host).'),
    _rule('wake_test', 'POST', _ACTION,
          'Ask the DRS daemon to test that a host can be suspended and woken.'),
    _rule('set_power', 'POST', _ACTION,
          "Set a host's power driver, mode, wake MAC and driver options."),
    _rule('clear_wake_failed', 'POST', _ACTION,
          "Clear a host's wake_failed flag once its wake path is fixed "
          '(clear_wake_failed).'),
    _rule('enter_maintenance', 'POST', _ACTION,
          'Ask the DRS daemon to empty a host and keep it disabled and powered on '
          '(enter_maintenance).'),
    _rule('exit_maintenance', 'POST', _ACTION,
          'End the maintenance of a host; the DRS daemon re-enables it (exit_maintenance).'),
    _rule('rule:list', 'GET', '/loadbalancer/rules', 'List allow/deny rules.'),
    _rule('rule:show', 'GET', '/loadbalancer/rules/{rule_id}', 'Show an allow/deny rule.'),
    _rule('rule:create', 'POST', '/loadbalancer/rules', 'Create an allow/deny rule.'),
    _rule('rule:delete', 'DELETE', '/loadbalancer/rules/{rule_id}',
          'Delete an allow/deny rule.'),
    _rule('plan:show', 'GET', '/loadbalancer/plan',
          'Show the last plan of the loadbalancer with its reasons.'),
    _rule('plan:approve', 'POST', '/loadbalancer/plan/action',
          'Approve a pending plan (manual mode).'),
    _rule('plan:reject', 'POST', '/loadbalancer/plan/action',
          'Reject a pending plan (manual mode).'),
    _rule('policy:list', 'GET', '/loadbalancer/policies',
          'List the available loadbalancer algorithms and their parameters.'),
    _rule('scale_server', 'POST', _ACTION,
          'Ask the DRS daemon to scale a server to another flavor (scale_server).'),
    _rule('scale:show', 'GET', '/loadbalancer/requests/{request_id}',
          'Show the progress and outcome of a scale request.'),
    _rule('energy:report', 'GET', '/loadbalancer/energy',
          'Report kWh drawn and saved, suspended host-hours and migrations.'),
    policy.DocumentedRuleDefault(
        name=EXPLAIN, check_str=ADMIN, scope_types=['project'],
        description='Explain why a host or server was (or was not) moved, suspended '
                    'or woken in the last cycles.',
        operations=[{'method': 'GET', 'path': '/loadbalancer/explain/hosts/{host}'},
                    {'method': 'GET', 'path': '/loadbalancer/explain/servers/{server_id}'}]),
]


def list_rules():
    return list(_RULES)


def _enforcer():
    """nova's enforcer with our rules registered (again after a policy reset)."""
    nova_policy.init()
    # nova exposes no public accessor that does not re-parse CONF
    # (get_enforcer() does); the module global is the enforcer nova uses.
    enforcer = nova_policy._ENFORCER
    if POLICY_LIST not in enforcer.registered_rules:
        enforcer.register_defaults(_RULES)
        enforcer.load_rules(force_reload=True)
    return enforcer


def register():
    _enforcer()


def allowed(context, rule):
    """True when ``context`` passes ``rule`` (nova's ``context.can``)."""
    _enforcer()
    return bool(context.can(rule, target={'project_id': context.project_id}, fatal=False))


def authorize(context, rule):
    """Raise Forbidden (403) unless ``context`` passes ``rule``."""
    if not allowed(context, rule):
        raise faults.Forbidden('policy does not allow %s' % rule)
