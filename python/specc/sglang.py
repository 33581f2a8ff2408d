"""specc inside sglang: the adapter for sglang's call and the patch that installs it.

``move_accept_tokens(batch, accept_index, num_correct_drafts, allocator)``
takes the arguments sglang's ``move_accept_tokens_to_target_kvcache`` takes,
finds the KV buffers of ``allocator.get_kvcache()`` and runs
``specc.move_accept_tokens_to_target_kvcache`` on them: one launch, checked per
request (docs/semantics.md).

Which buffers move is decided once per pool, from the pool's class and
attributes, and kept on the pool (attribute ``_specc_kv_move_plan``); a later
call only checks, by identity, that the pool still holds the same buffer lists.
The rule follows what sglang's own ``move_kv_cache`` of that pool moves:

* MHA pools (``MHATokenToKVPool``, ``MHATokenToKVPoolFP4``, or an object with
  ``k_buffer``/``v_buffer`` lists): every K and V buffer, plus every
  ``k_scale_buffer``/``v_scale_buffer`` buffer when the pool has them (FP4).
* MLA pools (``MLATokenToKVPool``, or an object with a ``kv_buffer`` list):
  every ``kv_buffer`` buffer, any row size and dtype (fp8 included).
* ``HybridLinearKVPool``: its ``full_kv_pool``, by the rules above (its move is
  the full pool's move). ``NoOpMHATokenToKVPool`` and pools without layers:
  nothing, as in sglang.

Any other pool is refused with ``UnsupportedPoolError`` naming its type and the
reason, before anything is read or written: pools whose class brings its own
``move_kv_cache`` (SWA, DSA, MXFP8, MiniMax sparse, ...), the HND,
``vectorized_5d`` and page-major layouts, native (swizzled) FP4 scales, MLA pools with
``kv_scale_buffer`` (sglang's move leaves those scales where they are, specc
will not pick a side), layer-sharded pools, non-contiguous buffers.

``install()`` puts the adapter in place of sglang's function in every module
that holds it (the defining ``spec_utils`` and the modules that imported it by
name); ``uninstall()`` puts the original back. The target source (``window``
in sglang 0.5.23, ``req_to_token`` in earlier releases) is read from the
original function's own code. Page sizes above 1 need nothing special: with
one row per slot (NHD), sglang's move and specc's both move token rows.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import logging
import sys
import textwrap
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import api as _api
from ._runtime import SpeccError

__all__ = [
    "FUNCTION",
    "KNOWN_MODULES",
    "InstallReport",
    "UnsupportedPoolError",
    "detect_targets",
    "detect_targets_in_source",
    "install",
    "installed",
    "move_accept_tokens",
    "pool_kv_buffers",
    "prepare",
    "uninstall",
]

logger = logging.getLogger("specc.sglang")

#: The sglang function replaced by ``install()``.
FUNCTION = "move_accept_tokens_to_target_kvcache"
#: The module that defines it, then the modules known to import it by name.
DEFINING_MODULE = "sglang.srt.speculative.spec_utils"
KNOWN_MODULES = (
    DEFINING_MODULE,
    "sglang.srt.speculative.eagle_worker_common",
    "sglang.srt.speculative.ngram_worker",
)
TARGETS = ("req_to_token", "window")


class UnsupportedPoolError(SpeccError, TypeError):
    """The KV pool is of a kind specc does not move; nothing was changed."""


# --------------------------------------------------------------------------
# Which buffers a pool's move moves.

_PLAN_ATTR = "_specc_kv_move_plan"
_SGLANG_MHA = "MHATokenToKVPool"
_SGLANG_MLA = "MLATokenToKVPool"
_SGLANG_NOOP = "NoOpMHATokenToKVPool"
_SGLANG_HYBRID = "HybridLinearKVPool"
# Methods through which MHATokenToKVPool.move_kv_cache decides what moves; a
# subclass overriding any of them moves something else.
_MHA_MOVE_METHODS = ("move_kv_cache", "_move_kv_cache_impl", "_move_native_fp4_scales",
                     "_slot_move_pointer_buffers")

_MHA_WATCH = ("k_buffer", "v_buffer", "k_scale_buffer", "v_scale_buffer",
              "native_k_scale_buffer", "native_v_scale_buffer")
_MLA_WATCH = ("kv_buffer", "kv_scale_buffer")


class _Plan:
    """What moves for one pool: ``buffers`` (a ``specc.Pool``, registered once
    and handed to api.py on every call), or ``inner`` (the attribute
    naming the pool that moves instead). ``watch`` lists the attributes whose
    objects were read; ``refs`` holds those objects."""

    __slots__ = ("kind", "buffers", "inner", "watch", "refs")

    def __init__(self, kind: str, buffers: List[Any], watch: Sequence[str], refs: Sequence[Any],
                 inner: Optional[str] = None):
        self.kind, self.buffers, self.inner = kind, buffers, inner
        self.watch, self.refs = tuple(watch), tuple(refs)


def _pool_name(pool: Any) -> str:
    cls = type(pool)
    return f"{cls.__module__}.{cls.__qualname__}"


def _refuse(pool: Any, why: str) -> UnsupportedPoolError:
    return UnsupportedPoolError(
        f"specc does not move the KV cache of a {type(pool).__qualname__} pool "
        f"({_pool_name(pool)}): {why}; nothing was moved")


def _is_sglang_class(cls: type) -> bool:
    mod = getattr(cls, "__module__", "") or ""
    return mod == "sglang" or mod.startswith("sglang.")


def _definer(cls: type, name: str) -> Optional[type]:
    for c in cls.__mro__:
        if name in vars(c):
            return c
    return None


def _check_buffer(pool: Any, what: str, b: Any) -> None:
    shape = getattr(b, "shape", None)
    if shape is None or len(shape) < 1:
        raise _refuse(pool, f"{what} is not a tensor with a slot dimension")
    if int(shape[0]) == 0:
        raise _refuse(pool, f"{what} has no slots (a layer this rank does not hold?)")
    if hasattr(b, "is_contiguous"):
        contiguous = b.is_contiguous()
    else:
        flags = getattr(b, "flags", None)
        contiguous = bool(flags["C_CONTIGUOUS"]) if flags is not None else False
    if not contiguous:
        raise _refuse(pool, f"{what} is not contiguous (specc moves whole, adjacent rows)")


def _buffer_list(pool: Any, name: str) -> List[Any]:
    value = getattr(pool, name)
    try:
        items = list(value)
    except TypeError:
        raise _refuse(pool, f"{name} is not a list of per-layer buffers") from None
    for i, b in enumerate(items):
        _check_buffer(pool, f"{name}[{i}]", b)
    return items


def _mha_plan(pool: Any) -> _Plan:
    if getattr(pool, "k_buffer", None) is None or getattr(pool, "v_buffer", None) is None:
        raise _refuse(pool, "it has no k_buffer/v_buffer lists")
    if getattr(pool, "use_hnd", False):
        raise _refuse(pool, "its buffers use the paged HND layout (SGLANG_USE_HND_KVCACHE), "
                            "not one row per slot")
    layout = getattr(pool, "kv_cache_layout", None)
    if layout not in (None, "nhd"):
        raise _refuse(pool, f"its buffers use the {layout!r} layout, not one row per slot (NHD)")
    if (getattr(pool, "native_k_scale_buffer", None) is not None
            or getattr(pool, "native_v_scale_buffer", None) is not None):
        raise _refuse(pool, "it holds native FP4 scales, which sglang moves with their own "
                            "kernel (move_nvfp4_native_scales)")
    if getattr(pool, "layer_shard_enabled", False):
        raise _refuse(pool, "its layers are sharded across ranks")
    k, v = _buffer_list(pool, "k_buffer"), _buffer_list(pool, "v_buffer")
    if len(k) != len(v):
        raise _refuse(pool, f"k_buffer has {len(k)} layers but v_buffer {len(v)}")
    buffers = k + v
    ks, vs = getattr(pool, "k_scale_buffer", None), getattr(pool, "v_scale_buffer", None)
    if (ks is None) != (vs is None):
        raise _refuse(pool, "it has only one of k_scale_buffer/v_scale_buffer")
    if ks is not None:
        buffers += _buffer_list(pool, "k_scale_buffer") + _buffer_list(pool, "v_scale_buffer")
    return _Plan("mha", _api.Pool(buffers), _MHA_WATCH,
                 [getattr(pool, n, None) for n in _MHA_WATCH])


def _mla_plan(pool: Any) -> _Plan:
    if getattr(pool, "kv_buffer", None) is None:
        raise _refuse(pool, "it has no kv_buffer list")
    if getattr(pool, "kv_scale_buffer", None) is not None:
        raise _refuse(pool, "it holds kv_scale_buffer (FP4 scales), which sglang's MLA move "
                            "leaves in place while it moves kv_buffer")
    if getattr(pool, "index_key_cache", None) is not None:
        raise _refuse(pool, "it holds a DSA indexer cache (index_key_cache), moved by its own code")
    if getattr(pool, "layer_shard_enabled", False):
        raise _refuse(pool, "its layers are sharded across ranks")
    buffers = _buffer_list(pool, "kv_buffer")
    return _Plan("mla", _api.Pool(buffers), _MLA_WATCH,
                 [getattr(pool, n, None) for n in _MLA_WATCH])


def _sglang_plan(pool: Any) -> _Plan:
    """A pool of one of sglang's classes: supported only where the class whose
    move_kv_cache runs is one whose move specc reproduces."""
    cls = type(pool)
    owner = _definer(cls, "move_kv_cache")
    if owner is None:
        raise _refuse(pool, "its class has no move_kv_cache")
    name = owner.__qualname__ if _is_sglang_class(owner) else None
    if name == _SGLANG_NOOP:
        # sglang's move of this pool does nothing (no KV cache is kept).
        return _Plan("none", _api.Pool([]), ("k_buffer",), [getattr(pool, "k_buffer", None)])
    if name == _SGLANG_HYBRID:
        inner = getattr(pool, "full_kv_pool", None)
        if inner is None:
            raise _refuse(pool, "it has no full_kv_pool")
        return _Plan("delegate", _api.Pool([]), ("full_kv_pool",), [inner],
                     inner="full_kv_pool")
    if name == _SGLANG_MHA:
        for m in _MHA_MOVE_METHODS:
            d = _definer(cls, m)
            if d is not None and not (d.__qualname__ == _SGLANG_MHA and _is_sglang_class(d)):
                raise _refuse(pool, f"{d.__qualname__} overrides {m}, so its move is its own")
        if getattr(pool, "layer_num", None) == 0:
            return _Plan("none", _api.Pool([]), ("k_buffer",), [getattr(pool, "k_buffer", None)])
        return _mha_plan(pool)
    if name == _SGLANG_MLA:
        return _mla_plan(pool)
    raise _refuse(pool, f"its move_kv_cache is {owner.__qualname__}'s own, which specc does "
                        "not reproduce")


def _build_plan(pool: Any) -> _Plan:
    cls = type(pool)
    if any(_is_sglang_class(c) for c in cls.__mro__):
        return _sglang_plan(pool)
    # Not sglang's: judged by its attributes alone.
    if callable(getattr(pool, "move_kv_cache", None)):
        raise _refuse(pool, "it has a move_kv_cache of its own, whose effect specc cannot know")
    if getattr(pool, "k_buffer", None) is not None or getattr(pool, "v_buffer", None) is not None:
        if getattr(pool, "kv_buffer", None) is not None:
            raise _refuse(pool, "it has both k_buffer/v_buffer and kv_buffer")
        return _mha_plan(pool)
    if getattr(pool, "kv_buffer", None) is not None:
        return _mla_plan(pool)
    if getattr(pool, "full_kv_pool", None) is not None:
        raise _refuse(pool, "it is a composite pool (full_kv_pool) of a kind specc does not know")
    raise _refuse(pool, "it has neither k_buffer/v_buffer nor kv_buffer lists")


def _plan_of(pool: Any) -> _Plan:
    d = getattr(pool, "__dict__", None)
    plan = d.get(_PLAN_ATTR) if d is not None else None
    if plan is not None:
        for name, ref in zip(plan.watch, plan.refs):
            if getattr(pool, name, None) is not ref:
                break
        else:
            return plan
    plan = _build_plan(pool)
    try:
        setattr(pool, _PLAN_ATTR, plan)
    except (AttributeError, TypeError):  # no instance dict: planned again next call
        pass
    return plan


def pool_kv_buffers(pool: Any) -> List[Any]:
    """The buffers specc moves for ``pool`` (an sglang KV pool, e.g.
    ``allocator.get_kvcache()``), in the list object every call passes. Raises
    ``UnsupportedPoolError`` for pools specc does not move."""
    return _registered(pool).buffers


def _registered(pool: Any) -> "_api.Pool":
    """The ``specc.Pool`` of ``pool``'s buffers, made once per pool (and again
    when the pool's buffer lists are replaced)."""
    plan = _plan_of(pool)
    if plan.inner is None:
        return plan.buffers
    outer, path = pool, []
    while plan.inner is not None:
        path.append(plan.inner)
        if len(path) > 4:
            raise _refuse(outer, "its pools nest too deep")
        pool = getattr(pool, plan.inner)
        try:
            plan = _plan_of(pool)
        except UnsupportedPoolError as e:
            why = str(e)
            why = why[:-len("; nothing was moved")] if why.endswith("; nothing was moved") else why
            raise _refuse(outer, f"its {'.'.join(path)} is refused: {why}") from None
    return plan.buffers


