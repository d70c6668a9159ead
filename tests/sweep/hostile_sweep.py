#!/usr/bin/env python3
"""The hostile sweep of issue #21, run as a user would: `nova` and `nova-studio` on bad model files,
bad candidates and graphs, bad settings, kill -9 at random moments, damaged project files, huge
graphs, hostile file names and environment secrets. No GPU is needed. Each case prints PASS or FAIL
with what it saw; the exit code is the number of failed cases. Every case is also covered by a CI
test (tests/core, tests/ui); this script is the end-to-end re-run through the real binaries.

    tests/sweep/hostile_sweep.py [--build build] [--only SUBSTRING] [--json results.json]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "examples"
if not SHARED.is_dir():
    SHARED = ROOT / ".carry" / "shared" / "examples"
EXAMPLES = ROOT / "resources" / "examples"

CASES = []


def case(category):
    def wrap(fn):
        CASES.append((category, fn.__name__, fn))
        return fn
    return wrap


class Sweep:
    """The workspace of one run: a private HOME, settings, projects and model folder per run."""

    def __init__(self, build: Path):
        self.nova = build / "app" / "nova"
        self.studio = build / "app" / "nova-studio"
        self.work = Path(tempfile.mkdtemp(prefix="nova-sweep-"))
        self.home = self.work / "home"
        self.home.mkdir()
        self.projects = self.work / "projects"
        self.settings = self.work / "settings.json"
        self.models = self.work / "models"
        self.models.mkdir()
        venv = Path(os.environ.get("NOVA_VENV", Path.home() / ".local/share/nova/venv"))
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "NOVA_PROJECTS": str(self.projects),
            "NOVA_SETTINGS": str(self.settings),
            "NOVA_VENV": str(venv),
            "QT_QPA_PLATFORM": "offscreen",
            "LANG": "C.UTF-8",
        }

    def model(self, name: str, body: str) -> Path:
        p = self.models / name
        p.write_text(textwrap.dedent(body))
        return p

    def run(self, *args, timeout=300, env=None, cwd=None):
        e = dict(self.env)
        e.update(env or {})
        t0 = time.monotonic()
        p = subprocess.run([str(self.nova), *map(str, args)], capture_output=True, text=True,
                           errors="replace", timeout=timeout, env=e, cwd=cwd or self.work)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0

    def project_of(self, model: Path) -> Path:
        """The one project folder `nova` made for `model` (named after the model's file)."""
        stem = model.stem
        found = [d for d in self.projects.iterdir() if d.is_dir() and d.name.startswith(stem[:20])] \
            if self.projects.is_dir() else []
        if len(found) != 1:
            raise AssertionError(f"expected one project for {model.name}, found {[d.name for d in found]}")
        return found[0]


def chain_model(n: int) -> str:
    body = "\n".join(f"        x = x {'+' if i % 3 == 0 else '*'} {1.0 + (i % 7) * 0.001}" for i in range(n))
    return f"""\
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
{body}
        return x

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
"""


SMALL = """\
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 32)
    def forward(self, x):
        return torch.sigmoid(self.lin(x)) * 2.0 + x

def get_inputs():
    return [torch.randn(8, 32)]

def get_init_inputs():
    return []
"""


def expect(cond, detail):
    if not cond:
        raise AssertionError(detail)


def tail(text, n=300):
    text = text.strip().replace("\n", " | ")
    return text if len(text) <= n else "..." + text[-n:]


def no_traceback(out):
    """No traceback through nova's own worker code (the model's own frames, trimmed, may be shown)."""
    expect("nova_worker" not in out and "Traceback" not in out.split("nova:")[-1],
           "nova's own traceback reached the user: " + tail(out))


def children_of(pid: int) -> list:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def process_alive(pattern: str) -> list:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out if int(p) != os.getpid()]


def refused_intake(s, model, needle, user_traceback=False):
    """`nova intake` of a model it must refuse: a non-zero exit, `needle` said, no traceback of nova's."""
    rc, out, _ = s.run("intake", model, "--no-project")
    expect(rc != 0 and needle in out, f"rc {rc}: {tail(out)}")
    if not user_traceback:
        no_traceback(out)
    return tail(out, 160)


# ---------------------------------------------------------------- bad model files

@case("model")
def nonexistent_model(s):
    rc, out, _ = s.run("intake", s.models / "nope.py", "--no-project")
    expect(rc == 2 and "not found" in out.lower() or "no such" in out.lower(), f"rc {rc}: {tail(out)}")
    return tail(out, 120)


