#!/usr/bin/env bash
# test-deps.sh installs the Debian packages the test suites drive for real:
# Chromium for the HTML report screenshot test, sysbench and the database
# servers for the agent tests (hack/dbservers.sh installs the servers itself),
# perf for the profiled pass's test (TestRealProfileExplain).
source "$(dirname "$0")/lib.sh"
apt_install chromium sysbench linux-perf