def prepare(token_to_kv_pool_allocator: Any, device: Any, max_entries: int) -> None:
    """``specc.prepare`` for an sglang allocator: loads the kernels of
    ``device`` (a CUDA ordinal, -1 for the CPU, or "cuda", "cuda:N", "cpu", a
    torch.device: sglang's own device strings work), sizes the scratch for
    ``max_entries`` (= max batch size x accept_index width) and registers the
    pool's buffers. Call it once before sglang captures its CUDA graphs, which
    forbid the loading and allocation this does."""
    _api.prepare(device, max_entries, _registered(token_to_kv_pool_allocator.get_kvcache()))


def move_accept_tokens(batch: Any, accept_index: Any, num_correct_drafts: Any,
                       token_to_kv_pool_allocator: Any, *, targets: str = "window",
                       check: bool = False) -> None:
    """sglang's ``move_accept_tokens_to_target_kvcache(batch, accept_index,
    num_correct_drafts, token_to_kv_pool_allocator)``, on specc.

    ``targets="window"`` (sglang 0.5.23): request i's targets are the first
    num_correct_drafts[i] + 1 slots of its verify window,
    ``batch.out_cache_loc.view(bs, -1)[i]``. ``targets="req_to_token"``
    (earlier sglang): ``batch.req_to_token_pool.req_to_token[
    batch.req_pool_indices[i], batch.seq_lens[i]:][:num_correct_drafts[i] + 1]``.
    The sources are ``batch.out_cache_loc[a]`` for the entries a != -1 of row i
    of ``accept_index``. The buffers moved are those of
    ``token_to_kv_pool_allocator.get_kvcache()`` (see ``pool_kv_buffers``); a
    pool specc does not support raises ``UnsupportedPoolError`` and nothing
    moves. ``check=True`` waits and raises ``specc.InputError`` on input outside
    the contract.
    """
    if targets == "window":
        rpi = rtt = sl = None
    elif targets == "req_to_token":
        rpi, sl = batch.req_pool_indices, batch.seq_lens
        rtt = batch.req_to_token_pool.req_to_token
    else:
        raise ValueError(f"targets must be 'window' or 'req_to_token', got {targets!r}")
    buffers = _registered(token_to_kv_pool_allocator.get_kvcache())
    if not buffers:  # a pool without KV rows: sglang's move does nothing either
        return
    _api.move_accept_tokens_to_target_kvcache(
        rpi, rtt, sl, num_correct_drafts, accept_index, batch.out_cache_loc, buffers,
        check=check, targets=targets)


