#!/usr/bin/env bash
# The whole test suite: formatting, lints with warnings as errors, then every test in release-optimised debug mode.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust from https://rustup.rs" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# A clean build (CI) gains nothing from incremental state, and debug info costs compile and link time.
if [ "${CI:-}" = "true" ]; then
  export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=0
fi
# The Python virtualenvs (drivers, package tests) are downloaded while cargo compiles.
mkdir -p target
smoke_peers=plexus,sqlite,duckdb,networkx
( crates/plexus-server/tests/drivers/run.sh --prepare && crates/plexus-python/run-tests.sh --prepare \
  && bench/peers/run.sh --prepare --peers "$smoke_peers" ) >target/venv-prepare.log 2>&1 &
venvs=$!
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
if ! wait "$venvs"; then
  echo "setting up the Python virtualenvs failed:" >&2
  cat target/venv-prepare.log >&2
  exit 1
fi
# The Python package, built into target/pyenv and tested with pytest (crates/plexus-python/run-tests.sh).
crates/plexus-python/run-tests.sh
# The peer benchmarks' smoke run: Plexus, SQLite, DuckDB and NetworkX on small data, every answer checked
# (bench/peers/README.md; the full run is `bench/peers/run.sh`). It runs beside the driver and LDBC checks,
# which mostly wait on round trips; its output is shown when it ends.
bench/peers/run.sh --quick --peers "$smoke_peers" --require "$smoke_peers" \
  --workloads import,reads,writes,likes,commits,server >target/peers-smoke.log 2>&1 &
smoke=$!
# The official Neo4j Python drivers (5.x and 6.x) against a real `plexus serve`, over Bolt and HTTP.
crates/plexus-server/tests/drivers/run.sh
# LDBC SNB queries on the tiny data set, checked against an independent computation (bench/ldbc/README.md).
bench/ldbc/run.sh
smoke_status=0
wait "$smoke" || smoke_status=$?
cat target/peers-smoke.log
exit "$smoke_status"
