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

"""The paste filter that serves ``/loadbalancer...`` inside nova-api.

nova 34 has no API-extension loader; a WSGI filter in nova's api-paste.ini
pipeline, placed after ``keystonecontext`` so every request carries nova's
RequestContext, is the supported way to add routes without patching nova.
Requests for any other path go to nova untouched.

Routes (with or without the project id, as in nova since 2.18)::

    GET    /loadbalancer                 hosts with DRS state and statistics
    GET    /loadbalancer/{host}          one host
    POST   /loadbalancer/action          suspend_host | unsuspend_host | wake_test | set_power
                                         | scale_server | clear_wake_failed
                                         | enter_maintenance | exit_maintenance
    GET    /loadbalancer/rules           allow/deny rules
    POST   /loadbalancer/rules
    GET    /loadbalancer/rules/{rule_id}
    DELETE /loadbalancer/rules/{rule_id}
    GET    /loadbalancer/plan            the last plan with its reasons
    GET    /loadbalancer/plans           plans, newest first (status, cluster, age)
    GET    /loadbalancer/plans/{id}      one plan with each action's progress
    POST   /loadbalancer/plan/action     approve | reject
    GET    /loadbalancer/policies        installed algorithms and their parameters
    GET    /loadbalancer/requests/{id}   progress and outcome of a scale_server request
    GET    /loadbalancer/energy          kWh drawn and saved (?since=7d&cluster=X)
    GET    /loadbalancer/explain/hosts/{host}          why a host was (not) suspended,
    GET    /loadbalancer/explain/servers/{server_id}   why a server was (not) moved
                                         (?cycles=N, the last N cycles, 1..100)

Every request goes through the same steps, in nova's order: microversion
negotiation (400 for a malformed ``OpenStack-API-Version``, 406 outside
nova's range), the route's policy gate before anything of the request is
decoded (so a caller without rights gets 403 whatever the path, query or
body), then path, query and body validated before use (400/404), then the
controller. nova's request-size limit stays in force (413). The catch-all
500 is for real bugs only, logged with the traceback.
"""

import collections
import json

from nova import exception as nova_exception
from nova.api.openstack import wsgi as nova_wsgi
from oslo_db import exception as db_exc
from oslo_log import log as logging
import routes
import sqlalchemy.exc
import webob.dec
import webob.exc

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.api import algorithms
from nova_drs.api import energy
from nova_drs.api import explain
from nova_drs.api import faults
from nova_drs.api import hosts
from nova_drs.api import plans
from nova_drs.api import rbac
from nova_drs.api import rules
from nova_drs.api import schemas
from nova_drs.db import api as db_api

LOG = logging.getLogger(__name__)

#: controller and method that serve a route; ``gate``: the policy rules of
#: which the caller must pass at least one before anything is decoded;
#: ``query``: the schema of its query string.
Route = collections.namedtuple('Route', 'controller action gate query')


def _route(controller, action, *gate, query=schemas.NO_QUERY):
    return Route(controller, action, gate, query)