# --------------------------------------------------------------------------
# Which target source the installed sglang uses, from its function's code.

_VIEW_METHODS = ("view", "reshape", "unflatten")


def _callee(func: ast.expr) -> Optional[str]:
    while isinstance(func, ast.Subscript):  # a Triton launch: kernel[grid](...)
        func = func.value
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_out_cache_loc(node: ast.expr) -> bool:
    return ((isinstance(node, ast.Attribute) and node.attr == "out_cache_loc")
            or (isinstance(node, ast.Name) and node.id == "out_cache_loc"))


def _classify(fn: ast.AST) -> Tuple[Optional[str], str]:
    """(targets or None, evidence) for one function's AST. Only code counts:
    comments are not in the tree and string constants (docstrings) are not
    looked at."""
    window: List[str] = []
    rtt: List[str] = []
    moves = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _callee(node.func)
            if name == "move_kv_cache":
                moves = True
            elif name and "fill_front_out_cache_loc" in name:
                window.append(f"calls {name}()")
            elif name and name.startswith("assign_extend_cache_locs"):
                rtt.append(f"calls {name}()")
            if (isinstance(node.func, ast.Attribute) and node.func.attr in _VIEW_METHODS
                    and _is_out_cache_loc(node.func.value)):
                window.append(f"reads out_cache_loc.{node.func.attr}(...)")
        elif isinstance(node, ast.Attribute) and node.attr == "req_to_token":
            rtt.append("reads req_to_token")
    window, rtt = list(dict.fromkeys(window)), list(dict.fromkeys(rtt))
    if not moves:
        return None, "it does not call move_kv_cache"
    if window and rtt:
        return None, f"it both {', '.join(window)} and {', '.join(rtt)}"
    if window:
        return "window", ", ".join(window)
    if rtt:
        return "req_to_token", ", ".join(rtt)
    return None, "it neither reads req_to_token nor the verify window of out_cache_loc"


