"""The worker's bytecode cache (nova_worker/bytecode.py): used only where a package's bytecode is
missing beside its sources, written under NOVA_PYCACHE and never beside the sources."""

import os
import subprocess
import sys
import textwrap

PACKAGE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "python")


def make_package(root, name):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import part\n")
    (pkg / "part.py").write_text("VALUE = 42\n")
    return pkg


def run_python(tmp_path, code, extra_env):
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{PACKAGE_DIR}", PYTHONDONTWRITEBYTECODE="1")
    env.pop("NOVA_PYCACHE", None)
    env.update(extra_env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


USE_THEN_IMPORT = """
    import sys
    from nova_worker import bytecode
    print(bytecode.use_cache_if_missing("fakepkg"))
    import fakepkg
    print(fakepkg.part.VALUE, sys.dont_write_bytecode)
"""


def pyc_files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.pyc"))


def test_a_package_without_bytecode_gets_it_in_the_cache_and_never_beside_its_sources(tmp_path):
    pkg = make_package(tmp_path, "fakepkg")
    cache = tmp_path / "cache"
    cache.mkdir()
    out = run_python(tmp_path, USE_THEN_IMPORT, {"NOVA_PYCACHE": str(cache)})
    assert out.splitlines() == [str(cache), "42 False"]
    assert pyc_files(pkg) == []
    written = pyc_files(cache)
    assert any(f.endswith(f"fakepkg/__init__.{sys.implementation.cache_tag}.pyc") for f in written), written
    assert any(f.endswith(f"fakepkg/part.{sys.implementation.cache_tag}.pyc") for f in written), written
    # The next process reads what the first one wrote (the same files, not written again).
    before = {f: (cache / f).stat().st_mtime_ns for f in written}
    run_python(tmp_path, USE_THEN_IMPORT, {"NOVA_PYCACHE": str(cache)})
    assert {f: (cache / f).stat().st_mtime_ns for f in pyc_files(cache)} == before


def test_a_package_with_its_own_bytecode_keeps_it_and_nothing_is_written(tmp_path):
    pkg = make_package(tmp_path, "fakepkg")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(pkg)], check=True)
    own = pyc_files(pkg)
    cache = tmp_path / "cache"
    cache.mkdir()
    out = run_python(tmp_path, USE_THEN_IMPORT, {"NOVA_PYCACHE": str(cache)})
    assert out.splitlines() == ["None", "42 True"]
    assert pyc_files(cache) == [] and pyc_files(pkg) == own


def test_without_nova_pycache_or_its_folder_nothing_changes(tmp_path):
    make_package(tmp_path, "fakepkg")
    assert run_python(tmp_path, USE_THEN_IMPORT, {}).splitlines() == ["None", "42 True"]
    missing = tmp_path / "no-such-folder"
    assert run_python(tmp_path, USE_THEN_IMPORT, {"NOVA_PYCACHE": str(missing)}).splitlines() == ["None", "42 True"]
    assert not missing.exists()


def test_the_worker_package_turns_it_on_for_torch_before_importing_it(tmp_path):
    # Importing nova_worker decides for torch; this machine's torch has its bytecode or not, and the
    # answer must match bytecode_missing("torch").
    cache = tmp_path / "cache"
    cache.mkdir()
    out = run_python(tmp_path, """
        import sys
        import nova_worker
        from nova_worker import bytecode
        print(sys.pycache_prefix, bytecode.bytecode_missing("torch"), "torch" in sys.modules)
    """, {"NOVA_PYCACHE": str(cache)})
    prefix, missing, imported = out.split()
    assert imported == "False"
    assert (prefix == str(cache)) == (missing == "True")


def test_the_doctor_says_where_the_bytecode_comes_from(tmp_path):
    make_package(tmp_path, "fakepkg")
    describe = """
        from nova_worker import bytecode
        bytecode.use_cache_if_missing("fakepkg")
        print(bytecode.describe("fakepkg"))
    """
    assert run_python(tmp_path, describe, {}).startswith("none: compiled again by every process")
    cache = tmp_path / "cache"
    cache.mkdir()
    assert run_python(tmp_path, describe, {"NOVA_PYCACHE": str(cache)}) == f"nova's cache ({cache})"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tmp_path / "fakepkg")], check=True)
    assert run_python(tmp_path, describe, {"NOVA_PYCACHE": str(cache)}) == "its own, beside its sources"
