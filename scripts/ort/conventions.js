'use strict';
// `--convention ort` against onnxruntime itself, on the generated cases of every row of
// docs/semantics.md's table (tests/golden/ort_conventions, tests/golden/generate_conventions.py).
//   node conventions.js --import TCONV_IMPORT --run TCONV_RUN --work DIR CASES_DIR
// Per case: tconv-import --convention ort writes the rewritten model (its warnings kept); per
// data set the original runs in onnxruntime, then:
//   onnxruntime runs it:  its output must equal the measured rule's (ort_data_set_K, which
//     `R` in cases.tsv predicts), and the rewritten model must reproduce it exactly, both in
//     onnxruntime and in tconv (tconv-run), as must the original run by tconv-run --convention ort;
//   onnxruntime refuses it (`X` predicted):  tconv's lint must say so, and the rewritten model
//     (ONNX's meaning) must run in onnxruntime and in tconv and give ONNX's result.
// Prints a line per data set and a table per row; exit 0 when every check holds.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const lib = require('./ortlib');

const RTOL = 1e-4, ATOL = 1e-5;

function parseArgs(argv) {
  const a = { import: null, run: null, work: null, cases: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--import') a.import = argv[++i];
    else if (argv[i] === '--run') a.run = argv[++i];
    else if (argv[i] === '--work') a.work = argv[++i];
    else a.cases = argv[i];
  }
  if (!a.import || !a.run || !a.work || !a.cases) {
    process.stderr.write('usage: node conventions.js --import BIN --run BIN --work DIR CASES_DIR\n');
    process.exit(2);
  }
  return a;
}

function readCases(dir) {
  const lines = fs.readFileSync(path.join(dir, 'cases.tsv'), 'utf8').trim().split('\n').slice(1);
  return lines.map((l) => {
    const [name, row, ort] = l.split('\t');
    return { name, row, ort };
  });
}

function asGot(t) {
  return { type: t.ortType, dims: t.dims, data: t.data };
}

// tconv-run DIR [args]: PASS/FAIL per data set name.
function tconvRun(a, dir, args) {
  const run = spawnSync(a.run, [dir, '--rtol', String(RTOL), '--atol', String(ATOL), ...args],
                        { encoding: 'utf8' });
  const passed = {};
  for (const line of (run.stdout || '').split('\n')) {
    const m = /^(PASS|FAIL) .*(test_data_set_\d+)/.exec(line);
    if (m) passed[m[2]] = m[1] === 'PASS';
  }
  return passed;
}

// Converts with --convention ort and runs the rewritten model in tconv against ort_data_set_K;
// runs the original in tconv under --convention ort against the same.
function convertAndRunInTconv(a, c, caseDir, sets) {
  const out = path.join(a.work, c.name);
  fs.mkdirSync(out, { recursive: true });
  const imp = spawnSync(a.import, [path.join(caseDir, 'model.onnx'), '-o',
                                   path.join(out, 'model.onnx'), '--convention', 'ort'],
                        { encoding: 'utf8' });
  const result = { imported: imp.status === 0, lint: imp.stderr || '', tconv: {} };
  if (!result.imported) return result;
  sets.forEach((set, k) => {
    const dst = path.join(out, set);
    fs.mkdirSync(dst, { recursive: true });
    fs.copyFileSync(path.join(caseDir, set, 'input_0.pb'), path.join(dst, 'input_0.pb'));
    fs.copyFileSync(path.join(caseDir, `ort_data_set_${k}`, 'output_0.pb'),
                    path.join(dst, 'output_0.pb'));
  });
  result.tconv = tconvRun(a, out, []);
  // the original, run by tconv's runtime under --convention ort, against the same results
  const orig = path.join(out, 'original');
  fs.mkdirSync(orig, { recursive: true });
  fs.copyFileSync(path.join(caseDir, 'model.onnx'), path.join(orig, 'model.onnx'));
  for (const set of sets) fs.cpSync(path.join(out, set), path.join(orig, set), { recursive: true });
  result.tconvOriginal = tconvRun(a, orig, ['--convention', 'ort']);
  result.model = path.join(out, 'model.onnx');
  return result;
}

