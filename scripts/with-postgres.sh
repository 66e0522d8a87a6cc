#!/usr/bin/env bash
# Runs "$@" with DATABASE_URL pointing at a throwaway PostgreSQL cluster on
# 127.0.0.1 (a free port) and removes the cluster afterwards, whatever the
# command's outcome. Uses the newest server binaries under
# /usr/lib/postgresql/*/bin (Debian's postgresql package; scripts/setup.sh
# --test installs it). initdb refuses root: as root the cluster runs as the
# `postgres` user (created when missing).
# The cluster is tuned for tests (fsync off): never point it at data you keep.
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "with-postgres: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2
  exit 1
fi

dir=$(mktemp -d /tmp/gatehouse-pg.XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then
  id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  chown postgres "$dir"
  as=(runuser -u postgres --)
fi
chmod 700 "$dir"

cleanup() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U gatehouse -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
  start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }

export DATABASE_URL="postgresql://gatehouse@127.0.0.1:$port/postgres"
# The server's log, for tests that read what the server itself reported (e.g. "deadlock detected").
export GATEHOUSE_PG_LOG="$dir/server.log"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (throwaway cluster in $dir)" >&2
"$@"
