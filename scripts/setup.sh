#!/usr/bin/env bash
# Sets Gatehouse up on a Debian/Ubuntu machine: the system packages it needs
# (libsecret for the OS keychain, gnome-keyring and D-Bus; with --test also
# Chromium for the console's browser tests), the npm packages, and the build.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Node: 20.19+ runs and tests everything (vite, eslint and jsdom need 20.19); packaging the desktop app
# with electron-builder needs 22.12+ (its @electron/rebuild and node-abi say so, and npm warns on Node 20).
node_version=$(node -p 'process.versions.node' 2>/dev/null || echo none)
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
  echo "setup: Gatehouse needs Node.js 20.19+ or 22.12+ (found: $node_version)" >&2
  exit 1
fi
case "$node_version" in
  20.*) echo "setup: Node $node_version runs and tests Gatehouse; npm's EBADENGINE warning for @electron/rebuild and node-abi concerns only packaging the desktop app (electron-builder), which needs Node 22.12+" ;;
esac

with_browser=0
[ "${1:-}" = "--test" ] && with_browser=1

need=()
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v dbus-run-session >/dev/null || need+=(dbus)
command -v dbus-launch >/dev/null || need+=(dbus-x11)
dpkg -s libsecret-1-dev >/dev/null 2>&1 || need+=(libsecret-1-dev)
# secret-tool: the keychain tests read what Gatehouse stored through a second, independent client
if [ "$with_browser" = 1 ] && ! command -v secret-tool >/dev/null; then need+=(libsecret-tools); fi
if [ "$with_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then need+=(chromium); fi
# jq: the tests check that every file Gatehouse writes is strict JSON the way jq reads it.
if [ "$with_browser" = 1 ] && ! command -v jq >/dev/null; then need+=(jq); fi
# The cloud gateway's suite runs a second time on a real PostgreSQL server (scripts/with-postgres.sh).
if [ "$with_browser" = 1 ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then need+=(postgresql); fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
    echo "setup: these packages are missing and neither root nor sudo is available: ${need[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# keytar is a native addon: build it against the installed Node headers when
# they are there, instead of letting node-gyp download them (offline machines).
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_version.h ]; then
  export npm_config_nodedir=/usr
fi

# Install scripts run only for the packages listed in package.json's allowScripts (keytar builds its addon,
# esbuild and electron fetch their binaries, ...): npm 11.16+ warns about any other.
# Electron's own binary is only needed for `npm start` on a desktop; its types come with the package.
export ELECTRON_SKIP_BINARY_DOWNLOAD=1
npm ci --no-fund --no-audit
npm run build
