"""The worker package (resources/python) on the path, and small helpers shared by the tests."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "resources", "python"))
