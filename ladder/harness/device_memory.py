"""GPU memory that two processes share through a file descriptor (CUDA's virtual memory management API).

The parent creates the memory (`SharedDeviceMemory.create`), exports it as a POSIX file descriptor and passes that
descriptor to the sandboxed runner, which maps the same physical memory (`SharedDeviceMemory.attach`). A run's
outputs then go from the runner to the judge as one copy on the device, instead of a copy to host memory and one
back. A file descriptor crosses the sandbox's PID and IPC namespaces, which CUDA's older IPC handles (keyed on the
exporting process) do not.

Only the driver API is used (libcuda through ctypes): torch exposes no shareable allocation. The mapping is viewed
as a torch tensor through `__cuda_array_interface__` without a copy.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

_ALLOCATION_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_HANDLE_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_LOCATION_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
_ACCESS_READWRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
_GRANULARITY_RECOMMENDED = 1  # CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
_ATTRIBUTE_POSIX_FD_SUPPORTED = 103  # CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
_ZERO = ctypes.c_ulonglong(0)  # flags and addresses the calls take as 64-bit values


class DeviceMemoryError(RuntimeError):
    """The driver refused an allocation, export, import or mapping (the message names the call and its code)."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class _Prop(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("requestedHandleTypes", ctypes.c_int),
        ("location", _Location),
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _AllocFlags),
    ]


class _Access(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


_driver: Any = None


def _cuda() -> Any:
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL("libcuda.so.1")  # every call returns a CUresult: ctypes' default int restype
    return _driver


def _call(name: str, *args: Any) -> None:
    code = getattr(_cuda(), name)(*args)
    if code != 0:
        raise DeviceMemoryError(f"{name} failed with CUDA driver error {code}")


def _prop(device: int) -> _Prop:
    prop = _Prop()
    prop.type = _ALLOCATION_PINNED
    prop.requestedHandleTypes = _HANDLE_POSIX_FD
    prop.location = _Location(_LOCATION_DEVICE, device)
    return prop


def supported(device: int = 0) -> bool:
    """Whether the driver can share device memory through a file descriptor on this device."""
    try:
        _call("cuInit", 0)
        value = ctypes.c_int(0)
        _call("cuDeviceGetAttribute", ctypes.byref(value), _ATTRIBUTE_POSIX_FD_SUPPORTED, device)
    except (OSError, DeviceMemoryError):
        return False
    return bool(value.value)


def granularity(device: int = 0) -> int:
    size = ctypes.c_size_t(0)
    _call("cuMemGetAllocationGranularity", ctypes.byref(size), ctypes.byref(_prop(device)), _GRANULARITY_RECOMMENDED)
    return int(size.value)


class _Interface:
    """What torch.as_tensor reads to view device memory it did not allocate."""

    def __init__(self, address: int, nbytes: int):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (address, False),
            "version": 2,
            "strides": None,
        }


@dataclass
class SharedDeviceMemory:
    """A mapping of shareable device memory in this process; `fd` is the exporter's descriptor (-1 in an importer)."""

    handle: int
    address: int
    nbytes: int
    device: int
    fd: int = -1

    @classmethod
    def create(cls, nbytes: int, device: int = 0) -> SharedDeviceMemory:
        """New device memory of at least `nbytes`, exported: pass `fd` to the process that attaches."""
        import torch

        torch.cuda.init()  # the driver initialized and the device's primary context current
        step = granularity(device)
        size = -(-max(1, nbytes) // step) * step
        handle = ctypes.c_ulonglong(0)
        _call("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(_prop(device)), _ZERO)
        try:
            fd = ctypes.c_int(-1)
            _call("cuMemExportToShareableHandle", ctypes.byref(fd), handle, _HANDLE_POSIX_FD, _ZERO)
            memory = cls._mapped(handle.value, size, device)
        except BaseException:
            _cuda().cuMemRelease(handle)
            raise
        memory.fd = fd.value
        return memory

    @classmethod
    def attach(cls, fd: int, nbytes: int, device: int = 0) -> SharedDeviceMemory:
        """The memory another process exported as `fd`, mapped here."""
        import torch

        torch.cuda.init()
        handle = ctypes.c_ulonglong(0)
        _call("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fd), _HANDLE_POSIX_FD)
        try:
            return cls._mapped(handle.value, nbytes, device)
        except BaseException:
            _cuda().cuMemRelease(handle)
            raise

    @classmethod
    def _mapped(cls, handle: int, size: int, device: int) -> SharedDeviceMemory:
        address = ctypes.c_ulonglong(0)
        _call("cuMemAddressReserve", ctypes.byref(address), ctypes.c_size_t(size), ctypes.c_size_t(0), _ZERO, _ZERO)
        try:
            _call("cuMemMap", address, ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_ulonglong(handle), _ZERO)
            access = _Access(_Location(_LOCATION_DEVICE, device), _ACCESS_READWRITE)
            _call("cuMemSetAccess", address, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1))
        except BaseException:
            _cuda().cuMemAddressFree(address, ctypes.c_size_t(size))
            raise
        return cls(handle, address.value, size, device)

    def bytes(self) -> Any:
        """The whole mapping as a uint8 tensor on the device (no copy)."""
        import torch

        return torch.as_tensor(_Interface(self.address, self.nbytes), device=f"cuda:{self.device}")

    def close(self) -> None:
        import os

        import torch

        torch.cuda.synchronize(self.device)
        lib = _cuda()
        lib.cuMemUnmap(ctypes.c_ulonglong(self.address), ctypes.c_size_t(self.nbytes))
        lib.cuMemAddressFree(ctypes.c_ulonglong(self.address), ctypes.c_size_t(self.nbytes))
        lib.cuMemRelease(ctypes.c_ulonglong(self.handle))
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
