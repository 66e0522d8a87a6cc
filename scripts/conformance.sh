#!/usr/bin/env bash
# The official MCP conformance suite against a real headless Gatehouse service, in two steps:
#   stable: @modelcontextprotocol/conformance 0.1.16, every server scenario (--suite all: active
#           and pending), baseline test/conformance/expected-failures.yml;
#   next:   0.2.0-alpha.12 (the alias conformance-next), the scenarios 2026-07-28 requires
#           (--requirements 2026-07-28), baseline test/conformance/expected-failures-2026.yml.
# Both pinned in package.json. The script starts `gatehouse serve` on 127.0.0.1 (a free port, a
# throwaway data dir, the file vault); each step gets its own token from the CLI and its own
# test-only auth proxy (test/helpers/auth-proxy.ts: the suite sends no Authorization header and
# the product has no unauthenticated mode), runs `conformance server` against its baseline, then
# test/conformance/check-results.ts (the required scenarios really passed, no stale entry).
# Exits non-zero on a new failure, a stale baseline entry or a required scenario not passing.
# Everything it started is stopped on exit. Usage: bash scripts/conformance.sh [--keep-results DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

keep=""
if [ "${1:-}" = "--keep-results" ]; then keep="${2:?--keep-results needs a directory}"; fi

SUITE=node_modules/@modelcontextprotocol/conformance/dist/index.js
BASELINE=test/conformance/expected-failures.yml
# The pre-release that carries the 2026-07-28 scenarios, pinned under its own alias.
SUITE_NEXT=node_modules/conformance-next/dist/index.js
BASELINE_NEXT=test/conformance/expected-failures-2026.yml
pinned() {
  local dir=$1 want=$2 have
  have=$(node -p "require('./$dir/package.json').version" 2>/dev/null || echo none)
  if [ "$have" != "$want" ]; then
    echo "conformance: $dir $want is required, found $have (npm install)" >&2
    exit 1
  fi
}
pinned node_modules/@modelcontextprotocol/conformance 0.1.16
pinned node_modules/conformance-next 0.2.0-alpha.12

work=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-conformance.XXXXXX")
serve_pid=""
proxy_pid=""
suite_pid=""
cleanup() {
  local rc=$?
  # Only the processes this script started, by pid.
  for pid in $suite_pid $proxy_pid $serve_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $suite_pid $proxy_pid $serve_pid; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ -s "$work/serve.err" ]; then
    echo "conformance: service log (last 40 lines):" >&2
    tail -n 40 "$work/serve.err" >&2
  fi
  if [ -n "$keep" ] && [ -d "$work/results" ]; then mkdir -p "$keep" && cp -r "$work/results/." "$keep/"; fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Wait until FILE holds what CHECK (a node expression over `s`, the file's text) accepts, or fail.
wait_for() {
  local file=$1 what=$2 pid=$3 check=$4
  for _ in $(seq 300); do
    if [ -s "$file" ] && node -e "const s=require('fs').readFileSync(process.argv[1],'utf8'); process.exit(($check) ? 0 : 1)" "$file" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "conformance: $what exited before it was ready" >&2
      cat "$file" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  echo "conformance: $what not ready after 60 s" >&2
  return 1
}

started=$(date +%s)
data="$work/data"
mkdir -p "$data"

node bin/gatehouse.cjs serve --data-dir "$data" --port 0 --vault file --enable --json >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
wait_for "$work/serve.out" "gatehouse serve" "$serve_pid" "(()=>{try{return !!JSON.parse(s).mcp_url}catch{return false}})()"
mcp_url=$(node -p "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).mcp_url" "$work/serve.out")

echo "conformance: gateway $mcp_url"

# Each step gets its own token (and its proxy): a token's rate limit is per token, and one
# suite's traffic would otherwise spend the next one's budget (dns-rebinding-protection got 429).
start_proxy() {
  local step=$1 token
  token=$(node bin/gatehouse.cjs tokens create --label "conformance $step" --data-dir "$data" --vault file --json |
    node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>process.stdout.write(JSON.parse(s).token))")
  case "$token" in gth_*) ;; *) echo "conformance: tokens create printed no token" >&2; exit 1 ;; esac
  # The token goes through the environment, not argv, so it does not show in `ps`.
  GATEHOUSE_TOKEN="$token" node --import tsx test/helpers/auth-proxy.ts "$mcp_url" >"$work/proxy-$step.out" 2>"$work/proxy-$step.err" &
  proxy_pid="$proxy_pid $!"
  wait_for "$work/proxy-$step.out" "auth proxy" "$!" "/^http:\\/\\/127\\.0\\.0\\.1:\\d+\\//.test(s)"
  proxy_url=$(head -n 1 "$work/proxy-$step.out")
}

# One suite run against the running gateway: STEP names it (and its required scenarios in
# check-results.ts), then the suite's entry point, its baseline, and the suite's own arguments.
failed=0
run_suite() {
  local step=$1 suite=$2 baseline=$3
  shift 3
  local out="$work/results/$step" step_started suite_rc=0 check_rc=0
  step_started=$(date +%s)
  mkdir -p "$out"
  start_proxy "$step"
  echo "conformance: step $step via auth proxy $proxy_url ($*)"
  # In the background + wait, so an INT/TERM to this script is handled at once, not after the suite.
  timeout 600 node "$suite" server --url "$proxy_url" "$@" --expected-failures "$baseline" -o "$out" >"$work/suite-$step.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid" || suite_rc=$?
  suite_pid=""
  # The per-scenario chatter is long; the summary and the baseline verdict are what matter.
  sed -n '/=== SUMMARY ===/,$p' "$work/suite-$step.log"
  if [ $suite_rc -ne 0 ] && ! grep -q '=== SUMMARY ===' "$work/suite-$step.log"; then cat "$work/suite-$step.log"; fi
  node --import tsx test/conformance/check-results.ts "$out" "$baseline" "$step" || check_rc=$?
  echo "conformance: step $step finished in $(( $(date +%s) - step_started )) s"
  if [ $suite_rc -ne 0 ]; then echo "conformance: step $step: the suite's baseline check failed (exit $suite_rc)" >&2; failed=1; fi
  if [ $check_rc -ne 0 ]; then failed=1; fi
}

run_suite stable "$SUITE" "$BASELINE" --suite all
run_suite next "$SUITE_NEXT" "$BASELINE_NEXT" --requirements 2026-07-28

echo "conformance: finished in $(( $(date +%s) - started )) s"
if [ $failed -ne 0 ]; then exit 1; fi
echo "conformance: OK"
