'use strict';
// Guards the harness against passing on nothing: for the test directory given, the golden data
// set must pass, a copy whose expected output has one element moved by 1e-2 must fail, a copy
// with the wrong shape must fail, and every .pb must survive decode -> encode -> decode.
//   node selftest.js DIR        exit 0 when all hold
const fs = require('fs');
const os = require('os');
const path = require('path');
const { readTensorFile, encodeTensor, decodeTensor } = require('./tensor_pb');
const lib = require('./ortlib');

function check(cond, what) {
  if (!cond) {
    console.log(`selftest: FAIL: ${what}`);
    process.exit(1);
  }
}

function copyDataSet(src, dst, mutate) {
  fs.mkdirSync(dst, { recursive: true });
  for (const f of fs.readdirSync(src)) {
    const t = readTensorFile(path.join(src, f));
    if (f === 'output_0.pb') mutate(t);
    fs.writeFileSync(path.join(dst, f), encodeTensor(t));
  }
}

(async () => {
  const dir = process.argv[2];
  check(dir && fs.existsSync(path.join(dir, 'model.onnx')), 'usage: node selftest.js DIR (with model.onnx)');
  const set = path.join(dir, lib.listDataSets(dir)[0]);
  for (const f of fs.readdirSync(set)) {
    const t = readTensorFile(path.join(set, f));
    const back = decodeTensor(encodeTensor(t), f);
    check(back.dtype === t.dtype && back.dims.join() === t.dims.join() &&
          Buffer.compare(Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength),
                         Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)) === 0,
          `${f} does not survive decode -> encode -> decode`);
  }
  const session = await lib.createSession(path.join(dir, 'model.onnx'), 1);
  const good = await lib.runDataSet(session, set, 1e-4, 1e-5);
  check(good.every((o) => o.ok), `golden data set of ${dir} fails: ${good.map((o) => o.message).join('; ')}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tconv-ort-selftest.'));
  try {
    copyDataSet(set, path.join(tmp, 'moved'), (t) => { t.data[0] += 1e-2; });
    const moved = await lib.runDataSet(session, path.join(tmp, 'moved'), 1e-4, 1e-5);
    check(moved.some((o) => !o.ok), 'an output moved by 1e-2 still passes');
    copyDataSet(set, path.join(tmp, 'shape'), (t) => { t.dims = [t.dims.reduce((a, b) => a * b, 1)]; });
    const shape = await lib.runDataSet(session, path.join(tmp, 'shape'), 1e-4, 1e-5);
    check(shape.some((o) => !o.ok), 'an output of the wrong shape still passes');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`selftest: ok (${dir})`);
})();
