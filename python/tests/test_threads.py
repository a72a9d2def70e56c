"""The GIL is released while a pooling runs: another thread keeps ticking."""

import threading
import time

import numpy as np
import tpb_emu


def test_a_run_does_not_block_other_threads():
    x = np.random.default_rng(0).random((1, 64, 192, 192), dtype=np.float32)
    calls = []

    def work():
        # At least 0.3 s of runs, however fast the machine: the test never skips.
        t = time.perf_counter()
        while len(calls) < 3 or time.perf_counter() - t < 0.3:
            tpb_emu.pool(x, mode="avg", kernel=3, stride=1, padding=1)
            calls.append(1)

    worker = threading.Thread(target=work)
    ticks = 0
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        ticks += 1
    worker.join()
    # With the GIL held for a whole call, this loop could tick only between
    # calls (about once a call); released, it ticks about once a millisecond.
    assert ticks >= 2 * len(calls) + 10, (ticks, len(calls))