def detect_targets_in_source(source: str, name: str = FUNCTION) -> Tuple[Optional[str], str]:
    """(targets, evidence) for the function ``name`` defined in ``source``
    (a module's text, or the function's own): targets is "window",
    "req_to_token", or None when the code is not recognised (evidence says why)."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return _classify(node)
    return None, f"no function {name} in the source"


def _classify_code(code: Any) -> Tuple[Optional[str], str]:
    """The fallback without source: the names the bytecode refers to."""
    names = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    if "move_kv_cache" not in names:
        return None, "its bytecode does not name move_kv_cache"
    window = sorted(n for n in names if "fill_front_out_cache_loc" in n)
    if not window and "out_cache_loc" in names and "view" in names:
        window = ["out_cache_loc", "view"]
    rtt = "req_to_token" in names
    if window and rtt:
        return None, "its bytecode names both window and req_to_token helpers"
    if window:
        return "window", f"bytecode names {', '.join(window)}"
    if rtt:
        return "req_to_token", "bytecode names req_to_token"
    return None, "its bytecode names neither req_to_token nor the verify window"


def detect_targets(func: Callable) -> Tuple[Optional[str], str]:
    """(targets, evidence) for a ``move_accept_tokens_to_target_kvcache``
    function object: from its source (``ast``), or from its bytecode's names
    when no source can be read."""
    func = inspect.unwrap(getattr(func, "_specc_original", func))
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        code = getattr(func, "__code__", None)
        if code is None:
            return None, "it has neither source nor bytecode"
        return _classify_code(code)
    return detect_targets_in_source(source, getattr(func, "__name__", FUNCTION))


# --------------------------------------------------------------------------
# install / uninstall

@dataclasses.dataclass(frozen=True)
class InstallReport:
    """What install()/uninstall() did. ``modules``: the modules patched
    (install) or restored (uninstall); ``targets``: the target source in use;
    ``evidence``: why; ``skipped``: (module, reason) of known modules left out."""

    installed: bool
    targets: Optional[str]
    modules: Tuple[str, ...]
    evidence: str
    message: str
    sglang_version: Optional[str] = None
    skipped: Tuple[Tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.message


_lock = threading.RLock()
# (module name, module, attribute, original) of every replacement in place.
_patches: List[Tuple[str, Any, str, Callable]] = []
_state: Dict[str, Any] = {}


def _say(message: str, level: int = logging.INFO) -> None:
    if logger.hasHandlers():
        logger.log(level, message)
    else:
        print(message, file=sys.stderr)


def _sglang_version() -> Optional[str]:
    try:
        from importlib import metadata

        return metadata.version("sglang")
    except Exception:
        mod = sys.modules.get("sglang")
        return getattr(mod, "__version__", None)


def _positional_names(func: Callable) -> Optional[Tuple[str, ...]]:
    """The four parameter names of sglang's function, or None when its
    signature is not (batch, accept_index, num_correct_drafts, allocator)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if len(params) != 4 or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               for p in params):
        return None
    return tuple(p.name for p in params)


