"""Where a command's host time goes: a result's "phase_s" (schemas.ValidationResult and others)."""

import time


class Phases:
    """Host seconds per named phase, each from the previous mark (or the start) to its own. A
    repeated name adds up."""

    def __init__(self):
        self.seconds = {}
        self._last = time.monotonic()

    def mark(self, name):
        now = time.monotonic()
        self.seconds[name] = self.seconds.get(name, 0.0) + (now - self._last)
        self._last = now
