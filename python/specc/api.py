"""The KV move on torch tensors (GPU or CPU) and numpy arrays (CPU).

``move_accept_tokens_to_target_kvcache`` validates every argument on the host
(dtypes, shapes, devices, contiguity) before anything is launched, then runs
one kernel on the tensors' device, on the current stream, without
synchronising. A request whose input breaks the contract moves none of its
rows; the others move. ``check=True`` waits and raises ``InputError``; by
default the violation is raised, as ``InputError`` with ``earlier=True``, by
the next call of the same thread (after that call has done its own work) or
by ``check()``, neither of which waits. It is capturable in a CUDA graph,
and graph replays report the same way.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Dict, List, Sequence, Tuple

from . import _runtime as rt

# One mover per (device, thread): a mover serves one call at a time
# (specc_runtime.h), so two threads moving on two streams never share
# scratch. Per thread rather than per stream because CUDA-graph capture runs
# on a stream of its own, where nothing may be allocated: the mover prepared
# by the thread is the one its capture uses. Calls of one thread on several
# streams share that mover and must not overlap on the GPU.
_movers: Dict[Tuple[int, int], rt.Mover] = {}
_movers_lock = threading.Lock()
# Trap mode (set_trap), applied to every mover, existing and new.
_trap = False
# The native binding (specc._native), once specc._torch_op has loaded it:
# torch tensors then go to C++ directly, with movers of its own (also one
# per device and thread); numpy arrays keep the ctypes path.
_native: Any = None
_torch_tensor: Any = None
_NATIVE_LAST = "native"


def _use_native(module: Any) -> None:
    global _native, _torch_tensor
    import torch

    module.set_errors(rt.InputError, rt.SpeccError, rt.NoDriverError, rt.OutOfMemoryError)
    if _trap:
        module.set_trap(True)
    _torch_tensor = torch.Tensor
    _native = module


def native_binding() -> bool:
    """Whether torch tensors take the native binding (specc._native)."""
    return _native is not None


class Pool:
    """KV buffers registered once: pass it as ``kv_buffers`` on every call and
    no call does per-buffer work on the host (the native binding only checks
    that no registered tensor was resized or re-pointed since). Keep one per
    KV pool (the sglang adapter keeps it on the pool object)."""

    __slots__ = ("buffers", "_native")

    def __init__(self, buffers: Sequence[Any]):
        self.buffers = list(buffers)
        self._native = None
        if _native is not None and self.buffers and _is_torch(self.buffers[0]):
            self._native = _native.Pool(self.buffers)

    def __len__(self) -> int:
        return len(self.buffers)

    def __iter__(self):
        return iter(self.buffers)

    def __getitem__(self, i: int) -> Any:
        return self.buffers[i]
# Per thread: the last call (for last_status) and the buffers seen last.
_local = threading.local()
# The KV buffers of the last call: the objects themselves (held, so their ids
# stay theirs), their data pointers, and their validated descriptors. A
# serving loop passes the same pool every step; validating 2 x layers tensors
# again each time would cost more than the move itself.


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _device_of(x: Any) -> int:
    """CUDA ordinal of a tensor, or DEVICE_CPU."""
    if _is_torch(x):
        if x.device.type == "cuda":
            return x.device.index if x.device.index is not None else 0
        if x.device.type == "cpu":
            return rt.DEVICE_CPU
        raise ValueError(f"tensors on {x.device} are not supported (CUDA or CPU only)")
    return rt.DEVICE_CPU


def _index_tensor(x: Any, name: str, rank: int) -> rt._Tensor:
    if _is_torch(x):
        import torch

        dtypes = {torch.int32: rt.INT32, torch.int64: rt.INT64}
        dtype, ptr, contiguous = x.dtype, x.data_ptr(), x.is_contiguous()
    elif hasattr(x, "__array_interface__"):
        import numpy as np

        dtypes = {np.dtype(np.int32): rt.INT32, np.dtype(np.int64): rt.INT64}
        dtype, ptr, contiguous = x.dtype, x.ctypes.data, x.flags["C_CONTIGUOUS"]
    else:
        raise TypeError(f"{name} must be a torch tensor or a numpy array, got {type(x).__name__}")
    if x.ndim != rank:
        raise ValueError(f"{name} must have rank {rank}, got shape {tuple(x.shape)}")
    code = dtypes.get(dtype)
    if code is None:
        raise TypeError(f"{name} must be int32 or int64, got {dtype}")
    if not contiguous:
        raise ValueError(f"{name} must be contiguous")
    return rt.tensor(ptr, code, tuple(int(s) for s in x.shape))


def _kv_buffer(x: Any, i: int) -> Tuple[int, int, int]:
    name = f"kv_buffers[{i}]"
    if _is_torch(x):
        ptr, elem, contiguous = x.data_ptr(), x.element_size(), x.is_contiguous()
    elif hasattr(x, "__array_interface__"):
        if x.dtype.hasobject:
            raise TypeError(f"{name} holds Python objects ({x.dtype}): its rows are "
                            "pointers, not data, and cannot be moved")
        if not x.flags["WRITEABLE"]:
            raise ValueError(f"{name} is read-only: the move writes its rows")
        ptr, elem, contiguous = x.ctypes.data, x.itemsize, x.flags["C_CONTIGUOUS"]
    else:
        raise TypeError(f"{name} must be a torch tensor or a numpy array, got "
                        f"{type(x).__name__}")
    if x.ndim < 1 or x.shape[0] == 0:
        raise ValueError(f"{name} must have at least one slot (dimension 0)")
    if not contiguous:
        raise ValueError(f"{name} must be contiguous (rows of one slot adjacent)")
    slots = int(x.shape[0])
    row_bytes = (int(x.numel() if _is_torch(x) else x.size) // slots) * elem
    if row_bytes == 0:
        raise ValueError(f"{name} has empty rows")
    return ptr, row_bytes, slots


def _layout(x: Any) -> Tuple[Any, ...]:
    """Everything that defines where a buffer's rows are: a cached buffer is
    reused only while all of it is unchanged (a tensor resized or re-pointed
    in place is validated again)."""
    if _is_torch(x):
        return (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x.dtype, x.device)
    return (x.ctypes.data, x.shape, x.strides, x.dtype, x.flags["WRITEABLE"])


def _kv_buffers(kv_buffers: Sequence[Any], device: int) -> List[Tuple[int, int, int]]:
    """Validated (address, row bytes, slots) of each buffer, reused while the
    same tensor objects with the same layout come back."""
    seen = getattr(_local, "seen", None)
    if seen is None:
        seen = _local.seen = {"objects": (), "ptrs": (), "desc": [], "device": None}
    objects = tuple(kv_buffers)
    if (len(objects) == len(seen["objects"]) and seen["device"] == device
            and all(a is b for a, b in zip(objects, seen["objects"]))):
        layouts = tuple(_layout(b) for b in objects)
        if layouts == seen["ptrs"]:
            return seen["desc"]
    for i, b in enumerate(objects):
        if not (_is_torch(b) or hasattr(b, "__array_interface__")):
            raise TypeError(f"kv_buffers[{i}] must be a torch tensor or a numpy array, "
                            f"got {type(b).__name__}")
        if _device_of(b) != device:
            raise ValueError(f"kv_buffers[{i}] is on another device than the index tensors")
    desc = [_kv_buffer(b, i) for i, b in enumerate(objects)]
    seen.update(objects=objects, ptrs=tuple(_layout(b) for b in objects), desc=desc,
                device=device)
    return desc


def _key(device: int, stream: int) -> Tuple[int, int]:
    del stream  # see _movers
    return (device, threading.get_ident())


def _current_stream(device: int) -> int:
    if device == rt.DEVICE_CPU:
        return 0
    import torch

    return torch.cuda.current_stream(device).cuda_stream


def _check_ready_for_capture(device: int, stream: int, entries: int,
                             buffers: List[Tuple[int, int, int]]) -> None:
    """Inside CUDA-graph capture nothing may load kernels, allocate or upload:
    the mover must exist, hold `entries` and know the buffers already."""
    m = _movers.get(_key(device, stream))
    if m is None or m.capacity < entries or m._buffers != tuple(buffers):
        raise rt.SpeccError(
            "specc is not ready for CUDA-graph capture on device "
            f"{device}: call specc.prepare({device}, max_entries>={entries}, "
            "kv_buffers) (or run the move once) before capturing")


def _data_ptr(x: Any) -> int:
    return x.data_ptr() if _is_torch(x) else x.ctypes.data


def _mover(device: int, stream: int, entries: int, grow: bool = False) -> rt.Mover:
    """The cached mover of ``device`` and ``stream``; with ``grow``, one whose
    scratch holds ``entries`` (otherwise the runtime grows it on demand,
    outside capture)."""
    key = _key(device, stream)
    with _movers_lock:
        m = _movers.get(key)
        if m is None:
            m = rt.Mover(device, max(entries, 4096))
            if _trap:
                m.set_trap(True)
            _movers[key] = m
        elif grow and m.capacity < entries:
            # The same mover, grown: graphs captured on it stay valid.
            m.reserve(entries)
        return m


def reset() -> None:
    """Drops the cached movers (the next call loads the kernels again, e.g.
    after setting SPECC_FORCE_PTX)."""
    with _movers_lock:
        _movers.clear()
    if _native is not None:
        _native.reset()


def check(wait: bool = False) -> None:
    """Raises ``InputError`` (``earlier=True``) if a call of this thread that
    has finished on the device since the last report broke the contract
    (eager calls and CUDA-graph replays alike). Never waits, unless ``wait``:
    then it first synchronises the devices this thread moved on, so every
    call issued before is seen."""
    me = threading.get_ident()
    with _movers_lock:
        mine = [(key[0], m) for key, m in _movers.items() if key[1] == me]
    if wait:
        devices = {device for device, _ in mine}
        if _native is not None:
            devices.update(_native.devices())
        devices.discard(rt.DEVICE_CPU)
        if devices:
            import torch

            for device in devices:
                torch.cuda.synchronize(device)
    for _, m in mine:
        m.poll()
    if _native is not None:
        _native.poll()


def set_trap(on: bool = True) -> None:
    """Trap mode, for debugging: a kernel that finds a violation stops like a
    failed device assertion (the CUDA context is lost; on the CPU the process
    gets SIGILL) once it has recorded it. Also ``SPECC_TRAP=1``."""
    global _trap
    with _movers_lock:
        _trap = bool(on)
        for m in _movers.values():
            m.set_trap(_trap)
    if _native is not None:
        _native.set_trap(_trap)


def backend(device: int = 0) -> str:
    """Which kernel image the mover of ``device`` uses ('cubin sm_90', 'ptx', 'cpu')."""
    return _mover(device, _current_stream(device), 0).backend


def _device_ordinal(device: Any) -> int:
    """A CUDA ordinal, or DEVICE_CPU, from an int, "cpu", "cuda", "cuda:N" or
    a torch.device ("cuda" alone: torch's current device, else 0)."""
    if isinstance(device, bool):
        raise TypeError("device must be an int, a device string or a torch.device, not bool")
    if isinstance(device, int):
        return device
    kind = getattr(device, "type", None)
    index = getattr(device, "index", None)
    if kind is None and isinstance(device, str):
        kind, _, num = device.partition(":")
        try:
            index = int(num) if num else None
        except ValueError:
            raise ValueError(f"device {device!r}: expected 'cpu', 'cuda' or 'cuda:N'") from None
    if kind == "cpu":
        return rt.DEVICE_CPU
    if kind == "cuda":
        if index is not None:
            return int(index)
        torch = sys.modules.get("torch")
        return int(torch.cuda.current_device()) if torch is not None else 0
    raise ValueError(f"device {device!r}: expected an int, 'cpu', 'cuda', 'cuda:N' or a torch.device")


def prepare(device: Any, max_entries: int, kv_buffers: Sequence[Any] = ()) -> None:
    """Creates the mover of ``device`` (a CUDA ordinal, -1 for the CPU, or
    "cpu", "cuda", "cuda:N", a torch.device) and its current stream with room
    for ``max_entries`` (= bs * W) and registers ``kv_buffers``: call before
    CUDA-graph capture, on the stream that will capture, which forbids the
    allocations and the upload this does."""
    device = _device_ordinal(device)
    native_pool = None
    if isinstance(kv_buffers, Pool):
        native_pool, kv_buffers = kv_buffers._native, kv_buffers.buffers
    if _native is not None and (device != rt.DEVICE_CPU
                                or (kv_buffers and _is_torch(kv_buffers[0]))):
        # Torch tensors take the native binding: prepare its mover.
        _native.prepare(device, max_entries, native_pool or list(kv_buffers))
        return
    m = _mover(device, _current_stream(device), max_entries, grow=True)
    m.set_buffers([_kv_buffer(b, i) for i, b in enumerate(kv_buffers)])


def _call_args(req_pool_indices: Any, req_to_token: Any, seq_lens: Any,
               num_correct_drafts: Any, accept_index: Any, out_cache_loc: Any,
               targets: str) -> Tuple[rt._MoveArgs, int]:
    """The C ABI's arguments of one call (ctypes binding), and the device
    its tensors are on: every index tensor checked for rank, dtype,
    contiguity and device. With window targets the request-table arguments
    are not read."""
    named = dict(zip(rt.ARG_NAMES, (req_pool_indices, req_to_token, seq_lens,
                                   num_correct_drafts, accept_index, out_cache_loc)))
    if targets == "window":
        named = {k: v for k, v in named.items() if k in rt.ARG_NAMES[3:]}
    device = _device_of(num_correct_drafts)
    for name, t in named.items():
        if _device_of(t) != device:
            raise ValueError(f"{name} is on another device than num_correct_drafts")
    args = rt._MoveArgs()
    args.targets = rt.TARGETS[targets]
    for name, t in named.items():
        rank = 2 if name in ("req_to_token", "accept_index") else 1
        setattr(args, name, _index_tensor(t, name, rank))
    return args, device


def move_accept_tokens_to_target_kvcache(
    req_pool_indices: Any,
    req_to_token: Any,
    seq_lens: Any,
    num_correct_drafts: Any,
    accept_index: Any,
    out_cache_loc: Any,
    kv_buffers: Sequence[Any],
    *,
    check: bool = False,
    targets: str = "req_to_token",
) -> None:
    """Moves the KV rows of the accepted tokens to their target slots.

    For request i with acc_i = num_correct_drafts[i] + 1 accepted tokens, the
    targets are req_to_token[req_pool_indices[i], seq_lens[i] : seq_lens[i] +
    acc_i] (``targets="req_to_token"``) or the first acc_i slots of its verify
    window, out_cache_loc.view(bs, -1)[i, :acc_i] (``targets="window"``, as
    sglang 0.5.23 does; req_pool_indices, req_to_token and seq_lens may then be
    None); the sources are out_cache_loc[a] for the non -1 entries a of row i
    of accept_index. In every buffer, each target row becomes what its source
    row held before the call (gather, then scatter). A request whose inputs
    break the contract moves nothing; the others move.

    Args:
      req_pool_indices, seq_lens: [bs] int32|int64.
      req_to_token: [max_reqs, pool_len] int32|int64.
      num_correct_drafts: [bs] int32|int64.
      accept_index: [bs, W] int32|int64, -1 padded.
      out_cache_loc: [n] int32|int64.
      kv_buffers: tensors [slots, ...] of any dtype, rows contiguous.
      check: wait for the device and raise InputError on out-of-contract input.
      targets: "req_to_token" or "window".
    """
    code = rt.TARGETS.get(targets)
    if code is None:
        raise ValueError(f"targets must be 'req_to_token' or 'window', got {targets!r}")
    if _native is not None and isinstance(num_correct_drafts, _torch_tensor):
        # The native binding: validation, stream and launch in C++.
        if isinstance(kv_buffers, Pool):
            kv_buffers = kv_buffers._native or kv_buffers.buffers
        _local.last = _NATIVE_LAST
        _native.move(kv_buffers, req_pool_indices, req_to_token, seq_lens, num_correct_drafts,
                     accept_index, out_cache_loc, code, check)
        return
    if isinstance(kv_buffers, Pool):
        kv_buffers = kv_buffers.buffers
    args, device = _call_args(req_pool_indices, req_to_token, seq_lens, num_correct_drafts,
                              accept_index, out_cache_loc, targets)
    buffers = _kv_buffers(kv_buffers, device)
    entries = int(accept_index.shape[0]) * int(accept_index.shape[1])
    stream = _current_stream(device)
    if device != rt.DEVICE_CPU:
        import torch

        if torch.cuda.is_current_stream_capturing():
            _check_ready_for_capture(device, stream, entries, buffers)
    m = _mover(device, stream, entries)
    m.set_buffers(buffers)
    _local.last = (m, stream)
    m.move(args, stream, sync=check)


def last_status() -> Tuple[int, ...]:
    """Status record of the last call (waits for its stream): (code, entry,
    value, bound, skipped requests, moved entries, path, 0); code 0 means the
    input was within the contract."""
    last = getattr(_local, "last", None)
    if last is None:
        return (0,) * rt.STATUS_FIELDS
    if last is _NATIVE_LAST:
        return tuple(_native.last_status())
    m, stream = last
    return m.read_status(stream)


def move_accept_tokens_sglang(batch: Any, accept_index: Any, num_correct_drafts: Any,
                              token_to_kv_pool_allocator: Any, *, check: bool = False,
                              targets: str = "req_to_token") -> None:
    """Drop-in for sglang's move_accept_tokens_to_target_kvcache(batch,
    accept_index, num_correct_drafts, token_to_kv_pool_allocator): an alias of
    ``specc.sglang.move_accept_tokens`` that keeps this function's original
    default, ``targets="req_to_token"`` (batch.req_pool_indices,
    batch.req_to_token_pool.req_to_token, batch.seq_lens); sglang 0.5.23 needs
    ``targets="window"`` (batch.out_cache_loc.view(bs, -1)). The buffers of
    allocator.get_kvcache() move as sglang's own move_kv_cache moves them (MHA:
    K, V and FP4 scales; MLA: kv_buffer); other pools raise
    specc.sglang.UnsupportedPoolError and nothing moves.
    """
    from .sglang import move_accept_tokens

    move_accept_tokens(batch, accept_index, num_correct_drafts, token_to_kv_pool_allocator,
                       targets=targets, check=check)
