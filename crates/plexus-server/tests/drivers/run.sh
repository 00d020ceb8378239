#!/usr/bin/env bash
# Runs the official Neo4j Python drivers (5.x and 6.x series) against a real `plexus serve`.
# Each driver series gets its own virtualenv under target/, created once and reused.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
here="$root/crates/plexus-server/tests/drivers"
cd "$root"
python="${PYTHON:-python3}"
prepare() {
  local series="$1" venv="$root/target/driver-venv-$1"
  if [ ! -x "$venv/bin/pytest" ] || ! cmp -s "$here/requirements-$series.txt" "$venv/requirements.txt"; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements-$series.txt"
    cp "$here/requirements-$series.txt" "$venv/requirements.txt"
  fi
}
# `--prepare`: only set up the virtualenvs (test.sh does this while cargo compiles).
if [ "${1:-}" = "--prepare" ]; then
  prepare neo4j5
  prepare neo4j6
  exit 0
fi
# Built the way `cargo test --workspace` builds it (the same features), so after the test step this is free.
cargo test --locked -q --workspace --no-run
plexus="$root/target/debug/plexus"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "${tls_pid:-}" ]; then kill "$tls_pid" 2>/dev/null || true; wait "$tls_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

password="driver-test-$RANDOM$RANDOM"
"$plexus" serve --data "$work/data" --bolt 127.0.0.1:0 --http 127.0.0.1:0 --password "$password" \
  --durability batch >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  grep -q "Bolt listening" "$work/server.log" 2>/dev/null && break
  sleep 0.1
done
bolt="$(sed -n 's/^Bolt listening on //p' "$work/server.log")"
http="$(sed -n 's/^HTTP listening on //p' "$work/server.log")"
if [ -z "$bolt" ]; then
  echo "the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
export PLEXUS_BOLT_URI="$bolt" PLEXUS_HTTP_URI="$http" PLEXUS_USER=neo4j PLEXUS_PASSWORD="$password"

# A second server with TLS on Bolt, certificate made here.
tls_pid=""
if command -v openssl >/dev/null 2>&1; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 1 \
    -subj "/CN=localhost" >/dev/null 2>&1
  "$plexus" serve --data "$work/tls-data" --bolt 127.0.0.1:0 --http "" --password "$password" \
    --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" >"$work/tls.log" 2>&1 &
  tls_pid=$!
  for _ in $(seq 1 100); do grep -q "Bolt listening" "$work/tls.log" 2>/dev/null && break; sleep 0.1; done
  export PLEXUS_TLS_BOLT_URI="$(sed -n 's/^Bolt listening on bolt+s:\/\//bolt+ssc:\/\//p' "$work/tls.log")"
fi

status=0
for series in neo4j5 neo4j6; do
  venv="$root/target/driver-venv-$series"
  prepare "$series"
  echo "== Python driver $("$venv/bin/python" -c 'import neo4j; print(neo4j.__version__)') =="
  "$venv/bin/pytest" -q -p no:cacheprovider "$here" || status=1
done
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "the server died during the driver tests:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
kill -TERM "$server_pid"
wait "$server_pid" || { echo "the server did not shut down cleanly" >&2; cat "$work/server.log" >&2; status=1; }
server_pid=""
exit $status
