"""Nova Studio's Python worker: runs the user's model (intake, profiling, validation) in a child
process of the studio or the CLI, so that nothing the model or a candidate kernel does can take
the studio down."""

PROTOCOL_VERSION = 1
