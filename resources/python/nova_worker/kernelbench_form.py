"""Reads an LLM's answer in KernelBench's form (a Python file that builds its CUDA with
torch.utils.cpp_extension.load_inline and defines `class ModelNew(nn.Module)` whose forward calls
the loaded function) without running any of it: Python's ast finds the source strings, the function
forward calls and how its arguments map to the fusion group's inputs, and one torch extension
source for the full path is written from them (`forward` takes the group's inputs in call order
and calls that function). Whatever cannot be read that way (sources built at run time, PyTorch
compute in forward besides the kernel call, state made in __init__, several load_inline calls) is
refused with one sentence, which goes back to the model.

Parsing executes nothing, so core runs this with the workers' Python and scrubbed environment, as it
runs kernelguard; the extension it writes is built and run by the sandboxed worker like any other
full-path candidate (build_ext, validate, bench).

    python -m nova_worker.kernelbench_form < {"source": "<the answer's Python>", "inputs": ["x", "w"]}
    -> {"extension_source": ..., "function": ..., "arguments": [...], "notes": [...]}
       or {"problem": "<why it cannot be used>"}
"""

import ast
import json
import sys

# load_inline's parameters in positional order (torch.utils.cpp_extension.load_inline).
LOAD_INLINE_PARAMS = ("name", "cpp_sources", "cuda_sources", "functions")
# Keywords that change nothing of what is built or how it is called.
HARMLESS_KEYWORDS = {"name", "verbose", "with_cuda", "with_pytorch_error_handling", "keep_intermediates",
                     "build_directory", "is_python_module", "is_standalone", "use_pch", "no_implicit_headers"}


class Refused(Exception):
    """The answer cannot be turned into a full-path candidate; the message says why, to the model."""


def _line(node):
    return f"line {getattr(node, 'lineno', '?')}"


def _code(node, limit=80):
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Module:
    """The module-level facts the reading needs: names bound once to a value, and the load_inline call."""

    def __init__(self, tree):
        self.tree = tree
        self.bindings = {}  # name -> value node, for names assigned exactly once at module level
        self.rebound = set()
        for stmt in tree.body:
            targets, value = [], None
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            for t in targets:
                if isinstance(t, ast.Name):
                    if t.id in self.bindings:
                        self.rebound.add(t.id)
                    self.bindings[t.id] = value

    def text(self, node, what, depth=0):
        """The string a source argument stands for, read statically, or Refused."""
        if depth > 20:
            raise Refused(f"{what} refers to names in a cycle: give it as a string literal")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.rebound:
                raise Refused(f"{what} uses `{node.id}`, which is assigned more than once: give each source as "
                              "one string literal bound once at module level")
            if node.id not in self.bindings:
                raise Refused(f"{what} uses `{node.id}`, which is not a string bound at module level: sources "
                              "built at run time cannot be read; give them as string literals")
            return self.text(self.bindings[node.id], what, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.text(node.left, what, depth + 1) + self.text(node.right, what, depth + 1)
        if isinstance(node, ast.JoinedStr):
            raise Refused(f"{what} is an f-string ({_line(node)}): sources built at run time cannot be read; "
                          "write the source as a plain string literal")
        raise Refused(f"{what} is built at run time (`{_code(node)}`, {_line(node)}): sources built at run "
                      "time cannot be read; give them as string literals or names bound to one")

    def texts(self, node, what):
        if isinstance(node, ast.Name) and node.id in self.bindings and node.id not in self.rebound and \
                isinstance(self.bindings[node.id], (ast.List, ast.Tuple)):
            node = self.bindings[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.text(e, what) for e in node.elts]
        return [self.text(node, what)]


def _load_inline_names(tree):
    """The names load_inline is imported under (`from torch.utils.cpp_extension import load_inline as li`)."""
    names = {"load_inline"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.name == "load_inline" and a.asname)
    return names


def _is_load_inline(call, names):
    f = call.func
    return (isinstance(f, ast.Name) and f.id in names) or \
        (isinstance(f, ast.Attribute) and f.attr == "load_inline")


def _load_inline(module):
    """The load_inline call (at module level, its result bound to a name): (name, {param: node}, call)."""
    names = _load_inline_names(module.tree)
    calls = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and _is_load_inline(n, names)]
    if not calls:
        raise Refused("the Python calls no torch.utils.cpp_extension.load_inline: give the CUDA and C++ "
                      "sources to one load_inline call as string literals")
    if len(calls) > 1:
        lines = ", ".join(str(c.lineno) for c in calls)
        raise Refused(f"the Python calls load_inline {len(calls)} times (lines {lines}): put every kernel in "
                      "one load_inline call")
    call = calls[0]
    bound = None
    for stmt in module.tree.body:
        if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            bound = stmt.targets[0].id
    if bound is None:
        raise Refused(f"load_inline is not called at module level with its result bound to a name "
                      f"({_line(call)}): write `module = load_inline(...)` at the top level")
    if bound in module.rebound:
        raise Refused(f"`{bound}`, the module load_inline returns, is assigned more than once")
    params = {}
    for name, arg in zip(LOAD_INLINE_PARAMS, call.args):
        params[name] = arg
    if len(call.args) > len(LOAD_INLINE_PARAMS):
        raise Refused("load_inline is given more than four positional arguments: pass the rest by keyword")
    for kw in call.keywords:
        if kw.arg is None:
            raise Refused(f"load_inline is given `**{_code(kw.value)}`: its arguments must be written out")
        params[kw.arg] = kw.value
    return bound, params, call


