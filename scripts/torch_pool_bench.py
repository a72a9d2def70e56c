"""PyTorch's max_pool2d / avg_pool2d beside a copy, on the shape of
`tpb-emu bench pool` (128 channels of a 128 x 256 fp32 map, 2x2 windows,
stride 2: 16 MiB in, 4 MiB out) and on a large one, as GB/s of input +
output bytes, CUDA-event timed, best of many. Run by scripts/device-check.sh."""
import torch
import torch.nn.functional as F


def best_ms(fn, reps=200):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b))
    return best


def row(name, ms, nbytes):
    print(f"{name:<44}{ms:>10.4f} ms{nbytes / ms / 1e6:>10.1f} GB/s")


print(torch.cuda.get_device_name(), "torch", torch.__version__)
for shape in [(1, 128, 128, 256), (64, 128, 256, 512)]:
    x = torch.randn(*shape, device="cuda")
    n_in = x.numel() * 4
    moved = n_in + n_in // 4
    print(f"shape {shape}: {n_in >> 20} MiB in")
    row("max_pool2d 2x2", best_ms(lambda: F.max_pool2d(x, 2)), moved)
    row("avg_pool2d 2x2", best_ms(lambda: F.avg_pool2d(x, 2)), moved)
    half = x.view(-1)[: moved // 8]
    row("copy (clone of the same bytes / 2)", best_ms(lambda: half.clone()), moved)
