#!/bin/bash
# Prepares the H200 check (scripts/device-check.sh) on the build machine:
# release binaries of tpb-emu, of the GPU differential tests and of the
# whole-program benchmark (benches/programs.rs), stripped,
# into dev-bin/, and the Vulkan loader packages into .gl/ (both git-ignored;
# name both in the device tool's `carry`). See ../.library/device/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin tpb-emu
test_bin=$(cargo test --release --test device --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "device" and m.get("executable"):
        print(m["executable"])')
bench_bin=$(cargo bench --bench programs --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "programs" and m.get("executable"):
        print(m["executable"])')
mkdir -p dev-bin
strip -o dev-bin/tpb-emu target/release/tpb-emu
strip -o dev-bin/device "$test_bin"
strip -o dev-bin/programs-bench "$bench_bin"
if ! ls .gl/*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    # shellcheck disable=SC2086
    apt-get $o update >/dev/null
    # shellcheck disable=SC2086
    (cd .gl && apt-get $o download libvulkan1)
fi
du -sh dev-bin .gl
