"""Facts about this interpreter and its torch, as JSON: used by `nova doctor` and by the worker's
handshake. Never raises: a missing or broken torch is reported, not thrown."""

import json
import platform
import sys


def collect(cuda=True, with_torch=True):
    """The facts; cuda=False leaves CUDA untouched (no device query), for a worker that must not
    disturb the GPU before its request; with_torch=False does not import torch (the torch fields
    stay empty unless it is imported already), for a one-shot worker's quick hello."""
    info = {
        "executable": sys.executable,
        "python": platform.python_version(),
        "torch_ok": False,
        "torch": "",
        "torch_cuda": "",
        "torch_error": "",
        "cuda_available": False,
        "devices": [],
    }
    if not with_torch and "torch" not in sys.modules:
        return info
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising anything
        info["torch_error"] = f"{type(exc).__name__}: {exc}"
        return info
    info["torch_ok"] = True
    info["torch"] = torch.__version__
    info["torch_cuda"] = torch.version.cuda or ""
    if not cuda:
        return info
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            for i in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(i)
                info["devices"].append(
                    {"index": i, "name": p.name, "capability": [p.major, p.minor],
                     "memory_bytes": p.total_memory, "sm_count": p.multi_processor_count})
    except Exception as exc:
        info["torch_error"] = f"CUDA query failed: {type(exc).__name__}: {exc}"
    return info


def main():
    info = collect()
    if info["torch_ok"]:
        from .bytecode import describe
        info["torch_bytecode"] = describe("torch")
    # What `nova report` lacks here (found without importing): the HTML's packages, and WeasyPrint for the PDF.
    from .report import REQUIRED_MODULES, missing_modules
    info["report_missing"] = missing_modules(REQUIRED_MODULES + ("weasyprint",))
    json.dump(info, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
