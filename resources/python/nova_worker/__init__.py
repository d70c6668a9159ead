"""Nova Studio's Python worker: runs the user's model (intake, profiling, validation) in a child
process of the studio or the CLI, so that nothing the model or a candidate kernel does can take
the studio down. Layout: server.py (entry, hello, request loop), protocol.py (messages, cancel,
errors), schemas.py (result types), loader.py and candidates.py (loading the model, the reference
and the candidate), one module per command (intake, validate, bench, evaluate, build_ext, profile)."""

from .protocol import PROTOCOL_VERSION  # noqa: F401

# Before anything imports torch: its bytecode from nova's cache where the installation has none
# (bytecode.py; a no-op unless core set NOVA_PYCACHE).
from .bytecode import use_cache_if_missing as _use_cache_if_missing  # noqa: E402

_use_cache_if_missing()
