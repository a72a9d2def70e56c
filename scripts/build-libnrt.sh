#!/usr/bin/env bash
# Builds tpb-emu's drop-in Neuron Runtime library (nrt/, SPEC-NRT) in release mode and
# leaves target/release/libnrt.so.1 (SONAME libnrt.so.1) and the link libnrt.so beside it.
#
# SPEC-NRT §2.1: a Rust cdylib cannot carry libnrt's symbol versions (rustc passes its own
# version script), so the crate is built as a staticlib and linked by the C compiler with
# nrt/libnrt.map: every nrt_*/nec_* export @@NRT_2.0.0, every nrta_* export @@NRT_3.0.0.
#
#   scripts/build-libnrt.sh            # then: LD_LIBRARY_PATH=$PWD/target/release ./my_harness
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
CC=${CC:-cc}
out=target/release
# The system libraries the staticlib needs, as rustc lists them (--print native-static-libs).
# NRT_LINK_ONLY=1: relink the staticlib cargo already built (the tests, which run inside cargo).
if [ "${NRT_LINK_ONLY:-0}" != 1 ]; then
    cargo build --release -q -p tpb-emu-nrt
    libs=$(cargo rustc --release -q -p tpb-emu-nrt --lib --crate-type staticlib -- \
        --print native-static-libs 2>&1 | sed -n "s/.*native-static-libs: //p" | tail -n 1)
fi
if [ -z "${libs:-}" ]; then
    libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
fi
# shellcheck disable=SC2086
"$CC" -shared -o "$out/libnrt.so.1.tmp" \
    -Wl,-soname,libnrt.so.1 -Wl,--version-script=nrt/libnrt.map \
    -Wl,--whole-archive "$out/libtpb_emu_nrt.a" -Wl,--no-whole-archive \
    -Wl,--gc-sections -Wl,-z,now $libs
mv -f "$out/libnrt.so.1.tmp" "$out/libnrt.so.1"
ln -sfn libnrt.so.1 "$out/libnrt.so"
echo "built $out/libnrt.so.1 and $out/libnrt.so"
