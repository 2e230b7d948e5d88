'use strict';
// Runs ONNX models in onnxruntime (the npm package onnxruntime-node, CPU provider) and compares
// outputs the way tconv does: |got - want| <= atol + rtol * |want|, NaN matches NaN only,
// same shape and element type. Shared by run_dirs.js and the convention checks.

const fs = require('fs');
const path = require('path');
const { readTensorFile, DTYPES } = require('./tensor_pb');

function loadOrt() {
  const dir = process.env.TCONV_ORT_NODE_MODULES;
  const where = dir ? path.join(dir, 'onnxruntime-node') : 'onnxruntime-node';
  return require(where);
}
const ort = loadOrt();

function half(u) {
  const s = u & 0x8000 ? -1 : 1, e = (u >> 10) & 0x1f, m = u & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function asNumbers(dtype, data) {
  if (dtype === 10) return Array.from(data, half);
  if (dtype === 16) return Array.from(data, (u) => new Float32Array(new Uint32Array([u << 16]).buffer)[0]);
  return data;
}

function isFloat(dtype) {
  return dtype === 1 || dtype === 10 || dtype === 11 || dtype === 16;
}

const ORT_TO_DTYPE = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v.ort, Number(k)]));

// { ok, maxAbs, message }: `got` is an ort.Tensor, `want` a decoded TensorProto.
function compareTensor(got, want, rtol, atol) {
  const gotDtype = ORT_TO_DTYPE[got.type];
  if (gotDtype !== want.dtype)
    return { ok: false, maxAbs: Infinity, message: `type ${got.type}, expected ${DTYPES[want.dtype].ort}` };
  if (got.dims.length !== want.dims.length || got.dims.some((d, i) => d !== want.dims[i]))
    return { ok: false, maxAbs: Infinity,
             message: `shape [${got.dims}], expected [${want.dims}]` };
  const g = asNumbers(gotDtype, got.data), w = asNumbers(want.dtype, want.data);
  let bad = 0, first = -1, maxAbs = 0;
  for (let i = 0; i < w.length; i++) {
    if (!isFloat(want.dtype)) {
      if (g[i] !== w[i]) { bad++; if (first < 0) first = i; }
      continue;
    }
    const a = Number(g[i]), b = Number(w[i]);
    if (Number.isNaN(a) || Number.isNaN(b)) {
      if (!(Number.isNaN(a) && Number.isNaN(b))) { bad++; if (first < 0) first = i; }
      continue;
    }
    const diff = a === b ? 0 : Math.abs(a - b);
    if (diff > maxAbs) maxAbs = diff;
    if (diff > atol + rtol * Math.abs(b)) { bad++; if (first < 0) first = i; }
  }
  if (!bad) return { ok: true, maxAbs, message: '' };
  return { ok: false, maxAbs,
           message: `${bad} of ${w.length} elements differ (rtol ${rtol}, atol ${atol}); ` +
                    `first at flat index ${first}: got ${g[first]}, expected ${w[first]}` };
}

const QUIET = { logSeverityLevel: 4 };

// extra: more session options (bench/ort_bench.js --profile passes enableProfiling).
async function createSession(modelPath, threads, extra) {
  return ort.InferenceSession.create(modelPath, {
    ...(extra || {}),
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads || 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 4, // fatal only: refusals come back as exceptions, with their message
  });
}

function toOrtTensor(t) {
  return new ort.Tensor(t.ortType, t.data, t.dims);
}

function fromOrtTensor(name, t) {
  const dtype = ORT_TO_DTYPE[t.type];
  if (!dtype) throw new Error(`output '${name}': unsupported type ${t.type}`);
  return { name, dtype, ortType: t.type, dims: Array.from(t.dims), data: t.data };
}

function listDataSets(dir) {
  return fs.readdirSync(dir).filter((n) => n.startsWith('test_data_set_')).sort();
}

function readNumbered(dir, kind) {
  const out = [];
  for (let i = 0; fs.existsSync(path.join(dir, `${kind}_${i}.pb`)); i++)
    out.push(readTensorFile(path.join(dir, `${kind}_${i}.pb`)));
  return out;
}

// Feeds in graph-input order; .pb names are used where present, as ONNX's runner does.
function makeFeeds(session, inputs, where) {
  if (inputs.length !== session.inputNames.length)
    throw new Error(`${where}: ${inputs.length} input files, the model has ${session.inputNames.length} inputs`);
  const feeds = {};
  inputs.forEach((t, i) => {
    feeds[t.name && session.inputNames.includes(t.name) ? t.name : session.inputNames[i]] = toOrtTensor(t);
  });
  return feeds;
}

// Runs one data set; returns [{ name, ok, maxAbs, message }] per output.
async function runDataSet(session, dataSetDir, rtol, atol) {
  const inputs = readNumbered(dataSetDir, 'input');
  const expected = readNumbered(dataSetDir, 'output');
  if (expected.length !== session.outputNames.length)
    throw new Error(`${dataSetDir}: ${expected.length} output files, the model has ${session.outputNames.length} outputs`);
  const results = await session.run(makeFeeds(session, inputs, dataSetDir), QUIET);
  return session.outputNames.map((name, i) => ({ name, ...compareTensor(results[name], expected[i], rtol, atol) }));
}

// Runs a model on given tensors (decoded TensorProtos, graph-input order); returns decoded outputs.
async function runModel(modelPath, inputs, threads) {
  const session = await createSession(modelPath, threads);
  try {
    const results = await session.run(makeFeeds(session, inputs, modelPath), QUIET);
    return session.outputNames.map((name) => fromOrtTensor(name, results[name]));
  } finally {
    await session.release();
  }
}

module.exports = { ort, createSession, runDataSet, runModel, compareTensor, listDataSets,
                   readNumbered, makeFeeds, versions: ort.env.versions };
