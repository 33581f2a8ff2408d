"""specc: the KV-cache move of speculative decoding, compiled by specc.

Importing needs neither a GPU nor torch; the runtime library loads on first use.
"""

from ._runtime import InputError, NoDriverError, OutOfMemoryError, SpeccError, status_message
from .api import (
    Pool,
    backend,
    check,
    last_status,
    move_accept_tokens_sglang,
    move_accept_tokens_to_target_kvcache,
    native_binding,
    prepare,
    reset,
    set_trap,
)
from . import sglang
from .sglang import UnsupportedPoolError

__all__ = [
    "InputError",
    "Pool",
    "NoDriverError",
    "OutOfMemoryError",
    "SpeccError",
    "UnsupportedPoolError",
    "backend",
    "check",
    "last_status",
    "move_accept_tokens_sglang",
    "move_accept_tokens_to_target_kvcache",
    "native_binding",
    "prepare",
    "reset",
    "set_trap",
    "sglang",
    "status_message",
]

try:  # The torch custom op, when torch is there.
    from . import _torch_op  # noqa: F401
except ImportError:
    pass
