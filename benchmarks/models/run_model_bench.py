#!/usr/bin/env python3
"""Model latency, load time and peak memory: AsyncRT against its peers.

Runs the exported test models (tools/models/export_models.py: ResNet-50,
MobileNetV2 and a BERT-base encoder with random weights) on three runtimes,
each in its own process, and merges the comparison into the benchmark
summary that benchmarks/summarize.py writes:

  asyncrt      build/bin/asyncrt-run MODEL --input=input_0.pb --benchmark
               --json --num_threads=T, with OMP_NUM_THREADS=T. MODEL is
               model.bef, compiled from model.onnx with build/bin/
               asyncrt-compile when that tool exists, else model.onnx
               (compiled while loading).
  onnxruntime  ONNX Runtime 1.30 (CPU) through npm onnxruntime-node:
               benchmarks/models/ort_bench.js, all graph optimisations,
               T intra-op threads, 1 inter-op thread, sequential.
  torch        Debian's PyTorch, eager: benchmarks/models/torch_bench.py
               (the same weights, torch.set_num_threads(T),
               torch.inference_mode(); weights cached in
               BUILD/bench/torch_cache after the first build).

Every runtime also gets OMP_NUM_THREADS=T and OPENBLAS_NUM_THREADS=T.

Cases: resnet50, mobilenetv2 and bert (the models issue's targets), and
squeezenet, efficientnet_b0 and densenet121 (concatenations,
squeeze-and-excite blocks, pre-activation on concatenations), and the
recurrent lstm_tagger and gru_classifier, and the 3-D r3d_18 (video)
and unet3d (volumetric), at batch 1
on 1 and 2 threads, and ResNet-50 at batch 8 (the
resnet50_b8 export) on 2 threads. Each case runs
every runtime once per round, the runtimes in a rotating order, for several
interleaved rounds (BENCH_MODEL_ROUNDS, default 3) so that drift on a noisy
machine hits them alike; a runtime's figure for a case is the median over
the rounds of its per-round p50 latency (and of its load time and peak RSS).

Records written (a JSON list, the format of summarize.py, plus fields):

  {"name", "peer", "asyncrt_ns", "peer_ns", "ratio", "unit",
   "asyncrt_model"}

  ModelResNet50/b1/t2      p50 latency of one call, in ns (unit "ns"),
                           peers "onnxruntime" and "torch".
  ModelLoad/ResNet50       load time in ns (unit "ns"), from the batch-1
                           2-thread case: asyncrt-run's load (reading the
                           .bef, or compiling the .onnx) against ONNX
                           Runtime's InferenceSession.create. PyTorch has no
                           comparable load (its model is built from Python),
                           so it has no record.
  ModelFirstResult/ResNet50  load time plus the first call's, in ns, same
                           case: AsyncRT defers reordering its weights for
                           oneDNN to the first call, ONNX Runtime prepacks
                           them while loading, so only the sum compares.
  ModelPeakRss/ResNet50    peak resident memory of the whole process IN
                           BYTES, stored in the asyncrt_ns and peer_ns fields
                           (unit "bytes"), same case, against onnxruntime
                           (node's own ~50 MB included). Not against torch:
                           its peak includes the interpreter and building and
                           calibrating the model in Python.

ratio = asyncrt / peer: below 1, AsyncRT is faster (or smaller).
asyncrt_model says whether AsyncRT ran the "bef" or the "onnx" file.

Existing records of the summary whose name does not start with "Model" are
kept; all "Model..." records are replaced. A peer that cannot be run
(node, npm or onnxruntime-node missing and not installable; torch missing)
is skipped with a message: its records are simply not written.

Setup it does itself, once: exports missing models into BUILD/models with
/usr/bin/python3 tools/models/export_models.py (needs python3-torch,
python3-torchvision, python3-onnx); installs onnxruntime-node into
BUILD/bench/ort with `ONNXRUNTIME_NODE_INSTALL=skip npm install
onnxruntime-node@1.30.0` when it is not there (the plain install tries to
download GPU files and fails); converts each test_data_set_0/input_0.pb to
raw float32 input_0.bin for ort_bench.js.

Usage:
  run_model_bench.py [--build build] [--rounds N] [--models m1,m2]
                     [--iterations N] [--warmup N] [--summary PATH]

--models keeps the cases of the named models (resnet50, mobilenetv2, bert,
squeezenet, efficientnet_b0, densenet121, resnet50_b8, lstm_tagger,
gru_classifier, r3d_18, unet3d); --iterations and --warmup override every case's counts (for
smoke tests). Needs no package beyond Python's standard library itself; the
input conversion uses onnx and numpy, through /usr/bin/python3 when the
running interpreter lacks them.
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

# The table format of benchmarks/summarize.py (this file's parent folder).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True
import summarize  # noqa: E402
import summary_records  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
EXPORT_SCRIPT = os.path.join(REPO, "tools", "models", "export_models.py")
ORT_SCRIPT = os.path.join(HERE, "ort_bench.js")
TORCH_SCRIPT = os.path.join(HERE, "torch_bench.py")
# Debian's torch and onnx are visible only to the system interpreter.
SYSTEM_PYTHON = "/usr/bin/python3"
ORT_PACKAGE = "onnxruntime-node"
ORT_VERSION = "1.30.0"
RECORD_PREFIX = "Model"
TOOLS = ("asyncrt", "onnxruntime", "torch")
RUN_TIMEOUT_S = 600

Case = collections.namedtuple(
    "Case", "label model torch_model batch threads warmup iterations")

# label, export name (BUILD/models/<model>), torch_bench.py --model, batch,
# threads, warm-up calls, timed calls. Roughly 2 minutes a round on an
# idle 2-core machine once models are exported and compiled.
CASES = (
    Case("ResNet50", "resnet50", "resnet50", 1, 1, 3, 20),
    Case("ResNet50", "resnet50", "resnet50", 1, 2, 3, 20),
    Case("MobileNetV2", "mobilenetv2", "mobilenetv2", 1, 1, 3, 20),
    Case("MobileNetV2", "mobilenetv2", "mobilenetv2", 1, 2, 3, 20),
    Case("Bert", "bert", "bert", 1, 1, 2, 10),
    Case("Bert", "bert", "bert", 1, 2, 2, 10),
    Case("SqueezeNet", "squeezenet", "squeezenet", 1, 1, 3, 20),
    Case("SqueezeNet", "squeezenet", "squeezenet", 1, 2, 3, 20),
    Case("EfficientNetB0", "efficientnet_b0", "efficientnet_b0", 1, 1, 3, 20),
    Case("EfficientNetB0", "efficientnet_b0", "efficientnet_b0", 1, 2, 3, 20),
    Case("DenseNet121", "densenet121", "densenet121", 1, 1, 3, 20),
    Case("DenseNet121", "densenet121", "densenet121", 1, 2, 3, 20),
    Case("ResNet50", "resnet50_b8", "resnet50", 8, 2, 1, 5),
    Case("LstmTagger", "lstm_tagger", "lstm_tagger", 1, 1, 5, 50),
    Case("LstmTagger", "lstm_tagger", "lstm_tagger", 1, 2, 5, 50),
    Case("GruClassifier", "gru_classifier", "gru_classifier", 1, 1, 5, 50),
    Case("GruClassifier", "gru_classifier", "gru_classifier", 1, 2, 5, 50),
    Case("R3d18", "r3d_18", "r3d_18", 1, 1, 2, 10),
    Case("R3d18", "r3d_18", "r3d_18", 1, 2, 2, 10),
    Case("UNet3d", "unet3d", "unet3d", 1, 1, 3, 20),
    Case("UNet3d", "unet3d", "unet3d", 1, 2, 3, 20),
)


class ToolError(Exception):
    """A runtime could not be run or printed no result."""


def case_name(case):
    """Returns the record name of a latency case, e.g. ModelResNet50/b1/t2."""
    return f"{RECORD_PREFIX}{case.label}/b{case.batch}/t{case.threads}"


def _tail(text, lines=8):
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_json(cmd, env=None, timeout=RUN_TIMEOUT_S):
    """Runs cmd and returns the JSON object on the last line of its stdout.

    Raises:
      ToolError: the command failed, timed out or printed no JSON object.
    """
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"timed out after {timeout} s") from e
    except OSError as e:
        raise ToolError(str(e)) from e
    if proc.returncode != 0:
        raise ToolError(f"exit status {proc.returncode}: "
                        f"{_tail(proc.stderr + proc.stdout)}")
    for line in reversed(proc.stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                break
            # The time to a first result: loading, then the first call
            # (AsyncRT reorders its weights then; ONNX Runtime when loading).
            if "load_ms" in result and "first_call_ms" in result:
                result["first_result_ms"] = (result["load_ms"] +
                                             result["first_call_ms"])
            return result
    raise ToolError(f"no JSON result in its output: {_tail(proc.stdout)}")


def _thread_env(threads, extra=None):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env.update(extra or {})
    return env


# --- Setup -----------------------------------------------------------------


def model_files(build_dir, model):
    """Returns (model.onnx, input_0.pb, input_0.bin) paths of one export."""
    root = os.path.join(build_dir, "models", model)
    data = os.path.join(root, "test_data_set_0")
    return (os.path.join(root, "model.onnx"),
            os.path.join(data, "input_0.pb"),
            os.path.join(data, "input_0.bin"))


def torch_available():
    """Returns (True, "") if the system Python imports torch, else (False, why)."""
    if not os.path.exists(SYSTEM_PYTHON):
        return False, f"{SYSTEM_PYTHON} not found"
    proc = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import torch, torchvision"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False, ("needs python3-torch and python3-torchvision "
                       f"({_tail(proc.stderr, 1)})")
    return True, ""


def export_missing(build_dir, models, have_torch):
    """Exports the models whose files are missing; returns those available."""
    missing = [m for m in models
               if not all(os.path.exists(p)
                          for p in model_files(build_dir, m)[:2])]
    if missing and have_torch:
        print(f"exporting {','.join(missing)} into {build_dir}/models",
              flush=True)
        subprocess.run([SYSTEM_PYTHON, EXPORT_SCRIPT, "--out",
                        os.path.join(build_dir, "models"), "--models",
                        ",".join(missing)], check=False)
    available = []
    for m in models:
        if all(os.path.exists(p) for p in model_files(build_dir, m)[:2]):
            available.append(m)
        else:
            print(f"SKIPPED {m}: not exported (export_models.py needs "
                  "python3-torch python3-torchvision python3-onnx)")
    return available


def convert_input(pb_path, bin_path):
    """Writes the TensorProto in pb_path as raw float32 to bin_path.

    Returns:
      The tensor's shape, a list of ints.
    """
    # pylint: disable=import-outside-toplevel
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper
    except ImportError:
        if os.path.realpath(sys.executable) == os.path.realpath(SYSTEM_PYTHON):
            raise
        # Another interpreter (a pyenv one, say): ask the system one.
        out = subprocess.run(
            [SYSTEM_PYTHON, os.path.abspath(__file__), "--convert-input",
             pb_path, bin_path],
            capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    tensor = onnx.TensorProto()
    with open(pb_path, "rb") as f:
        tensor.ParseFromString(f.read())
    array = numpy_helper.to_array(tensor).astype("<f4", copy=False)
    tmp = bin_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(np.ascontiguousarray(array).tobytes())
    os.replace(tmp, bin_path)
    return [int(d) for d in array.shape]


def compile_bef(build_dir, model):
    """Returns the model file asyncrt-run should load and its kind.

    Compiles model.onnx to model.bef with BUILD/bin/asyncrt-compile when that
    tool exists (again when the .bef is older than the .onnx or the tool);
    falls back to model.onnx when it does not or the compile fails.
    """
    onnx_path = model_files(build_dir, model)[0]
    compiler = os.path.join(build_dir, "bin", "asyncrt-compile")
    if not os.access(compiler, os.X_OK):
        return onnx_path, "onnx"
    bef_path = os.path.splitext(onnx_path)[0] + ".bef"
    if os.path.exists(bef_path) and os.path.getmtime(bef_path) >= max(
            os.path.getmtime(onnx_path), os.path.getmtime(compiler)):
        return bef_path, "bef"
    start = time.perf_counter()
    try:
        proc = subprocess.run([compiler, onnx_path, "-o", bef_path],
                              capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=False)
        failed = proc.returncode != 0 or not os.path.exists(bef_path)
        why = _tail(proc.stderr + proc.stdout)
    except (OSError, subprocess.TimeoutExpired) as e:
        failed, why = True, str(e)
    if failed:
        print(f"asyncrt-compile failed on {model}, running model.onnx: {why}")
        return onnx_path, "onnx"
    print(f"compiled {model} to {bef_path} in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return bef_path, "bef"


def _installed_version(node_modules):
    try:
        with open(os.path.join(node_modules, ORT_PACKAGE, "package.json"),
                  encoding="utf-8") as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def ensure_ort(build_dir):
    """Makes onnxruntime-node loadable, installing it once if needed.

    Returns:
      (node_modules folder for NODE_PATH, "") or (None, why it is missing).
    """
    node = shutil.which("node")
    if node is None:
        return None, "node not found (apt-get install nodejs npm)"
    prefix = os.path.join(build_dir, "bench", "ort")
    node_modules = os.path.join(prefix, "node_modules")
    if _installed_version(node_modules) != ORT_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm not found (apt-get install npm)"
        print(f"installing {ORT_PACKAGE}@{ORT_VERSION} into {prefix}",
              flush=True)
        os.makedirs(prefix, exist_ok=True)
        try:
            proc = subprocess.run(
                [npm, "install", f"{ORT_PACKAGE}@{ORT_VERSION}", "--prefix",
                 prefix, "--no-audit", "--no-fund"],
                env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip"),
                capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"npm install failed: {e}"
        if proc.returncode != 0:
            return None, ("npm install failed: "
                          f"{_tail(proc.stderr + proc.stdout)}")
    proc = subprocess.run(
        [node, "-e", f"require('{ORT_PACKAGE}')"],
        env=dict(os.environ, NODE_PATH=node_modules), capture_output=True,
        text=True, check=False)
    if proc.returncode != 0:
        return None, f"{ORT_PACKAGE} does not load: {_tail(proc.stderr, 3)}"
    return node_modules, ""


# --- Runs ------------------------------------------------------------------


def run_tool(tool, case, setup):
    """Runs one runtime on one case; returns its JSON result."""
    if tool == "asyncrt":
        model_path, _ = setup["asyncrt_model"][case.model]
        cmd = [setup["asyncrt_run"], model_path,
               f"--input={model_files(setup['build'], case.model)[1]}",
               "--benchmark", "--json", f"--num_threads={case.threads}",
               f"--warmup={case.warmup}", f"--iterations={case.iterations}"]
        return _run_json(cmd, env=_thread_env(case.threads))
    if tool == "onnxruntime":
        onnx_path, _, bin_path = model_files(setup["build"], case.model)
        shape = ",".join(str(d) for d in setup["shapes"][case.model])
        cmd = ["node", ORT_SCRIPT, onnx_path, bin_path, shape,
               str(case.threads), str(case.warmup), str(case.iterations)]
        return _run_json(cmd, env=_thread_env(
            case.threads, {"NODE_PATH": setup["node_modules"]}))
    if tool == "torch":
        cmd = [SYSTEM_PYTHON, TORCH_SCRIPT, "--model", case.torch_model,
               "--batch", str(case.batch), "--threads", str(case.threads),
               "--warmup", str(case.warmup), "--iterations",
               str(case.iterations), "--cache-dir",
               os.path.join(setup["build"], "bench", "torch_cache")]
        return _run_json(cmd, env=_thread_env(case.threads))
    raise ValueError(tool)


def run_rounds(cases, tools, rounds, setup):
    """Runs every case on every tool, interleaved, rounds times.

    A tool that fails on a case is not run on that case again.

    Returns:
      {(case, tool): [result per round]}.
    """
    results = collections.defaultdict(list)
    failed = set()
    for r in range(rounds):
        for case in cases:
            # Rotate the order so that no runtime always runs first.
            order = tools[r % len(tools):] + tools[:r % len(tools)]
            for tool in order:
                if (case, tool) in failed:
                    continue
                start = time.perf_counter()
                try:
                    result = run_tool(tool, case, setup)
                except ToolError as e:
                    failed.add((case, tool))
                    print(f"  round {r + 1}/{rounds} {case_name(case)} "
                          f"{tool}: FAILED, left out: {e}", flush=True)
                    continue
                results[(case, tool)].append(result)
                print(f"  round {r + 1}/{rounds} {case_name(case):24} "
                      f"{tool:12} p50 {result['p50_ms']:9.2f} ms "
                      f"({time.perf_counter() - start:.1f} s)", flush=True)
    return results


def _median_of(results, key):
    values = [r[key] for r in results if r.get(key) is not None]
    return statistics.median(values) if values else None


def _record(name, peer, asyncrt, other, unit, asyncrt_model):
    return {
        "name": name,
        "peer": peer,
        "asyncrt_ns": asyncrt,
        "peer_ns": other,
        "ratio": asyncrt / other if other > 0 else float("inf"),
        "unit": unit,
        "asyncrt_model": asyncrt_model,
    }


def make_records(cases, results, setup):
    """Turns the runs into summary records (see the module docstring)."""
    records = []
    for case in cases:
        mine = results.get((case, "asyncrt"))
        if not mine:
            continue
        kind = setup["asyncrt_model"][case.model][1]
        p50 = _median_of(mine, "p50_ms")
        for peer in TOOLS[1:]:
            theirs = results.get((case, peer))
            if theirs:
                records.append(_record(case_name(case), peer, p50 * 1e6,
                                       _median_of(theirs, "p50_ms") * 1e6,
                                       "ns", kind))
    # Load time and memory: from each model's batch-1 2-thread case (or its
    # batch-1 case with the most threads).
    reference = {}
    for case in cases:
        if case.batch == 1 and (case.label not in reference or
                                case.threads == 2):
            reference[case.label] = case
    for label, case in reference.items():
        mine = results.get((case, "asyncrt"))
        theirs = results.get((case, "onnxruntime"))
        if not mine or not theirs:
            continue
        kind = setup["asyncrt_model"][case.model][1]
        for key, name, scale, unit in (
                ("load_ms", "ModelLoad", 1e6, "ns"),
                ("first_result_ms", "ModelFirstResult", 1e6, "ns"),
                ("peak_rss_bytes", "ModelPeakRss", 1, "bytes")):
            a, b = _median_of(mine, key), _median_of(theirs, key)
            if a is not None and b is not None:
                records.append(_record(f"{name}/{label}", "onnxruntime",
                                       a * scale, b * scale, unit, kind))
    return records


# --- Output ----------------------------------------------------------------


def merge_summary(path, records):
    """Replaces the Model* records of the summary at path with records."""
    return summary_records.merge_records(path, records, RECORD_PREFIX)


def _fmt(value, unit):
    if unit == "bytes":
        return f"{value / 2**20:,.1f} MiB"
    return f"{value / 1e6:,.2f} ms"


def _fmt_ratio(ratio):
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.2g}"


def format_table(records):
    """Returns the records as a text table, times in ms, memory in MiB."""
    header = ("benchmark", "peer", "asyncrt", "peer", "ratio")
    rows = [(r["name"], r["peer"], _fmt(r["asyncrt_ns"], r["unit"]),
             _fmt(r["peer_ns"], r["unit"]), _fmt_ratio(r["ratio"]))
            for r in records]
    return summarize.text_table(header, rows)


def main(argv):
    if argv[:1] == ["--convert-input"]:  # Internal: see convert_input().
        print(json.dumps(convert_input(argv[1], argv[2])))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--build", default="build",
                        help="build folder (default: build)")
    parser.add_argument("--rounds", type=int,
                        default=int(os.environ.get("BENCH_MODEL_ROUNDS", 3)),
                        help="interleaved rounds (default: "
                        "$BENCH_MODEL_ROUNDS or 3)")
    parser.add_argument("--models", default="",
                        help="comma list: keep only these models' cases")
    parser.add_argument("--iterations", type=int, default=None,
                        help="timed calls of every case (default: per case)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="warm-up calls of every case (default: per case)")
    parser.add_argument("--summary", default=None,
                        help="summary to merge into (default: "
                        "BUILD/bench/summary.json)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    build_dir = args.build
    summary = args.summary or os.path.join(build_dir, "bench", "summary.json")
    started = time.perf_counter()

    cases = list(CASES)
    if args.models:
        wanted = set(args.models.split(","))
        cases = [c for c in cases if c.model in wanted]
        if not cases:
            parser.error(f"no case for --models={args.models}")
    cases = [c._replace(
        iterations=args.iterations or c.iterations,
        warmup=c.warmup if args.warmup is None else args.warmup)
             for c in cases]

    asyncrt_run = os.path.join(build_dir, "bin", "asyncrt-run")
    if not os.access(asyncrt_run, os.X_OK):
        print(f"error: {asyncrt_run} not found; build it first",
              file=sys.stderr)
        return 1

    tools = ["asyncrt"]
    have_torch, why = torch_available()
    node_modules, ort_why = ensure_ort(build_dir)
    if node_modules:
        tools.append("onnxruntime")
    else:
        print(f"SKIPPED onnxruntime: {ort_why}")
    if have_torch:
        tools.append("torch")
    else:
        print(f"SKIPPED torch: {why}")

    models = export_missing(build_dir, sorted({c.model for c in cases}),
                            have_torch)
    cases = [c for c in cases if c.model in models]
    setup = {"build": build_dir, "asyncrt_run": asyncrt_run,
             "node_modules": node_modules, "asyncrt_model": {}, "shapes": {}}
    for model in models:
        setup["asyncrt_model"][model] = compile_bef(build_dir, model)
        if node_modules:
            _, pb_path, bin_path = model_files(build_dir, model)
            setup["shapes"][model] = convert_input(pb_path, bin_path)

    print(f"model benchmarks: {len(cases)} case(s) x {len(tools)} runtime(s) "
          f"({', '.join(tools)}) x {args.rounds} round(s)", flush=True)
    results = run_rounds(cases, tools, args.rounds, setup)
    records = make_records(cases, results, setup)
    kept = merge_summary(summary, records)

    if records:
        print(format_table(records))
    else:
        print("no model comparison to report")
    print(f"\n{len(records)} model record(s) merged into {summary} "
          f"({kept} other record(s) kept) in "
          f"{time.perf_counter() - started:.0f} s; ratio = asyncrt / peer, "
          "below 1: AsyncRT faster (or smaller); medians over rounds of p50")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
