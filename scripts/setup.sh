#!/usr/bin/env bash
# Sets Gatehouse up on a Debian/Ubuntu machine: the system packages it needs
# (libsecret for the OS keychain, gnome-keyring and D-Bus, bubblewrap and socat for the
# sandbox stdio upstreams run in; with --test also
# Chromium for the console's browser tests), the npm packages, and the build.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ORIGINAL_PATH=$PATH

# Node: 22.12+ (Node 20 is out of support; electron-builder's @electron/rebuild and node-abi need 22.12 too).
# A machine with an older Node gets one (scripts/install-node.sh: Node's own build, from the npm registry).
node_ok() {
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null
}
if ! node_ok; then
  found=$(node -p 'process.versions.node' 2>/dev/null || echo none)
  echo "setup: Gatehouse needs Node.js 22.12+ (found: $found); installing Node 22"
  node_dir=$(bash scripts/install-node.sh)
  export PATH="$node_dir/bin:$PATH"
  hash -r
  node_ok || { echo "setup: Node 22 was installed in $node_dir but is not the node on PATH" >&2; exit 1; }
  link_dir=$([ "$(id -u)" = 0 ] && echo /usr/local/bin || echo "$HOME/.local/bin")
  case ":$ORIGINAL_PATH:" in
    *":$link_dir:"*) echo "setup: node is now Node $(node -p 'process.versions.node') ($link_dir/node)" ;;
    *) echo "setup: Node $(node -p 'process.versions.node') is in $link_dir, which is not on your PATH: add it (export PATH=\"$link_dir:\$PATH\")" ;;
  esac
fi

with_browser=0
[ "${1:-}" = "--test" ] && with_browser=1

need=()
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v dbus-run-session >/dev/null || need+=(dbus)
command -v dbus-launch >/dev/null || need+=(dbus-x11)
dpkg -s libsecret-1-dev >/dev/null 2>&1 || need+=(libsecret-1-dev)
# The OS sandbox stdio upstreams run in (docs/upstreams.md, "Confinement"): bubblewrap, and socat for their network grants.
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v socat >/dev/null || need+=(socat)
# secret-tool: the keychain tests read what Gatehouse stored through a second, independent client
if [ "$with_browser" = 1 ] && ! command -v secret-tool >/dev/null; then need+=(libsecret-tools); fi
if [ "$with_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then need+=(chromium); fi
# jq: the tests check that every file Gatehouse writes is strict JSON the way jq reads it.
if [ "$with_browser" = 1 ] && ! command -v jq >/dev/null; then need+=(jq); fi
# The cloud gateway's suite runs a second time on a real PostgreSQL server (scripts/with-postgres.sh).
if [ "$with_browser" = 1 ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then need+=(postgresql); fi

# npm ci builds keytar against libsecret's headers, so those come first; the rest (Chromium and PostgreSQL are
# most of the download) installs beside npm ci, which needs none of it.
need_first=() need_later=()
for pkg in ${need[@]+"${need[@]}"}; do
  if [ "$pkg" = libsecret-1-dev ]; then need_first+=("$pkg"); else need_later+=("$pkg"); fi
done
apt_install() {
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
later_pid=""
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
    echo "setup: these packages are missing and neither root nor sudo is available: ${need[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  [ ${#need_first[@]} -eq 0 ] || apt_install "${need_first[@]}"
  if [ ${#need_later[@]} -gt 0 ]; then
    apt_install "${need_later[@]}" &
    later_pid=$!
  fi
fi

# keytar is a native addon: build it against the running Node's own headers when they are there (a Debian
# package's /usr/include/node, or the Node install-node.sh put in place), instead of letting node-gyp download
# them (offline machines).
node_prefix=$(node -p 'require("path").resolve(process.execPath, "../..")')
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node_version.h" ]; then
  export npm_config_nodedir=$node_prefix
fi

# Install scripts run only for the packages listed in package.json's allowScripts (keytar builds its addon,
# esbuild and electron fetch their binaries, ...): npm 11.16+ warns about any other.
# Electron's own binary is only needed for `npm start` on a desktop; its types come with the package.
export ELECTRON_SKIP_BINARY_DOWNLOAD=1
npm_rc=0
npm ci --no-fund --no-audit || npm_rc=$?
if [ -n "$later_pid" ]; then
  wait "$later_pid" || { echo "setup: apt-get install ${need_later[*]} failed" >&2; exit 1; }
fi
[ "$npm_rc" = 0 ] || { echo "setup: npm ci failed" >&2; exit "$npm_rc"; }
# .ci/run builds beside the static checks instead (SETUP_SKIP_BUILD=1): one build either way.
[ "${SETUP_SKIP_BUILD:-}" = 1 ] || npm run build