#: (path under /loadbalancer, {method: Route}); fixed paths come before
#: ``{host}`` so "rules", "plan", ... are never taken for hosts.
ROUTES = (
    ('', {'GET': _route('hosts', 'list', rbac.HOST_LIST)}),
    ('/action', {'POST': _route('hosts', 'action', *hosts.ACTION_RULES)}),
    ('/rules', {'GET': _route('rules', 'list', rbac.RULE_LIST),
                'POST': _route('rules', 'create', rbac.RULE_CREATE)}),
    ('/rules/{rule_id}', {'GET': _route('rules', 'show', rbac.RULE_SHOW),
                          'DELETE': _route('rules', 'delete', rbac.RULE_DELETE)}),
    ('/plan', {'GET': _route('plans', 'show', rbac.PLAN_SHOW,
                             query=schemas.PLAN_QUERY)}),
    ('/plan/action', {'POST': _route('plans', 'action', *plans.DECISION_RULES)}),
    ('/plans', {'GET': _route('plans', 'list', rbac.PLAN_LIST,
                              query=schemas.PLAN_LIST_QUERY)}),
    ('/plans/{plan_id}', {'GET': _route('plans', 'get', rbac.PLAN_SHOW)}),
    ('/policies', {'GET': _route('algorithms', 'list', rbac.POLICY_LIST)}),
    ('/requests/{request_id}', {'GET': _route('hosts', 'show_request',
                                              rbac.SCALE_SHOW)}),
    ('/energy', {'GET': _route('energy', 'report', rbac.ENERGY_REPORT,
                               query=schemas.ENERGY_QUERY)}),
    ('/explain/hosts/{host}', {'GET': _route('explain', 'host', rbac.EXPLAIN,
                                             query=schemas.EXPLAIN_QUERY)}),
    ('/explain/servers/{server_id}', {'GET': _route('explain', 'server', rbac.EXPLAIN,
                                                    query=schemas.EXPLAIN_QUERY)}),
    ('/{host}', {'GET': _route('hosts', 'show', rbac.HOST_SHOW)}),
)

#: Path parameters that are row ids: anything but an id in range is 404.
ID_PARAMETERS = {'rule_id': 'rule', 'request_id': 'request', 'plan_id': 'plan'}

DB_ERRORS = (exception.DatabaseError, db_exc.DBError, sqlalchemy.exc.SQLAlchemyError)


def _mapper():
    mapper = routes.Mapper()
    for index, (path, _methods) in enumerate(ROUTES):
        for prefix in ('', '/{project_id}'):
            mapper.connect(prefix + '/loadbalancer' + path, route=index)
    return mapper


def _utf8(native):
    """A WSGI native string (bytes as latin-1) decoded as UTF-8."""
    try:
        return native.encode('latin-1').decode('utf-8')
    except UnicodeError:
        raise webob.exc.HTTPBadRequest('the request path is not valid UTF-8') from None


def negotiate_version(req):
    """nova's microversion of the request, or the fault nova would answer.

    The legacy /v2 pipeline has no microversions (nova ignores the header).
    """
    if req.script_name.rstrip('/').endswith('/v2'):
        return None
    nova_req = nova_wsgi.Request(req.environ)
    try:
        nova_req.set_api_version_request()
    except nova_exception.InvalidAPIVersionString as exc:
        raise webob.exc.HTTPBadRequest(exc.format_message()) from None
    except nova_exception.InvalidGlobalAPIVersion as exc:
        raise webob.exc.HTTPNotAcceptable(exc.format_message()) from None
    return nova_req.api_version_request


def version_headers(response, version):
    """The version headers nova sets on every microversioned answer."""
    if version is None or version.is_null():
        return response
    response.headers[nova_wsgi.API_VERSION_REQUEST_HEADER] = (
        'compute ' + version.get_string())
    response.headers[nova_wsgi.LEGACY_API_VERSION_REQUEST_HEADER] = version.get_string()
    response.headers.add('Vary', nova_wsgi.API_VERSION_REQUEST_HEADER)
    response.headers.add('Vary', nova_wsgi.LEGACY_API_VERSION_REQUEST_HEADER)
    return response


