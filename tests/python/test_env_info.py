"""`python -m nova_worker.env_info`, what `nova doctor` asks the worker's interpreter: its answer is one
JSON object, and it names the report's packages this Python cannot import."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(__file__)
WORKER = os.path.join(HERE, "..", "..", "resources", "python")


def answer(extra_path=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (extra_path, WORKER) if p))
    out = subprocess.run([sys.executable, "-m", "nova_worker.env_info"], env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return json.loads(out)


def test_the_answer_says_which_report_packages_are_missing(tmp_path):
    info = answer()
    assert info["executable"] == sys.executable
    assert isinstance(info["report_missing"], list)
    # Hidden as a Python without them sees them: sys.modules[name] = None is "not importable".
    hide = tmp_path / "sitecustomize.py"
    hide.write_text("import sys\nsys.modules['jsonschema'] = None\nsys.modules['jinja2'] = None\n")
    hidden = answer(str(tmp_path))
    assert hidden["report_missing"][:2] == ["jsonschema", "jinja2"]
    assert set(hidden["report_missing"]) - set(info["report_missing"]) == {"jsonschema", "jinja2"}
