"""tpb-emu from Python: NEFF models, programs, instruction streams and
pooling with NumPy arrays in and out (the same library the `tpb-emu` CLI is
built on, with the CLI's checks and messages)."""

import os
from typing import Any, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

StreamLike = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]
"""bytes, any buffer, or a path to a raw stream of 64-byte records."""

Engine = Literal["pe", "act", "pool", "dve", "sp"]
Arch = Literal["sunda", "cayman", "mariana"]
BackendName = Literal["cpu", "gpu", "auto"]
"""cpu: the CPU reference; gpu: any adapter (lavapipe included), NoGpuError
without one; auto: a hardware GPU, else the CPU. A GPU is opened once per
process, on first use, and shared by every call and thread."""
PathLike = Union[str, "os.PathLike[str]"]
Addr = Union[str, Tuple[Literal["sbuf", "psum"], int, int]]
"""'sbuf:P:OFF', 'psum:P:OFF' (decimal or 0x hex), a hex ADDR4, or
(region, partition, offset)."""
Axes = Union[int, Sequence[int]]
TensorSpec = Tuple[str, str, Tuple[int, ...]]
"""(name, dtype as the CLI names it, shape)."""

class TpbEmuError(Exception):
    """Every error tpb_emu raises."""
    exit_code: Optional[int]

class ExecutionError(TpbEmuError):
    """A run stopped: a deadlock, a spent budget, a backend failure (CLI exit 1)."""

class UsageError(TpbEmuError):
    """Arguments that do not fit: an unknown name, a bad option value (CLI exit 2)."""

class InvalidProgram(TpbEmuError):
    """A program rejected before it ran (CLI exit 3)."""

class InvalidRecord(InvalidProgram):
    """An invalid instruction record; the message is the CLI's line."""
    offset: int
    opcode: int
    predicate: str
    detail: str

class InputError(TpbEmuError):
    """An input that cannot be used: unreadable, malformed, wrong dtype or shape (CLI exit 4)."""

class NoGpuError(TpbEmuError):
    """backend="gpu" and no GPU adapter (CLI exit 5)."""

def validate(stream: StreamLike, *, engine: Engine = "pool", arch: Arch = "cayman") -> int:
    """Validates every record as `tpb-emu validate` does; returns the number
    of records, raises InvalidRecord at the first invalid one."""

def check(stream: StreamLike, *, engine: Engine = "pool", arch: Arch = "cayman") -> list[dict[str, Any]]:
    """One dict per record with the keys of `validate --json`: offset,
    opcode, valid, predicate, detail."""

def disasm(stream: StreamLike) -> str:
    """The text of a stream, one line per record (`tpb-emu disasm`)."""

def asm(text: str) -> bytes:
    """Assembles text (what disasm prints) into records (`tpb-emu asm`)."""

class Neff:
    """A NEFF model, loaded as `tpb-emu inspect`/`run` load it."""
    def __init__(
        self,
        path_or_bytes: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview],
        *,
        verify: bool = True,
        strict: bool = False,
        arch: Optional[Arch] = None,
    ) -> None: ...
    @property
    def inputs(self) -> list[TensorSpec]: ...
    @property
    def outputs(self) -> list[TensorSpec]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def arch(self) -> str: ...
    def run(
        self,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        /,
        *,
        backend: BackendName = "auto",
        max_work: Optional[int] = None,
        timeline: Optional[PathLike] = None,
        **named: npt.ArrayLike,
    ) -> dict[str, np.ndarray]:
        """Runs the model with every input by name; returns the outputs by
        name (bf16 as ml_dtypes.bfloat16 when importable, else uint16 bits).
        timeline: where the run's Chrome trace-event timeline is written
        (`run --timeline`). Ctrl-C stops the run (KeyboardInterrupt, no
        outputs)."""
    def info(self) -> dict[str, Any]:
        """What `tpb-emu inspect --json` prints for this NEFF."""

