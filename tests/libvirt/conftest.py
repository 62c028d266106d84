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

"""The libvirt tier: real libvirtd hosts in namespaces on this machine (hosts.py),
then nova-compute's libvirt driver on them under the mini-cloud (nova_hosts.py),
one for the whole session (``nova``)."""

import os

import pytest

from tests.libvirt import bmc as lvbmc
from tests.libvirt import guests
from tests.libvirt import hosts as lvhosts
from tests.libvirt import image as lvimage
from tests.libvirt import nova_hosts

STATE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'state', 'libvirt')


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'libvirt: needs libvirtd hosts in namespaces, root and QEMU (make libvirt)')


@pytest.fixture(scope='session')
def image():
    """Kernel, initramfs and seed disk, built once into state/libvirt/image;
    pytest fails in one line when a prerequisite is missing."""
    problem = lvhosts.missing_prerequisites()
    if problem:
        pytest.fail(problem, pytrace=False)
    try:
        return lvimage.GuestImage(os.path.join(STATE, 'image'),
                                  log=lambda line: print('libvirt: ' + line, flush=True)).build()
    except lvimage.ImageError as exc:
        pytest.fail('guest image: %s' % exc, pytrace=False)


@pytest.fixture(scope='session')
def nova(image):
    """Hosts, control plane, libvirt computes and their BMCs, shared by the
    modules that go through nova (in file order: each leaves every host
    active); all gone after."""
    cloud = nova_hosts.NovaLibvirtCloud(STATE, log=guests.log)
    try:
        cloud.up(image)
    except (lvhosts.HostsError, nova_hosts.NovaHostsError,
            nova_hosts.minicloud.CloudError) as exc:
        pytest.fail(str(exc), pytrace=False)
    lvbmc.start(cloud)
    try:
        yield cloud
    finally:
        cloud.down()
