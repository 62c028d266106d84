#!/bin/sh
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
#
# Run a test tier with TMPDIR in a fresh directory in memory (/dev/shm when
# writable, else under the current TMPDIR), removed afterwards whatever the
# outcome.
#
# Why: the tests' SQLite databases and state paths live under TMPDIR, and
# each committed transaction waits on the disk (fsync); the two-thousand
# migration burst test spent 37 s of its 50 on commits on disk and 13 s in
# memory. Nothing the tests check is about surviving a power loss (the
# servers operators run, MariaDB and PostgreSQL, keep their own data where
# they always do). One directory per run also takes away the tests' leftovers.
#
# Usage: tools/in-tmpfs.sh COMMAND [ARG...]   (exit status: COMMAND's)
set -u
base=${TMPDIR:-/tmp}
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    base=/dev/shm
fi
dir=$(mktemp -d "$base/nova-drs-tests.XXXXXX") || exit 1
TMPDIR=$dir
export TMPDIR
"$@"
status=$?
rm -rf "$dir"
exit $status
