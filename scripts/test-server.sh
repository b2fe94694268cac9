#!/usr/bin/env bash
# Tests `wgx serve` over HTTP on the demo model (tests/server/*.test.mjs, one file at a time): the
# official OpenAI client for Node.js against the chat and completions endpoints, greedy text equal
# to `wgx run --temp 0`, streaming, concurrency and a bounded load, cancellation, errors, API keys,
# CORS, the queue limit and draining on SIGTERM. Each suite starts its own server on a free port.
#
#   scripts/test-server.sh [NODE TEST ARGS...]    e.g. --test-name-pattern=CORS
#
#   WGX_BIN=path/to/wgx   the binary to test (default build/release/bin/wgx; build it first with
#                         scripts/build.sh release)
#   WGX_ADAPTER=...       the adapter for every wgx the tests start (default auto)
#   WGX_SERVE_LOAD_REQUESTS=N   requests per round of the load test (default 200)
#   WGX_SERVE_LOG=1       copy the servers' stderr to this stderr
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { echo "test-server: $*" >&2; }
die() { echo "test-server: error: $*" >&2; exit 1; }

export WGX_BIN=${WGX_BIN:-build/release/bin/wgx}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
bin=$WGX_BIN
[[ $bin = /* ]] || bin=$root/$bin
[ -x "$bin" ] || die "no $bin (scripts/build.sh release builds it)"
"$bin" serve --help >/dev/null 2>&1 || die "$bin has no serve command"
command -v node >/dev/null 2>&1 || die "node is missing (apt-get install nodejs npm)"

# The test packages (the openai client), exactly as package-lock.json pins them.
tests=$root/tests/server
if [ ! -d "$tests/node_modules/openai" ] || [ "$tests/package-lock.json" -nt "$tests/node_modules/.package-lock.json" ]; then
  say "installing the test packages (npm ci)"
  (cd "$tests" && npm ci --no-audit --no-fund >&2)
fi

say "testing $bin serve"
start=$SECONDS
if ! node --test --test-concurrency=1 "$@" tests/server/; then
  say "FAILED after $((SECONDS - start)) s"
  exit 1
fi
say "all passed in $((SECONDS - start)) s"
