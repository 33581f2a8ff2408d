"""ctypes binding of specc's C ABI (lib/Runtime/specc_runtime.h).

The runtime library is found, in this order: ``$SPECC_RUNTIME_LIB``; the copy
installed inside this package by ``pip install``; ``build/lib`` of the
repository this file sits in. Nothing is loaded until first use, and loading
needs no GPU: a GPU mover reports "no CUDA driver" when there is none.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import threading
from typing import Optional, Sequence, Tuple

INT32, INT64 = 0, 1
DEVICE_CPU = -1

SUCCESS = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_NO_DRIVER = 2
ERROR_CUDA = 3
ERROR_INPUT = 4
ERROR_CAPTURING = 5
ERROR_OUT_OF_MEMORY = 6
ERROR_IMAGE = 7
ERROR_EARLIER_INPUT = 8


class SpeccError(RuntimeError):
    """A failure of the specc runtime (driver, launch, misuse)."""


class NoDriverError(SpeccError):
    """No CUDA driver or GPU is available for a GPU mover."""


class OutOfMemoryError(SpeccError, MemoryError):
    """Scratch could not be allocated; the mover is unchanged and usable."""


class InputError(SpeccError, ValueError):
    """A call found input outside the function's contract.

    The requests that broke it moved none of their rows; the others moved.
    ``status`` holds (code, entry, value, bound) as listed in
    dialect/KVCache/KVCacheABI.h. ``earlier`` is True when the violation
    belongs to an earlier call that nobody waited for (reported by a later
    call, which itself ran, or by ``specc.check()``); ``calls`` is then the
    number of such calls since the last report (``status`` is the latest's)
    and ``skipped`` the requests that call skipped.
    """

    def __init__(self, message: str, status: Tuple[int, ...], earlier: bool = False,
                 calls: int = 1, skipped: int = 0):
        super().__init__(message)
        self.status = status
        self.earlier = earlier
        self.calls = calls
        self.skipped = skipped


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * 2),
    ]


class _KVBuffer(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("row_bytes", ctypes.c_int64),
        ("slots", ctypes.c_int64),
    ]


ARG_NAMES = (
    "req_pool_indices",
    "req_to_token",
    "seq_lens",
    "num_correct_drafts",
    "accept_index",
    "out_cache_loc",
)


#: Where the targets come from (specc_runtime.h: SPECC_TARGETS_*).
TARGETS = {"req_to_token": 0, "window": 1}
#: Fields of the status record (KVCACHE_STATUS_* in KVCacheABI.h).
STATUS_FIELDS = 8
#: Fields of a report (specc_runtime.h: SPECC_REPORT_FIELDS).
REPORT_FIELDS = 8


class _MoveArgs(ctypes.Structure):
    _fields_ = [(name, _Tensor) for name in ARG_NAMES] + [("targets", ctypes.c_int32)]


_lib = None
_lib_lock = threading.Lock()


def _candidates():
    env = os.environ.get("SPECC_RUNTIME_LIB")
    if env:
        yield pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent
    yield here / "libspecc_runtime.so"
    yield here.parent.parent / "build" / "lib" / "libspecc_runtime.so"


def load(path: str) -> ctypes.CDLL:
    """Loads one runtime library and declares its functions. Each path loads
    its own copy (its own kernels, its own globals): two builds of the
    runtime can then run side by side in one process, as the paired A/B
    benchmark does. specc's API uses the one library() finds."""
    lib = ctypes.CDLL(str(path))
    c = ctypes
    lib.specc_mover_create.argtypes = [c.c_int, c.c_int64, c.POINTER(c.c_void_p)]
    lib.specc_mover_destroy.argtypes = [c.c_void_p]
    lib.specc_mover_destroy.restype = None
    lib.specc_mover_set_buffers.argtypes = [c.c_void_p, c.POINTER(_KVBuffer), c.c_int64]
    lib.specc_move_accept_tokens.argtypes = [c.c_void_p, c.POINTER(_MoveArgs), c.c_void_p, c.c_int]
    lib.specc_mover_read_status.argtypes = [c.c_void_p, c.c_void_p, c.POINTER(c.c_int64)]
    lib.specc_status_message.argtypes = [c.POINTER(c.c_int64), c.c_char_p, c.c_int64]
    lib.specc_status_message.restype = c.c_char_p
    lib.specc_last_error.restype = c.c_char_p
    lib.specc_mover_backend.argtypes = [c.c_void_p]
    lib.specc_mover_backend.restype = c.c_char_p
    lib.specc_mover_poll.argtypes = [c.c_void_p, c.POINTER(c.c_int64)]
    lib.specc_mover_last_report.argtypes = [c.c_void_p, c.POINTER(c.c_int64)]
    lib.specc_mover_set_trap.argtypes = [c.c_void_p, c.c_int]
    lib.specc_mover_reserve.argtypes = [c.c_void_p, c.c_int64]
    lib.specc_testing_fail_allocations.argtypes = [c.c_int]
    lib.specc_testing_fail_allocations.restype = None
    return lib


def library() -> ctypes.CDLL:
    """Loads the runtime library once (the first of _candidates() that
    exists)."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            tried.append(str(path))
            if path.is_file():
                _lib = load(str(path))
                return _lib
        raise SpeccError(
            "cannot find libspecc_runtime.so (tried: " + ", ".join(tried) +
            "); build the project or set SPECC_RUNTIME_LIB")


def _raise(rc: int, mover: Optional["Mover"] = None, stream: int = 0,
           lib: Optional[ctypes.CDLL] = None) -> None:
    if lib is None:
        lib = mover._lib if mover is not None else library()
    message = lib.specc_last_error().decode()
    if rc == ERROR_EARLIER_INPUT and mover is not None:
        raise mover.earlier_error(message)
    if rc == ERROR_INPUT:
        status = mover.read_status(stream) if mover is not None else (0,) * STATUS_FIELDS
        raise InputError(message, status)
    if rc == ERROR_OUT_OF_MEMORY:
        raise OutOfMemoryError(message)
    if rc == ERROR_NO_DRIVER:
        raise NoDriverError(message)
    if rc == ERROR_INVALID_ARGUMENT:
        raise ValueError(message)
    raise SpeccError(message)


def tensor(data: int, dtype: int, shape: Sequence[int]) -> _Tensor:
    t = _Tensor()
    t.data = data
    t.dtype = dtype
    t.rank = len(shape)
    t.shape[0] = shape[0] if shape else 0
    t.shape[1] = shape[1] if len(shape) > 1 else 0
    return t


class Mover:
    """Owns the kernels and the scratch of the KV move on one device, in the
    runtime library `lib` (default: library())."""

    def __init__(self, device: int, max_entries: int = 4096, lib: Optional[ctypes.CDLL] = None):
        self._lib = lib = lib if lib is not None else library()
        handle = ctypes.c_void_p()
        rc = lib.specc_mover_create(device, max_entries, ctypes.byref(handle))
        if rc != SUCCESS:
            _raise(rc, lib=lib)
        self._handle = handle
        self.device = device
        self.capacity = max_entries
        self._buffers: Optional[tuple] = None

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.specc_mover_destroy(handle)
            self._handle = None

    @property
    def backend(self) -> str:
        """'cubin sm_90', 'cubin sm_80', 'ptx' or 'cpu'."""
        return self._lib.specc_mover_backend(self._handle).decode()

    def set_buffers(self, buffers: Sequence[Tuple[int, int, int]]) -> None:
        """Registers (address, row bytes, slots) of each KV buffer."""
        key = tuple(buffers)
        if key == self._buffers:
            return
        arr = (_KVBuffer * max(len(key), 1))()
        for i, (addr, row_bytes, slots) in enumerate(key):
            arr[i].data, arr[i].row_bytes, arr[i].slots = addr, row_bytes, slots
        rc = self._lib.specc_mover_set_buffers(self._handle, arr, len(key))
        if rc != SUCCESS:
            _raise(rc, lib=self._lib)
        self._buffers = key

    def move(self, args: _MoveArgs, stream: int = 0, sync: bool = False) -> None:
        rc = self._lib.specc_move_accept_tokens(self._handle, ctypes.byref(args),
                                                stream, int(sync))
        if rc in (SUCCESS, ERROR_INPUT, ERROR_EARLIER_INPUT):
            # The call ran; the runtime grew its scratch to the batch.
            self.capacity = max(self.capacity,
                                args.accept_index.shape[0] * args.accept_index.shape[1])
        if rc != SUCCESS:
            _raise(rc, self, stream)

    def earlier_error(self, message: str) -> InputError:
        """The InputError of the report the runtime just took."""
        out = (ctypes.c_int64 * REPORT_FIELDS)()
        self._lib.specc_mover_last_report(self._handle, out)
        return InputError(message, tuple(out[1:5]), earlier=True, calls=out[0],
                          skipped=out[5])

    def poll(self) -> None:
        """Raises InputError (earlier=True) if calls that finished since the
        last report broke the contract; never waits."""
        rc = self._lib.specc_mover_poll(self._handle, None)
        if rc != SUCCESS:
            _raise(rc, self)

    def reserve(self, max_entries: int) -> None:
        """Grows the scratch to hold ``max_entries`` (outside capture); the
        mover, and every graph captured on it, stays."""
        rc = self._lib.specc_mover_reserve(self._handle, int(max_entries))
        if rc != SUCCESS:
            _raise(rc, lib=self._lib)
        self.capacity = max(self.capacity, int(max_entries))

    def set_trap(self, on: bool) -> None:
        self._lib.specc_mover_set_trap(self._handle, int(bool(on)))

    def read_status(self, stream: int = 0) -> Tuple[int, ...]:
        """The status record of the last call: code, entry, value, bound,
        skipped requests, moved entries, path, reserved (waits for `stream`)."""
        out = (ctypes.c_int64 * STATUS_FIELDS)()
        rc = self._lib.specc_mover_read_status(self._handle, stream, out)
        if rc != SUCCESS:
            _raise(rc, lib=self._lib)
        return tuple(out)


def status_message(status: Sequence[int]) -> str:
    arr = (ctypes.c_int64 * STATUS_FIELDS)(*(list(status) + [0] * STATUS_FIELDS)[:STATUS_FIELDS])
    buf = ctypes.create_string_buffer(256)
    return library().specc_status_message(arr, buf, 256).decode()
