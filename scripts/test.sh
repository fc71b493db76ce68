#!/usr/bin/env bash
# Runs every test of Gatehouse on SQLite and PostgreSQL. Starts the local
# PostgreSQL if it is not running; GATEHOUSE_TEST_DATABASE_URL may point
# elsewhere (each run creates and drops its own database there).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${GATEHOUSE_TEST_DATABASE_URL:-}" ]; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    if command -v pg_ctlcluster >/dev/null 2>&1; then
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
      for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    fi
  fi
  export GATEHOUSE_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
fi

# Chromium and the npm packages of the OAuth client tests (no-op when present).
bash scripts/setup-e2e.sh

go vet ./...
# Every package is built with the race detector except the pure-Go SQLite
# (modernc.org/...: C translated to Go, single-threaded per connection behind
# its own locks): instrumenting its every memory access made the SQLite tests
# four to five times as costly (internal/scim: 93 s of CPU against 21 s) and
# found nothing of ours. Our code, the standard library and the other modules
# stay instrumented.
go test -race -gcflags='modernc.org/...=-race=false' -count=1 -timeout 20m ./...
