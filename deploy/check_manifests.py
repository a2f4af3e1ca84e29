#!/usr/bin/env python3
"""Checks the deployment examples: they parse as YAML, name the kinds and
API versions Kubernetes and KServe serve, probe the server's health
endpoints on ports it listens on, and pass it flags it has.

Not a full schema check (no Kubernetes schema validator is packaged in
Debian 12 or npm that runs offline); kubectl --dry-run=server is the
complete one. Usage: check_manifests.py SERVER_BINARY
"""
import subprocess
import sys
import pathlib

import yaml

KINDS = {("apps/v1", "Deployment"), ("v1", "Service"),
         ("serving.kserve.io/v1beta1", "InferenceService")}


def containers(document):
    spec = document.get("spec", {})
    if document["kind"] == "Deployment":
        return spec["template"]["spec"]["containers"]
    if document["kind"] == "InferenceService":
        return spec["predictor"]["containers"]
    return []


def main():
    server = sys.argv[1]
    run = subprocess.run([server, "--helpfull"], capture_output=True,
                         text=True)
    help_text = run.stdout + run.stderr
    root = pathlib.Path(__file__).parent
    failures = []
    for path in sorted(root.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if not document:
                continue
            key = (document.get("apiVersion"), document.get("kind"))
            if key not in KINDS:
                failures.append(f"{path}: unknown {key}")
                continue
            for container in containers(document):
                ports = {p.get("name"): p["containerPort"]
                         for p in container.get("ports", [])}
                ports.update({p["containerPort"]: p["containerPort"]
                              for p in container.get("ports", [])})
                for arg in container.get("args", []):
                    flag = arg.split("=")[0].lstrip("-")
                    if f"-{flag} " not in help_text and \
                            f"--{flag} " not in help_text:
                        failures.append(f"{path}: unknown flag {arg}")
                for probe in ("livenessProbe", "readinessProbe",
                              "startupProbe"):
                    if probe not in container:
                        continue
                    get = container[probe]["httpGet"]
                    if not get["path"].startswith("/v2/health/"):
                        failures.append(f"{path}: {probe} path {get['path']}")
                    if get["port"] not in ports:
                        failures.append(f"{path}: {probe} port {get['port']} "
                                        "is not a container port")
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print("PASS: deployment manifests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
