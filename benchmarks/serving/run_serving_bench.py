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
import time

# Merging into the summary (this file's parent folder).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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

        results = {c: {"asyncrt": [], "nginx": []} for c in CONNECTIONS}
        for round_index in range(args.rounds):
            for connections in CONNECTIONS:
                pair = [("asyncrt", f"http://127.0.0.1:{rest_port}"
                         "/v1/models/tiny:predict", script),
                        ("nginx", f"http://127.0.0.1:{nginx_port}/reply.json",
                         None)]
                if round_index % 2:
                    pair.reverse()
                for name, url, lua in pair:
                    results[connections][name].append(
                        run_wrk(url, connections, args.seconds, args.threads,
                                lua))
        records = []
        print(f"{'case':<24}{'asyncrt rps':>12}{'nginx rps':>12}{'ratio':>8}"
              f"{'p50 us':>9}{'p99 us':>9}")
        for connections in CONNECTIONS:
            def median(name, index):
                return statistics.median(r[index]
                                         for r in results[connections][name])
            ours, theirs = median("asyncrt", 0), median("nginx", 0)
            record = {
                "name": f"ServeTinyPredict/c{connections}",
                "peer": "nginx_static",
                "asyncrt_ns": 1e9 / ours,
                "peer_ns": 1e9 / theirs,
                "ratio": theirs / ours,
                "asyncrt_p50_us": median("asyncrt", 1),
                "asyncrt_p99_us": median("asyncrt", 2),
                "peer_p50_us": median("nginx", 1),
                "peer_p99_us": median("nginx", 2),
                "threads": args.threads,
            }
            records.append(record)
            print(f"{record['name']:<24}{ours:>12.0f}{theirs:>12.0f}"
                  f"{record['ratio']:>8.2f}{record['asyncrt_p50_us']:>9.0f}"
                  f"{record['asyncrt_p99_us']:>9.0f}")
        summary_records.merge_records(summary, records, RECORD_PREFIX)
        print(f"{len(records)} serving record(s) merged into {summary}")
        return 0
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
