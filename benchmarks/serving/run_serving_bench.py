#!/usr/bin/env python3
"""Requests per second of the model server against a static-file floor.

Starts build/bin/asyncrt_model_server on loopback with a tiny model (y = 2x
on a 1x4 tensor, so that the server's own work dominates) and nginx
(Debian's) serving a static JSON file of the same size as the model's
reply, each with the same number of worker threads, and loads both with
wrk at several connection counts, interleaved over rounds
(BENCH_SERVING_ROUNDS, default 3) so that drift hits both alike:

  asyncrt   POST /v1/models/tiny:predict {"instances": [[1, 2, 3, 4]]}
  nginx     GET /reply.json (a static body of the same length)

For each connection count the median over rounds of requests per second
and of p50/p99 latency are kept. Records merged into the benchmark
summary (their names start with "Serve"):

  {"name": "ServeTinyPredict/c8", "peer": "nginx_static",
   "asyncrt_ns": 1e9 / asyncrt_rps, "peer_ns": 1e9 / nginx_rps,
   "ratio": asyncrt_ns / peer_ns, "asyncrt_p50_us": .., "asyncrt_p99_us": ..,
   "peer_p50_us": .., "peer_p99_us": ..}

A ratio of 2 means half nginx's static throughput (the issue's target).
Each REST run also reads both servers' CPU time (/proc): the
"ServeTinyPredictCpu/cN" records compare CPU per request (user + system,
all threads; nginx: its master and workers), with the server's overhead
(its CPU per request minus the model's own time, timed in-process by
asyncrt-run) as "overhead_us", and what it spends beyond nginx's CPU per
request (mostly the kernel's TCP work, which any server pays) and the
model as "overhead_over_floor_us".

gRPC, the same way: build/bin/grpc_load keeps N Predict calls in flight
(tensor_content; a connection each, one client thread) against the
server's gRPC port and against its own floor (a gRPC server of the same
library answering every Predict with a ready-made reply of the same
size): "ServeTinyPredictGrpc/cN", peer "grpc_floor".

ResNet-50 (when the model benchmarks have exported it into
BUILD/models/resnet50): the compiled BEF served over gRPC at 1 call in
flight (batch 1, the test image as tensor_content) against the same BEF
run in-process by asyncrt-run --benchmark, both on 2 threads:
"ServeResNet50Grpc/c1", peer "asyncrt_run_inprocess" (the target: at
most 1.1).

Skips (exit 0, saying why) when wrk, nginx or the server is missing.

Usage: run_serving_bench.py [--build BUILD] [--seconds 5] [--threads 1]
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# Merging into the summary (this file's parent folder); the model
# benchmark's helpers (models/).
BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)
sys.path.insert(0, os.path.join(BENCH_DIR, "models"))
sys.dont_write_bytecode = True
import summary_records  # noqa: E402

RECORD_PREFIX = "Serve"
CONNECTIONS = (1, 8, 32)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, what):
    for _ in range(200):
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited at start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


def make_model(build, work):
    """The tiny model as version 1 of model 'tiny'; returns its base path."""
    staging = os.path.join(work, "staging")
    os.makedirs(staging)
    mlir = os.path.join(staging, "model.mlir")
    with open(mlir, "w", encoding="utf-8") as f:
        f.write("""func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %k = nn.constant dense<2.0> : tensor<f32> : tensor<f32>
  %y = nn.mul %x, %k : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
""")
    base = os.path.join(work, "models", "tiny")
    os.makedirs(os.path.join(base, "1"))
    subprocess.run([os.path.join(build, "bin", "asyncrt-compile"), mlir, "-o",
                    os.path.join(base, "1", "model.bef")], check=True)
    with open(os.path.join(base, "1", "signature.json"), "w",
              encoding="utf-8") as f:
        json.dump({"inputs": [{"name": "x", "dtype": "float32",
                               "shape": [1, 4]}],
                   "outputs": [{"name": "y", "dtype": "float32",
                                "shape": [1, 4]}]}, f)
    return base


def stop(process):
    """SIGTERM, then SIGKILL after 30 s."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def cpu_seconds(pids):
    """User + system CPU seconds of the processes `pids` (all threads)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def with_children(pid):
    """`pid` and its children (nginx's workers)."""
    pids = [pid]
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="utf-8") as f:
            pids += [int(child) for child in f.read().split()]
    return pids


