"""How a process uses the module: Ctrl-C stops a run, memory does not grow
over many runs, two threads run at once, bf16 without ml_dtypes."""

import concurrent.futures
import subprocess
import sys
import threading
import time
import _thread

import numpy as np
import pytest

import tpb_emu
from conftest import EXAMPLE

MANIFEST = EXAMPLE / "program.toml"


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def looping(tmp_path_factory):
    """A program whose SP engine branches to itself forever: it runs until
    the record budget (100,000,000 records) unless stopped."""
    d = tmp_path_factory.mktemp("loop")
    r = bytearray(64)
    r[0], r[1] = 0xA9, 16  # COMPARE_BRANCH, inst_word_len
    r[12], r[14] = 0, 3  # ALWAYS, REL_IMM; rel (bytes 0x30..0x38) = 0: itself
    (d / "sp.bin").write_bytes(bytes(r))
    (d / "p.toml").write_text(
        'arch = "cayman"\n[streams]\nsp = "sp.bin"\n'
        '[[variable]]\nname = "y"\nid = 1\ndtype = "fp32"\nshape = [4]\nrole = "output"\n')
    return tpb_emu.Program(d / "p.toml")


def test_ctrl_c_stops_a_run(looping):
    # Unstopped, the loop runs 1e8 records (seconds); a budget shows it loops.
    with pytest.raises(tpb_emu.ExecutionError, match="work budget of 100000 elements"):
        looping.run(backend="cpu", max_work=100_000)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    t = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            looping.run(backend="cpu")
    finally:
        timer.cancel()
    took = time.perf_counter() - t
    assert took < 2, took
    # The module is usable afterwards.
    assert tpb_emu.Program(MANIFEST).run(backend="cpu")["y_avg"].shape == (128, 4)


def test_memory_does_not_grow_over_1000_runs():
    p = tpb_emu.Program(MANIFEST)
    x = np.load(EXAMPLE / "x.npy")
    for _ in range(100):
        p.run(x=x, backend="cpu")
    after_100 = rss_kib()
    for _ in range(900):
        p.run(x=x, backend="cpu")
    after_1000 = rss_kib()
    assert after_1000 <= after_100 * 1.10, (after_100, after_1000)


def test_two_runs_at_once_agree():
    x = np.random.default_rng(0).random((1, 16, 64, 64), dtype=np.float32)
    want = tpb_emu.max_pool2d(x, 3, 1, 1, backend="cpu").tobytes()
    p = tpb_emu.Program(MANIFEST)
    want_p = p.run(backend="cpu")["y_avg"].tobytes()
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        pools = [ex.submit(tpb_emu.max_pool2d, x, 3, 1, 1, backend="cpu") for _ in range(4)]
        runs = [ex.submit(lambda: p.run(backend="cpu")["y_avg"]) for _ in range(4)]
        assert all(f.result().tobytes() == want for f in pools)
        assert all(f.result().tobytes() == want_p for f in runs)


def test_two_runs_overlap_in_time():
    """Two threads' runs overlap: the GIL is released during each."""
    x = np.random.default_rng(0).random((1, 32, 128, 128), dtype=np.float32)
    spans = []

    def work():
        t0 = time.perf_counter()
        tpb_emu.avg_pool2d(x, 3, 1, 1, backend="cpu")
        spans.append((t0, time.perf_counter()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = sorted(spans)
    assert b0 < a1, spans  # the second began before the first ended


def test_bf16_without_ml_dtypes_is_uint16_bits(tmp_path):
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, tpb_emu\n"
        f"p = tpb_emu.Program({str(MANIFEST)!r})\n"
        "y = p.run(backend='cpu')['y_max']\n"
        "assert y.dtype == np.uint16, y.dtype\n"
        "x = np.array([[[[0x3f80, 0x4000], [0xbf80, 0x4040]]]], np.uint16)\n"
        "m = tpb_emu.max_pool2d(x, 2, dtype='bf16', backend='cpu')\n"
        "assert m.dtype == np.uint16 and m.item() == 0x4040, m\n"
        "print(y.tobytes().hex())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with_ml = tpb_emu.Program(MANIFEST).run(backend="cpu")["y_max"]
    assert with_ml.dtype.name == "bfloat16"
    assert r.stdout.strip() == with_ml.tobytes().hex()


def test_no_stdout(capfd):
    tpb_emu.Program(MANIFEST).run(backend="cpu")
    tpb_emu.max_pool2d(np.zeros((1, 1, 4, 4), np.float32), 2, backend="cpu")
    out, _ = capfd.readouterr()
    assert out == ""
