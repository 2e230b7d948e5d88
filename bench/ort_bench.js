'use strict';
// onnxruntime's side of the side-by-side benchmark (bench/run.sh): one model, one thread count,
// one process, so that the peak RSS printed is that model's.
//
//   TCONV_ORT_NODE_MODULES=build/ort/node_modules \
//   node bench/ort_bench.js --model FILE --data-set DIR --case NAME --threads T [--runs N]
//                           [--budget S] [--model-kind original|legalized|converted]
//                           [--check-only] [--profile PREFIX]
//
// onnxruntime-node 1.30 (scripts/ort/install.sh), CPU provider, graphOptimizationLevel 'all',
// intraOpNumThreads T, interOpNumThreads 1, executionMode 'sequential' (scripts/ort/ortlib.js).
// The session first runs DIR's inputs and is checked against DIR's golden outputs (rtol 1e-3,
// atol 1e-4); then the same inputs are timed: 5 warm-up runs, then the median of at least N
// runs timed for at least 0.5 s (more runs when they are quick), stopping after `budget`
// seconds (default 8) once 5 are done, as bench_common.c does for tconv.
// Each run is timed inside node around `await session.run(feeds)`, subtracting nothing: the
// figure includes onnxruntime-node's JavaScript wrapper (feeds checked, one setImmediate hop,
// output tensors wrapped), which a C++ caller of onnxruntime would not pay.
// --check-only: the golden check alone (exit 0 when it matches, 1 when it does not or when
// onnxruntime refuses the model), no timing.
// --profile PREFIX: onnxruntime's own per-node trace of every run (session option
// enableProfiling), written to PREFIX_<date>.json (bench/target_profile.py reads it); the timing
// then includes the profiler's cost and is not a benchmark figure.
// Prints one JSON object (the keys of bench_models' "ort" rows) on stdout.
const fs = require('fs');
const os = require('os');
const lib = require('../scripts/ort/ortlib');

function usage(msg) {
  process.stderr.write(`ort_bench.js: ${msg}\nusage: node bench/ort_bench.js --model FILE ` +
                       '--data-set DIR --case NAME --threads T [--runs N] [--budget S] ' +
                       '[--model-kind original|legalized|converted] [--check-only] ' +
                       '[--profile PREFIX]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { runs: 100, budget: 8, kind: 'original', checkOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const opt = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${opt} needs a value`);
      return argv[++i];
    };
    if (opt === '--model') a.model = value();
    else if (opt === '--data-set') a.dataSet = value();
    else if (opt === '--case') a.name = value();
    else if (opt === '--threads') a.threads = Number(value());
    else if (opt === '--runs') a.runs = Number(value());
    else if (opt === '--budget') a.budget = Number(value());
    else if (opt === '--model-kind') a.kind = value();
    else if (opt === '--check-only') a.checkOnly = true;
    else if (opt === '--profile') a.profile = value();
    else usage(`unknown argument ${opt}`);
  }
  if (!a.model || !a.dataSet || !a.name) usage('--model, --data-set and --case are required');
  if (!(a.threads >= 1) || !(a.runs >= 1) || !(a.budget > 0)) usage('bad --threads, --runs or --budget');
  return a;
}

// Kibibytes of a /proc/self/status field (VmHWM: peak resident set, VmRSS: current).
function statusKib(field) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm'));
  return m ? Number(m[1]) : -1;
}

// CPU seconds all CPUs spent busy since boot (user, nice, system, irq, softirq, steal), as
// bench_common.c reads them.
function busyCpuS() {
  const v = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  // USER_HZ is 100 on Linux (sysconf(_SC_CLK_TCK)); node has no sysconf.
  return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / 100;
}

// This process's CPU seconds, all threads (onnxruntime's pool included): getrusage(RUSAGE_SELF).
function ownCpuS() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const MIN_WINDOW_S = 0.5;

// { ms, runs, othersCpu }: the median of the timed runs and the cores other processes kept
// busy meanwhile.
async function medianMs(fn, warmup, runs, budgetS) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  const busy0 = busyCpuS(), own0 = ownCpuS();
  const start = process.hrtime.bigint();
  for (;;) {
    const t0 = process.hrtime.bigint();
    await fn();
    const t1 = process.hrtime.bigint();
    times.push(Number(t1 - t0) / 1e6);
    const elapsed = Number(t1 - start) / 1e9;
    if (times.length >= 5 && elapsed > budgetS) break;
    if (times.length >= runs && elapsed >= MIN_WINDOW_S) break;
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const others = (busyCpuS() - busy0) - (ownCpuS() - own0);
  times.sort((x, y) => x - y);
  const n = times.length;
  const ms = n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  return { ms, runs: n, othersCpu: wall > 0 ? Math.max(0, others / wall) : -1 };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const baseKib = statusKib('VmRSS'); // node and the onnxruntime library loaded, no session yet
  let session, results;
  try {
    session = await lib.createSession(a.model, a.threads, a.profile
      ? { enableProfiling: true, profileFilePrefix: a.profile } : undefined);
    // float16 / bfloat16 models round after every op: the tolerances of bench_golden_tolerance.
    const half = [10, 16].includes(lib.readNumbered(a.dataSet, 'output')[0].dtype);
    results = await lib.runDataSet(session, a.dataSet, half ? 1e-2 : 1e-3, half ? 8e-3 : 1e-4);
  } catch (e) {
    process.stderr.write(`ort_bench.js: ${a.name}: onnxruntime failed: ${e.message}\n`);
    process.exit(1);
  }
  const bad = results.filter((r) => !r.ok);
  if (bad.length) {
    process.stderr.write(`ort_bench.js: ${a.name}: output '${bad[0].name}' does not match ` +
                         `${a.dataSet}: ${bad[0].message}\n`);
    process.exit(1);
  }
  if (a.checkOnly) return;
  const maxErr = Math.max(...results.map((r) => r.maxAbs));
  const feeds = lib.makeFeeds(session, lib.readNumbered(a.dataSet, 'input'), a.dataSet);
  for (let i = 0; i < 5; i++) await session.run(feeds); // warm-up
  // The peak so far (session built, golden run checked, warm-up runs), before the timing loop:
  // its list of times and the output tensors the garbage collector has not yet freed are not
  // the model's.
  const peakKib = statusKib('VmHWM');
  const t = await medianMs(() => session.run(feeds), 0, a.runs, a.budget);
  if (a.profile) session.endProfiling();
  const load = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  const row = {
    bench: 'ort', case: a.name, impl: `onnxruntime ${lib.versions.common || ''}`.trim(),
    model: a.kind, threads: a.threads, ms: Number(t.ms.toFixed(4)), runs: t.runs,
    peak_rss_kib: peakKib, base_rss_kib: baseKib,
    golden_max_err: Number(maxErr.toPrecision(3)), node: process.version,
    cpus: os.cpus().length, load, others_cpu: Number(t.othersCpu.toFixed(2)),
  };
  if (a.profile) row.profiled = true;
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

main();
