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

"""Console scripts.

eventlet prints an 8-line deprecation banner when it is imported. The
commands that can do without it never import it (nova-loadbalancer, the db
and stats commands of nova-drs-manage, nova-drs-sim); the ones whose
libraries still import it (oslo.service and oslo.messaging in
nova-drs-collector, nova itself in ``nova-drs-manage overcommit``, tooz in the
daemon's leader election) must not show operators a warning meant for
developers.
"""

import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
