"""Outputs from the sandboxed runner to the judging parent through shared memory, never through files.

The parent creates an anonymous memory file (memfd) of `slots × slot_bytes`, seals its size (the child can neither
grow nor shrink it) and passes its descriptor to the child. The runner copies a run's output tensors into a slot
(`SlotWriter.put`: raw bytes, densely packed) and reports where they lie in its run message; the parent checks
that description against the slot's bounds (`Outputs.take`), copies the bytes to its own device memory, frees the
slot's pages and tells the runner the slot is free again. Nothing the runner writes lands on disk, so no output
can fill it, be a FIFO or a link, or outlive the run; a bounded number of slots bounds the memory outputs hold.

On a GPU both ends register the mapping with CUDA (page-locked, `cudaHostRegister`), so the copies to and from the
device run at DMA speed rather than through CUDA's staging buffers (about ten times faster for gigabyte outputs);
registered pages stay allocated until the evaluation ends instead of being given back per slot.

Where the driver can share device memory through a file descriptor (ladder/harness/device_memory.py), the parent
also creates one slot of device memory, as large as the operator's outputs (`device_bytes`), and passes its
descriptor too. A runner that maps it writes every run's outputs there (`"memory": "device"` in the description):
one copy on the device at each end instead of a round trip through host memory. A runner that cannot map it
writes to the host slots as before; the parent takes either.

The description is the runner's claim and checked like one: a dtype from a fixed list, a shape whose bytes are
exactly what it says, every tensor inside the slot. A torn or inconsistent output is judged as it reads (wrong),
or refused; it can never make the parent read outside the region.
"""

from __future__ import annotations

import fcntl
import math
import mmap
import os
from dataclasses import dataclass
from typing import Any

from ladder.harness.device_memory import SharedDeviceMemory

DTYPES = (
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
)
MAX_DIMS = 8
MAX_TENSORS = 16
ALIGN = 64  # each tensor's offset within a slot


class OutputError(ValueError):
    """A run's outputs that cannot be transferred (runner side) or a description that is not believable (parent)."""


def _torch_dtype(name: str) -> Any:
    import torch

    if name not in DTYPES:
        raise OutputError(f"dtype {str(name)[:40]!r} is not one an output may have ({', '.join(DTYPES)})")
    return getattr(torch, name)


@dataclass(frozen=True)
class Region:
    """The shared memory: `slots` slots of `slot_bytes` each."""

    slots: int
    slot_bytes: int

    @property
    def size(self) -> int:
        return self.slots * self.slot_bytes


