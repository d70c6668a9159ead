"""The worker's messages and results, declared once. Each type names the C++ type that reads it
(core/...); a field added here is added there. Plain dicts at run time (TypedDicts), so a result
goes to JSON as it is; tests check the commands' results against these declarations."""

from typing import Any, Dict, List, Optional, TypedDict, Union

Number = Union[float, str]  # a float, or "nan" / "inf" / "-inf" (protocol.json_safe)


# --- Protocol messages (core/worker/worker_protocol.h) -------------------------------------------

class Device(TypedDict):
    """C++: WorkerDevice (core/worker/worker_info.h)"""
    index: int
    name: str
    capability: List[int]
    memory_bytes: int
    sm_count: int


class Hello(TypedDict):
    """The worker's first line. C++: WorkerInfo::from_hello (core/worker/worker_info.h). A one-shot
    worker leaves the torch fields empty unless it imported torch ahead (a standby), and lists no
    devices."""
    type: str  # "hello"
    protocol: int
    pid: int
    mode: str  # "persistent" or "once"
    commands: List[str]
    executable: str
    python: str
    torch_ok: bool
    torch: str
    torch_cuda: str
    torch_error: str
    cuda_available: bool
    devices: List[Device]


class ErrorInfo(TypedDict):
    """C++: WorkerError (core/worker/worker_error.h), kind by WorkerProtocol::error_kind."""
    kind: str  # protocol.ERROR_KINDS
    message: str
    traceback: str  # the user's frames only, for a user_error
    file: str
    line: int


class ProgressMessage(TypedDict):
    type: str  # "progress"
    id: Any
    message: str
    fraction: Optional[float]


class ResultMessage(TypedDict):
    type: str  # "result"
    id: Any
    result: Dict[str, Any]


class ErrorMessage(TypedDict):
    type: str  # "error"
    id: Any
    error: ErrorInfo


class ProcessTimings(TypedDict):
    """A one-shot worker's own timings, result["process_s"]: read as JSON by the GPU tests'
    turnaround breakdown (tests/gpu/validation_gpu_test.cpp)."""
    import_: float  # key "import": process start to hello (the standby's preload)
    idle: float
    ready_at: float
    received_at: float
    start: float
    run: float
    finished_at: float


# --- validate (C++: ValidationResult::merge_worker_result, core/verify/validation_result.h) ------

class Comparison(TypedDict):
    """validate.compare(); C++ reads max_abs / max_rel into TrialSummary."""
    shape_ok: bool
    dtype: str
    ok: bool
    reason: str
    max_abs: Optional[Number]
    max_rel: Optional[Number]
    nonfinite: int  # absent when the shapes differ


class OutputCheck(TypedDict):
    index: int
    shape: List[int]
    dtype: str
    tolerance: float
    accepted_as: str  # "within_tolerance_of_eager", "closer_to_exact_than_eager", or "" when it failed
    vs_eager: Comparison
    vs_fp64: Optional[Comparison]
    eager_vs_fp64: Comparison
    runs_agree: bool
    runs_bitwise_equal: bool
    reference_std: Number


class Trial(TypedDict):
    """C++: TrialSummary"""
    seed: int
    ok: bool
    problems: List[str]
    outputs: List[OutputCheck]


class Check(TypedDict):
    """C++: CheckResult"""
    name: str
    passed: bool
    detail: str


class ValidationResult(TypedDict):
    """C++: ValidationResult (core/verify/validation_result.h), via merge_worker_result."""
    candidate: str
    path: str  # "fast" or "full"
    load_s: float
    reference: str
    reference_form: str
    trials: List[Trial]
    checks: List[Check]
    flags: List[str]
    warnings: List[str]
    passed: bool
    closer_to_exact: bool  # passed only by the second rule of the tolerance policy on some output
    failures: List[str]
    max_errors: Dict[str, Optional[Number]]
    method: Dict[str, Any]
    environment: Dict[str, Any]
    elapsed_s: float
    phase_s: Dict[str, float]


# --- bench (C++: BenchmarkResult, core/verify/benchmark_result.h) --------------------------------

class Summary(TypedDict):
    """bench.summarize(); C++: SampleSummary (core/verify/sample_summary.h). Only "n" when empty."""
    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    max: float
    mean: float


class Measurement(TypedDict):
    """C++: Measurement (core/verify/benchmark_result.h): a Summary plus its samples."""
    variant: str
    mode: str
    metric: str
    samples: List[float]


class Speedup(TypedDict):
    """C++: Speedup"""
    mode: str
    baseline: str
    value: float