def _functions(node, module):
    if isinstance(node, ast.Name) and node.id in module.bindings and node.id not in module.rebound:
        node = module.bindings[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = [node.value]
    elif isinstance(node, (ast.List, ast.Tuple)):
        names = [module.text(e, "an entry of functions") for e in node.elts]
    elif isinstance(node, ast.Dict):
        names = [module.text(k, "a key of functions") for k in node.keys if k is not None]
    else:
        raise Refused(f"load_inline's functions (`{_code(node)}`) is not a list of names written out")
    for n in names:
        if not n.isidentifier():
            raise Refused(f"load_inline's functions lists `{n}`, which is not a C++ function name")
    return names


def _class(tree, name):
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return stmt
    return None


def _method(cls, name):
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return stmt
    return None


def _without_docstring(body):
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _is_super_init(stmt):
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    return isinstance(f, ast.Attribute) and f.attr == "__init__" and isinstance(f.value, ast.Call) and \
        isinstance(f.value.func, ast.Name) and f.value.func.id == "super"


def _init_aliases(cls, bound):
    """The attributes of self that __init__ binds to the loaded module; refuses any other state."""
    aliases = set()
    init = _method(cls, "__init__")
    if init is None:
        return aliases
    extra = [a.arg for a in init.args.args[1:] + init.args.kwonlyargs]
    if extra or init.args.vararg or init.args.kwarg:
        raise Refused(f"ModelNew.__init__ takes arguments ({', '.join(extra) or '*args'}): the group's tensors "
                      "all come into forward as arguments, so ModelNew() must take none")
    for stmt in _without_docstring(init.body):
        if _is_super_init(stmt) or isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Attribute) and isinstance(stmt.targets[0].value, ast.Name) and \
                stmt.targets[0].value.id == "self" and isinstance(stmt.value, ast.Name) and \
                stmt.value.id == bound:
            aliases.add(stmt.targets[0].attr)
            continue
        raise Refused(f"ModelNew.__init__ does more than bind the loaded module ({_line(stmt)}: `{_code(stmt)}`): "
                      "parameters, buffers and other state are not part of the group's call; its tensors all "
                      "come into forward as arguments")
    return aliases


def _kernel_call(forward):
    """The one call forward returns: `return CALL`, or `y = CALL` then `return y`."""
    body = _without_docstring(forward.body)
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    if len(body) == 2 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 and \
            isinstance(body[0].targets[0], ast.Name) and isinstance(body[1], ast.Return) and \
            isinstance(body[1].value, ast.Name) and body[1].value.id == body[0].targets[0].id:
        return body[0].value
    extra = body[0] if body else forward
    for stmt in body:
        if not isinstance(stmt, ast.Return):
            extra = stmt
            break
    raise Refused(f"ModelNew.forward does more than return one call of the loaded function ({_line(extra)}: "
                  f"`{_code(extra)}`): PyTorch compute besides the kernel call is not allowed, do it in the kernel")


def _cpp_scalar(node):
    v = node.value
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v}LL" if abs(v) > 2**31 - 1 else str(v)
    if isinstance(v, float) and v == v and abs(v) != float("inf"):
        return repr(v) if ("." in repr(v) or "e" in repr(v)) else repr(v) + ".0"
    raise Refused(f"the constant `{_code(node)}` passed to the kernel call has no C++ spelling")


