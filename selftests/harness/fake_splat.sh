#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Description: writes a fake kernel warning into the kernel log and exits
# 0.  Not part of the suite: the host-side harness check runs it through
# selftests/vmrun and requires the run to fail on the splat.
[ -w /dev/kmsg ] || { echo "# SKIP: /dev/kmsg not writable"; exit 4; }
echo "<4>WARNING: CPU: 0 PID: $$ at fake_splat.sh: pmcring harness self-test" >/dev/kmsg
exit 0
