"""Shared fixtures: the repository, its example program, and the CLI the
bindings are compared with (target/release/tpb-emu, or $TPB_EMU_CLI)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "program"


@pytest.fixture(scope="session")
def cli():
    """Runs the tpb-emu binary; returns the CompletedProcess."""
    exe = os.environ.get("TPB_EMU_CLI", str(ROOT / "target" / "release" / "tpb-emu"))
    if not os.path.exists(exe):
        pytest.fail(f"{exe} is missing: cargo build --release first (or set TPB_EMU_CLI)")

    def run(*args, check=True):
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, check=check)

    return run


def gpu_or_skip(call):
    """Runs call(); without an adapter skips the test, unless CI=true."""
    import tpb_emu

    try:
        return call()
    except tpb_emu.NoGpuError as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no GPU adapter: {e}")


def bits(a):
    """A bfloat16 array's uint16 bits (what the CLI writes to an .npy); any
    other array as it is."""
    return a.view("<u2") if a.dtype.name == "bfloat16" else a
