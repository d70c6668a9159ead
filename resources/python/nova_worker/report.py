"""The client report's renderer (`nova report`): core makes the report's data (every figure computed,
with the id of the stored result it came from; resources/report/report.schema.json) and this only
draws and typesets it. The data is first checked against the schema (jsonschema), then the charts are
drawn with matplotlib as SVG (speedup per group with its 95% interval, the roofline, the groups' GPU
time before and after), the HTML is made from a Jinja2 template with the charts inlined (one
self-contained file), and the PDF from the same HTML with WeasyPrint. Where WeasyPrint cannot be
imported or fails, the answer says so and the HTML stands. No figure is computed here."""

import html
import io
import json
import logging
import os
import re

from .protocol import BAD_REQUEST, INTERNAL, WorkerFailure

FORMATS = ("html", "pdf")
# What the report cannot be made without (WeasyPrint is not among them: without it the HTML stands alone).
REQUIRED_MODULES = ("jsonschema", "jinja2", "matplotlib")


def missing_modules(names=REQUIRED_MODULES):
    """Which of `names` this Python cannot import (found without importing them)."""
    import importlib.util

    def found(name):
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken install or a finder that refuses it: not importable
            return False
    return [n for n in names if not found(n)]


def _schema_errors(data, schema):
    import jsonschema
    validator = jsonschema.Draft202012Validator(schema)
    return sorted(f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
                  for e in validator.iter_errors(data))


def check_data(data, resources):
    """WorkerFailure(bad_request) naming every place where `data` breaks the report's schema."""
    with open(os.path.join(resources, "report.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    errors = _schema_errors(data, schema)
    if errors:
        raise WorkerFailure(BAD_REQUEST, "the report's data does not match report.schema.json: " + "; ".join(errors[:10]))


def _svg(fig, name):
    """The figure as inline SVG (no XML prolog), its element ids prefixed with `name` so that several
    charts in one page do not share ids."""
    import matplotlib.pyplot as plt
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.find("<svg"):]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    return re.sub(r'(url\(#|href="#)([^")]+)', rf'\g<1>{name}-\2', text)


def _figure(width, height):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 8, "svg.fonttype": "none", "font.family": "DejaVu Sans"})
    return plt.subplots(figsize=(width, height))