@case("model")
def directory_as_model(s):
    rc, out, _ = s.run("generate", s.models, "--all", "--no-project")
    expect(rc == 2 and "is a directory" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 120)


@case("model")
def non_python_file(s):
    p = s.models / "weights.bin"
    p.write_bytes(os.urandom(4096))
    rc, out, _ = s.run("intake", p, "--no-project")
    expect(rc == 2, f"rc {rc}: {tail(out)}")
    no_traceback(out)
    return tail(out, 160)


@case("model")
def empty_file(s):
    return refused_intake(s, s.model("empty.py", ""), "does not define Model")


@case("model")
def syntax_error(s):
    return refused_intake(s, SHARED / "broken" / "syntax_error.py", "syntax error in syntax_error.py line 6",
                          user_traceback=True)


@case("model")
def missing_get_inputs(s):
    return refused_intake(s, SHARED / "broken" / "missing_get_inputs.py", "does not define get_inputs")


@case("model")
def get_inputs_raises(s):
    return refused_intake(s, SHARED / "broken" / "get_inputs_raises.py", "get_inputs() raised RuntimeError",
                          user_traceback=True)


@case("model")
def too_large(s):
    rc, out, secs = s.run("intake", SHARED / "broken" / "too_large.py", "--no-project", timeout=300)
    expect(rc != 0 and secs < 120, f"rc {rc} after {secs:.0f} s: {tail(out)}")
    no_traceback(out)
    return f"{secs:.1f} s: " + tail(out, 160)


@case("model")
def data_dependent_branch_warns_in_generate(s):
    out_dir = s.work / "ddb"
    rc, out, _ = s.run("generate", SHARED / "broken" / "data_dependent_branch.py", "--all", "--out", out_dir,
                       "--no-project")
    expect("warning" in out.lower(), f"rc {rc}, no warning printed: {tail(out)}")
    return f"rc {rc}: " + tail(out, 200)


@case("model")
def forward_returns_none(s):
    p = s.model("returns_none.py", """\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                y = x * 2
        def get_inputs():
            return [torch.randn(4, 4)]
        def get_init_inputs():
            return []
        """)
    rc, out, _ = s.run("generate", p, "--all", "--no-project", "--out", s.work / "none")
    expect(rc == 2 and "None" in out, f"rc {rc}: {tail(out)}")
    no_traceback(out)
    return tail(out, 160)


@case("model")
def import_raises(s):
    p = s.model("import_raises.py", """\
        raise RuntimeError("the client's model cannot be imported here")
        """)
    return refused_intake(s, p, "cannot be imported here", user_traceback=True)


@case("process")
def hanging_model_times_out(s):
    p = s.model("hangs.py", """\
        import time
        time.sleep(3600)
        """)
    rc, out, secs = s.run("generate", p, "--all", "--no-project", "--timeout", "3", timeout=60)
    expect(rc != 0 and secs < 20, f"rc {rc} after {secs:.1f} s: {tail(out)}")
    expect(not process_alive(str(p)), "the hanging worker is still running")
    return f"{secs:.1f} s: " + tail(out, 160)


@case("process")
def fractional_timeout_and_zero(s):
    p = s.model("hangs2.py", "import time\ntime.sleep(3600)\n")
    rc, out, secs = s.run("intake", p, "--no-project", "--timeout", "0.5", timeout=60)
    expect(rc != 0 and secs < 10, f"--timeout 0.5: rc {rc} after {secs:.1f} s")
    rc0, out0, _ = s.run("intake", p, "--no-project", "--timeout", "0", timeout=60)
    expect(rc0 == 2, f"--timeout 0: rc {rc0}: {tail(out0)}")
    return f"0.5 -> stopped after {secs:.1f} s; 0 -> rc 2"


@case("process")
def child_started_at_import_dies_with_nova(s):
    marker = f"nova_sweep_orphan_{os.getpid()}"
    p = s.model("spawns.py", f"""\
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                return x * 2
        def get_inputs():
            return [torch.randn(4, 4)]
        def get_init_inputs():
            return []
        """)
    rc, out, _ = s.run("intake", p, "--no-project")
    time.sleep(1.0)
    alive = process_alive(marker)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    expect(not alive, f"the model's child is still running after nova exited (pids {alive})")
    return f"rc {rc}, no process left"


