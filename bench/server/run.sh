#!/usr/bin/env bash
# Server benchmarks with `plexus loadgen` (open-loop, constant rate; latency from each request's scheduled time):
#   1. batched parameterised inserts (10 nodes/request) over Bolt, durable `sync`, stepping the rate up until
#      p99 passes 10 ms;
#   2. the IS1 point read on a generated SNB graph over Bolt and over HTTP, stepping until p99 passes 5 ms.
# Server and load generator share this machine. Writes bench/results/server.md.
#
#   bench/server/run.sh [--quick]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
duration=5
[ $quick = 1 ] && duration=2
cargo build --release --locked -q -p plexus-cli
plexus="$root/target/release/plexus"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export PLEXUS_PASSWORD="bench-$RANDOM"

start_server() { # data-dir log-file
  "$plexus" serve --data "$1" --bolt 127.0.0.1:0 --http 127.0.0.1:0 >"$2" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do grep -q "Data in" "$2" 2>/dev/null && break; sleep 0.1; done
}

out="$work/report.md"
{
  echo "# Server benchmarks"
  echo
  echo "Command: \`bench/server/run.sh$([ $quick = 1 ] && echo ' --quick')\` (revision $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d))."
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/{print $2}') GiB;"
  echo "server and load generator on the same machine. Each phase: 1 s warm-up, then ${duration} s measured;"
  echo "latency is measured from each request's scheduled send time (no coordinated omission)."
  echo
} >"$out"

phase_table() { # title json
  python3 - "$1" "$2" >>"$out" <<'PY'
import json, sys
title, path = sys.argv[1], sys.argv[2]
phases = json.load(open(path))
print(f"### {title}\n")
print("| target req/s | achieved req/s | nodes/s | errors | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | generator µs/req |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for p in phases:
    l = p["latency_ms"]
    nodes = f'{p["nodes_per_second"]:.0f}' if p.get("nodes_per_second") else ""
    print(f'| {p["target_rate"]:.0f} | {p["achieved_rate"]:.0f} | {nodes} | {p["errors"]} | {l["p50"]:.2f} | {l["p90"]:.2f} | {l["p99"]:.2f} | {l["p999"]:.2f} | {l["max"]:.2f} | {p.get("generator_cpu_us", 0):.0f} |')
print()
print("*generator µs/req*: the load generator's own CPU per request (warm-up included), taken from the server's cores.")
print()
PY
}

# 1. Inserts, durable sync.
start_server "$work/insert-db" "$work/insert.log"
bolt="$(sed -n 's/^Bolt listening on bolt:\/\///p' "$work/insert.log")"
"$plexus" loadgen --bolt "$bolt" --scenario insert --rate 8192 --step-factor 1.25 --max-rate 40000 --step-retry \
  --p99-bound-ms 10 --duration "$duration" --connections 64 --json "$work/insert.json" | tee "$work/insert.txt"
phase_table "Batched inserts over Bolt (10 nodes with 2 properties per request, durability sync, 64 connections)" "$work/insert.json"
# Capacity: a rate above what the server can take, for long enough that the queue's growth shows, so the achieved
# rate is its sustained throughput (latency grows with the queue here, so p99 means nothing in this row).
"$plexus" loadgen --bolt "$bolt" --scenario insert --rate 30000 --duration 10 --connections 64 \
  --json "$work/insert-capacity.json" | tee "$work/insert-capacity.txt"
phase_table "Insert capacity (offered 30,000 requests/s for 10 s; the achieved rate is the sustained throughput)" "$work/insert-capacity.json"

# 2. IS1 on a generated SNB graph.
scale=0.3
[ $quick = 1 ] && scale=0.03
"$plexus" generate snb --out "$work/snb" --scale "$scale" >/dev/null
"$plexus" import --data "$work/snb-db" --ldbc "$work/snb" --quiet
start_server "$work/snb-db" "$work/snb.log"
bolt="$(sed -n 's/^Bolt listening on bolt:\/\///p' "$work/snb.log")"
http="$(sed -n 's/^HTTP listening on http:\/\///p' "$work/snb.log")"
"$plexus" loadgen --bolt "$bolt" --scenario is1 --rate 20480 --step-factor 1.25 --max-rate 200000 --step-retry \
  --p99-bound-ms 5 --duration "$duration" --connections 32 --json "$work/is1-bolt.json" | tee "$work/is1-bolt.txt"
phase_table "IS1 point read over Bolt (SNB scale $scale, 32 connections)" "$work/is1-bolt.json"
if [ -n "$http" ]; then
  "$plexus" loadgen --http "$http" --scenario is1 --rate 20480 --step-factor 1.25 --max-rate 200000 --step-retry \
    --p99-bound-ms 5 --duration "$duration" --connections 32 --json "$work/is1-http.json" | tee "$work/is1-http.txt"
  phase_table "IS1 point read over HTTP (Query API, SNB scale $scale, 32 connections)" "$work/is1-http.json"
fi
mkdir -p bench/results
cp "$out" bench/results/server.md
echo "wrote bench/results/server.md"
