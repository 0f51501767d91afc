#!/usr/bin/env bash
# DRAM bytes per amplitude of a few IQP and FWHT calls, counted by Nsight Compute
# (dram__bytes_read.sum, dram__bytes_write.sum) over one call of bench/traffic.cu's
# wham_traffic each, with the caches left alone between the call's kernels
# (--cache-control none: a stage that reads what the one before it left in L2 counts
# no DRAM read for it) and the clocks left alone. Beside each call, the same figure for
# the floor kernel over the same output (a plain write for IQP, a copy for FWHT).
#   scripts/traffic.sh WHAM_TRAFFIC_BINARY OUT_DIR [POINTS_FILE]
# POINTS_FILE: one call a line, `op type n batch [path]` (wham_traffic's arguments);
# default: the list below. Writes OUT_DIR/traffic.md (the table) and OUT_DIR/traffic/
# (ncu's CSV and the program's output for each point). Exit status: non-zero if a
# point failed.
set -uo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
points=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
raw=$out/traffic
mkdir -p "$raw"
if [ -z "$points" ]; then
  points=$raw/points.txt
  # The fused path, a cluster, the resident and the two-launch Kronecker schedules,
  # three stages, and the baseline; the FWHT's fused, streamed, cluster, Kronecker,
  # middle and three-pass plans.
  cat > "$points" <<'EOF'
iqp c128 12 512MiB
iqp c128 15 512MiB
iqp c128 16 512MiB
iqp c128 16 64
iqp c64 18 512MiB
iqp c128 20 512MiB
iqp c64 22 1GiB
iqp c64 26 1GiB
iqp c128 16 64 baseline
fwht float 12 1GiB
fwht float 15 1GiB
fwht float 16 1GiB
fwht float 20 1GiB
fwht float 24 1GiB
fwht float 26 1GiB
fwht float 28 1GiB
EOF
fi
status=0
i=0
while read -r -a args; do
  [ ${#args[@]} -ge 4 ] || continue
  [[ "${args[0]}" == \#* ]] && continue
  i=$((i + 1))
  tag=$(printf '%02d_%s' "$i" "$(IFS=_; echo "${args[*]}")")
  if ! ncu --profile-from-start off --cache-control none --clock-control none \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
      --log-file "$raw/$tag.csv" "$bin" "${args[@]}" > "$raw/$tag.txt" 2>&1; then
    echo "ncu or wham_traffic failed: ${args[*]} (see $raw/$tag.txt)" >&2
    status=1
  fi
done < "$points"
python3 "$here/traffic.py" "$raw" > "$out/traffic.md" || status=1
cat "$out/traffic.md"
exit $status