def run_grpc_load(grpc_load, port, connections, seconds, shape,
                  input_name="x", input_file=None, model="tiny"):
    """(requests/s, p50 us, p99 us) of one grpc_load run."""
    command = [grpc_load, f"--target=127.0.0.1:{port}", f"--model={model}",
               f"--input={input_name}", f"--shape={shape}",
               f"--connections={connections}", f"--seconds={seconds}"]
    if input_file:
        command.append(f"--input_file={input_file}")
    result = subprocess.run(command, capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"grpc_load on port {port} failed: "
                           f"{result.stderr.strip()[-400:]}")
    record = json.loads(result.stdout.strip().splitlines()[-1])
    return record["rps"], record["p50_us"], record["p99_us"]


def model_call_us(asyncrt_run, model, input_pb, iterations, env=None):
    """Microseconds per call of `model` run in-process by asyncrt-run."""
    result = subprocess.run(
        [asyncrt_run, model, f"--input={input_pb}", "--benchmark", "--json",
         f"--iterations={iterations}", "--warmup=3"] +
        ([f"--num_threads={env['OMP_NUM_THREADS']}"] if env else []),
        capture_output=True, text=True, check=True, env=env)
    record = json.loads(result.stdout.strip().splitlines()[-1])
    return 1e6 / record["calls_per_s"]


def run_wrk(url, connections, seconds, threads, script=None):
    """(requests/s, p50 us, p99 us) of one wrk run."""
    command = ["wrk", "-t", str(min(threads, connections)), "-c",
               str(connections), "-d", f"{seconds}s", "--latency"]
    if script:
        command += ["-s", script]
    output = subprocess.run(command + [url], check=True, capture_output=True,
                            text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} failed requests")

    def percentile(name):
        match = re.search(rf"\s{name}%\s+([\d.]+)(us|ms|s)", output)
        value, unit = float(match.group(1)), match.group(2)
        return value * {"us": 1, "ms": 1e3, "s": 1e6}[unit]

    return rps, percentile("50"), percentile("99")


def make_input_pb(work):
    """The tiny model's input ([[1, 2, 3, 4]], float32) as an ONNX
    TensorProto file, written by hand: field 1 dims, 2 data_type (FLOAT =
    1), 8 name, 9 raw_data (little endian)."""
    import struct  # pylint: disable=import-outside-toplevel

    def varint(value):
        out = bytearray()
        while True:
            byte = value & 0x7F
            value >>= 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                return bytes(out)

    raw = struct.pack("<4f", 1, 2, 3, 4)
    proto = (b"\x08" + varint(1) + b"\x08" + varint(4) + b"\x10\x01" +
             b"\x42\x01x" + b"\x4a" + varint(len(raw)) + raw)
    path = os.path.join(work, "x.pb")
    with open(path, "wb") as f:
        f.write(proto)
    return path


