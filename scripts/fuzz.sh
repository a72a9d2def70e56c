#!/usr/bin/env bash
# Runs every cargo-fuzz target (or the ones named) for SECONDS each (an input
# running over 10 s counts as a crash: a hang), seeded
# from the test corpora, and prints each target's executions and crashes.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default 60 s, all targets
#
# Needs a nightly toolchain and cargo-fuzz (`rustup toolchain install nightly`,
# `cargo install cargo-fuzz`). Not part of CI: CI runs the seeded property
# loops in `cargo test` instead. Extra libFuzzer flags: FUZZ_FLAGS="-runs=1000000".
# The crate forbids `unsafe`, so a crash is a panic, which libFuzzer catches
# without a sanitizer; FUZZ_SANITIZER=address turns AddressSanitizer back on.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(record asm manifest npy lower neff)
fi
# One folder of seeds per target, from what the tests and examples already hold.
seed() {
    local t="$1" d="fuzz/corpus/$1"
    mkdir -p "$d"
    case "$t" in
        record | lower) cp -f examples/program/*.bin "$d"/ ;;
        asm)
            cp -f tests/golden/disasm.txt "$d"/golden.tpbs
            for f in examples/program/*.bin; do
                cargo run -q --release -- disasm "$f" > "$d/$(basename "$f" .bin).tpbs" || true
            done
            ;;
        manifest) cp -f examples/program/program.toml "$d"/ ;;
        npy) cp -f examples/program/x.npy tests/fixtures/pool2d/*.npy "$d"/ ;;
        neff)
            rm -f "$d/example.neff"
            cargo run -q --release -- pack examples/program/program.toml -o "$d/example.neff" || true
            ;;
    esac
}
status=0
for t in "${targets[@]}"; do
    seed "$t"
    log="fuzz/corpus/$t.log"
    if cargo +nightly fuzz run -s "${FUZZ_SANITIZER:-none}" "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 \
        -print_final_stats=1 ${FUZZ_FLAGS:-} > "$log" 2>&1; then
        crashes=0
    else
        crashes=1
        status=1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    echo "$t: $runs executions, $([ "$crashes" = 0 ] && echo "0 crashes" || echo "CRASH (see $log and fuzz/artifacts/$t)")"
done
exit "$status"
