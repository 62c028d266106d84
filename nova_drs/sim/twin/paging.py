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

"""The twin's paged listings, as nova pages them (``limit``, ``marker``, a
``rel=next`` link while a page is full), from one scan per listing."""

import urllib.parse

#: nova's ``[api] max_limit``.
MAX_LIMIT = 1000


class Cursor:
    """The listing being paged, as a database cursor: built by ``build(query)``
    for its first page and kept for the pages that follow (a marker), so the
    pages of one listing cost one scan of the twin's servers, not one each,
    and the daemon's cost is what a measurement shows."""

    def __init__(self, prefix):
        self.prefix = prefix          # endpoint and API root of the next links
        self._base = None
        self._items, self._position = [], {}

    def page(self, path, query, key, build):
        """``{key: items, key + '_links': [next]}`` of one page, or None when the
        marker is not in the listing."""
        unmarked = {k: v for k, v in query.items() if k != 'marker'}
        base = (path, tuple(sorted(unmarked.items())))
        if 'marker' not in query or self._base != base:
            self._items = build(unmarked)
            self._position = {str(item['id']): i for i, item in enumerate(self._items)}
            self._base = base
        start = 0
        if 'marker' in query:
            if query['marker'] not in self._position:
                return None
            start = self._position[query['marker']] + 1
        limit = min(int(query.get('limit', MAX_LIMIT)), MAX_LIMIT)
        chunk = self._items[start:start + limit]
        body = {key: chunk}
        if len(chunk) == limit:
            link = dict(query, marker=chunk[-1]['id'])
            body[key + '_links'] = [{'rel': 'next', 'href': '%s%s?%s' % (
                self.prefix, path, urllib.parse.urlencode(link))}]
        return body
