#!/usr/bin/env python3
"""bef_executor on truncated and corrupted BEF files: never a signal.

Compiles a program that uses calls, regions and attributes to BEF, then runs
bef_executor on truncations (every 5th length) and on one single-byte
corruption at every position (the kind of flip cycling with the position),
and asyncrt-translate -bef-to-mlir on every third of those files. Each run
must end by itself (no crash, no hang): exit 0 (the corruption kept the file
valid) or a non-zero exit with a message.
Usage: bef_corruption_test.py BIN_DIR SOURCE.mlir
"""
import os
import subprocess
import sys
import tempfile


def run(command):
    proc = subprocess.run(command, capture_output=True, timeout=20)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    bin_dir, source = sys.argv[1], sys.argv[2]
    translate = os.path.join(bin_dir, "asyncrt-translate")
    executor = os.path.join(bin_dir, "bef_executor")
    with tempfile.TemporaryDirectory() as tmp:
        bef = os.path.join(tmp, "prog.bef")
        subprocess.run([translate, "-mlir-to-bef", source, "-o", bef],
                       check=True)
        original = open(bef, "rb").read()
        cases = [original[:n] for n in range(0, len(original), 5)]
        for pos in range(len(original)):
            data = bytearray(original)
            data[pos] ^= (0x01, 0x80, 0xFF)[pos % 3]
            cases.append(bytes(data))
        failures = 0
        for index, data in enumerate(cases):
            path = os.path.join(tmp, "case.bef")
            with open(path, "wb") as f:
                f.write(data)
            commands = [[executor, "--host_allocator_type=malloc", path]]
            if index % 3 == 0:
                commands.append([translate, "-bef-to-mlir", path])
            for command in commands:
                tool = os.path.basename(command[0])
                try:
                    code, output = run(command)
                except subprocess.TimeoutExpired:
                    print(f"case {index}: {tool} hung")
                    failures += 1
                    continue
                if code < 0 or code >= 128:
                    print(f"case {index}: {tool} killed by a signal ({code})")
                    failures += 1
                elif code != 0 and not output.strip():
                    print(f"case {index}: {tool} failed without a message")
                    failures += 1
        print(f"{len(cases) - failures} passed, {failures} failed")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
