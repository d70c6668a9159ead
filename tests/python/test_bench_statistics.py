"""bench.summarize: median and quartiles by linear interpolation (numpy's default percentile)."""

import pytest

torch = pytest.importorskip("torch")
from nova_worker import schemas  # noqa: E402
from nova_worker.bench import summarize  # noqa: E402


def test_even_count_interpolates_median_and_quartiles():
    s = summarize([4.0, 1.0, 3.0, 2.0])
    assert s["n"] == 4
    assert s["median"] == pytest.approx(2.5)
    assert s["q1"] == pytest.approx(1.75)
    assert s["q3"] == pytest.approx(3.25)
    assert s["iqr"] == pytest.approx(1.5)
    assert (s["min"], s["max"], s["mean"]) == (1.0, 4.0, 2.5)


def test_odd_count_takes_the_middle_sample_and_ignores_an_outlier():
    s = summarize([10.0, 11.0, 12.0, 13.0, 1000.0])
    assert s["median"] == 12.0
    assert s["q1"] == 11.0 and s["q3"] == 13.0
    assert s["iqr"] == 2.0
    assert s["mean"] == pytest.approx(209.2)


def test_matches_numpy_percentiles():
    np = pytest.importorskip("numpy")
    samples = [3.1, 7.4, 1.2, 9.9, 5.5, 2.2, 8.8]
    s = summarize(samples)
    assert s["q1"] == pytest.approx(np.percentile(samples, 25))
    assert s["median"] == pytest.approx(np.percentile(samples, 50))
    assert s["q3"] == pytest.approx(np.percentile(samples, 75))


def test_single_sample_and_empty():
    one = summarize([5.0])
    assert one["median"] == one["q1"] == one["q3"] == 5.0 and one["iqr"] == 0.0
    assert summarize([]) == {"n": 0}


def test_summary_keys_are_the_declared_schema():
    assert set(summarize([1.0, 2.0])) == schemas.fields(schemas.Summary)