class LoadBalancerMiddleware:
    """Answers ``/loadbalancer...`` requests; passes everything else to nova."""

    def __init__(self, application):
        self.application = application
        self.mapper = _mapper()
        self._database = None
        rbac.register()

    @classmethod
    def factory(cls, global_config, **local_config):
        def _filter(application):
            return cls(application)
        return _filter

    @property
    def database(self):
        # Created on first use: nova-api has parsed nova.conf by then.
        if self._database is None:
            self._database = db_api.Database.from_conf(drs_conf.CONF)
        return self._database

    def _controllers(self):
        database = self.database
        return {'hosts': hosts.HostsController(database),
                'rules': rules.RulesController(database),
                'plans': plans.PlansController(database),
                'algorithms': algorithms.AlgorithmsController(),
                'energy': energy.EnergyController(database),
                'explain': explain.ExplainController(database)}

    @webob.dec.wsgify
    def __call__(self, req):
        # The raw path: decoding it could fail, and must wait for the policy gate.
        match = self.mapper.match(req.environ.get('PATH_INFO', ''))
        if match is None:
            return self.application
        context = req.environ.get('nova.context')
        project_id = match.pop('project_id', None)
        if project_id is not None and (context is None or project_id != context.project_id):
            # Not ours (e.g. /servers/loadbalancer): nova answers as it always did.
            return self.application
        request_id = getattr(context, 'request_id', None)
        version = None
        try:
            version = negotiate_version(req)
            return version_headers(self._dispatch(req, context, match), version)
        except webob.exc.HTTPException as exc:
            # Ours, or nova's sizelimit filter stopping a chunked body as we read it (413).
            response = faults.error_response(exc.code, exc.detail or exc.explanation,
                                             request_id)
        except DB_ERRORS as exc:
            LOG.error('nova-drs API: database error on %s %s: %s',
                      req.method, req.path_info, db_api.reason(exc))
            response = faults.error_response(
                503, 'the nova-drs database is unavailable: %s (is it reachable and '
                     'migrated with nova-drs-manage db sync?)' % db_api.reason(exc),
                request_id)
        except Exception:
            LOG.exception('nova-drs API: unexpected error on %s %r',
                          req.method, req.environ.get('PATH_INFO'))
            response = faults.error_response(
                500, 'unexpected error in the nova-drs API; the nova-api log has the '
                     'details (request %s)' % request_id, request_id)
        return version_headers(response, version)

    def _dispatch(self, req, context, match):
        methods = ROUTES[int(match.pop('route'))][1]
        if req.method not in methods:
            raise webob.exc.HTTPMethodNotAllowed('method %s is not allowed here; allowed: %s'
                                                 % (req.method, ', '.join(sorted(methods))))
        if context is None:
            LOG.error('nova-drs API: no nova.context in the request; the filter must '
                      'come after keystonecontext in api-paste.ini')
            raise webob.exc.HTTPInternalServerError(
                'nova-drs API filter misplaced in api-paste.ini')
        route = methods[req.method]
        if not any(rbac.allowed(context, rule) for rule in route.gate):
            raise webob.exc.HTTPForbidden('policy does not allow %s' % ' or '.join(route.gate))
        arguments = self._path_arguments(match)
        arguments.update(self._query_arguments(req, route.query))
        if req.method == 'POST':
            arguments['body'] = self._body(req)
        controller = self._controllers()[route.controller]
        status, body = getattr(controller, route.action)(context, **arguments)
        return faults.json_response(body, status, getattr(context, 'request_id', None))

    @staticmethod
    def _path_arguments(match):
        arguments = {}
        for name, native in match.items():
            value = _utf8(native)
            if name in ID_PARAMETERS:
                number = schemas.object_id(value)
                if number is None:
                    raise webob.exc.HTTPNotFound('%s %s not found' % (ID_PARAMETERS[name],
                                                                      ascii(value[:64])))
                arguments[name] = number
            else:
                try:
                    schemas.validate(value, schemas.HOST_PATH, what='path parameter')
                except exception.ValidationError as exc:
                    raise webob.exc.HTTPBadRequest(
                        str(exc).replace('request body', name)) from None
                arguments[name] = value
        return arguments

    @staticmethod
    def _query_arguments(req, schema):
        try:
            query = req.GET.dict_of_lists()
        except UnicodeError:
            raise webob.exc.HTTPBadRequest('the query string is not valid UTF-8') from None
        try:
            schemas.validate_query(query, schema)
        except exception.ValidationError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        return {name: values[0] for name, values in query.items()}

    @staticmethod
    def _body(req):
        try:
            return json.loads(req.body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise webob.exc.HTTPBadRequest('malformed request body: %s' % exc) from None