class Program:
    """A TOML manifest program, loaded as `tpb-emu run PROGRAM.toml` loads it."""
    def __init__(self, manifest_path: Union[str, "os.PathLike[str]"]) -> None: ...
    @property
    def inputs(self) -> list[TensorSpec]: ...
    @property
    def outputs(self) -> list[TensorSpec]: ...
    @property
    def arch(self) -> str: ...
    def run(
        self,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        /,
        *,
        backend: BackendName = "auto",
        max_work: Optional[int] = None,
        timeline: Optional[PathLike] = None,
        **named: npt.ArrayLike,
    ) -> dict[str, np.ndarray]:
        """Runs the program; an input given by name replaces the manifest's data."""

class Device:
    """SBUF and PSUM of one generation, kept across calls: write arrays,
    run POOL streams, read arrays (`tpb-emu exec --load/--dump`)."""
    def __init__(self, arch: Arch = "cayman", backend: BackendName = "auto") -> None: ...
    @property
    def arch(self) -> str: ...
    @property
    def backend(self) -> str: ...
    def write(self, addr: Addr, array: npt.ArrayLike) -> None:
        """Writes the array at addr: axis 0 is lanes (exec --load)."""
    def read(self, addr: Addr, dtype: str, shape: Union[int, Sequence[int], str]) -> np.ndarray:
        """Reads shape elements of dtype (a SPEC text name: fp32, bf16, uint8, ...) at addr
        (exec --dump ADDR:DTYPE:SHAPE)."""
    def exec(self, stream: StreamLike, *, trace: bool = False, max_work: Optional[int] = None) -> list[str]:
        """Validates and runs a POOL stream on this memory (tpb-emu exec);
        returns the trace's lines with trace=True, else []."""

@overload
def pool(
    x: npt.ArrayLike,
    *,
    mode: Literal["max", "avg"],
    kernel: Axes,
    stride: Optional[Axes] = None,
    padding: Optional[Axes] = None,
    pads: Optional[Sequence[int]] = None,
    dilation: Optional[Axes] = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    return_indices: Literal[False] = False,
    dtype: Optional[Literal["bf16"]] = None,
    backend: BackendName = "auto",
    max_work: Optional[int] = None,
) -> np.ndarray: ...
@overload
def pool(
    x: npt.ArrayLike,
    *,
    mode: Literal["max"],
    kernel: Axes,
    stride: Optional[Axes] = None,
    padding: Optional[Axes] = None,
    pads: Optional[Sequence[int]] = None,
    dilation: Optional[Axes] = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    return_indices: Literal[True],
    dtype: Optional[Literal["bf16"]] = None,
    backend: BackendName = "auto",
    max_work: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]: ...

Size = Union[int, Sequence[int]]

@overload
def max_pool1d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, return_indices: Literal[False] = False, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray: ...
@overload
def max_pool1d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, *, return_indices: Literal[True],
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]: ...
@overload
def max_pool2d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, return_indices: Literal[False] = False, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray: ...
@overload
def max_pool2d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, *, return_indices: Literal[True],
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]: ...
@overload
def max_pool3d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, return_indices: Literal[False] = False, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray: ...
@overload
def max_pool3d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               dilation: Size = 1, ceil_mode: bool = False, *, return_indices: Literal[True],
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]: ...
def avg_pool1d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: None = None, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray:
    """torch.nn.functional.avg_pool1d on the emulator (divisor_override is refused)."""
def avg_pool2d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: None = None, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray:
    """torch.nn.functional.avg_pool2d on the emulator (divisor_override is refused)."""
def avg_pool3d(input: npt.ArrayLike, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: None = None, *,
               dtype: Optional[Literal["bf16"]] = None, backend: BackendName = "auto",
               max_work: Optional[int] = None) -> np.ndarray:
    """torch.nn.functional.avg_pool3d on the emulator (divisor_override is refused)."""

def to_png(array: npt.ArrayLike, path: PathLike, *,
           cmap: Optional[Literal["viridis", "magma", "diverging"]] = "viridis",
           normalize: Literal["channel", "global"] = "channel", argmax: bool = False) -> None:
    """A PNG montage of the array's channel planes (tpb-emu viz); cmap=None
    picks as the CLI does (diverging for negative data, else viridis)."""
