#!/usr/bin/env bash
# The real-application suite's short run in make test (issue 27): two of
# tests/realapps/'s programs at small sizes, CacheLeak (a Guava cache in a
# static field, never evicted) and GcPressure (a commons-collections4
# LRUMap filling most of a 48 MB heap), each checked against jcmd's class
# histograms and heap dumps, a recording with the agent, three dumps
# imported as one trace, suspects and find (tests/realapps/run.sh says
# what is compared).  Checks heapfs is known to fail print XFAIL and do not
# fail the test.  `make realapps` runs all five programs at full size.
# Skipped (exit 0, with a message) without a JDK or the Debian packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
export HEAPFS BUILD
bash tests/realapps/run.sh --short cacheleak gcpressure
