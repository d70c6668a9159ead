"""What a result must record about where it was measured: GPU, driver, CUDA, torch, the clocks
seen, the power limit in force, NVML's energy counter, and the host (CPU, memory, OS) for the report. NVML is loaded at run time with ctypes (libnvidia-ml.so.1, shipped
with the driver); where it is missing, energy and clocks are reported as unavailable."""

import ctypes
import os
import platform

import torch

NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2


class Nvml:
    """The few NVML calls results need, for one device."""

    def __init__(self, index=0):
        self.error = ""
        self.handle = ctypes.c_void_p()
        try:
            self.lib = ctypes.CDLL("libnvidia-ml.so.1")
            self._ok(self.lib.nvmlInit_v2(), "nvmlInit_v2")
            self._ok(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(self.handle)),
                     "nvmlDeviceGetHandleByIndex_v2")
        except (OSError, RuntimeError) as exc:
            self.lib = None
            self.error = str(exc)

    @staticmethod
    def _ok(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} returned {rc}")

    @property
    def available(self):
        return self.lib is not None

    def total_energy_mj(self):
        """Energy since the driver loaded, in millijoules; None where unsupported."""
        if not self.lib:
            return None
        value = ctypes.c_ulonglong()
        if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value)) != 0:
            return None
        return int(value.value)

    def clocks_mhz(self):
        if not self.lib:
            return {}
        out = {}
        for name, kind in (("sm", NVML_CLOCK_SM), ("mem", NVML_CLOCK_MEM), ("graphics", NVML_CLOCK_GRAPHICS)):
            v = ctypes.c_uint()
            if self.lib.nvmlDeviceGetClockInfo(self.handle, ctypes.c_int(kind), ctypes.byref(v)) == 0:
                out[name] = int(v.value)
        return out

    def power_limit_w(self):
        """The power limit the driver enforces, in watts; None where unsupported."""
        if not self.lib:
            return None
        value = ctypes.c_uint()
        if self.lib.nvmlDeviceGetEnforcedPowerLimit(self.handle, ctypes.byref(value)) != 0:
            return None
        return value.value / 1000.0

    def driver_version(self):
        if not self.lib:
            return ""
        buf = ctypes.create_string_buffer(96)
        if self.lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(96)) != 0:
            return ""
        return buf.value.decode()


class ClockLog:
    """Clock readings taken at named moments of a run (the clocks are left alone, only seen)."""

    def __init__(self, nvml):
        self.nvml = nvml
        self.samples = []

    def sample(self, moment):
        c = self.nvml.clocks_mhz()
        if c:
            c["moment"] = moment
            self.samples.append(c)


def host_cpu():
    """The CPU's model name (Linux: /proc/cpuinfo), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} logical CPUs)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def environment(nvml=None, clocks=None):
    nvml = nvml or Nvml()
    env = {"torch": torch.__version__, "cuda": torch.version.cuda or "", "python": platform.python_version(),
           "host": platform.node(), "nvml": nvml.available, "nvml_error": nvml.error,
           "driver": nvml.driver_version()}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        env.update({"gpu": p.name, "capability": f"sm_{p.major}{p.minor}", "sm_count": p.multi_processor_count,
                    "memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", 0)})
    env.update({"os": platform.platform(), "cpu": host_cpu()})
    memory = host_memory_bytes()
    if memory:
        env["host_memory_bytes"] = memory
    power = nvml.power_limit_w()
    if power is not None:
        env["power_limit_w"] = power
    env["clocks_seen"] = clocks.samples if clocks else ([dict(nvml.clocks_mhz(), moment="now")] if nvml.available else [])
    env["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    env["tf32_matmul"] = torch.backends.cuda.matmul.allow_tf32
    env["tf32_cudnn"] = torch.backends.cudnn.allow_tf32
    return env