def _make_replacement(original: Callable, targets: str, names: Tuple[str, ...]) -> Callable:
    def move_accept_tokens_to_target_kvcache(*args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != 4:  # keywords by the original's parameter names
            bound = list(args)
            for n in names[len(args):]:
                if n not in kwargs:
                    raise TypeError(f"{FUNCTION}() takes ({', '.join(names)}); {n} is missing")
                bound.append(kwargs.pop(n))
            if kwargs or len(bound) != 4:
                raise TypeError(f"{FUNCTION}() takes ({', '.join(names)}); got "
                                f"{len(args)} positional and {sorted(kwargs)}")
            args = tuple(bound)
        move_accept_tokens(*args, targets=targets)

    f = move_accept_tokens_to_target_kvcache
    f.__doc__ = (f"sglang's {FUNCTION}, replaced by specc (targets={targets!r}); "
                 "specc.sglang.uninstall() restores the original.")
    f.__module__ = __name__
    f._specc_original = original  # type: ignore[attr-defined]
    f._specc_targets = targets  # type: ignore[attr-defined]
    return f


def _holders(original: Callable) -> List[Tuple[str, Any, str]]:
    """(module name, module, attribute) of every loaded module holding
    ``original``: by the function's name anywhere, under any name in sglang."""
    found = []
    for mname, mod in list(sys.modules.items()):
        try:
            d = vars(mod)
        except TypeError:
            continue
        if mname == "sglang" or mname.startswith("sglang."):
            attrs = [a for a, v in list(d.items()) if v is original]
        else:
            attrs = [FUNCTION] if d.get(FUNCTION) is original else []
        found.extend((mname, mod, a) for a in attrs)
    return found


def installed() -> Optional[str]:
    """The target source of the installed replacement, or None."""
    with _lock:
        return _state.get("targets")


def install(*, targets: Optional[str] = None, import_known: bool = True) -> InstallReport:
    """Replaces sglang's ``move_accept_tokens_to_target_kvcache`` with specc's
    in every module that holds it: ``spec_utils`` (which defines it), the
    modules known to import it by name (``KNOWN_MODULES``, imported first when
    ``import_known``), and any other loaded module holding it. Modules imported
    later, and imports inside functions (sglang 0.5.23's pipeline-parallel
    scheduler has one), take the replacement from ``spec_utils``.

    ``targets=None`` reads the target source from the original function's code
    (``window`` in sglang 0.5.23, ``req_to_token`` earlier); pass it to
    override. Prints one line saying what was done (logging when configured).
    Idempotent: a second call only patches modules loaded since. A no-op, with a
    message, when sglang is not importable or has no such function. Run it in
    the process that runs the speculative worker (sglang's scheduler process),
    and call ``prepare()`` before sglang captures CUDA graphs.
    """
    if targets is not None and targets not in TARGETS:
        raise ValueError(f"targets must be 'window' or 'req_to_token', got {targets!r}")
    with _lock:
        try:
            have = importlib.util.find_spec("sglang") is not None
        except (ImportError, ValueError):
            have = False
        if not have:
            report = InstallReport(False, None, (), "",
                                   "specc.sglang.install(): sglang is not importable; nothing "
                                   "was replaced")
            _say(report.message, logging.WARNING)
            return report
        try:
            spec_utils = importlib.import_module(DEFINING_MODULE)
        except Exception as e:  # an sglang without it, or one that fails to import
            version = _sglang_version()
            report = InstallReport(False, None, (), "",
                                   f"specc.sglang.install(): cannot import {DEFINING_MODULE} "
                                   f"(sglang {version}; {type(e).__name__}: {e}); nothing was "
                                   "replaced", version)
            _say(report.message, logging.WARNING)
            return report
        version = _sglang_version()
        current = getattr(spec_utils, FUNCTION, None)
        if current is None:
            report = InstallReport(False, None, (), "",
                                   f"specc.sglang.install(): {DEFINING_MODULE} (sglang "
                                   f"{version}) has no {FUNCTION}; nothing was replaced", version)
            _say(report.message, logging.WARNING)
            return report
        original = getattr(current, "_specc_original", current)

        if _state and _state.get("original") is not original:
            _restore()  # sglang's function changed under us (a reload): start over
        if _state:
            if targets is not None and targets != _state["targets"]:
                raise ValueError(f"specc is installed with targets={_state['targets']!r}; "
                                 "call specc.sglang.uninstall() first")
            form, evidence = _state["targets"], _state["evidence"]
            replacement = _state["replacement"]
        else:
            names = _positional_names(original)
            if names is None:
                raise SpeccError(
                    f"{DEFINING_MODULE}.{FUNCTION} (sglang {version}) does not take "
                    "(batch, accept_index, num_correct_drafts, token_to_kv_pool_allocator); "
                    "specc.sglang.install() replaced nothing")
            detected, why = detect_targets(original)
            if targets is None:
                if detected is None:
                    raise SpeccError(
                        f"cannot tell where {DEFINING_MODULE}.{FUNCTION} (sglang {version}) "
                        f"takes its targets from: {why}; pass targets='window' or "
                        "'req_to_token' to specc.sglang.install(). Nothing was replaced")
                form, evidence = detected, why
            else:
                form = targets
                evidence = f"given by the caller (the code says: {detected or 'unknown'}: {why})"
            replacement = _make_replacement(original, form, names)
            _state.update(original=original, targets=form, evidence=evidence,
                          replacement=replacement)

        skipped = []
        if import_known:
            for mname in KNOWN_MODULES[1:]:
                if mname in sys.modules:
                    continue
                try:
                    importlib.import_module(mname)
                except Exception as e:
                    skipped.append((mname, f"{type(e).__name__}: {e}"))
        for mname, mod, attr in _holders(original):
            setattr(mod, attr, replacement)
            _patches.append((mname, mod, attr, original))
        modules = tuple(dict.fromkeys(p[0] for p in _patches))
        short = ", ".join(m.rsplit(".", 1)[-1] for m in modules)
        message = (f"specc: sglang {version} {FUNCTION} replaced in {len(modules)} modules "
                   f"({short}); targets={form} ({evidence})")
        if skipped:
            message += "; not imported: " + ", ".join(m.rsplit(".", 1)[-1] for m, _ in skipped)
        _say(message)
        return InstallReport(True, form, modules, evidence, message, version, tuple(skipped))


def _restore() -> Tuple[List[str], List[str]]:
    restored, kept = [], []
    replacement = _state.get("replacement")
    for mname, mod, attr, original in reversed(_patches):
        if getattr(mod, attr, None) is replacement:
            setattr(mod, attr, original)
            restored.append(mname)
        else:  # replaced again by someone else since: theirs stays
            kept.append(mname)
    _patches.clear()
    _state.clear()
    return list(dict.fromkeys(reversed(restored))), kept


def uninstall() -> InstallReport:
    """Puts sglang's original function back in every module ``install()``
    patched (where the attribute is still specc's). Idempotent."""
    with _lock:
        if not _state:
            return InstallReport(False, None, (), "", "specc.sglang.uninstall(): not installed")
        targets = _state["targets"]
        restored, kept = _restore()
        message = f"specc: sglang's {FUNCTION} restored in {len(restored)} modules"
        if kept:
            message += f"; left alone (replaced by others since): {', '.join(kept)}"
        _say(message)
        return InstallReport(False, targets, tuple(restored), "", message)
