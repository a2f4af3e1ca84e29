#!/usr/bin/env node
// Times one ONNX model on ONNX Runtime's CPU provider (npm onnxruntime-node),
// the peer of `asyncrt-run --benchmark --json`.
//
//   node ort_bench.js MODEL.onnx INPUT.bin SHAPE THREADS WARMUP ITERATIONS
//
// INPUT.bin holds the model's first input as raw little-endian float32 (no
// header); SHAPE is its shape as a comma list ("1,3,224,224"). The session
// uses every graph optimisation, THREADS intra-op threads, one inter-op
// thread and sequential execution. Prints one JSON object:
//
//   {"load_ms", "first_call_ms", "p50_ms", "p90_ms", "p99_ms",
//    "calls_per_s", "peak_rss_bytes"}
//
// load_ms is the time InferenceSession.create takes (read, optimise and
// prepare the model), first_call_ms the first run's; each timed call is one
// `await session.run(feeds)`, measured with process.hrtime.bigint(), so it
// includes onnxruntime-node's JS to native conversions. peak_rss_bytes is VmHWM
// of /proc/self/status at the end (the whole process: node itself, session
// creation and the runs).
//
// onnxruntime-node is looked up as usual; point NODE_PATH at a node_modules
// folder holding it (run_model_bench.py installs it in build/bench/ort with
// `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0`).
'use strict';

const fs = require('fs');

function usage(message) {
  process.stderr.write(
      `ort_bench.js: ${message}\n` +
      'usage: node ort_bench.js MODEL.onnx INPUT.bin SHAPE THREADS WARMUP ' +
      'ITERATIONS\n');
  process.exit(2);
}

function positiveInt(text, what, allowZero) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) {
    usage(`bad ${what} ${JSON.stringify(text)}`);
  }
  return n;
}

// Percentile p (0..1) of sorted values, picked as asyncrt-run picks it: the
// value at index round(p * (n - 1)).
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const index = Math.floor(p * (sorted.length - 1) + 0.5);
  return sorted[Math.min(index, sorted.length - 1)];
}

function peakRssBytes() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    if (match) return Number(match[1]) * 1024;
  } catch (e) {
    // Not Linux: fall back below.
  }
  return process.memoryUsage().rss;
}

async function main(argv) {
  if (argv.length !== 6) usage('expected 6 arguments');
  const [modelPath, inputPath, shapeText] = argv;
  const threads = positiveInt(argv[3], 'threads', false);
  const warmup = positiveInt(argv[4], 'warmup', true);
  const iterations = positiveInt(argv[5], 'iterations', false);
  const shape = shapeText.split(',').map((d) => positiveInt(d, 'shape', false));

  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write(
        'ort_bench.js: cannot load onnxruntime-node (set NODE_PATH to a ' +
        `node_modules folder holding it): ${e.message}\n`);
    process.exit(3);
  }

  const bytes = fs.readFileSync(inputPath);
  const count = shape.reduce((a, b) => a * b, 1);
  if (bytes.length !== count * 4) {
    usage(`${inputPath} holds ${bytes.length} bytes, shape [${shape}] ` +
          `needs ${count * 4}`);
  }
  // Copy into an aligned buffer: a Buffer may start at any byte offset.
  const data = new Float32Array(count);
  for (let i = 0; i < count; ++i) data[i] = bytes.readFloatLE(i * 4);

  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const loadNs = process.hrtime.bigint() - loadStart;

  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data,
                                                         shape)};
  // The first run, timed alone: with the load, the time to a first result.
  const firstStart = process.hrtime.bigint();
  await session.run(feeds);
  const firstNs = process.hrtime.bigint() - firstStart;
  for (let i = 1; i < warmup; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const sorted = times.slice().sort((a, b) => a - b);
  const totalMs = times.reduce((a, b) => a + b, 0);
  const result = {
    load_ms: Number(loadNs) / 1e6,
    first_call_ms: Number(firstNs) / 1e6,
    p50_ms: percentile(sorted, 0.5),
    p90_ms: percentile(sorted, 0.9),
    p99_ms: percentile(sorted, 0.99),
    calls_per_s: totalMs > 0 ? (1e3 * iterations) / totalMs : 0,
    peak_rss_bytes: peakRssBytes(),
  };
  if (typeof session.release === 'function') await session.release();
  process.stdout.write(JSON.stringify(result) + '\n');
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`ort_bench.js: ${e.stack || e}\n`);
  process.exit(1);
});