class BenchmarkResult(TypedDict):
    """C++: BenchmarkResult (core/verify/benchmark_result.h)."""
    candidate: str
    path: str
    load_s: float
    measurements: List[Measurement]
    speedups: List[Speedup]
    verification: List[Dict[str, Any]]
    energy: Dict[str, Any]
    flags: List[str]
    errors: Dict[str, str]
    method: Dict[str, Any]
    environment: Dict[str, Any]
    elapsed_s: float
    phase_s: Dict[str, float]


class EvaluateResult(TypedDict):
    """C++: Evaluation (core/verify/candidate_evaluator.h)."""
    validation: ValidationResult
    benchmark: Optional[BenchmarkResult]
    phase_s: Dict[str, float]


class ModelCheckValidation(TypedDict):
    """C++: ModelCheckResult::validation (core/verify/model_check_result.h)."""
    passed: bool
    trials: List[Dict[str, Any]]
    flags: List[str]
    failures: List[str]
    calls: Optional[Dict[str, Dict[str, int]]]  # op -> {"kernel": n, "fallback": n}


class ModelCheckBenchmark(TypedDict):
    """C++: ModelCheckResult::benchmark: raw samples; core computes the ratios and intervals."""
    measurements: List[Measurement]
    errors: Dict[str, str]
    method: Dict[str, Any]
    # variant -> {"available": True, "mj_per_call", "calls", "seconds", "mean_power_w"} or
    # {"available": False, "reason"} (bench._energy)
    energy: Dict[str, Dict[str, Any]]


class ModelCheckResult(TypedDict):
    """C++: ModelCheckResult (core/verify/model_check_result.h), from model_check.py."""
    package: str
    package_version: str
    manifest: Dict[str, Any]
    validation: ModelCheckValidation
    benchmark: Optional[ModelCheckBenchmark]
    environment: Dict[str, Any]
    elapsed_s: float
    # model_check.gpu_split: {"iters", "shipped_groups", "groups_instrumented", "before", "before_plain",
    # "after", "method"} or {"error"}; absent where validation failed
    gpu_split: Dict[str, Any]


class BuildExtResult(TypedDict):
    """Stored as JSON by EvaluationJobs::build (core/verify/evaluation_jobs.cpp)."""
    build_s: float
    module: str
    file: str
    extension: str


# --- intake (C++: ModelGraph, core/graph/model_graph.h, read by IntakeRunner) --------------------

class TensorInfo(TypedDict):
    """C++: TensorInfo"""
    name: str
    shape: List[int]
    dtype: str


class GroupInfo(TypedDict):
    """C++: FusionGroup"""
    id: int
    kind: str
    anchor: Optional[int]
    nodes: List[int]
    inputs: List[str]
    outputs: List[str]
    flops: float
    bytes: float
    functional_source: str


class IntakeResult(TypedDict):
    """C++: ModelGraph (JSON "nova.model_graph" v1); group_checks and elapsed_s are extras that
    IntakeRunner::last_result() keeps."""
    format: str
    version: int
    model_path: str
    model_form: str
    capture_route: str
    warnings: List[str]
    inputs: List[TensorInfo]
    scalar_inputs: List[Dict[str, Any]]
    outputs: List[TensorInfo]
    params: List[Dict[str, Any]]
    nodes: List[Dict[str, Any]]
    groups: List[GroupInfo]
    saved_inputs: str
    torch_version: str
    group_checks: List[Dict[str, Any]]
    elapsed_s: float


# --- profile (C++: ProfileResult::worker and ProfileRunner, core/trace/profile_runner.h) ---------

class ProfileResult(TypedDict):
    """C++: ProfileResult::worker (JSON); ProfileRunner reads nodes, event_ms, tracer_active."""
    nodes: List[Dict[str, Any]]
    instrumented: int
    iters: int
    warmup: int
    nvtx: bool
    use_cuda_graph: bool
    attribution_route: str
    sequence: Optional[Dict[str, int]]
    calibrated_launches: Optional[int]
    event_ms: float
    wall_ms: float
    dropped: int
    tracer_active: bool
    device: str
    torch_version: str


class OverheadResult(TypedDict, total=False):
    """C++: ProfileRunner::run_overhead's "nova" / "kineto" (JSON, printed by `nova profile
    --overhead`)."""
    mode: str
    iters: int
    rounds: int
    untraced_us: List[float]
    traced_us: List[float]
    instrumented_us: List[float]
    markers_us: List[float]
    untraced_median_us: float
    traced_median_us: float
    ratio: float
    dropped: int
    attribution_route: str
    sequence: Dict[str, int]
    calibrated_launches: int


def fields(schema):
    """The keys a schema declares (ProcessTimings' "import_" is the key "import")."""
    return {("import" if k == "import_" else k) for k in schema.__annotations__}
