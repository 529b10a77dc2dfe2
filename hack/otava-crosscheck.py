#!/usr/bin/env python3
"""Run Apache Otava's change-point detection on series written by dbbench.

Used by pkg/changepoint's cross-check test (go test -run OtavaCrossCheck with
OTAVA_PYTHON set to a python that has `apache-otava` installed):

    python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
    OTAVA_PYTHON=/tmp/otava/bin/python go test -run OtavaCrossCheck -v ./pkg/changepoint/

Modes:
  json  IN OUT   IN is {"options": {...}, "series": [{"name", "values"}]};
                 runs otava.analysis.compute_change_points on every series and
                 writes {"seconds": <wall time of the analysis>,
                 "cpu_seconds": <its CPU time>, "results": [...]}.
  csv   IN OUT   IN is a CSV file in Otava's input format (time, label,
                 metrics...); it is loaded with Otava's own CSV importer and
                 analysed with Otava's defaults; OUT gets the same result shape.
"""

import json
import sys
import time


def cp_json(cp):
    s = cp.stats
    return {
        "index": int(cp.index),
        "pvalue": float(s.pvalue),
        "mean_before": float(s.mean_1),
        "mean_after": float(s.mean_2),
        "stddev_before": float(s.std_1),
        "stddev_after": float(s.std_2),
        "magnitude": float(s.change_magnitude()),
    }


def run_json(path_in, path_out):
    from otava.analysis import compute_change_points

    with open(path_in) as f:
        doc = json.load(f)
    opts = doc.get("options", {})
    window_len = int(opts.get("window_len", 50))
    max_pvalue = float(opts.get("max_pvalue", 0.001))
    min_magnitude = float(opts.get("min_magnitude", 0.0))
    results = []
    total = 0.0
    cpu = 0.0
    for s in doc["series"]:
        values = [float(v) for v in s["values"]]
        t0, c0 = time.perf_counter(), time.process_time()
        cps, weak = compute_change_points(
            values, window_len=window_len, max_pvalue=max_pvalue, min_magnitude=min_magnitude
        )
        total += time.perf_counter() - t0
        cpu += time.process_time() - c0
        results.append({
            "name": s["name"],
            "change_points": [cp_json(c) for c in cps],
            "weak": [int(c.index) for c in weak],
        })
    with open(path_out, "w") as f:
        json.dump({"seconds": total, "cpu_seconds": cpu, "results": results}, f)


def run_csv(path_in, path_out):
    import csv

    from otava.importer import CsvImporter
    from otava.series import AnalysisOptions
    from otava.test_config import CsvMetric, CsvTestConfig

    with open(path_in, newline="") as f:
        header = next(csv.reader(f))
    metrics = [h for h in header if h not in ("time", "label")]
    attributes = ["label"] if "label" in header else []
    conf = CsvTestConfig(
        name="dbbench",
        file=path_in,
        time_column="time",
        metrics=[CsvMetric(name=m, direction=1, scale=1.0, column=m) for m in metrics],
        attributes=attributes,
    )
    series = CsvImporter().fetch_data(conf)
    t0 = time.perf_counter()
    analyzed = series.analyze(AnalysisOptions())
    seconds = time.perf_counter() - t0
    results = [
        {"name": m, "change_points": [cp_json(c) for c in analyzed.change_points[m]]}
        for m in metrics
    ]
    with open(path_out, "w") as f:
        json.dump({"seconds": seconds, "results": results, "points": len(series.time)}, f)


def main(argv):
    if len(argv) != 4 or argv[1] not in ("json", "csv"):
        print(__doc__, file=sys.stderr)
        return 2
    {"json": run_json, "csv": run_csv}[argv[1]](argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
