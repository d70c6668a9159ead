"""Probe (learning only, not a product figure): where torch.compile(ModelNew)'s per-call host time goes, for an
installed package of nova export: Model, ModelNew, then torch.compile of ModelNew with the eager, aot_eager and
inductor backends, torch.compile of Model, and mode="reduce-overhead"; wall time in rounds of 200 calls, no_grad,
fp32 with TF32 off. Usage, in the client's venv: python packaging/compile-overhead-modelnew.py PACKAGE_NAME
(session 33's output, an H100: tests/fixtures/deliver/h100_session33/compile-overhead/MODEL.modelnew-parts.txt)"""
import importlib, statistics, sys, time, torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
pkg = importlib.import_module(sys.argv[1])
def wall(fn, rounds=25, per=200):
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(per): fn()
        torch.cuda.synchronize(); out.append((time.perf_counter() - t) / per * 1e6)
    return statistics.median(out)
torch.manual_seed(0)
init = list(pkg.get_init_inputs())
x = [v.cuda() if isinstance(v, torch.Tensor) else v for v in pkg.get_inputs()]
with torch.no_grad():
    orig = pkg.Model(*init).cuda().eval()
    new = pkg.ModelNew(*init).cuda().eval(); new.load_state_dict(orig.state_dict())
    rows = []
    def add(name, m):
        for _ in range(30): m(*x)
        rows.append((name, wall(lambda: m(*x)))); print(f"{name:<40} {rows[-1][1]:8.1f} us", flush=True)
    add("Model (eager)", orig); add("ModelNew", new)
    for b in ("eager", "aot_eager", "inductor"):
        torch._dynamo.reset(); add(f"compile(ModelNew) backend={b}", torch.compile(new, backend=b))
    torch._dynamo.reset(); add("compile(Model)", torch.compile(orig))
    torch._dynamo.reset(); add("compile(ModelNew) reduce-overhead", torch.compile(new, mode="reduce-overhead"))
print(sys.argv[1], torch.cuda.get_device_name())