def resnet50_records(build, work, grpc_load, args):
    """ResNet-50 served over gRPC (1 call in flight) against asyncrt-run
    in-process, same BEF, same threads; [] when the model is not there."""
    import run_model_bench  # pylint: disable=import-outside-toplevel
    onnx_path, input_pb, input_bin = run_model_bench.model_files(build,
                                                                 "resnet50")
    if not (os.path.exists(onnx_path) and os.path.exists(input_pb)):
        print("SKIP ResNet-50: not exported (the model benchmarks export it)")
        return []
    model, kind = run_model_bench.compile_bef(build, "resnet50")
    if kind != "bef":
        print("SKIP ResNet-50: it did not compile to BEF")
        return []
    if not os.path.exists(input_bin):
        run_model_bench.convert_input(input_pb, input_bin)
    base = os.path.join(work, "models", "resnet50")
    os.makedirs(os.path.join(base, "1"))
    os.symlink(model, os.path.join(base, "1", "model.bef"))
    with open(os.path.join(base, "1", "signature.json"), "w",
              encoding="utf-8") as f:
        json.dump({"inputs": [{"name": "input", "dtype": "float32",
                               "shape": [1, 3, 224, 224]}],
                   "outputs": [{"name": "output", "dtype": "float32",
                                "shape": [1, 1000]}]}, f)
    threads = 2
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    grpc_port, rest_port = free_port(), free_port()
    server = subprocess.Popen(
        [os.path.join(build, "bin", "asyncrt_model_server"),
         f"--port={grpc_port}", f"--rest_api_port={rest_port}",
         "--grpc_address=127.0.0.1", "--rest_api_address=127.0.0.1",
         "--model_name=resnet50", f"--model_base_path={base}",
         "--work_queue=mstd:1", "--file_system_poll_wait_seconds=0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_port(grpc_port, server, "asyncrt_model_server (ResNet-50)")
        served, in_process = [], []
        for _ in range(args.rounds):
            served.append(run_grpc_load(
                grpc_load, grpc_port, 1, max(args.seconds, 5), "1,3,224,224",
                input_name="input", input_file=input_bin,
                model="resnet50"))
            in_process.append(1e6 / model_call_us(
                os.path.join(build, "bin", "asyncrt-run"), model, input_pb,
                40, env=env))
    finally:
        stop(server)
    ours = statistics.median(r[0] for r in served)
    theirs = statistics.median(in_process)
    record = {
        "name": "ServeResNet50Grpc/c1",
        "peer": "asyncrt_run_inprocess",
        "asyncrt_ns": 1e9 / ours,
        "peer_ns": 1e9 / theirs,
        "ratio": theirs / ours,
        "asyncrt_p50_us": statistics.median(r[1] for r in served),
        "asyncrt_p99_us": statistics.median(r[2] for r in served),
        "threads": threads,
    }
    print(f"{record['name']:<28}{ours:>12.1f}{theirs:>12.1f}"
          f"{record['ratio']:>8.2f}{record['asyncrt_p50_us']:>9.0f}"
          f"{record['asyncrt_p99_us']:>9.0f}")
    return [record]


def load_impact_records(build, work, tiny_base, script, args):
    """The tiny model's latency while another model's new version (ResNet-50
    from ONNX: import, compile, load) loads in the same server, against the
    same server with nothing loading; [] without the exported model."""
    import run_model_bench  # pylint: disable=import-outside-toplevel
    onnx_path = run_model_bench.model_files(build, "resnet50")[0]
    if not os.path.exists(onnx_path):
        print("SKIP load impact: ResNet-50 not exported")
        return []
    big = os.path.join(work, "models", "big")
    os.makedirs(os.path.join(big, "1"))
    for name in ("model.bef", "signature.json"):
        shutil.copy(os.path.join(tiny_base, "1", name),
                    os.path.join(big, "1", name))
    config = os.path.join(work, "two_models.config")
    with open(config, "w", encoding="utf-8") as f:
        f.write("model_config_list {\n"
                f'  config {{ name: "tiny" base_path: "{tiny_base}" }}\n'
                f'  config {{ name: "big" base_path: "{big}" }}\n'
                "}\n")
    rest_port, grpc_port = free_port(), free_port()
    server = subprocess.Popen(
        [os.path.join(build, "bin", "asyncrt_model_server"),
         f"--rest_api_port={rest_port}", f"--port={grpc_port}",
         "--rest_api_address=127.0.0.1", "--grpc_address=127.0.0.1",
         f"--model_config_file={config}", "--rest_api_num_threads=1",
         "--work_queue=mstd:1", "--file_system_poll_wait_seconds=1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, OMP_NUM_THREADS="1"))
    url = f"http://127.0.0.1:{rest_port}/v1/models/tiny:predict"
    seconds = max(args.seconds, 4)
    quiet, loading, load_seconds = [], [], []
    try:
        wait_for_port(rest_port, server, "asyncrt_model_server (two models)")
        for round_index in range(args.rounds):
            quiet.append(run_wrk(url, 8, seconds, args.threads, script))
            # A new version of "big" appears a second into the run; the
            # server finds it at its next poll and loads it meanwhile.
            version = os.path.join(big, str(round_index + 2))
            staging = version + ".staging"
            os.makedirs(staging)
            os.symlink(onnx_path, os.path.join(staging, "model.onnx"))
            timer = threading.Timer(1.0, os.rename, (staging, version))
            started = time.monotonic()
            timer.start()
            loading.append(run_wrk(url, 8, seconds, args.threads, script))
            timer.join()
            status_url = (f"http://127.0.0.1:{rest_port}/v1/models/big/"
                          f"versions/{round_index + 2}")
            while time.monotonic() - started < 120:
                status = subprocess.run(["curl", "-s", status_url],
                                        capture_output=True, text=True,
                                        check=False).stdout
                if "AVAILABLE" in status:
                    break
                time.sleep(0.2)
            load_seconds.append(time.monotonic() - started - 1.0)
    finally:
        stop(server)
    record = {
        "name": "ServeTinyDuringLoad/c8",
        "peer": "no_load",
        # p99 latency of the tiny model's requests, with and without a
        # model loading beside them.
        "asyncrt_ns": statistics.median(r[2] for r in loading) * 1e3,
        "peer_ns": statistics.median(r[2] for r in quiet) * 1e3,
        "asyncrt_rps": statistics.median(r[0] for r in loading),
        "peer_rps": statistics.median(r[0] for r in quiet),
        "asyncrt_p50_us": statistics.median(r[1] for r in loading),
        "peer_p50_us": statistics.median(r[1] for r in quiet),
        "load_seconds": statistics.median(load_seconds),
    }
    record["ratio"] = record["asyncrt_ns"] / record["peer_ns"]
    print(f"{'tiny while ResNet-50 loads':<28}{'rps':>8}{'p50 us':>9}"
          f"{'p99 us':>9}  (load took {record['load_seconds']:.1f} s)")
    print(f"{'  loading':<28}{record['asyncrt_rps']:>8.0f}"
          f"{record['asyncrt_p50_us']:>9.0f}{record['asyncrt_ns'] / 1e3:>9.0f}")
    print(f"{'  quiet':<28}{record['peer_rps']:>8.0f}"
          f"{record['peer_p50_us']:>9.0f}{record['peer_ns'] / 1e3:>9.0f}")
    return [record]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1,
                        help="server worker threads, nginx workers and wrk "
                        "threads (default 1: on a 2-core machine, wrk gets "
                        "the other core)")
    parser.add_argument("--rounds", type=int,
                        default=int(os.environ.get("BENCH_SERVING_ROUNDS", 3)))
    parser.add_argument("--summary", default=None)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    server = os.path.join(build, "bin", "asyncrt_model_server")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    for tool, path in (("wrk", shutil.which("wrk")), ("nginx", nginx),
                       ("asyncrt_model_server", server)):
        if not path or not os.path.exists(path):
            print(f"SKIP: {tool} not found (make bench-deps installs wrk and "
                  "nginx)")
            return 0
    summary = args.summary or os.path.join(build, "bench", "summary.json")
    work = tempfile.mkdtemp(prefix="asyncrt_serving_bench_")
    # nginx's workers drop to another user (www-data) when started as root.
    os.chmod(work, 0o755)
    processes = []
    try:
        base = make_model(build, work)
        rest_port, grpc_port, nginx_port = free_port(), free_port(), free_port()
        server_process = subprocess.Popen(
            [server, f"--rest_api_port={rest_port}", f"--port={grpc_port}",
             "--rest_api_address=127.0.0.1", "--grpc_address=127.0.0.1",
             "--model_name=tiny", f"--model_base_path={base}",
             f"--rest_api_num_threads={args.threads}",
             f"--work_queue=mstd:{args.threads}",
             "--file_system_poll_wait_seconds=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(server_process)
        wait_for_port(rest_port, server_process, "asyncrt_model_server")

        body = '{"instances": [[1, 2, 3, 4]]}'
        script = os.path.join(work, "predict.lua")
        with open(script, "w", encoding="utf-8") as f:
            f.write('wrk.method = "POST"\n'
                    f"wrk.body = '{body}'\n"
                    'wrk.headers["Content-Type"] = "application/json"\n')
        reply = subprocess.run(
            ["curl", "-s", "-d", body,
             f"http://127.0.0.1:{rest_port}/v1/models/tiny:predict"],
            check=True, capture_output=True, text=True).stdout
        if "predictions" not in reply:
            raise RuntimeError(f"the server answered {reply!r}")
        root = os.path.join(work, "www")
        os.makedirs(root)
        with open(os.path.join(root, "reply.json"), "w", encoding="utf-8") as f:
            f.write(reply)
        with open(os.path.join(work, "nginx.conf"), "w", encoding="utf-8") as f:
            f.write(f"""worker_processes {args.threads};
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx_error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;
  default_type application/json;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{nginx_port};
    root {root};
  }}
}}
""")
        nginx_process = subprocess.Popen(
            [nginx, "-c", os.path.join(work, "nginx.conf"), "-p", work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(nginx_process)
        wait_for_port(nginx_port, nginx_process, "nginx")

        nginx_pids = with_children(nginx_process.pid)
        grpc_load = os.path.join(build, "bin", "grpc_load")
        floor_port = free_port()
        have_grpc = os.path.exists(grpc_load)
        if have_grpc:
            floor_process = subprocess.Popen(
                [grpc_load, f"--serve_floor={floor_port}", "--shape=1,4"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes.append(floor_process)
            wait_for_port(floor_port, floor_process, "grpc_load floor")
        else:
            print("SKIP gRPC: build/bin/grpc_load not built (benchmarks off "
                  "or no gRPC)")

        # name -> connections -> list of (rps, p50, p99[, cpu per request])
        results = {name: {c: [] for c in CONNECTIONS}
                   for name in ("asyncrt", "nginx", "asyncrt_grpc", "floor")}
        targets = {
            "asyncrt": (server_process.pid, lambda c: run_wrk(
                f"http://127.0.0.1:{rest_port}/v1/models/tiny:predict", c,
                args.seconds, args.threads, script)),
            "nginx": (None, lambda c: run_wrk(
                f"http://127.0.0.1:{nginx_port}/reply.json", c, args.seconds,
                args.threads)),
        }
        if have_grpc:
            targets["asyncrt_grpc"] = (None, lambda c: run_grpc_load(
                grpc_load, grpc_port, c, args.seconds, "1,4"))
            targets["floor"] = (None, lambda c: run_grpc_load(
                grpc_load, floor_port, c, args.seconds, "1,4"))
        for round_index in range(args.rounds):
            for connections in CONNECTIONS:
                order = list(targets)
                if round_index % 2:
                    order.reverse()
                for name in order:
                    pid, run = targets[name]
                    pids = [pid] if pid else nginx_pids
                    cpu_before = cpu_seconds(pids)
                    rps, p50, p99 = run(connections)
                    cpu = cpu_seconds(pids) - cpu_before
                    # wrk runs args.seconds; CPU per request, in us.
                    per_request = cpu / (rps * args.seconds) * 1e6
                    results[name][connections].append(
                        (rps, p50, p99, per_request))

        model_us = model_call_us(
            os.path.join(build, "bin", "asyncrt-run"),
            os.path.join(base, "1", "model.bef"),
            make_input_pb(work), 20000)
        records = []
        print(f"{'case':<28}{'asyncrt rps':>12}{'peer rps':>12}{'ratio':>8}"
              f"{'p50 us':>9}{'p99 us':>9}")

        def median(name, connections, index):
            return statistics.median(r[index]
                                     for r in results[name][connections])

        for ours_name, peer_name, record_name, peer in (
                ("asyncrt", "nginx", "ServeTinyPredict", "nginx_static"),
                ("asyncrt_grpc", "floor", "ServeTinyPredictGrpc",
                 "grpc_floor")):
            if ours_name not in targets:
                continue
            for connections in CONNECTIONS:
                ours = median(ours_name, connections, 0)
                theirs = median(peer_name, connections, 0)
                record = {
                    "name": f"{record_name}/c{connections}",
                    "peer": peer,
                    "asyncrt_ns": 1e9 / ours,
                    "peer_ns": 1e9 / theirs,
                    "ratio": theirs / ours,
                    "asyncrt_p50_us": median(ours_name, connections, 1),
                    "asyncrt_p99_us": median(ours_name, connections, 2),
                    "peer_p50_us": median(peer_name, connections, 1),
                    "peer_p99_us": median(peer_name, connections, 2),
                    "threads": args.threads,
                }
                records.append(record)
                print(f"{record['name']:<28}{ours:>12.0f}{theirs:>12.0f}"
                      f"{record['ratio']:>8.2f}"
                      f"{record['asyncrt_p50_us']:>9.0f}"
                      f"{record['asyncrt_p99_us']:>9.0f}")
        print(f"{'CPU per REST request':<28}{'asyncrt us':>12}{'nginx us':>12}"
              f"{'ratio':>8}{'over nginx+model us':>21}  (model "
              f"{model_us:.2f} us)")
        for connections in CONNECTIONS:
            ours = median("asyncrt", connections, 3)
            theirs = median("nginx", connections, 3)
            record = {
                "name": f"ServeTinyPredictCpu/c{connections}",
                "peer": "nginx_static",
                "asyncrt_ns": ours * 1e3,
                "peer_ns": theirs * 1e3,
                "ratio": ours / theirs,
                "model_us": model_us,
                "overhead_us": ours - model_us,
                # Beyond what serving any HTTP reply costs (nginx's CPU per
                # request: mostly the kernel's TCP) and the model itself.
                "overhead_over_floor_us": ours - theirs - model_us,
                "threads": args.threads,
            }
            records.append(record)
            print(f"{record['name']:<28}{ours:>12.1f}{theirs:>12.1f}"
                  f"{record['ratio']:>8.2f}"
                  f"{record['overhead_over_floor_us']:>21.1f}")
        if have_grpc:
            records += resnet50_records(build, work, grpc_load, args)
        records += load_impact_records(build, work, base, script, args)
        summary_records.merge_records(summary, records, RECORD_PREFIX)
        print(f"{len(records)} serving record(s) merged into {summary}")
        return 0
    finally:
        for process in processes:
            stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
