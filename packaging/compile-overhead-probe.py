"""Probe (learning only, not a product figure): torch.compile's per-call host cost in wall time, for a module
whose forward is one custom op (as a ModelNew whose groups all ship), against the module alone. fp32, no_grad."""
import statistics, time, torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


@torch.library.custom_op("probe::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0


@scale.register_fake
def _(x):
    return torch.empty_like(x)


class One(torch.nn.Module):
    def forward(self, x):
        return scale(x)


class Three(torch.nn.Module):
    def forward(self, x):
        return scale(scale(scale(x)))


class Plain(torch.nn.Module):  # eager ops only, for compile of an ordinary model
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(256, 256)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2.0 + 1.0


def wall(fn, rounds=30, per=100):
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(per):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) / per * 1e6)
    return statistics.median(out)


x = torch.randn(64, 256, device="cuda")
with torch.no_grad():
    for name, mod in (("one custom op", One()), ("three custom ops", Three()), ("linear+relu (eager ops)", Plain())):
        mod = mod.cuda().eval()
        torch._dynamo.reset()
        comp = torch.compile(mod)
        for _ in range(20):
            mod(x); comp(x)
        a, b = wall(lambda: mod(x)), wall(lambda: comp(x))
        dis = torch.compile(torch.compiler.disable(mod.forward))
        for _ in range(5):
            dis(x)
        c = wall(lambda: dis(x))
        print(f"{name}: module {a:.1f} us, torch.compile {b:.1f} us (+{b - a:.1f}), compile of a disabled forward {c:.1f} us")
print(torch.__version__, torch.cuda.get_device_name())
