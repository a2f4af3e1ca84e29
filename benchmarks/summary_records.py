"""Merging one benchmark's records into build/bench/summary.json.

benchmarks/summarize.py writes the summary from Google Benchmark's output;
the model and serving benchmarks then replace their own records (those
whose name starts with their prefix) and keep everyone else's.
"""
import json
import os


def merge_records(path, records, prefix):
    """Replaces the records of the summary at `path` whose name starts with
    `prefix` by `records`; returns how many other records were kept."""
    kept = []
    try:
        with open(path, encoding="utf-8") as f:
            existing = json.load(f)
        if isinstance(existing, list):
            kept = [r for r in existing if not (
                isinstance(r, dict) and
                str(r.get("name", "")).startswith(prefix))]
        else:
            print(f"warning: {path} is not a list of records; replaced")
    except FileNotFoundError:
        pass
    except ValueError:
        print(f"warning: {path} is not valid JSON; replaced")
    out_dir = os.path.dirname(path)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(kept + records, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return len(kept)