@case("process")
def huge_output_is_bounded(s):
    p = s.model("chatty.py", """\
        import sys
        chunk = "x" * 1_000_000 + "\\n"
        for _ in range(500):
            sys.stdout.write(chunk)
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                return x * 2
        def get_inputs():
            return [torch.randn(4, 4)]
        def get_init_inputs():
            return []
        """)
    proc = subprocess.Popen([str(s.nova), "intake", str(p), "--no-project"], env=s.env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    peak_kb = 0
    out_lines = []
    import threading
    reader = threading.Thread(target=lambda: out_lines.extend(proc.stdout), daemon=True)
    reader.start()
    while proc.poll() is None:  # nova's own high-water mark, not its worker's
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb = max(peak_kb, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    reader.join(10)
    out = "".join(out_lines)
    rss_mb = peak_kb / 1024
    expect(0 < rss_mb < 400, f"nova's peak memory {rss_mb:.0f} MB for 500 MB of output")
    said = "dropped" in out
    return f"rc {proc.returncode}, peak {rss_mb:.0f} MB" + ("" if said else " (no word on dropped output)")


@case("process")
def studio_killed_during_intake_leaves_no_worker(s):
    p = s.model("slow_intake.py", """\
        import time
        time.sleep(120)
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return x + 1
        def get_inputs():
            return [torch.randn(2, 2)]
        def get_init_inputs():
            return []
        """)
    studio = subprocess.Popen([str(s.studio), str(p)], env=s.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers = []
    while time.monotonic() < deadline and not workers:
        time.sleep(0.5)
        workers = children_of(studio.pid)
    expect(workers, "the studio never started an intake worker")
    studio.send_signal(signal.SIGKILL)
    studio.wait()
    time.sleep(2.0)
    left = [w for w in workers if alive(w)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    expect(not left, f"intake worker(s) {left} outlived the killed studio")
    return f"worker(s) {workers} ended with the studio"


# ---------------------------------------------------------------- huge graphs

@case("huge")
def chain_10000_ops_generate(s):
    p = s.model("chain10k.py", chain_model(10000))
    rc, out, secs = s.run("generate", p, "--all", "--no-project", "--out", s.work / "chain10k", timeout=900)
    expect(rc >= 0, f"killed by signal {-rc}: {tail(out)}")
    expect(rc in (0, 1) and ("declin" in out.lower() or list((s.work / "chain10k").glob("*.cu"))),
           f"rc {rc}: {tail(out)}")
    return f"rc {rc} in {secs:.0f} s: " + tail(out, 160)


@case("huge")
def chain_3000_ops_in_studio(s):
    p = s.model("chain3k.py", chain_model(3000))
    shot = s.work / "chain3k.png"
    proc = subprocess.run([str(s.studio), str(p), "--screenshot", str(shot)], env=s.env, capture_output=True,
                          text=True, errors="replace", timeout=900)
    expect(proc.returncode == 0 and shot.exists(), f"rc {proc.returncode}: {tail(proc.stderr)}")
    return f"screenshot {shot.stat().st_size} bytes"


@case("huge")
def wide_model_2000_branches(s):
    p = s.model("wide.py", """\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                outs = [torch.relu(x * float(i + 1)) for i in range(2000)]
                return torch.stack(outs).sum(0)
        def get_inputs():
            return [torch.randn(16, 16)]
        def get_init_inputs():
            return []
        """)
    rc, out, secs = s.run("generate", p, "--all", "--no-project", "--out", s.work / "wide", timeout=900)
    expect(rc >= 0, f"killed by signal {-rc}")
    expect(rc == 0, f"rc {rc} after {secs:.0f} s: {tail(out)}")  # rc 1 was the 600 s intake timeout
    return f"rc {rc} in {secs:.0f} s"


# ---------------------------------------------------------------- bad candidates and graphs

def graph_of(s, model):
    g = s.work / f"{Path(model).stem}.graph.json"
    if not g.exists():
        rc, out, _ = s.run("intake", model, "--json", g, "--no-project")
        expect(rc == 0, f"intake of {model} failed: {tail(out)}")
    return g


@case("candidate")
def malformed_candidate_json(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    c = s.work / "bad.json"
    c.write_text('{"kernels": [{"source": "' + "__global__ void k() {}" * 40 + '", ')
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", c)
    expect(rc == 2 and "bad.json" in out and len(out) < 2000, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("candidate")
def malformed_graph_json(s):
    g = s.work / "broken.graph.json"
    g.write_text('{"nodes": [1, 2,')
    c = generated_candidate(s, SHARED / "swish_bias_clamp.py")
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", c)
    expect(rc == 2 and "broken.graph.json" in out, f"rc {rc}: {tail(out)}")
    no_traceback(out)
    return tail(out, 160)


def generated_candidate(s, model, group=0):
    out_dir = s.work / f"gen_{Path(model).stem}"
    if not out_dir.exists():
        rc, out, _ = s.run("generate", model, "--all", "--no-project", "--out", out_dir, "--no-alternatives")
        expect(rc == 0, f"generate failed: {tail(out)}")
    plans = sorted(out_dir.glob(f"group{group}.json")) or sorted(out_dir.glob(f"group{group}*.json"))
    expect(plans, f"no candidate for group {group} in {sorted(p.name for p in out_dir.iterdir())}")
    return plans[0]


@case("candidate")
def group_index_out_of_range(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    c = generated_candidate(s, SHARED / "swish_bias_clamp.py")
    rc, out, _ = s.run("validate", g, "--group", 99, "--candidate", c)
    expect(rc == 2 and "99" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("candidate")
def candidate_for_another_group(s):
    model = SHARED / "mlp_block.py"
    g = graph_of(s, model)
    c = generated_candidate(s, model, group=1)
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", c)
    expect(rc == 2, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("candidate")
def cu_that_does_not_compile(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    cu = s.work / "broken.cu"
    cu.write_text(textwrap.dedent("""\
        #include <torch/extension.h>
        __global__ void k(float* x) { x[0] = undeclared_name; }
        torch::Tensor forward(torch::Tensor x) {
          k<<<1, 1>>>(x.data_ptr<float>());
          return x;
        }
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
        """))
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", cu, timeout=600)
    expect(rc == 1 and "does not build with nvcc" in out and "undeclared_name" in out and "no CUDA GPU" not in out,
           f"rc {rc}: {tail(out)}")
    return tail(out, 200)


@case("candidate")
def bad_baselines_value(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    c = generated_candidate(s, SHARED / "swish_bias_clamp.py")
    rc, out, _ = s.run("bench", g, "--group", 0, "--candidate", c, "--baselines", "eager", "tensorrt")
    expect(rc == 2 and "tensorrt" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("candidate")
def unknown_arch(s):
    rc, out, _ = s.run("generate", SHARED / "swish_bias_clamp.py", "--all", "--no-project", "--arch", "sm_999",
                       "--out", s.work / "arch")
    expect(rc == 2 and "sm_999" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 200)


@case("candidate")
def candidate_json_missing_fields(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    c = s.work / "fields.json"
    c.write_text('{"name": "x"}')
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", c)
    expect(rc == 2 and "fields.json" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("candidate")
def candidate_computing_with_torch_refused(s):
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    cu = s.work / "cheat.cu"
    cu.write_text(textwrap.dedent("""\
        #include <torch/extension.h>
        torch::Tensor forward(torch::Tensor x) { return torch::sigmoid(x) * x; }
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
        """))
    rc, out, _ = s.run("validate", g, "--group", 0, "--candidate", cu, timeout=600)
    expect(rc in (1, 2) and ("__global__" in out or "kernel" in out.lower()), f"rc {rc}: {tail(out)}")
    return tail(out, 200)


@case("candidate")
def validate_leaves_no_temp_files(s):
    before = set(Path("/tmp").glob("nova-group-*"))
    g = graph_of(s, SHARED / "swish_bias_clamp.py")
    c = generated_candidate(s, SHARED / "swish_bias_clamp.py")
    s.run("validate", g, "--group", 0, "--candidate", c)
    s.run("bench", g, "--group", 0, "--candidate", c)
    after = set(Path("/tmp").glob("nova-group-*"))
    expect(after <= before, f"left behind: {sorted(map(str, after - before))}")
    return "no /tmp/nova-group-* left"


# ---------------------------------------------------------------- settings

def write_settings(s, text):
    s.settings.write_text(text)


@case("settings")
def settings_wrong_type_names_key(s):
    write_settings(s, '{"python": 42}')
    rc, out, _ = s.run("intake", SHARED / "swish_bias_clamp.py", "--no-project")
    expect(rc != 0 and "python" in out and "string" in out, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("settings")
def settings_null_means_default(s):
    write_settings(s, '{"python": null}')
    rc, out, _ = s.run("intake", SHARED / "swish_bias_clamp.py", "--no-project")
    expect(rc == 0, f"rc {rc}: {tail(out)}")
    return "null taken as the default"


@case("settings")
def settings_broken_json_doctor_reports(s):
    write_settings(s, '{"python": ')
    rc, out, _ = s.run("doctor", "--no-python")
    expect("settings" in out.lower() and str(s.settings) in out, f"rc {rc}: {tail(out)}")
    return f"rc {rc}: " + tail(out, 200)


@case("settings")
def settings_unknown_key_kept(s):
    write_settings(s, '{"my_team_key": {"keep": true}}')
    # `nova llm --provider` on a missing provider reads settings; nothing may delete the unknown key.
    s.run("doctor", "--no-python")
    s.run("intake", SHARED / "swish_bias_clamp.py", "--no-project")
    data = json.loads(s.settings.read_text())
    expect(data.get("my_team_key") == {"keep": True}, f"settings now {data}")
    return "unknown key still there"


@case("settings")
def settings_is_a_directory(s):
    s.settings.unlink(missing_ok=True)
    s.settings.mkdir()
    try:
        rc, out, _ = s.run("intake", SHARED / "swish_bias_clamp.py", "--no-project")
        expect(rc != 0 and str(s.settings) in out, f"rc {rc}: {tail(out)}")
        no_traceback(out)
        return tail(out, 160)
    finally:
        s.settings.rmdir()


# ---------------------------------------------------------------- projects: kills and damage

def store_counts(project: Path):
    """(groups, groups without a version, duplicated builtin versions) in the project file."""
    db = sqlite3.connect(project / "project.nova")
    try:
        groups = db.execute("SELECT COUNT(*) FROM fusion_groups").fetchone()[0]
        bare = [r[0] for r in db.execute(
            "SELECT id FROM fusion_groups WHERE id NOT IN (SELECT group_id FROM candidate_versions)")]
        dups = db.execute("SELECT COUNT(*) FROM (SELECT group_id, origin_rule, generator_revision, COUNT(*) c "
                          "FROM candidate_versions WHERE origin_kind='builtin' "
                          "GROUP BY group_id, origin_rule, generator_revision HAVING c > 1)").fetchone()[0]
        return groups, bare, dups
    finally:
        db.close()


@case("project")
def kill9_during_generate_then_complete(s):
    src = SHARED / "tiny_transformer_block.py"
    model = s.models / "killed_transformer.py"
    shutil.copy(src, model)
    kills = 0
    rng = random.Random(21)
    for _ in range(8):
        proc = subprocess.Popen([str(s.nova), "generate", str(model), "--all", "--out", str(s.work / "k")],
                                env=s.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 12.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "k")
    expect(rc == 0, f"final generate rc {rc}: {tail(out)}")
    project = s.project_of(model)
    rc, status, _ = s.run("status", model, "--project", project)
    expect(rc == 0, f"status rc {rc}: {tail(status)}")
    groups, bare, dups = store_counts(project)
    declined = [g for g in bare if re.search(rf"group {g}\b.*declin|declin.*group {g}\b", out)]
    expect(groups > 0 and set(bare) <= set(declined), f"groups without a version after the last run: {bare}")
    expect(dups == 0, f"{dups} duplicated versions")
    return f"{kills} kills; {groups} groups, every one with its versions, none duplicated"


def corrupt(path: Path):
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(b"this is not a database" * 200)


@case("project")
def corrupt_project_file_readable_message(s):
    model = s.models / "corrupt_me.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "c")
    expect(rc == 0, f"generate: {tail(out)}")
    project = s.project_of(model)
    corrupt(project / "project.nova")
    rc, out, _ = s.run("status", model, "--project", project)
    expect(rc != 0 and rc > 0, f"rc {rc}")
    first = out.strip().splitlines()[0] if out.strip() else ""
    expect("project" in first.lower() and len(first) < 400, f"first line: {first!r}")
    return first[:200]


@case("project")
def truncated_project_file(s):
    model = s.models / "truncate_me.py"
    shutil.copy(SHARED / "softmax_rows.py", model)
    s.run("generate", model, "--all", "--out", s.work / "t")
    project = s.project_of(model)
    db = project / "project.nova"
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 3)
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "t")
    expect(rc >= 0, f"killed by signal {-rc}")
    expect(rc == 0 or "project" in out.lower(), f"rc {rc}: {tail(out)}")
    return f"rc {rc}: " + tail(out, 200)


@case("project")
def damaged_wal_fewer_groups_said(s):
    model = s.models / "wal.py"
    shutil.copy(SHARED / "mlp_block.py", model)
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "w")
    project = s.project_of(model)
    db = sqlite3.connect(project / "project.nova")
    # A damaged WAL loses the last commits: the result, the versions of the last group gone.
    last = db.execute("SELECT MAX(group_id) FROM candidate_versions").fetchone()[0]
    db.execute("PRAGMA foreign_keys=OFF")
    db.execute("DELETE FROM results WHERE version_id IN (SELECT id FROM candidate_versions WHERE group_id=?)",
               (last,))
    db.execute("DELETE FROM candidate_versions WHERE group_id=?", (last,))
    db.commit()
    db.close()
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "w")
    expect(rc == 0 and re.search(r"no version|missing|regenerat|fewer", out, re.I), f"rc {rc}: {tail(out)}")
    return tail(out, 200)


@case("project")
def studio_with_corrupt_project_does_not_crash(s):
    model = s.models / "studio_corrupt.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    s.run("generate", model, "--all", "--out", s.work / "sc")
    corrupt(s.project_of(model) / "project.nova")
    proc = subprocess.Popen([str(s.studio), str(model)], env=s.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(15)
    alive = proc.poll() is None
    if alive:
        proc.terminate()
        proc.wait(10)
    expect(alive or proc.returncode >= 0, f"studio died with signal {-proc.returncode}")
    return "studio stayed up with the damaged project (the prompt is tested in DamagedProjectPrompt)"


@case("project")
def project_files_private(s):
    model = s.models / "private.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "p")
    project = s.project_of(model)
    loose = []
    for p in [project, *project.rglob("*")]:
        mode = p.stat().st_mode & 0o777
        if mode & 0o077:
            loose.append(f"{p.relative_to(project.parent)} {oct(mode)}")
    expect(not loose, "readable by others: " + ", ".join(loose[:5]))
    return "project folder and files: owner only"


@case("project")
def intake_inputs_private(s):
    g = s.work / "inputs" / "m.graph.json"
    g.parent.mkdir()
    rc, out, _ = s.run("intake", SHARED / "swish_bias_clamp.py", "--json", g, "--no-project")
    expect(rc == 0, tail(out))
    loose = [f"{p.name} {oct(p.stat().st_mode & 0o777)}" for p in g.parent.rglob("*")
             if p.stat().st_mode & 0o077]
    expect(not loose, "readable by others: " + ", ".join(loose[:5]))
    return "graph and example inputs: owner only"


@case("project")
def kill9_optimize_then_resume(s):
    model = s.models / "opt_killed.py"
    shutil.copy(SHARED / "layernorm_gelu.py", model)
    proc = subprocess.Popen([str(s.nova), "optimize", str(model)], env=s.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(6)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    rc, out, _ = s.run("optimize", model)
    expect(rc == 3 and "GPU" in out, f"rc {rc}: {tail(out)}")
    rc, out, _ = s.run("status", model)
    expect(rc == 0, f"status rc {rc}: {tail(out)}")
    return "after kill -9, optimize reruns to the GPU step (exit 3) and status reads the project"


# ---------------------------------------------------------------- nothing injected

HOSTILE_NAMES = [
    "evil\n#error injected_line\nint injected_symbol_a;.py",
    "star *\\ close *\u2215 int injected_symbol_b; .py",
    'quote" \\ back\\slash \'single\'.py',
    "ünïcödé_模型.py",
    "$(touch pwned).py",
]


def code_outside_comments(path: Path) -> str:
    """The file's text with comments and string literals removed (gcc's preprocessor, comments only)."""
    p = subprocess.run(["gcc", "-fpreprocessed", "-dD", "-E", "-P", "-x", "c++", str(path)], capture_output=True,
                       text=True, errors="replace")
    return p.stdout


@case("inject")
def hostile_file_names_in_generated_code(s):
    seen = []
    for i, name in enumerate(HOSTILE_NAMES):
        p = s.models / name
        p.write_text(SMALL)
        out_dir = s.work / f"inject{i}"
        rc, out, _ = s.run("generate", p, "--all", "--no-project", "--out", out_dir)
        expect(rc == 0, f"{name!r}: rc {rc}: {tail(out)}")
        for f in out_dir.rglob("*"):
            if f.suffix in (".cu", ".cpp", ".h", ".cuh"):
                code = code_outside_comments(f)
                expect("injected_symbol" not in code and "#error" not in code,
                       f"{name!r} put code into {f.name}")
        expect(not (s.work / "pwned").exists() and not Path("pwned").exists(), "a shell ran the file name")
        seen.append(len(list(out_dir.rglob("*"))))
    return f"{len(HOSTILE_NAMES)} names, generated files clean"


@case("inject")
def hostile_names_in_export(s):
    name = HOSTILE_NAMES[0]
    p = s.models / ("export_" + name)
    p.write_text(SMALL)
    rc, out, _ = s.run("generate", p, "--all", "--out", s.work / "ex")
    expect(rc == 0, tail(out))
    rc, out, _ = s.run("export", p, "--out", s.work / "pkg", "--name", "nova_evil\nimport os")
    expect(rc == 2, f"a package name with a newline: rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("inject")
def hostile_source_lines_in_generated_code(s):
    p = s.model("source_lines.py", '''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                y = torch.sigmoid(x) * 2.0  # */ int injected_symbol_c; /* "quote" ünï \\
                return y + 1.0
        def get_inputs():
            return [torch.randn(8, 32)]
        def get_init_inputs():
            return []
        ''')
    out_dir = s.work / "srclines"
    rc, out, _ = s.run("generate", p, "--all", "--no-project", "--out", out_dir)
    expect(rc == 0, f"rc {rc}: {tail(out)}")
    files = [f for f in out_dir.rglob("*") if f.suffix in (".cu", ".cpp", ".h", ".cuh")]
    expect(files, "nothing generated")
    for f in files:
        code = code_outside_comments(f)
        expect("injected_symbol" not in code and "#error" not in code, f"a source line put code into {f.name}")
    return f"{len(files)} files clean"


@case("inject")
def hostile_module_names_in_generated_code(s):
    p = s.model("unicode_scopes.py", """\
        import torch
        import torch.nn as nn
        class Blöck_ñ(nn.Module):
            def __init__(self):
                super().__init__()
                self.línear_模 = nn.Linear(16, 16)
            def forward(self, x):
                return torch.tanh(self.línear_模(x)) * 3.0
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.bløck = Blöck_ñ()
            def forward(self, x):
                return self.bløck(x) + 1.0
        def get_inputs():
            return [torch.randn(4, 16)]
        def get_init_inputs():
            return []
        """)
    out_dir = s.work / "scopes"
    rc, out, _ = s.run("generate", p, "--all", "--no-project", "--out", out_dir)
    expect(rc == 0, f"rc {rc}: {tail(out)}")
    nvrtc_ok = [f for f in out_dir.glob("*.cu")]
    expect(nvrtc_ok, "no .cu written")
    return f"{len(nvrtc_ok)} .cu written; NVRTC compiled them in generate"


# ---------------------------------------------------------------- environment secrets

ENV_MODEL = """\
import os, json
import torch
import torch.nn as nn
with open({path!r}, "w") as f:
    json.dump(sorted(os.environ), f)
class Model(nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(4, 4)]
def get_init_inputs():
    return []
"""


@case("secrets")
def secrets_not_in_worker_environment(s):
    dump = s.work / "env.json"
    p = s.model("env_dump.py", ENV_MODEL.format(path=str(dump)))
    secrets = {"OPENAI_API_KEY": "sk-sweep-1", "ANTHROPIC_API_KEY": "sk-ant-sweep",
               "AWS_SECRET_ACCESS_KEY": "aws-sweep", "GITHUB_TOKEN": "ghp_sweep", "NOVA_LLM_KEY": "k"}
    rc, out, _ = s.run("intake", p, "--no-project", env=secrets)
    expect(rc == 0 and dump.exists(), f"rc {rc}: {tail(out)}")
    names = json.loads(dump.read_text())
    leaked = [n for n in names if n in secrets]
    expect(not leaked, f"the worker saw {leaked}")
    return f"worker saw {len(names)} variables, no secret"


@case("secrets")
def key_not_in_project_or_output(s):
    key = "sk-sweep-secret-0123456789"
    s.settings.write_text(json.dumps({"llm_providers": [{
        "name": "local", "protocol": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
        "api_key_env": "SWEEP_KEY", "connect_timeout_s": 2}]}))
    model = s.models / "llm_key.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    rc, out, _ = s.run("llm", model, "--group", 0, "--provider", "local", "--rounds", 1, "--lineages", 1,
                       env={"SWEEP_KEY": key}, timeout=300)
    expect(key not in out, "the key was printed")
    hits = []
    for f in s.work.rglob("*"):
        if f.is_file() and f != s.settings:
            try:
                if key.encode() in f.read_bytes():
                    hits.append(str(f))
            except OSError:
                pass
    expect(not hits, f"the key is in {hits}")
    return f"rc {rc}; key in no file or output"


@case("files")
def no_pyc_in_installation(s):
    res = ROOT / "resources" / "python"
    before = set(res.rglob("*.pyc"))
    s.run("intake", SHARED / "swish_bias_clamp.py", "--no-project")
    after = set(res.rglob("*.pyc"))
    expect(after <= before, f"new: {sorted(map(str, after - before))[:3]}")
    return "no .pyc written"


@case("project")
def project_path_is_a_file(s):
    f = s.work / "not_a_folder"
    f.write_text("x")
    rc, out, _ = s.run("generate", SHARED / "swish_bias_clamp.py", "--all", "--project", f, "--out", s.work / "pf")
    expect(rc == 2 and str(f) in out, f"rc {rc}: {tail(out)}")
    expect(f.read_text() == "x", "the file given as the project was changed")
    return tail(out, 160)


@case("project")
def project_from_a_newer_nova(s):
    model = s.models / "future.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    s.run("generate", model, "--all", "--out", s.work / "fu")
    project = s.project_of(model)
    db = sqlite3.connect(project / "project.nova")
    db.execute("INSERT INTO schema_migrations(version, description) VALUES (999, 'from the future')")
    db.commit()
    db.close()
    before = (project / "project.nova").read_bytes()
    rc, out, _ = s.run("generate", model, "--all", "--out", s.work / "fu")
    expect(rc != 0 and "newer" in out, f"rc {rc}: {tail(out)}")
    expect((project / "project.nova").read_bytes() == before, "the newer project was changed")
    return tail(out, 160)


@case("project")
def two_writers_on_one_project(s):
    model = s.models / "two_writers.py"
    shutil.copy(SHARED / "mlp_block.py", model)
    procs = [subprocess.Popen([str(s.nova), "generate", str(model), "--all", "--out", str(s.work / f"tw{i}")],
                              env=s.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    rcs = [p.returncode for p in procs]
    expect(all(rc >= 0 for rc in rcs), f"a writer died by a signal: {rcs}")
    expect(rcs.count(0) >= 1 and all(rc == 0 or "project" in o.lower() for rc, o in zip(rcs, outs)),
           f"rcs {rcs}: {[tail(o, 120) for o in outs]}")
    groups, bare, dups = store_counts(s.project_of(model))
    expect(groups > 0 and not bare and dups == 0, f"{groups} groups, without a version {bare}, {dups} duplicated")
    return f"rcs {rcs}; {groups} groups, every one with its versions, none duplicated"


@case("project")
def export_over_existing_folder(s):
    model = s.models / "export_twice.py"
    shutil.copy(SHARED / "swish_bias_clamp.py", model)
    s.run("generate", model, "--all", "--out", s.work / "et")
    dest = s.work / "client_pkg"
    dest.mkdir()
    (dest / "precious.txt").write_text("keep me")
    rc, out, _ = s.run("export", model, "--out", dest)
    expect(rc == 2 and (dest / "precious.txt").read_text() == "keep me", f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("project")
def status_without_project(s):
    model = s.models / "never_opened.py"
    shutil.copy(SHARED / "softmax_rows.py", model)
    rc, out, _ = s.run("status", model)
    expect(rc == 2 and "project" in out.lower() and len(out) < 600, f"rc {rc}: {tail(out)}")
    return tail(out, 160)


@case("model")
def fifo_as_model(s):
    fifo = s.models / "pipe.py"
    os.mkfifo(fifo)
    rc, out, secs = s.run("intake", fifo, "--no-project", timeout=60)
    expect(rc == 2 and secs < 10, f"rc {rc} after {secs:.1f} s: {tail(out)}")
    return tail(out, 160)


@case("process")
def every_worker_command_takes_a_timeout(s):
    lacking = []
    for cmd in ("intake", "generate", "validate", "bench", "profile", "optimize", "llm", "check-package"):
        _, out, _ = s.run(cmd, "--help")
        if "--timeout" not in out and "--budget" not in out:
            lacking.append(cmd)
    expect(not lacking, f"no --timeout: {lacking}")
    return "intake, generate, validate, bench, profile, optimize, llm, check-package"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--only", default="", help="comma-separated case names (substrings) or categories")
    ap.add_argument("--json", default="")
    ap.add_argument("--keep", action="store_true", help="keep the workspace")
    args = ap.parse_args()
    s = Sweep(Path(args.build))
    results = []
    for category, name, fn in CASES:
        if args.only and not any(o in name or o == category for o in args.only.split(",")):
            continue
        t0 = time.monotonic()
        try:
            detail = fn(s) or ""
            ok = True
        except AssertionError as e:
            ok, detail = False, str(e)
        except subprocess.TimeoutExpired as e:
            ok, detail = False, f"timed out after {e.timeout} s"
        except Exception as e:  # a broken case is a failure, with its reason
            ok, detail = False, f"{type(e).__name__}: {e}"
        secs = time.monotonic() - t0
        results.append({"category": category, "case": name, "ok": ok, "seconds": round(secs, 1), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'}  {category:9} {name:48} {secs:6.1f} s  {detail}", flush=True)
    failed = [r for r in results if not r["ok"]]
    print(f"\n{len(results) - len(failed)} of {len(results)} passed")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if not args.keep:
        shutil.rmtree(s.work, ignore_errors=True)
    else:
        print("workspace:", s.work)
    sys.exit(len(failed))


if __name__ == "__main__":
    main()
