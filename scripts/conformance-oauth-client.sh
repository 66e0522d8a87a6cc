#!/usr/bin/env bash
# The official MCP conformance suite's client auth scenarios against Gatehouse's OAuth client for
# upstreams (docs/conformance.md, "Gatehouse as an OAuth client"). Starts `gatehouse serve` on
# 127.0.0.1 (a free port, a throwaway data dir, the file vault), then runs the newest suite
# (0.2.0-alpha.12, the alias conformance-next) as `conformance client --suite auth` and
# `--suite backcompat` with test/conformance/oauth-client.ts as the client under test: for each
# scenario it adds the suite's MCP server as an `--url --oauth` upstream with the real CLI, signs
# in headless (`upstreams login --no-browser`, the printed URL fetched in place of a browser),
# calls a tool through Gatehouse, and removes the upstream. Baseline:
# test/conformance/expected-failures-oauth-client.yml (every entry with its reason).
# Exits non-zero on a new failure or a stale baseline entry. Everything it started is stopped on
# exit. Uses the service's fixed callback ports (47823-47825): nothing else may hold all three.
# Usage: bash scripts/conformance-oauth-client.sh [--keep-results DIR]
# (SUITES="auth" and ONLY_2026="auth/iss-normalized" narrow a run by hand; ONLY_2026=" " runs none of those.)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=""
if [ "${1:-}" = "--keep-results" ]; then keep="${2:?--keep-results needs a directory}"; fi

SUITE=node_modules/conformance-next/dist/index.js
BASELINE=test/conformance/expected-failures-oauth-client.yml
SCENARIOS_2026="${ONLY_2026:-auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
  auth/authorization-server-migration auth/iss-supported auth/iss-not-advertised auth/iss-supported-missing
  auth/iss-wrong-issuer auth/iss-unexpected auth/iss-normalized auth/metadata-issuer-mismatch}"
have=$(node -p "require('./node_modules/conformance-next/package.json').version" 2>/dev/null || echo none)
if [ "$have" != "0.2.0-alpha.12" ]; then
  echo "conformance-oauth-client: conformance-next 0.2.0-alpha.12 is required, found $have (npm install)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-oauth-client.XXXXXX")
serve_pid=""
suite_pid=""
cleanup() {
  local rc=$?
  # Only the processes this script started, by pid.
  for pid in $suite_pid $serve_pid; do kill "$pid" 2>/dev/null || true; done
  for pid in $suite_pid $serve_pid; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ -s "$work/serve.err" ]; then
    echo "conformance-oauth-client: service log (last 40 lines):" >&2
    tail -n 40 "$work/serve.err" >&2
  fi
  if [ -n "$keep" ] && [ -d "$work/results" ]; then mkdir -p "$keep" && cp -r "$work/results/." "$keep/"; fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$(date +%s)
data="$work/data"
mkdir -p "$data"
node bin/gatehouse.cjs serve --data-dir "$data" --port 0 --vault file --enable --json >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 300); do
  if [ -s "$work/serve.out" ] && node -e "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).mcp_url" "$work/serve.out" 2>/dev/null; then break; fi
  if ! kill -0 "$serve_pid" 2>/dev/null; then echo "conformance-oauth-client: gatehouse serve exited" >&2; exit 1; fi
  sleep 0.2
done
mcp_url=$(node -p "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).mcp_url" "$work/serve.out")
token=$(node bin/gatehouse.cjs tokens create --label "conformance oauth client" --data-dir "$data" --vault file --json |
  node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>process.stdout.write(JSON.parse(s).token))")
case "$token" in gth_*) ;; *) echo "conformance-oauth-client: tokens create printed no token" >&2; exit 1 ;; esac
echo "conformance-oauth-client: gateway $mcp_url"

export GATEHOUSE_CONFORMANCE_DATA="$data" GATEHOUSE_CONFORMANCE_MCP="$mcp_url" GATEHOUSE_TOKEN="$token"
# The client under test is TypeScript, started once per scenario: a Node that strips types itself (22.18+) runs it as
# it is; an older one through tsx, whose loader cost more than the client's own start.
client="node test/conformance/oauth-client.ts"
node -e 'process.exit(process.features.typescript ? 0 : 1)' 2>/dev/null || client="node --import tsx test/conformance/oauth-client.ts"
failed=0
for suite in ${SUITES-auth backcompat}; do
  out="$work/results/$suite"
  mkdir -p "$out"
  rc=0
  timeout 600 node "$SUITE" client --suite "$suite" --command "$client" \
    --expected-failures "$BASELINE" -o "$out" >"$work/suite-$suite.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid" || rc=$?
  suite_pid=""
  sed -n '/=== SUITE SUMMARY ===/,$p' "$work/suite-$suite.log"
  if [ $rc -ne 0 ]; then
    grep -q '=== SUITE SUMMARY ===' "$work/suite-$suite.log" || cat "$work/suite-$suite.log"
    echo "conformance-oauth-client: suite $suite: not as the baseline expects (exit $rc)" >&2
    failed=1
  fi
done
# The client auth scenarios 2026-07-28 adds are in no suite of their own (`draft` has others): one by one.
for scenario in $SCENARIOS_2026; do
  out="$work/results/2026"
  mkdir -p "$out"
  rc=0
  timeout 120 node "$SUITE" client --scenario "$scenario" --command "$client" \
    --expected-failures "$BASELINE" -o "$out" >"$work/scenario.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid" || rc=$?
  suite_pid=""
  if [ $rc -ne 0 ]; then
    tail -n 30 "$work/scenario.log"
    echo "conformance-oauth-client: $scenario: not as the baseline expects (exit $rc)" >&2
    failed=1
  else
    echo "conformance-oauth-client: $scenario: as expected"
  fi
done
echo "conformance-oauth-client: finished in $(( $(date +%s) - started )) s"
if [ $failed -ne 0 ]; then exit 1; fi
echo "conformance-oauth-client: OK"
