"""specc: the KV-cache move of speculative decoding, compiled by specc.

Importing needs neither a GPU nor torch; the runtime library loads on first use.
"""

from ._runtime import InputError, NoDriverError, SpeccError, status_message
from .api import (
    backend,
    last_status,
    move_accept_tokens_sglang,
    move_accept_tokens_to_target_kvcache,
    prepare,
    reset,
)
from . import sglang
from .sglang import UnsupportedPoolError

__all__ = [
    "InputError",
    "NoDriverError",
    "SpeccError",
    "UnsupportedPoolError",
    "backend",
    "last_status",
    "move_accept_tokens_sglang",
    "move_accept_tokens_to_target_kvcache",
    "prepare",
    "reset",
    "sglang",
    "status_message",
]

try:  # The torch custom op, when torch is there.
    from . import _torch_op  # noqa: F401
except ImportError:
    pass
