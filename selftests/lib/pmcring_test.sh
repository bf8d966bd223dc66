# SPDX-License-Identifier: GPL-2.0
#
# The common start of the pmcring selftest scripts: kselftest's skip status,
# skip/fail, the checks every script makes before it runs, a scratch
# directory.  Sourced, from selftests/lib/ in a checkout and from beside the
# script once installed (make install puts it there, as a TEST_FILE):
#
#	lib=$(dirname "$0")/lib; [ -d "$lib" ] || lib=$(dirname "$0")
#	. "$lib/pmcring_test.sh"

set -u

ksft_skip=4

# skip REASON: the test cannot run here (kselftest "ok N ... # SKIP").
skip() { echo "SKIP: $*"; exit $ksft_skip; }
# fail WHAT: the test failed.
fail() { echo "FAIL: $*"; exit 1; }

# require_dev: skip unless the module is loaded and we are root.
require_dev()
{
	[ -e /dev/pmcring ] || skip "/dev/pmcring missing (pmcring module not loaded)"
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# require_cmd COMMAND...: skip unless every COMMAND is on PATH.
require_cmd()
{
	for pmcring_test_cmd in "$@"; do
		command -v "$pmcring_test_cmd" >/dev/null ||
			skip "$pmcring_test_cmd not on PATH"
	done
}

# make_tmpdir: a new directory in $dir, removed when the script exits.
make_tmpdir()
{
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
}
