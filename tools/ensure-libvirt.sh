#!/usr/bin/env bash
# Make sure the Debian packages the libvirt tier (make libvirt, tests/libvirt)
# needs are installed: libvirtd and virsh (libvirt 9), QEMU 7 for x86 with
# qemu-img/qemu-io, busybox-static and apt-get download for the guest image,
# ip and unshare for the namespaces, libvirt-dev, gcc and pkg-config to build
# libvirt-python into .venv-cloud for nova-compute's libvirt driver
# (tests/libvirt/nova_hosts.py). Installs only what is missing (needs
# root and apt-get); starts nothing: tests/libvirt/hosts.py starts its own
# libvirtd processes. Fails with one clear line otherwise.
set -u

PACKAGES="libvirt-daemon-system libvirt-clients libvirt-dev gcc pkg-config qemu-system-x86 qemu-utils
busybox-static iproute2 util-linux mount"

missing=""
for pkg in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "ensure-libvirt: cannot install$missing (need root and apt-get)" >&2
    exit 1
fi
echo "ensure-libvirt: installing$missing"
# shellcheck disable=SC2086  # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null 2>&1; } ||
    { echo "ensure-libvirt: 'apt-get install$missing' failed" >&2; exit 1; }