class Outputs:
    """The parent's end: owns the memory file (and the device slot, if any); `fds()` go to the child (pass_fds),
    `region()` into its payload."""

    def __init__(self, slots: int, slot_bytes: int, device_bytes: int = 0):
        # whole pages per slot: a slot's pages are given back on their own (madvise wants page boundaries)
        self.layout = Region(slots, -(-max(1, slot_bytes) // mmap.PAGESIZE) * mmap.PAGESIZE)
        self.fd = os.memfd_create("ladder-outputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(self.fd, self.layout.size)
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        self._map = mmap.mmap(self.fd, self.layout.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self._pinned: int | None = None  # the registered address, once a take onto a GPU has pinned the mapping
        self.device: SharedDeviceMemory | None = None
        self.device_error: str | None = None  # why there is no device slot although one was asked for
        if device_bytes > 0:
            try:
                self.device = SharedDeviceMemory.create(device_bytes, _current_device())
                self._device_bytes = self.device.bytes()
            except Exception as e:  # no driver, no support, no memory: the host slots serve, slower
                self.device_error = f"{type(e).__name__}: {e}"

    def region(self) -> dict:
        region: dict[str, Any] = {"slots": self.layout.slots, "slot_bytes": self.layout.slot_bytes}
        if self.device is not None:
            region["device"] = {"fd": self.device.fd, "bytes": self.device.nbytes}
        return region

    def fds(self) -> list[int]:
        return [self.fd] + ([self.device.fd] if self.device is not None else [])

    def close(self) -> None:
        if self._pinned:
            _unpin(self._pinned)
        if self.device is not None:
            self._device_bytes = None
            self.device.close()
        self._map.close()
        os.close(self.fd)

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take(self, description: Any, device: str) -> Any:
        """The outputs a run message describes, copied onto `device` (a tensor, or a tuple for several); the slot's
        pages are freed. Raises OutputError for a description that does not hold."""
        import torch

        if not isinstance(description, dict):
            raise OutputError("the output description is not an object")
        if description.get("memory", "host") == "device":
            return self._take_device(description)
        slot = description.get("slot")
        if not isinstance(slot, int) or not 0 <= slot < self.layout.slots:
            raise OutputError(f"slot {str(slot)[:20]} is not one of the {self.layout.slots} slots")
        entries = _entries(description)
        base = slot * self.layout.slot_bytes
        if device.startswith("cuda") and self._pinned is None:
            self._pinned = _pin(self._map) or 0  # 0: pinning failed, the copies go through CUDA's staging
        out = []
        try:
            for entry in entries:
                dtype, shape, offset, nbytes = _checked(entry, self.layout.slot_bytes)
                n = math.prod(shape)
                raw = torch.frombuffer(self._map, dtype=torch.uint8, count=nbytes, offset=base + offset) if n else None
                host = raw.view(dtype).reshape(shape) if raw is not None else torch.empty(shape, dtype=dtype)
                out.append(host.to(device, copy=True))  # its own memory: the child may write the slot again
        finally:
            self.free(slot)
        return _as_sent(out, description)

    def _take_device(self, description: dict) -> Any:
        import torch

        if self.device is None:
            raise OutputError("the outputs are said to be in a device slot, and there is none")
        if description.get("slot") != 0:
            raise OutputError(f"slot {str(description.get('slot'))[:20]} is not the device slot 0")
        out = []
        for entry in _entries(description):
            dtype, shape, offset, nbytes = _checked(entry, self.device.nbytes)
            raw = self._device_bytes.narrow(0, offset, nbytes)
            out.append(raw.view(dtype).reshape(shape).clone())  # its own memory: the child may write the slot again
        torch.cuda.current_stream(self.device.device).synchronize()  # copied before the slot is said to be free
        return _as_sent(out, description)

    def free(self, slot: int) -> None:
        """Give the slot's pages back (the memory file keeps its size; the pages read as zeros after this), unless
        the mapping is registered with CUDA: the device would go on using the pages given back."""
        if not self._pinned:
            self._map.madvise(mmap.MADV_REMOVE, slot * self.layout.slot_bytes, self.layout.slot_bytes)


def _entries(description: dict) -> list:
    entries = description.get("tensors")
    if not isinstance(entries, list) or not 0 < len(entries) <= MAX_TENSORS:
        raise OutputError(f"an output is 1 to {MAX_TENSORS} tensors")
    return entries


def _as_sent(out: list, description: dict) -> Any:
    """One tensor where the runner's forward returned one, else a tuple."""
    return out[0] if description.get("single", True) and len(out) == 1 else tuple(out)


def _checked(entry: Any, slot_bytes: int) -> tuple[Any, tuple[int, ...], int, int]:
    """An entry's dtype, shape, offset and size in bytes, once each is checked against the slot."""
    if not isinstance(entry, dict):
        raise OutputError("a tensor's description is not an object")
    dtype = _torch_dtype(str(entry.get("dtype")))
    shape = entry.get("shape")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise OutputError(f"shape {str(shape)[:80]} is not a list of at most {MAX_DIMS} sizes")
    offset = entry.get("offset")
    if not isinstance(offset, int) or offset < 0 or offset % ALIGN:
        raise OutputError(f"offset {str(offset)[:20]} is not an aligned position in the slot")
    import torch

    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    if offset + nbytes > slot_bytes:
        raise OutputError(f"a tensor of {nbytes} bytes at offset {offset} does not fit a slot of {slot_bytes}")
    return dtype, tuple(shape), offset, nbytes


class SlotWriter:
    """The runner's end: `put(slot, out)` copies a run's outputs into the slot and returns their description. With
    `pin` (a GPU) it maps the device slot when the parent offers one (`memory` is then "device", one slot) and
    otherwise page-locks the host slots."""

    def __init__(self, fd: int, region: dict, pin: bool = False):
        self.memory = "host"
        self.device_error: str | None = None  # why the offered device slot could not be mapped
        self._device_bytes: Any = None
        offered = region.get("device")
        if pin and isinstance(offered, dict):
            try:
                mapped = SharedDeviceMemory.attach(int(offered["fd"]), int(offered["bytes"]), _current_device())
                self._device_bytes = mapped.bytes()
                self.memory = "device"
                self.layout = Region(1, mapped.nbytes)
                self.pinned = False
                return
            except Exception as e:  # the host slots serve, slower; the parent hears why in `ready`
                self.device_error = f"{type(e).__name__}: {e}"
        self.layout = Region(int(region["slots"]), int(region["slot_bytes"]))
        self._map = mmap.mmap(fd, self.layout.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        # the runner's process lives as long as the region: no unregistering needed
        self.pinned = bool(_pin(self._map)) if pin else False

    def put(self, slot: int, out: Any) -> dict:
        """Raises OutputError when `out` is not tensors, or does not fit one slot."""
        import torch

        single = not isinstance(out, tuple | list)
        tensors = [out] if single else list(out)
        if not 0 < len(tensors) <= MAX_TENSORS or not all(type(t) is torch.Tensor for t in tensors):
            raise OutputError(f"outputs must be 1 to {MAX_TENSORS} tensors")
        entries, offset = [], 0
        for t in tensors:
            dtype = str(t.dtype).removeprefix("torch.")
            if dtype not in DTYPES:
                raise OutputError(f"output dtype {dtype} cannot be judged")
            nbytes = t.numel() * t.element_size()
            if offset + nbytes > self.layout.slot_bytes:
                raise OutputError(
                    f"the outputs take more than the {self.layout.slot_bytes} bytes a run may return (the operator's "
                    "outputs, or its bytes moved): a wrong dtype or shape"
                )
            if nbytes:
                base = slot * self.layout.slot_bytes + offset
                if self._device_bytes is not None:
                    dst = self._device_bytes.narrow(0, base, nbytes)
                else:
                    dst = torch.frombuffer(self._map, dtype=torch.uint8, count=nbytes, offset=base)
                dst.view(t.dtype).view(t.shape).copy_(t)
            entries.append({"dtype": dtype, "shape": list(t.shape), "offset": offset})
            offset = aligned(offset + nbytes)
        if self._device_bytes is not None:
            torch.cuda.synchronize()  # written before the parent is told where
        return {"slot": slot, "tensors": entries, "single": single, "memory": self.memory}


def _pin(region: mmap.mmap) -> int | None:
    """Register the mapping with CUDA as page-locked memory; its address (for _unpin), or None where CUDA refuses
    (then copies still work, only slower)."""
    import ctypes

    import torch

    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    try:
        err = torch.cuda.cudart().cudaHostRegister(address, len(region), 0)
    except Exception:
        return None
    return address if int(err) == 0 else None


def _unpin(address: int) -> None:
    import torch

    torch.cuda.cudart().cudaHostUnregister(address)


def _current_device() -> int:
    import torch

    return torch.cuda.current_device()


def aligned(n: int) -> int:
    """`n` rounded up to where the next tensor of a slot may start."""
    return (n + ALIGN - 1) // ALIGN * ALIGN
