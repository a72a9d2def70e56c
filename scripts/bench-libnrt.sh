#!/usr/bin/env bash
# Benchmark of the libnrt bindings (nrt/, not a test): nrt_execute of a pool2d NEFF in a loop,
# inputs written once, beside `tpb-emu run`'s in-process run time of the same NEFF (interleaved
# rounds, medians), and nrt_load beside `tpb-emu inspect`.
#
#   scripts/bench-libnrt.sh [BACKEND] [N C H W] [RUNS]     (default: cpu 1 128 720 720, 5 runs)
#
# Needs scripts/build-libnrt.sh and target/release/tpb-emu built; python3 with numpy writes the
# input (VENV_PYTHON, default target/ci-venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:-cpu}
shape=(${2:-1} ${3:-128} ${4:-720} ${5:-720})
runs=${6:-5}
py=${VENV_PYTHON:-target/ci-venv/bin/python}
tpb=target/release/tpb-emu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -std=c11 -Wall -I nrt/include nrt/tests/c/bench.c -L target/release -lnrt -o "$dir/bench"
"$py" - "$dir/x.npy" "${shape[@]}" <<'PY'
import sys, numpy as np
n, c, h, w = map(int, sys.argv[2:6])
x = (np.arange(n * c * h * w, dtype=np.int64) % 1013).astype(np.float32) * 0.5 - 200.0
np.save(sys.argv[1], x.reshape(n, c, h, w))
PY
"$tpb" pool2d --input "$dir/x.npy" --mode max --kernel 2,2 --output "$dir/y.npy" \
    --backend cpu --emit-neff "$dir/pool.neff" >/dev/null
name=$("$tpb" inspect "$dir/pool.neff" --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["inputs"][0]["name"])')
echo "== pool2d NEFF, ${shape[*]} fp32, backend $backend"
for _ in 1 2 3; do
    s=$(date +%s.%N); "$tpb" inspect "$dir/pool.neff" >/dev/null; e=$(date +%s.%N)
    echo "tpb-emu inspect (whole process): $(echo "($e - $s) * 1000" | bc -l | cut -c1-8) ms"
done
# Interleaved rounds, so that a busy machine slows both sides alike: one `tpb-emu run` (its
# in-process wall time) and one bench process whose second nrt_execute (the steady state of a
# loop with inputs written once) is taken; then the medians and their ratio.
cli_ms=() nrt_ms=()
for _ in $(seq "$runs"); do
    line=$("$tpb" run "$dir/pool.neff" --input "$name=$dir/x.npy" --out "$dir/out" --backend "$backend" 2>&1 | grep 'wall time')
    echo "tpb-emu run: $line"
    cli_ms+=("$(echo "$line" | sed -E 's/.*wall time: ([0-9.]+) (m?s).*/\1 \2/' | awk '{print ($2=="s") ? $1*1000 : $1}')")
    out=$(LD_LIBRARY_PATH=target/release TPB_EMU_BACKEND=$backend "$dir/bench" "$dir/pool.neff" 2)
    echo "$out" | grep -E 'nrt_load|run 2' | sed 's/^/libnrt: /'
    nrt_ms+=("$(echo "$out" | sed -nE 's/nrt_execute run 2: ([0-9.]+) ms/\1/p')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
c=$(median "${cli_ms[@]}") n=$(median "${nrt_ms[@]}")
echo "median over $runs rounds: tpb-emu run ${c} ms, nrt_execute ${n} ms, ratio $(echo "$n / $c" | bc -l | cut -c1-5) (target <= 1.05)"
