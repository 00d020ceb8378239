#!/usr/bin/env bash
# Runs the peer benchmarks (see bench/peers/README.md): makes the virtualenvs under target/peers/, installs the
# peers from PyPI (one that fails to install is reported in the results, not dropped), builds Plexus and its Python
# package, then runs `python -m peerbench` with the arguments given.
#
#   bench/peers/run.sh --quick --peers plexus,sqlite,duckdb,networkx   # the CI smoke run (debug build)
#   bench/peers/run.sh                                                 # everything, scale 0.1, release build
#   bench/peers/run.sh --prepare [--peers ...]                         # only install (virtualenvs, peers)
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/../.."
root="$PWD"
out="$root/target/peers"
mkdir -p "$out"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [ "${1:-}" = --merge ]; then  # joins separate runs' JSON into one results file (peerbench/merge.py)
  shift
  cd "$caller"
  PYTHONPATH="$root/bench/peers" exec "$root/target/peers/main/bin/python" -m peerbench.merge "$@"
fi
quick=0 peers="" prepare=0
prev=""
for a in "$@"; do
  [ "$a" = --quick ] && quick=1
  [ "$a" = --prepare ] && prepare=1
  [ "$prev" = --peers ] && peers="$a"
  case "$a" in --peers=*) peers="${a#--peers=}" ;; esac
  prev="$a"
done
wants() { [ -z "$peers" ] || [[ ",$peers," == *",$1,"* ]]; }

# An interpreter of a given minor version: on PATH, or under pyenv. A pyenv shim is on PATH even when its version
# is not selected, and then fails when run: so each candidate has to start before it is chosen.
find_python() {
  local v="$1" p
  for p in "$(command -v "python$v")" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python; do
    [ -n "$p" ] && [ -x "$p" ] && "$p" -c '' >/dev/null 2>&1 && { echo "$p"; return; }
  done
  return 1
}

make_venv() {  # name, interpreter
  [ -x "$out/$1/bin/python" ] || "$2" -m venv "$out/$1"
}

# The main virtualenv runs the harness and every peer but UStore: Python 3.12 when the machine has it (FalkorDB
# embedded needs it), the default python3 otherwise.
make_venv main "$(find_python 3.12 || command -v python3)"
install() {  # venv, requirement... (logged; a failure is left for the worker to report)
  local venv="$1"; shift
  "$out/$venv/bin/pip" install -q "$@" >>"$out/install-$venv.log" 2>&1 || echo "peers: could not install $* (see $out/install-$venv.log)"
}
install main -r bench/peers/requirements.txt
optional=(igraph kuzu ladybug falkordblite psycopg)
declare -A peer_of=([igraph]=igraph [kuzu]=kuzu [ladybug]=ladybug [falkordblite]=falkordb [psycopg]=postgres)
for pkg in "${optional[@]}"; do
  wants "${peer_of[$pkg]}" || continue
  req="$(grep -E "^${pkg}(\[.*\])?==" bench/peers/requirements-optional.txt)"
  "$out/main/bin/pip" show -q "$pkg" >/dev/null 2>&1 || install main "$req"
done
if wants ustore; then
  if py310="$(find_python 3.10)"; then
    make_venv py310 "$py310"
    "$out/py310/bin/pip" show -q ustore >/dev/null 2>&1 || install py310 -r bench/peers/requirements-py310.txt
  else
    echo "peers: no Python 3.10 for UStore (its wheels stop at 3.10); it will be reported as not installed"
  fi
fi
if wants neo4j; then
  bench/peers/neo4j/build.sh >"$out/neo4j-build.log" 2>&1 || echo "peers: Neo4j did not build (see $out/neo4j-build.log)"
fi

# `--prepare`: only the virtualenvs and the peers (test.sh does this while cargo compiles).
[ "$prepare" = 1 ] && exit 0

# Plexus: the CLI (which generates the data sets) and the Python package, release builds for the published run,
# debug builds for the smoke run (which CI runs after building the workspace for the tests).
# The smoke run builds the CLI the way the test suite does, so that after `cargo test` nothing is rebuilt.
if [ "$quick" = 1 ]; then
  profile=debug flags=()
  cargo test -q --locked --workspace --no-run 2>/dev/null
else
  profile=release flags=(--release)
  cargo build -q --locked --release -p plexus-cli
fi
if ! "$out/main/bin/maturin" build -q "${flags[@]}" -m crates/plexus-python/Cargo.toml -o "$out/wheels-$profile" \
  >"$out/maturin.log" 2>&1; then
  cat "$out/maturin.log" >&2
  exit 1
fi
wheel="$(ls -t "$out/wheels-$profile"/plexus-*.whl | head -1)"
for venv in main py310; do
  [ -x "$out/$venv/bin/pip" ] && "$out/$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel"
done

cd "$caller"  # relative paths in the arguments are the caller's
PYTHONPATH="$root/bench/peers${PYTHONPATH:+:$PYTHONPATH}" PEERBENCH_COMMAND="bench/peers/run.sh $*" exec "$out/main/bin/python" -m peerbench --plexus "$root/target/$profile/plexus" "$@"
