#!/usr/bin/env bash
# Measures `plexus generate` and prints the markdown table of bench/results/generate.md.
# Each case runs three times into a fresh file under target/generate/ (removed first: overwriting a large file
# adds the time to free its blocks) and the fastest run is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p plexus-cli >&2
bin=target/release/plexus
dir=target/generate
mkdir -p "$dir"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "Machine: $cpu, $(nproc) logical cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo);" \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg); revision $(git rev-parse --short HEAD)"
echo
echo "| case | edges | seconds | edges/s | file size |"
echo "|---|---:|---:|---:|---:|"
run() {
  local name=$1 file=$2
  shift 2
  local best="" line
  for _ in 1 2 3; do
    rm -f "$dir/$file"
    line=$("$bin" generate "$@" --out "$dir/$file" 2>&1 >/dev/null | tail -1)
    local secs
    secs=$(sed -E 's/.* in ([0-9.]+) s:.*/\1/' <<<"$line")
    if [[ -z $best ]] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$secs
      bestline=$line
    fi
  done
  local edges bytes
  edges=$(sed -E 's/^plexus generate: ([0-9]+) edges.*/\1/' <<<"$bestline")
  bytes=$(sed -E 's/.* nodes, ([0-9]+) bytes.*/\1/' <<<"$bestline")
  awk -v n="$name" -v e="$edges" -v s="$best" -v b="$bytes" \
    'BEGIN { printf "| %s | %d | %.2f | %.2fM | %.0f MB |\n", n, e, s, e / s / 1e6, b / 1e6 }'
}
run "patents" patents.csv patents
run "patents, --threads 1" patents.csv patents --threads 1
run "patents, --weights" patents-w.csv patents --weights
run "patents, .zst" patents.csv.zst patents
run "patents, .gz" patents.csv.gz patents
run "human-brain --scale 0.1" human-brain-0.1.csv human-brain --scale 0.1
run "mouse-genes --scale 0.1" mouse-genes-0.1.csv mouse-genes --scale 0.1
run "rmat --rmat-scale 22" rmat-22.csv rmat --rmat-scale 22
run "likes --people 1000000 --items 100000 --likes 10" likes.csv likes --people 1000000 --items 100000 --likes 10
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