def convert(source, inputs):
    """The full-path extension for an answer in KernelBench's form, or Refused."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise Refused(f"the Python does not parse: {exc.msg} (line {exc.lineno})") from None
    module = _Module(tree)
    bound, params, call = _load_inline(module)
    if "cuda_sources" not in params:
        raise Refused("load_inline is given no cuda_sources: the kernels must be CUDA, given as cuda_sources")
    cuda = module.texts(params["cuda_sources"], "cuda_sources")
    cpp = module.texts(params["cpp_sources"], "cpp_sources") if "cpp_sources" in params else []
    if "functions" not in params:
        raise Refused("load_inline is given no functions=[...]: list the function ModelNew.forward calls")
    functions = _functions(params["functions"], module)
    notes = []
    for key, node in params.items():
        if key in HARMLESS_KEYWORDS or key in ("cpp_sources", "cuda_sources", "functions"):
            continue
        if isinstance(node, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and e.value in ("", None) for e in node.elts):
            continue
        notes.append(f"load_inline's {key} (`{_code(node, 60)}`) is not used: the full path builds with its own "
                     "nvcc flags")
    if "PYBIND11_MODULE" in "".join(cuda + cpp):
        raise Refused("the sources define their own PYBIND11_MODULE: let load_inline's functions=[...] bind "
                      "the function instead")

    cls = _class(tree, "ModelNew")
    if cls is None:
        raise Refused("the Python defines no class ModelNew whose forward calls the loaded function")
    aliases = _init_aliases(cls, bound)
    forward = _method(cls, "forward")
    if forward is None:
        raise Refused("class ModelNew has no forward method")
    if forward.args.vararg or forward.args.kwarg or forward.args.kwonlyargs or forward.args.defaults:
        raise Refused("ModelNew.forward must take the group's inputs as plain positional arguments "
                      "(no *args, **kwargs, keyword-only arguments or defaults)")
    names = [a.arg for a in forward.args.args[1:]]
    if len(names) != len(inputs):
        raise Refused(f"ModelNew.forward takes {len(names)} argument(s) ({', '.join(names) or 'none'}) but the "
                      f"group has {len(inputs)} input(s) ({', '.join(inputs)}): forward takes them all, in that "
                      "order")
    value = _kernel_call(forward)
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        raise Refused(f"ModelNew.forward returns `{_code(value)}`, which is not a call of a function the "
                      f"load_inline module exports ({', '.join(functions)})")
    owner = value.func.value
    is_module = (isinstance(owner, ast.Name) and owner.id == bound) or (
        isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "self" and
        owner.attr in aliases)
    if not is_module:
        raise Refused(f"ModelNew.forward returns `{_code(value)}`, which is not a call of a function the "
                      f"load_inline module exports ({', '.join(functions)}): PyTorch compute besides the kernel "
                      "call is not allowed")
    function = value.func.attr
    if function not in functions:
        raise Refused(f"ModelNew.forward calls `{function}`, which load_inline's functions do not list "
                      f"({', '.join(functions)})")
    if value.keywords:
        raise Refused(f"the call of {function} passes keyword arguments: pass forward's arguments by position")
    arguments, cpp_args = [], []
    for i, arg in enumerate(value.args):
        if isinstance(arg, ast.Name) and arg.id in names:
            k = names.index(arg.id)
            arguments.append(f"input:{k}")
            cpp_args.append(f"nova_input_{k}")
        elif isinstance(arg, ast.Constant) and isinstance(arg.value, (bool, int, float)):
            arguments.append(_code(arg))
            cpp_args.append(_cpp_scalar(arg))
        else:
            raise Refused(f"argument {i + 1} of the call of {function}, `{_code(arg)}`, is neither one of "
                          "forward's arguments nor a number: PyTorch compute besides the kernel call is not "
                          "allowed, do it in the kernel")

    params_cpp = ", ".join(f"torch::Tensor nova_input_{k}" for k in range(len(inputs)))
    parts = [
        "// An LLM's answer in KernelBench's form (ModelNew + load_inline), read without running it by",
        "// nova_worker/kernelbench_form.py: its cuda_sources, its cpp_sources, then the group's call",
        f"// (inputs {', '.join(inputs)}), which is ModelNew.forward's call of {function}.",
        "#include <torch/extension.h>",
        "#include <cuda.h>",
        "#include <cuda_runtime.h>",
        "",
    ]
    for i, text in enumerate(cuda):
        parts += [f"// ---- cuda_sources[{i}] ----", text, ""]
    for i, text in enumerate(cpp):
        parts += [f"// ---- cpp_sources[{i}] ----", text, ""]
    parts += [
        "// ---- ModelNew.forward, with the group's inputs in call order ----",
        f"auto nova_group_forward({params_cpp}) {{ return {function}({', '.join(cpp_args)}); }}",
        "",
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {",
        f'  m.def("forward", &nova_group_forward, "ModelNew.forward: {function}");',
        "}",
        "",
    ]
    return {"extension_source": "\n".join(parts), "function": function, "arguments": arguments, "notes": notes}


def main():
    try:
        request = json.load(sys.stdin)
        source, inputs = request["source"], request["inputs"]
        if not isinstance(source, str) or not isinstance(inputs, list) or \
                not all(isinstance(n, str) for n in inputs):
            raise ValueError("'source' must be text and 'inputs' a list of names")
    except (ValueError, KeyError, TypeError) as exc:
        print(f"kernelbench_form: a bad request: {exc}", file=sys.stderr)
        return 2
    try:
        answer = convert(source, inputs)
    except Refused as exc:
        answer = {"problem": str(exc)}
    except RecursionError:
        answer = {"problem": "the Python nests too deeply to be read"}
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
