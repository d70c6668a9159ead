"""Loads a model file in KernelBench form (Model, get_inputs, get_init_inputs) or functional form
(forward takes fn=module_fn), turning every failure of the user's code into a WorkerFailure that
names the file and line and carries the user's own traceback (worker frames trimmed)."""

import importlib.util
import inspect
import os
import re
import sys
import traceback

from .protocol import WorkerFailure

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")


def user_traceback(exc, model_path):
    """The traceback of exc, starting at the first frame in the user's file."""
    frames = traceback.extract_tb(exc.__traceback__)
    real = os.path.realpath(model_path)
    first = next((i for i, f in enumerate(frames) if os.path.realpath(f.filename) == real), 0)
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(frames[first:])
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def deepest_user_frame(exc, model_path):
    real = os.path.realpath(model_path)
    hit = None
    for f in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(f.filename) == real:
            hit = f
    return (hit.filename, hit.lineno) if hit else (model_path, 0)


def _is_allocation_failure(exc):
    text = str(exc).lower()
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError" or (
        isinstance(exc, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text
                                           or "failed to allocate" in text))


def call_user(what, fn, model_path, *args):
    """Runs fn(*args); an exception becomes a user_error naming `what`."""
    try:
        return fn(*args)
    except WorkerFailure:
        raise
    except Exception as exc:
        file, line = deepest_user_frame(exc, model_path)
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if _is_allocation_failure(exc):
            asked = re.search(r"allocate (\d+) bytes", str(exc))
            size = f"{int(asked.group(1)) / 2**40:.1f} TiB ({asked.group(1)} bytes)" if asked else "memory"
            message = f"{what} could not allocate {size}: the machine does not have that much memory"
        else:
            message = f"{what} raised {type(exc).__name__}: {first_line}"
        if line:
            message += f" ({os.path.basename(file)}:{line})"
        raise WorkerFailure("user_error", message, user_traceback(exc, model_path), file, line) from None


def _as_shown(text, path, shown):
    return text.replace(path, shown) if shown and shown != path else text


def import_user_module(path, prefix="nova_user_", shown=None):
    """Imports a file of the user's (a model, or a reference written from the text core sent);
    a syntax error or an exception while importing becomes a user_error with the file and line.
    `shown`: the name the file goes by in messages (the user's own path, for a written copy)."""
    shown = shown or path
    if not os.path.isfile(path):
        raise WorkerFailure("user_error", f"file not found: {shown}", file=shown)
    name = prefix + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        file = shown if not exc.filename or os.path.realpath(exc.filename) == os.path.realpath(path) else exc.filename
        message = f"syntax error in {os.path.basename(file)} line {exc.lineno}: {exc.msg}"
        tb = "".join(traceback.format_exception_only(type(exc), exc))
        raise WorkerFailure("user_error", message, _as_shown(tb, path, shown), file, exc.lineno or 0) from None
    except Exception as exc:
        sys.modules.pop(name, None)
        file, line = deepest_user_frame(exc, path)
        raise WorkerFailure("user_error",
                            f"importing {os.path.basename(shown)} raised {type(exc).__name__}: {exc}"
                            + (f" ({os.path.basename(shown)}:{line})" if line else ""),
                            _as_shown(user_traceback(exc, path), path, shown),
                            _as_shown(file, path, shown), line) from None
    return module


def import_model_module(model_path):
    if not os.path.isfile(model_path):
        raise WorkerFailure("user_error", f"model file not found: {model_path}", file=model_path)
    module = import_user_module(model_path)
    missing = [n for n in REQUIRED_NAMES if not hasattr(module, n)]
    if missing:
        raise WorkerFailure("user_error",
                            f"{os.path.basename(model_path)} does not define {', '.join(missing)} "
                            f"(a model file needs {', '.join(REQUIRED_NAMES)})", file=model_path)
    return module


def model_form(module):
    try:
        params = inspect.signature(module.Model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    return "functional" if "fn" in params or hasattr(module, "module_fn") else "kernelbench"


def forward_param_names(model):
    """Names of forward's positional parameters (without self and fn), for readable input names."""
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.name != "fn" and
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def load(model_path, progress):
    """(module, model, inputs, form) for a model file."""
    import torch

    progress(f"importing {os.path.basename(model_path)}", 0.05)
    module = import_model_module(model_path)
    progress("calling get_init_inputs() and building Model", 0.1)
    init_inputs = call_user("get_init_inputs()", module.get_init_inputs, model_path)
    torch.manual_seed(0)
    model = call_user("Model(*get_init_inputs())", lambda: module.Model(*list(init_inputs)), model_path)
    if not isinstance(model, torch.nn.Module):
        raise WorkerFailure("user_error", "Model(...) did not return a torch.nn.Module", file=model_path)
    progress("calling get_inputs()", 0.15)
    inputs = call_user("get_inputs()", module.get_inputs, model_path)
    if isinstance(inputs, torch.Tensor) or not isinstance(inputs, (list, tuple)):
        raise WorkerFailure("user_error", "get_inputs() must return a list or tuple of inputs",
                            file=model_path)
    return module, model, list(inputs), model_form(module)
