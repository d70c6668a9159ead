"""Checked by `nova export` before it writes a package: the model file rebuilds its Model from
get_init_inputs() (the package's ModelNew takes the same constructor arguments) and get_inputs()
returns a list. Prints one JSON line {"state_dict": [keys]}; on failure, the reason on stderr and
exit code 1. Usage: python check_model.py MODEL.py"""

import importlib.util
import json
import os
import sys


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def main(path):
    name = os.path.basename(path)
    spec = importlib.util.spec_from_file_location("nova_export_client_model", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the client's code: any error is theirs to see
        fail(f"{name} cannot be imported: {type(exc).__name__}: {exc}")
    for required in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, required):
            fail(f"{name} does not define {required}")
    try:
        init = list(module.get_init_inputs())
    except Exception as exc:
        fail(f"{name}: get_init_inputs() raised {type(exc).__name__}: {exc}")
    try:
        model = module.Model(*init)
    except Exception as exc:
        fail(f"{name}: Model cannot be rebuilt from get_init_inputs() "
             f"({type(exc).__name__}: {exc}); the package's ModelNew takes the same arguments")
    try:
        inputs = module.get_inputs()
    except Exception as exc:
        fail(f"{name}: get_inputs() raised {type(exc).__name__}: {exc}")
    if not isinstance(inputs, (list, tuple)):
        fail(f"{name}: get_inputs() must return a list or tuple")
    print(json.dumps({"state_dict": list(model.state_dict().keys())}))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: check_model.py MODEL.py")
    main(sys.argv[1])
