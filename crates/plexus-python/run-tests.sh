#!/usr/bin/env bash
# Builds the Python package into a virtualenv under target/ and runs its tests (called by ./test.sh).
# The extension is built with the dev profile in the workspace target dir, so it reuses what `cargo test` built.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$PWD/target/pyenv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
if ! cmp -s crates/plexus-python/requirements-test.txt "$venv/requirements-test.txt"; then
  "$venv/bin/pip" install -q -r crates/plexus-python/requirements-test.txt
  cp crates/plexus-python/requirements-test.txt "$venv/requirements-test.txt"
fi
# `--prepare`: only set up the virtualenv (test.sh does this while cargo compiles).
[ "${1:-}" = "--prepare" ] && exit 0
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop -q -m crates/plexus-python/Cargo.toml
"$venv/bin/python" -m pytest -q crates/plexus-python/tests
