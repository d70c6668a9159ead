"""Probe (learning only, not a product figure): where torch.compile's per-call host time goes, for a module
whose forward is a chain of custom ops (as a ModelNew whose groups all ship), against the module alone: the
floor (a compiled module with no op), dynamo alone (backend=eager), AOTAutograd (aot_eager), inductor, and
a forward or __call__ kept out of dynamo. Wall time, calls back to back, no_grad, fp32 with TF32 off.
Usage: python3 packaging/compile-overhead-probe.py [cuda|cpu]   (session 33's output, an H100:
tests/fixtures/deliver/h100_session33/compile-overhead/custom-op-modules.txt)"""
import statistics, sys, time, torch

dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


@torch.library.custom_op("probe::lin", mutates_args=())
def lin(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.addmm(b, x, w.t())


@lin.register_fake
def _(x, w, b):
    return x.new_empty(x.shape[0], w.shape[0])


class Ops(torch.nn.Module):
    """k custom ops in a chain, each with its own weight and bias (as a ModelNew whose groups all ship)."""
    def __init__(self, k, n=64):
        super().__init__()
        self.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(n, n) * 0.1) for _ in range(k)])
        self.bs = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(n)) for _ in range(k)])

    def forward(self, x):
        for w, b in zip(self.ws, self.bs):
            x = torch.ops.probe.lin.default(x, w, b)
        return x


class Identity(torch.nn.Module):
    """No op at all: torch.compile's floor (its wrapper, the frame's guards, nothing compiled)."""
    def __init__(self, k):
        super().__init__()
        self.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(64, 64)) for _ in range(2 * k)])

    def forward(self, x):
        return x


class OwnCall(Ops):
    """__call__ itself kept out of dynamo: torch.compile of it runs the module as it is."""
    __call__ = torch.compiler.disable(torch.nn.Module.__call__)


class Disabled(Ops):
    @torch.compiler.disable
    def forward(self, x):
        return super().forward(x)


def wall(fn, rounds=25, per=200):
    out = []
    for _ in range(rounds):
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(per):
            fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        out.append((time.perf_counter() - t) / per * 1e6)
    return statistics.median(out)


x = torch.randn(32, 64, device=dev)
cfg = torch._inductor.config
with torch.no_grad():
    for k in (1, 4):
        rows = []
        def add(name, fn):
            for _ in range(30):
                fn(x)
            rows.append((name, wall(lambda: fn(x))))
        base = Ops(k).to(dev).eval()
        add("module alone", base)
        for backend in ("eager", "aot_eager", "inductor"):
            torch._dynamo.reset()
            add(f"compile backend={backend}", torch.compile(Ops(k).to(dev).eval(), backend=backend))
        torch._dynamo.reset()
        with cfg.patch(size_asserts=False):
            add("inductor, size_asserts off", torch.compile(Ops(k).to(dev).eval()))
        torch._dynamo.reset()
        try:
            with cfg.patch(cpp_wrapper=True):
                add("inductor, cpp_wrapper", torch.compile(Ops(k).to(dev).eval()))
        except Exception as e:
            print("cpp_wrapper failed:", type(e).__name__, str(e).splitlines()[0][:200])
        torch._dynamo.reset()
        add("module with no op, alone", Identity(k).to(dev).eval())
        add("compile of a module with no op (the floor)", torch.compile(Identity(k).to(dev).eval()))
        torch._dynamo.reset()
        add("compile of a module with a disabled __call__", torch.compile(OwnCall(k).to(dev).eval()))
        torch._dynamo.reset()
        add("compile of a module with a disabled forward", torch.compile(Disabled(k).to(dev).eval()))
        torch._dynamo.reset()
        if dev == "cuda":
            try:
                add("inductor reduce-overhead", torch.compile(Ops(k).to(dev).eval(), mode="reduce-overhead"))
            except Exception as e:
                print("reduce-overhead failed:", type(e).__name__, str(e).splitlines()[0][:200])
        print(f"--- {k} custom op(s), {2 * k} parameters")
        a = rows[0][1]
        for name, t in rows:
            print(f"{name:<48} {t:8.1f} us  ({t - a:+.1f})")
print(torch.__version__, torch.cuda.get_device_name() if dev == "cuda" else "cpu")
