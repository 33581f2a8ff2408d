"""Stand-ins for sglang's memory-pool classes, shared by the adapter's CPU
and GPU tests: the names, nesting and module of sglang's memory_pool (so
that the adapter judges them as sglang's own), each move method raising if
it runs, and instances made without running any constructor."""

import textwrap
import types

MEMORY_POOL_MODULE = "sglang.srt.mem_cache.memory_pool"

_SOURCE = textwrap.dedent("""
    class KVCache:
        pass
    class MHATokenToKVPool(KVCache):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
        def _move_kv_cache_impl(self, tgt, src): raise AssertionError("sglang's move ran")
        def _move_native_fp4_scales(self, tgt, src): raise AssertionError("sglang's move ran")
        def _slot_move_pointer_buffers(self): raise AssertionError("sglang's move ran")
    class NoOpMHATokenToKVPool(MHATokenToKVPool):
        def move_kv_cache(self, tgt, src): pass
    class MHATokenToKVPoolFP4(MHATokenToKVPool):
        pass
    class MHATokenToKVPoolMXFP8(MHATokenToKVPool):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
    class HybridLinearKVPool(KVCache):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
    class MLATokenToKVPool(KVCache):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
    class MLATokenToKVPoolFP4(MLATokenToKVPool):
        pass
    class DSATokenToKVPool(MLATokenToKVPool):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
    class SWAKVPool(KVCache):
        def move_kv_cache(self, tgt, src): raise AssertionError("sglang's move ran")
""")


def fake_pool_classes() -> types.SimpleNamespace:
    """The classes, by name, defined in a module named as sglang's."""
    ns = {"__name__": MEMORY_POOL_MODULE}
    exec(compile(_SOURCE, "<fake sglang memory_pool>", "exec"), ns)
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if isinstance(v, type)})


def instance(cls, **fields):
    """An object of `cls` holding `fields`, with no constructor run."""
    obj = cls.__new__(cls)
    obj.__dict__.update(fields)
    return obj
