"""The paste filter that serves ``/loadbalancer...`` inside nova-api.

nova 34 has no API-extension loader; a WSGI filter in nova's api-paste.ini
pipeline, placed after ``keystonecontext`` so every request carries nova's
RequestContext, is the supported way to add routes without patching nova.
Requests for any other path go to nova untouched.

Routes (with or without the project id, as in nova since 2.18)::

    GET    /loadbalancer                 hosts with DRS state and statistics
    GET    /loadbalancer/{host}          one host
    POST   /loadbalancer/action          suspend_host | unsuspend_host | wake_test | set_power
                                         | scale_server
    GET    /loadbalancer/rules           allow/deny rules
    POST   /loadbalancer/rules
    GET    /loadbalancer/rules/{rule_id}
    DELETE /loadbalancer/rules/{rule_id}
    GET    /loadbalancer/plan            the last plan with its reasons
    POST   /loadbalancer/plan/action     approve | reject
    GET    /loadbalancer/policies        installed algorithms and their parameters
    GET    /loadbalancer/requests/{id}   progress and outcome of a scale_server request
    GET    /loadbalancer/energy          kWh drawn and saved (?since=7d&cluster=X)
"""

import json

from oslo_db import exception as db_exc
from oslo_log import log as logging
import routes
import sqlalchemy.exc
import webob.dec

from nova_drs.api import algorithms
from nova_drs.api import energy
from nova_drs.api import faults
from nova_drs.api import hosts
from nova_drs.api import plans
from nova_drs.api import policies
from nova_drs.api import rules
from nova_drs.api import schemas
from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api

LOG = logging.getLogger(__name__)

#: (path under /loadbalancer, {method: (controller, action)}); fixed paths
#: come before ``{host}`` so "rules", "plan", ... are never taken for hosts.
ROUTES = (
    ('', {'GET': ('hosts', 'list')}),
    ('/action', {'POST': ('hosts', 'action')}),
    ('/rules', {'GET': ('rules', 'list'), 'POST': ('rules', 'create')}),
    ('/rules/{rule_id}', {'GET': ('rules', 'show'), 'DELETE': ('rules', 'delete')}),
    ('/plan', {'GET': ('plans', 'show')}),
    ('/plan/action', {'POST': ('plans', 'action')}),
    ('/policies', {'GET': ('algorithms', 'list')}),
    ('/requests/{request_id}', {'GET': ('hosts', 'show_request')}),
    ('/energy', {'GET': ('energy', 'report')}),
    ('/{host}', {'GET': ('hosts', 'show')}),
)

DB_ERRORS = (db_api.DatabaseError, db_exc.DBError, sqlalchemy.exc.SQLAlchemyError)


def _mapper():
    mapper = routes.Mapper()
    for index, (path, _methods) in enumerate(ROUTES):
        for prefix in ('', '/{project_id}'):
            mapper.connect(prefix + '/loadbalancer' + path, route=index)
    return mapper


class LoadBalancerMiddleware:
    """Answers ``/loadbalancer...`` requests; passes everything else to nova."""

    def __init__(self, application):
        self.application = application
        self.mapper = _mapper()
        self._database = None
        policies.register()

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
                'energy': energy.EnergyController(database)}

    @webob.dec.wsgify
    def __call__(self, req):
        match = self.mapper.match(req.path_info)
        if match is None:
            return self.application
        context = req.environ.get('nova.context')
        project_id = match.pop('project_id', None)
        if project_id is not None and (context is None or project_id != context.project_id):
            # Not ours (e.g. /servers/loadbalancer): nova answers as it always did.
            return self.application
        request_id = getattr(context, 'request_id', None)
        try:
            return self._dispatch(req, context, match)
        except faults.ApiError as exc:
            return faults.error_response(exc.code, exc.message, request_id)
        except DB_ERRORS as exc:
            LOG.error('nova-drs API: database error on %s %s: %s',
                      req.method, req.path_info, db_api.reason(exc))
            return faults.error_response(
                503, 'the nova-drs database is unavailable: %s (is it reachable and '
                     'migrated with nova-drs-manage db sync?)' % db_api.reason(exc),
                request_id)
        except Exception:
            LOG.exception('nova-drs API: unexpected error on %s %s',
                          req.method, req.path_info)
            return faults.error_response(
                500, 'unexpected error in the nova-drs API; the nova-api log has the '
                     'details (request %s)' % request_id, request_id)

    def _dispatch(self, req, context, match):
        methods = ROUTES[int(match.pop('route'))][1]
        if req.method not in methods:
            raise faults.MethodNotAllowed('method %s is not allowed here; allowed: %s'
                                          % (req.method, ', '.join(sorted(methods))))
        if context is None:
            LOG.error('nova-drs API: no nova.context in the request; the filter must '
                      'come after keystonecontext in api-paste.ini')
            raise faults.ApiError('nova-drs API filter misplaced in api-paste.ini')
        controller, action = methods[req.method]
        arguments = dict(match)
        if req.method == 'POST':
            arguments['body'] = self._body(req)
        if controller == 'plans' and action == 'show' and 'cluster' in req.GET:
            arguments['cluster'] = req.GET['cluster']
        if controller == 'energy':
            arguments['query'] = dict(req.GET)
        status, body = getattr(self._controllers()[controller], action)(context, **arguments)
        return faults.json_response(body, status, getattr(context, 'request_id', None))

    @staticmethod
    def _body(req):
        try:
            return json.loads(req.body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            # Reported by the controller after its policy check, so a caller
            # without rights gets 403 whatever the body.
            return schemas.Malformed('malformed request body: %s' % exc)