def speedup_chart(data):
    """Each group's speedup over eager (cold and wall) with its 95% interval; a line at 1.0."""
    rows = []
    for g in data["groups"]:
        for mode, color in (("cold", "#2b6cb0"), ("wall", "#c05621")):
            f = g["speedups"][f"{mode}_vs_eager"]
            if f["value"] is not None:
                rows.append((f"group {g['group']} {mode}", f, color))
    if not rows:
        return None
    fig, ax = _figure(6.2, 0.3 * len(rows) + 0.8)
    for i, (label, f, color) in enumerate(rows):
        v = f["value"]
        if f["low"] is not None and f["high"] is not None:
            ax.errorbar(v, i, xerr=[[v - f["low"]], [f["high"] - v]], fmt="o", color=color, capsize=3)
        else:
            ax.plot(v, i, "o", color=color, fillstyle="none")
    ax.axvline(1.0, color="#555", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("speedup over eager (median ratio; bars: 95% interval; hollow: no interval)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, "speedup")


def roofline_chart(data):
    """FLOP/s against FLOP/byte, log-log: one dot per measured version (and eager), the measured
    bandwidth line, and the peak FLOP rate where one was measured."""
    points = [p for g in data["groups"] for p in g["roofline"] if p["seconds"] > 0 and p["bytes"] > 0]
    if not points:
        return None
    fig, ax = _figure(6.2, 3.6)
    xs = [p["flops"] / p["bytes"] for p in points]
    ys = [p["flops"] / p["seconds"] for p in points]
    for p, x, y in zip(points, xs, ys):
        eager = p["label"] == "eager"
        ax.plot(x, y, "s" if eager else "o", color="#777" if eager else "#2b6cb0")
        ax.annotate(f"g{p['group']} {p['label'].split(' ')[0]}", (x, y), textcoords="offset points",
                    xytext=(4, 3), fontsize=6)
    lo, hi = min(xs) / 4, max(xs) * 4
    roof = data["roofline"]
    ax.set_xlim(lo, hi)
    top = max(ys) * 4
    if roof["bandwidth"]["value"] is not None:  # the memory roof over the points' range stays in view
        top = max(top, roof["bandwidth"]["value"] * 1e9 * max(xs) * 1.5)
    ax.set_ylim(min(ys) / 4, top)
    bw = roof["bandwidth"]
    if bw["value"] is not None:
        bytes_per_s = bw["value"] * 1e9
        ax.plot([lo, hi], [lo * bytes_per_s, hi * bytes_per_s], color="#c05621", linewidth=1,
                label=f"measured bandwidth {bw['text']} ({bw['source']})")
    peak = roof["peak_flop_rate"]
    if peak["value"] is not None:
        ax.axhline(peak["value"] * 1e9, color="#2f855a", linewidth=1, label=f"peak {peak['text']} ({peak['source']})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, intake's estimate)")
    ax.set_ylabel("FLOP/s (cold median)")
    ax.grid(which="both", alpha=0.2)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=6)
    return _svg(fig, "roofline")


def profile_split_chart(data):
    """The whole model's GPU time per call as `nova check-package` profiled it, stacked by shipped
    group (the rest of the call as one grey stretch), before (Model) and after (ModelNew)."""
    split = data.get("time_split") or {}
    sides = split.get("sides") or []
    if not sides:
        return None
    fig, ax = _figure(6.2, 1.7)
    import matplotlib
    colors = matplotlib.colormaps["tab20"]
    groups = [s["group"] for s in sides[0]["segments"] if s["group"] is not None]
    for row, side in enumerate(sides):
        left = 0.0
        for seg in side["segments"]:
            shipped = seg["group"] is not None
            color = colors(groups.index(seg["group"]) % 20) if shipped else "#cbd5e0"
            ax.barh(row, seg["us"], left=left, color=color, edgecolor="white",
                    label=seg["label"] if row == 0 else None)
            left += seg["us"]
        ax.text(left, row, f"  {side['total_us']:.1f} us", va="center", fontsize=7)
    ax.set_yticks(list(range(len(sides))), [s["label"] for s in sides])
    ax.invert_yaxis()
    ax.set_xlim(0, max(s["total_us"] for s in sides) * 1.18)
    ax.set_xlabel("GPU time per call, us (kernel durations, warm, profiled)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=min(4, len(groups) + 1), fontsize=6, frameon=False)
    return _svg(fig, "profile-split")


def time_split_chart(data):
    """The groups' cold GPU time per call, stacked, before (eager) and after (what ships), from the
    groups' own benchmarks: drawn where no whole-model profile was stored."""
    groups = [g for g in data["groups"] if g["time_before"]["value"] is not None and g["time_after"]["value"] is not None]
    if not groups:
        return None
    fig, ax = _figure(6.2, 1.6)
    import matplotlib
    colors = matplotlib.colormaps["tab20"]
    for row, key in ((0, "time_before"), (1, "time_after")):
        left = 0.0
        for i, g in enumerate(groups):
            w = g[key]["value"]
            ax.barh(row, w, left=left, color=colors(i % 20), edgecolor="white",
                    label=f"group {g['group']}" if row == 0 else None)
            left += w
    ax.set_yticks([0, 1], ["before (eager)", "after (shipped)"])
    ax.invert_yaxis()
    ax.set_xlabel("GPU time per call of the fusion groups, us (cold medians; time outside the groups not shown)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=min(6, len(groups)), fontsize=6, frameon=False)
    return _svg(fig, "time-split")


def render_html(data, resources):
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(resources), autoescape=jinja2.select_autoescape(["j2", "html"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    profiled = profile_split_chart(data)
    charts = {"speedup": speedup_chart(data), "roofline": roofline_chart(data), "profile_split": profiled,
              "time_split": None if profiled else time_split_chart(data)}
    with open(os.path.join(resources, "report.css"), encoding="utf-8") as f:
        css = f.read()
    return env.get_template("report.html.j2").render(d=data, charts=charts, css=css)


def render_report(args, progress):
    """args: {"data": the report's data, "out": folder, "formats": ["html", "pdf"], "resources": the
    folder with the schema, template and stylesheet}. Writes report.html and report.pdf into `out`.
    Result: {"files": [...], "pdf_error": "" or why no PDF was made}."""
    data, out, resources = args.get("data"), args.get("out"), args.get("resources")
    formats = args.get("formats", list(FORMATS))
    if not isinstance(data, dict) or not out or not resources:
        raise WorkerFailure(BAD_REQUEST, "render_report needs 'data' (an object), 'out' and 'resources'")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise WorkerFailure(BAD_REQUEST, f"render_report cannot make {', '.join(unknown)} (it makes {', '.join(FORMATS)})")
    if not os.path.isdir(out):
        raise WorkerFailure(BAD_REQUEST, f"the output folder {out} does not exist")
    missing = missing_modules()
    if missing:  # all of them named at once, before any work, rather than the first import's failure
        import sys
        raise WorkerFailure(INTERNAL, f"the report needs {', '.join(missing)} in the worker's Python ({sys.executable}), "
                                      "which cannot import them: install packaging/requirements.txt into it "
                                      "(packaging/setup-deps.sh does)")
    progress("checking the report's data against its schema", 0.05)
    check_data(data, resources)
    progress("drawing the charts", 0.2)
    page = render_html(data, resources)
    files = []
    if "html" in formats:
        path = os.path.join(out, "report.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        files.append(path)
    pdf_error = ""
    if "pdf" in formats:
        progress("typesetting the PDF", 0.5)
        try:
            import weasyprint
        except Exception as exc:  # noqa: BLE001 - any import failure (missing Pango too) means no PDF
            pdf_error = f"WeasyPrint cannot be imported ({type(exc).__name__}: {exc}); install it " \
                        "(packaging/requirements.txt) and Pango (packaging/setup-deps.sh)"
        else:
            # It logs each SVG presentation attribute its CSS parser passes to the SVG renderer.
            logging.getLogger("weasyprint").setLevel(logging.ERROR)
            try:
                path = os.path.join(out, "report.pdf")
                weasyprint.HTML(string=page, base_url=out).write_pdf(path)
                files.append(path)
            except Exception as exc:  # noqa: BLE001
                raise WorkerFailure(INTERNAL, f"WeasyPrint failed on the report: {type(exc).__name__}: "
                                              f"{html.escape(str(exc))}") from exc
    progress("written", 1.0)
    return {"files": files, "pdf_error": pdf_error}
