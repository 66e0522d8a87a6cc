#!/usr/bin/env bash
# Runs "$@" with a gnome-keyring Secret Service unlocked by a throwaway password.
# Meant to run inside `dbus-run-session`.
set -euo pipefail
mkdir -p "$HOME/.local/share/keyrings"
eval "$(printf 'throwaway-ci-password' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" || true
export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK 2>/dev/null || true
exec "$@"
