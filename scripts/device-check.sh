#!/bin/bash
# The H200 check, run on the device machine from the repository root after
# scripts/device-prepare.sh here, with dev-bin and .gl carried:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; bash scripts/device-check.sh
# 1. correctness: the GPU differential tests (every table case, 2,000 random
#    records, large records, the rows fast path) against the CPU reference,
#    and the demo's five configurations checked against a plain reference;
# 2. the benchmark table on the GPU and on the CPU backend, and the
#    whole-program benchmark on both;
# 3. PyTorch's max_pool2d / avg_pool2d and a copy on the same shape.
# Output files land in $OUT (or ./tpb-emu-out) for the closing note.
set -u
out=${OUT:-tpb-emu-out}
mkdir -p "$out"
export CI=true XDG_RUNTIME_DIR=/tmp
if ! dev-bin/tpb-emu info | grep -q -i nvidia; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
dev-bin/tpb-emu info | tee "$out/info.txt"
echo "== differential tests"
dev-bin/device --test-threads 1 2>&1 | tee "$out/tests.txt" | grep -E "^test |test result"
echo "== demo"
dev-bin/tpb-emu demo --backend gpu --out "$out/demo" 2>&1 | tail -8
echo "== bench (gpu)"
dev-bin/tpb-emu bench pool --backend gpu --repeat 50 | tee "$out/bench-gpu.txt"
dev-bin/tpb-emu bench pool --backend gpu --repeat 50 --json >"$out/bench-gpu.json"
echo "== bench (gpu, 4 runs per fast-path invocation: the software-adapter choice)"
dev-bin/tpb-emu bench pool --backend gpu --repeat 50 --records 10 --rows-runs 4 | tee "$out/bench-gpu-runs4.txt"
echo "== bench (gpu, half the source words zero: NonzeroWithCount's compaction)"
dev-bin/tpb-emu bench pool --backend gpu --repeat 50 --records 10 --nonzero-fraction 0.5 | tee "$out/bench-gpu-nz-half.txt"
echo "== whole programs (benches/programs.rs: on-chip transposes, DMAs via a held scratch variable)"
PROGRAMS_BENCH_MS=500 dev-bin/programs-bench --bench 2>&1 | tee "$out/bench-programs.txt"
echo "== bench (cpu backend, this machine's cores)"
dev-bin/tpb-emu bench pool --backend cpu --repeat 10 | tee "$out/bench-cpu.txt"
echo "== PyTorch on the same shape"
PYTHONUNBUFFERED=1 python3 scripts/torch_pool_bench.py | tee "$out/torch.txt"
