"""The client report's renderer (nova_worker/report.py) on a report that `nova report --format json`
wrote from results recorded on the H200 (tests/fixtures/report/): the data validates against
resources/report/report.schema.json, the schema refuses a figure without its result or a
"not measured" that carries a value, and the HTML and PDF show every figure as core wrote it."""

import copy
import html
import json
import os

import pytest

from nova_worker import report
from nova_worker.protocol import WorkerFailure

HERE = os.path.dirname(__file__)
RESOURCES = os.path.join(HERE, "..", "..", "resources", "report")
FIXTURE = os.path.join(HERE, "..", "fixtures", "report", "matmul_scaling_residual_add.report.json")


def recorded():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def schema():
    with open(os.path.join(RESOURCES, "report.schema.json"), encoding="utf-8") as f:
        return json.load(f)


def figures(node, path=""):
    """(path, figure) for every figure object in the data."""
    if isinstance(node, dict):
        if {"value", "text", "missing", "source"} <= node.keys():
            yield path, node
        for k, v in node.items():
            yield from figures(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from figures(v, f"{path}/{i}")


def test_the_recorded_report_validates_and_every_measured_figure_names_its_result():
    data = recorded()
    assert report._schema_errors(data, schema()) == []
    measured = [f for _, f in figures(data) if f["value"] is not None]
    assert len(measured) > 10
    stored = {s["source"] for s in data["samples"]}
    for f in measured:
        assert f["source"].startswith(("result ", "model_check ", "estimate from "))
    # The benchmark's figures come from the result whose raw samples the report carries.
    assert data["groups"][0]["speedups"]["cold_vs_eager"]["source"] in stored


def test_the_schema_refuses_a_figure_without_its_result_and_a_missing_figure_with_a_value():
    data = recorded()
    no_source = copy.deepcopy(data)
    no_source["groups"][0]["speedups"]["cold_vs_eager"]["source"] = ""
    assert any("speedups/cold_vs_eager/source" in e for e in report._schema_errors(no_source, schema()))
    pretend = copy.deepcopy(data)
    f = pretend["headline"]["speedups"]["cold_vs_eager"]
    assert f["value"] is None  # no whole-model check in the recording
    f["value"] = 2.0
    assert report._schema_errors(pretend, schema())
    with pytest.raises(WorkerFailure, match="report.schema.json"):
        report.check_data(pretend, RESOURCES)


def test_html_and_pdf_show_the_figures_as_core_wrote_them(tmp_path):
    data = recorded()
    messages = []
    answer = report.render_report({"data": data, "out": str(tmp_path), "formats": ["html", "pdf"],
                                   "resources": RESOURCES}, lambda m, f=None: messages.append(m))
    assert answer["pdf_error"] == ""
    assert sorted(os.path.basename(p) for p in answer["files"]) == ["report.html", "report.pdf"]
    page = html.unescape((tmp_path / "report.html").read_text(encoding="utf-8"))
    for path, f in figures(data):
        if f["value"] is not None:
            assert f["text"] in page, path
    assert page.count("<svg") >= 2  # speedup and roofline charts, inline
    assert "not measured" in page and data["headline"]["whole_model_note"][1:] in page
    assert (tmp_path / "report.pdf").read_bytes()[:5] == b"%PDF-"
    assert messages[0].startswith("checking the report's data")


def test_bad_requests_are_refused_with_what_is_wrong(tmp_path):
    with pytest.raises(WorkerFailure, match="cannot make docx"):
        report.render_report({"data": recorded(), "out": str(tmp_path), "formats": ["docx"], "resources": RESOURCES},
                             lambda *a: None)
    with pytest.raises(WorkerFailure, match="does not exist"):
        report.render_report({"data": recorded(), "out": str(tmp_path / "absent"), "resources": RESOURCES},
                             lambda *a: None)
    assert list(tmp_path.iterdir()) == []


def test_a_python_without_the_report_packages_names_every_one_missing_before_any_work(tmp_path, monkeypatch):
    # As on the GPU box, whose Python has none of them: the answer names them all, not the first import's failure.
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("jsonschema", "matplotlib") else real(name, *a))
    assert report.missing_modules() == ["jsonschema", "matplotlib"]
    steps = []
    with pytest.raises(WorkerFailure, match=r"the report needs jsonschema, matplotlib in the worker's Python \(.+\), "
                                            r"which cannot import them: install packaging/requirements.txt"):
        report.render_report({"data": recorded(), "out": str(tmp_path), "resources": RESOURCES},
                             lambda *a: steps.append(a))
    assert steps == [] and list(tmp_path.iterdir()) == []
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert report.missing_modules() == []


def test_the_time_split_chart_is_the_profile_the_whole_model_check_stored(tmp_path):
    """A report `nova report` wrote from session 23's tiny_transformer_block project (H100; the raw
    samples cut to two series): the chart of the model's GPU time by group is drawn from the check's
    profile, with its source, method and both totals; the groups' own benchmark chart is not drawn."""
    path = os.path.join(HERE, "..", "fixtures", "report", "tiny_transformer_block.h100_session23.report.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    split = data["time_split"]
    assert split["source"].startswith("model_check ") and [s["label"] for s in split["sides"]] == [
        "before (the client's Model)", "after (ModelNew)"]
    report.render_report({"data": data, "out": str(tmp_path), "formats": ["html"], "resources": RESOURCES},
                         lambda *a: None)
    page = html.unescape((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert "The model's GPU time per call by fusion group, before and after" in page
    assert f"Profiled by nova check-package ({split['source']})" in page
    for side in split["sides"]:
        assert f"{side['total_us']:.1f} us" in page
    assert "The fusion groups' GPU time per call, before and after" not in page
    # Without the profile the report says why, and falls back to the groups' benchmarks.
    data["time_split"] = {"source": "", "missing": "model_check 3 was recorded before nova check-package profiled the split",
                          "method": "", "plain_before_us": None, "sides": []}
    out = tmp_path / "without"
    out.mkdir()
    report.render_report({"data": data, "out": str(out), "formats": ["html"], "resources": RESOURCES}, lambda *a: None)
    page = html.unescape((out / "report.html").read_text(encoding="utf-8"))
    assert "No profile of the whole model: model_check 3 was recorded before" in page
    assert "The fusion groups' GPU time per call, before and after" in page
