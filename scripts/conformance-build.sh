#!/usr/bin/env bash
# Compiles the conformance fixture server (test/conformance/serve.ts, its fixtures and the src/
# modules they compose) into .tmp/conformance-server/: never into dist/, never published.
# `npm run conformance:serve` runs this first; `npm test` too, for the e2e and conformance suites.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.tmp/conformance-server
# Diagnostics to stderr: `npm run -s conformance:serve -- --stdio` keeps stdout for MCP.
node_modules/.bin/tsc -p tsconfig.conformance.json >&2
# The compiled modules look for package.json and sql/ two directories up, as they do from dist/.
ln -sfn ../../package.json "$out/package.json"
ln -sfn ../../sql "$out/sql"
