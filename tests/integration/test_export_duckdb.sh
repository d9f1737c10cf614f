#!/usr/bin/env bash
# DuckDB reads heapfs export's tables and answers as heapfs's files do, and
# arrow-rs reads them the same (tests/export/check.sh; docs/export.md
# "Checks").  Runs when node and the npm packages @duckdb/node-api,
# parquet-wasm and apache-arrow are already installed in tests/export
# (make export-check installs them); skipped otherwise, so make test on a
# fresh clone never reaches the network.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
if ! command -v node >/dev/null 2>&1; then
	echo "# SKIP: no node: DuckDB's check of heapfs export needs it (make export-check)"
	exit 0
fi
for p in @duckdb/node-api parquet-wasm apache-arrow; do
	if [ ! -f "tests/export/node_modules/$p/package.json" ]; then
		echo "# SKIP: tests/export/node_modules has no $p (make export-check installs it)"
		exit 0
	fi
done
HEAPFS=$HEAPFS bash tests/export/check.sh
