'use strict';
// Runs ONNX test directories (model.onnx + test_data_set_*/input_N.pb, output_N.pb) in
// onnxruntime and compares each output with the expected one, as `tconv-run DIR` does.
//   node run_dirs.js [--rtol R] [--atol A] [--model NAME] DIR|@LISTFILE...
// --model NAME runs DIR/NAME instead of DIR/model.onnx (a rewritten model beside its data).
// Prints one PASS/FAIL line per data set and ends with "N passed, M failed".
// Exit: 0 all passed, 1 a mismatch or a model onnxruntime refused, 2 usage.
const path = require('path');
const lib = require('./ortlib');

function parseArgs(argv) {
  const a = { rtol: 1e-4, atol: 1e-5, model: 'model.onnx', dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const opt = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${opt} needs a value`);
      return argv[++i];
    };
    if (opt === '--rtol') a.rtol = Number(value());
    else if (opt === '--atol') a.atol = Number(value());
    else if (opt === '--model') a.model = value();
    else if (opt.startsWith('--')) usage(`unknown option ${opt}`);
    else if (opt.startsWith('@')) a.dirs.push(...readList(opt.slice(1)));
    else a.dirs.push(opt);
  }
  if (!a.dirs.length) usage('no test directory given');
  if (!(a.rtol >= 0) || !(a.atol >= 0)) usage('--rtol and --atol take numbers >= 0');
  return a;
}

// @FILE: directories one per line (onnxruntime-node crashes at startup, with no message, when
// the command line holds some 400 long paths).
function readList(file) {
  return require('fs').readFileSync(file, 'utf8').split('\n').filter((l) => l.length);
}

function usage(msg) {
  process.stderr.write(`run_dirs.js: ${msg}\nusage: node run_dirs.js [--rtol R] [--atol A] [--model NAME] DIR...\n`);
  process.exit(2);
}

async function runDir(dir, a, tally) {
  const model = path.join(dir, a.model);
  let session;
  try {
    session = await lib.createSession(model, 1);
  } catch (e) {
    console.log(`FAIL ${dir}: onnxruntime refused ${model}: ${String(e.message).split('\n')[0]}`);
    tally.failed++;
    return;
  }
  try {
    await runSets(session, dir, a, tally);
  } finally {
    await session.release(); // hundreds of sessions in one process otherwise exhaust it
  }
}

async function runSets(session, dir, a, tally) {
  const sets = lib.listDataSets(dir);
  if (!sets.length) {
    console.log(`FAIL ${dir}: no test_data_set_*`);
    tally.failed++;
    return;
  }
  for (const set of sets) {
    const where = path.join(dir, set);
    try {
      const outs = await lib.runDataSet(session, where, a.rtol, a.atol);
      const bad = outs.filter((o) => !o.ok);
      const maxAbs = Math.max(...outs.map((o) => o.maxAbs));
      if (bad.length) {
        tally.failed++;
        console.log(`FAIL ${where}: ` + bad.map((o) => `output '${o.name}': ${o.message}`).join('; '));
      } else {
        tally.passed++;
        console.log(`PASS ${where} (max abs err ${maxAbs.toExponential(2)})`);
      }
    } catch (e) {
      tally.failed++;
      console.log(`FAIL ${where}: ${String(e.message).split('\n')[0]}`);
    }
  }
}

(async () => {
  const a = parseArgs(process.argv.slice(2));
  const tally = { passed: 0, failed: 0 };
  for (const dir of a.dirs) await runDir(dir, a, tally);
  console.log(`onnxruntime ${lib.versions.node}: ${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed ? 1 : 0);
})();