async function tryOrt(model, inputs) {
  try {
    return { ran: true, outs: await lib.runModel(model, inputs, 1) };
  } catch (e) {
    return { ran: false, why: String(e.message).split('\n')[0] };
  }
}

function same(got, want) {
  return lib.compareTensor(asGot(got), want, RTOL, ATOL);
}

async function checkSet(a, c, caseDir, conv, set, k) {
  const inputs = lib.readNumbered(path.join(caseDir, set), 'input');
  const expected = lib.readNumbered(path.join(caseDir, `ort_data_set_${k}`), 'output')[0];
  const predicted = c.ort[k] === 'R';
  const orig = await tryOrt(path.join(caseDir, 'model.onnx'), inputs);
  const problems = [];
  if (orig.ran !== predicted)
    problems.push(`onnxruntime ${orig.ran ? 'ran' : 'refused'} it, the rule predicts ` +
                  `${predicted ? 'it runs' : 'a refusal'}${orig.ran ? '' : ': ' + orig.why}`);
  if (orig.ran) {
    const r = same(orig.outs[0], expected);
    if (!r.ok) problems.push(`onnxruntime's output differs from the rule's: ${r.message}`);
  } else if (!/onnxruntime 1\.30 refuses this node/.test(conv.lint)) {
    problems.push("tconv's lint does not warn that onnxruntime 1.30 refuses the node");
  }
  if (conv.tconv[set] !== true)
    problems.push('tconv (tconv-run on the rewritten model) does not reproduce it');
  if (conv.tconvOriginal[set] !== true)
    problems.push('tconv-run --convention ort on the original does not reproduce it');
  const rewritten = await tryOrt(conv.model, inputs);
  if (!rewritten.ran) {
    problems.push(`onnxruntime refused the rewritten model: ${rewritten.why}`);
  } else {
    const r = same(rewritten.outs[0], orig.ran ? orig.outs[0] : expected);
    if (!r.ok) problems.push(`the rewritten model in onnxruntime differs: ${r.message}`);
  }
  return { ran: orig.ran, problems };
}

(async () => {
  const a = parseArgs(process.argv.slice(2));
  const tally = {};
  let failed = 0;
  for (const c of readCases(a.cases)) {
    const caseDir = path.join(a.cases, c.name);
    const sets = lib.listDataSets(caseDir);
    const t = (tally[c.row] = tally[c.row] || { cases: 0, sets: 0, ran: 0, matched: 0,
                                                refused: 0, warned: 0 });
    t.cases++;
    const conv = convertAndRunInTconv(a, c, caseDir, sets);
    if (!conv.imported) {
      console.log(`FAIL ${c.name}: tconv-import --convention ort failed: ${conv.lint.trim()}`);
      failed++;
      continue;
    }
    for (let k = 0; k < sets.length; k++) {
      const r = await checkSet(a, c, caseDir, conv, sets[k], k);
      t.sets++;
      if (r.ran) t.ran++;
      else t.refused++;
      if (r.problems.length) {
        failed++;
        console.log(`FAIL ${c.name}/${sets[k]}: ${r.problems.join('; ')}`);
        continue;
      }
      if (r.ran) t.matched++;
      else t.warned++;
      console.log(`PASS ${c.name}/${sets[k]} (onnxruntime ${r.ran ? 'runs it: tconv matches'
                                                                  : 'refuses it: tconv warns'})`);
    }
  }
  console.log('row\tcases\tdata sets\tonnxruntime ran\ttconv --convention ort matched\t' +
              'onnxruntime refused\twarned + rewritten model ran');
  for (const [row, t] of Object.entries(tally))
    console.log(`${row}\t${t.cases}\t${t.sets}\t${t.ran}\t${t.matched}\t${t.refused}\t${t.warned}`);
  console.log(`conventions: ${failed ? failed + ' failed' : 'all checks hold'}`);
  process.exit(failed ? 1 : 0);
})();
