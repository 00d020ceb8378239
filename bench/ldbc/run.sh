#!/usr/bin/env bash
# Checks the LDBC SNB queries in bench/ldbc/queries/ on the tiny data set: builds the plexus binary, imports
# ../shared/ldbc-snb-tiny/vanilla (relative to the repository root, or $LDBC_SNB_TINY) into a temporary directory and
# runs check.py against it. Without the data set this is a loud skip, or a failure when CI is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
data="${LDBC_SNB_TINY:-../shared/ldbc-snb-tiny}"
if [ ! -d "$data/vanilla" ] || [ ! -d "$data/substitution_parameters" ]; then
  if [ -n "${CI:-}" ]; then
    echo "LDBC check: data set not found at $data (vanilla/ and substitution_parameters/); CI is set, failing" >&2
    exit 1
  fi
  echo "###########################################################################" >&2
  echo "## SKIP: LDBC SNB check: data set not found at $data" >&2
  echo "###########################################################################" >&2
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "LDBC check: python3 not found" >&2
  exit 1
fi
# Built the way `cargo test --workspace` builds it (the same features), so after the test step this is free.
cargo test --locked -q --workspace --no-run
db="$(mktemp -d)"
trap 'rm -rf "$db"' EXIT
./target/debug/plexus import --data "$db/db" --ldbc "$data/vanilla" --quiet
python3 bench/ldbc/check.py --plexus ./target/debug/plexus --db "$db/db" --data "$data" "$@"
