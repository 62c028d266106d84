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
"""sphinxcontrib-openapi's httpdomain renderer, completed for doc/api/openapi.yaml.

The stock renderer describes only the first variant of a ``oneOf`` and only
the first 2xx answer, leaves out ``info.description`` and knows nothing of
our ``x-policy`` extension. POST /loadbalancer/action takes one of eight
bodies and answers 200 or 202, so this renderer, before handing each
operation to the stock one:

* merges the variants of every ``oneOf`` / ``anyOf`` object schema into one
  object listing all their fields (the field descriptions and the operation
  text say which go together),
* merges the fields of every 2xx JSON answer into the first one,
* lists the values of every ``enum`` in its field's description,
* adds the operation's oslo.policy rule (``x-policy``) under its summary,
* renders ``info.description`` first.

Loaded as a Sphinx extension, it makes this renderer the ``openapi``
directive's.
"""

import copy

from sphinxcontrib.openapi import directive
from sphinxcontrib.openapi import renderers


def merged_variants(schema):
    """``schema`` with each object ``oneOf``/``anyOf`` folded into one object."""
    if isinstance(schema, list):
        return [merged_variants(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: merged_variants(value) for key, value in schema.items()}
    if schema.get('enum') and 'One of:' not in schema.get('description', ''):
        values = ', '.join('``%s``' % v for v in schema['enum'])
        schema['description'] = ('%s One of: %s.' % (
            schema.get('description', '').rstrip(), values)).strip()
    for combinator in ('oneOf', 'anyOf'):
        variants = schema.get(combinator)
        if variants and all(_is_object(v) for v in variants):
            schema.pop(combinator)
            schema['type'] = 'object'
            schema.pop('additionalProperties', None)
            schema['properties'] = _union(variants, schema.get('properties', {}))
            schema.pop('required', None)
    return schema


def _is_object(schema):
    return isinstance(schema, dict) and (
        schema.get('type') == 'object' or 'properties' in schema)


def _union(schemas, properties):
    merged = dict(properties)
    for schema in schemas:
        for name, value in schema.get('properties', {}).items():
            merged.setdefault(name, value)
    return merged


def _json_schema(response):
    content = response.get('content', {}).get('application/json', {})
    return content.get('schema')


def merged_2xx(responses):
    """``responses`` whose first 2xx JSON schema lists every 2xx's fields."""
    schemas = [(code, _json_schema(r)) for code, r in responses.items()
               if str(code).startswith('2') and _json_schema(r)]
    if len(schemas) < 2 or not all(_is_object(s) for _, s in schemas):
        return responses
    responses = copy.copy(responses)
    first_code, first = schemas[0]
    merged = dict(first, properties=_union([s for _, s in schemas], {}))
    merged.pop('required', None)
    answer = copy.deepcopy(responses[first_code])
    answer['content']['application/json']['schema'] = merged
    responses[first_code] = answer
    return responses


class NovaDrsRenderer(renderers.HttpdomainRenderer):
    """The stock httpdomain renderer with the additions above."""

    def render_restructuredtext_markup(self, spec):
        description = spec.get('info', {}).get('description')
        if description:
            yield from self._convert_markup(description).strip().splitlines()
            yield ''
        yield from super().render_restructuredtext_markup(spec)

    def render_operation(self, endpoint, method, operation):
        operation = merged_variants(operation)
        operation['responses'] = merged_2xx(operation.get('responses', {}))
        policy = operation.get('x-policy')
        if policy:
            text = operation.get('description', '').rstrip()
            operation['description'] = '%s\n\nPolicy rule: `%s`' % (text, policy)
        yield from super().render_operation(endpoint, method, operation)


def _register(app, config):
    app.add_directive(
        'openapi', directive.create_directive_from_renderer(NovaDrsRenderer),
        override=True)


def setup(app):
    app.setup_extension('sphinxcontrib.openapi')
    # After sphinxcontrib.openapi registers its own "openapi" (priority 500).
    app.connect('config-inited', _register, priority=900)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
