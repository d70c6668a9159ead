# Is conv2d_relu_hardswish's weight gradient (eager, cuDNN) the same from call to call on this GPU? A diagnostic
# for the package tests' eager_spread (docs/perf-notes.md, "Session 22"): python3 packaging/conv-grad-spread.py
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
print(torch.cuda.get_device_name(), torch.__version__, "cudnn", torch.backends.cudnn.version())
g = torch.Generator(device="cuda").manual_seed(0)
x = torch.randn(64, 8, 64, 64, device="cuda", generator=g)
w0 = torch.randn(32, 8, 3, 3, device="cuda", generator=g) * 0.1
b0 = torch.randn(32, device="cuda", generator=g) * 0.1
gy = torch.randn(64, 32, 62, 62, device="cuda", generator=g)

def grads():
    w = w0.clone().requires_grad_(); b = b0.clone().requires_grad_(); xi = x.clone().requires_grad_()
    y = F.hardswish(torch.relu(F.conv2d(xi, w, b)))
    (y * gy).sum().backward()
    return w.grad.clone(), xi.grad.clone()

for det in (False, True):
    torch.backends.cudnn.deterministic = det
    ref = grads()
    for k in range(5):
        again = grads()
        for name, a, r in zip(("weight", "input"), again, ref):
            d = (a - r).abs()
            beyond = int((d > 1e-4 + 1e-4 * r.abs()).sum())
            print(f"deterministic={det} run {k+1} {name}: max diff {float(d.max()):.3g}, beyond nova's tolerance {beyond} of {r.numel()}, max |grad| {float(r.abs().max()):.3g}")
