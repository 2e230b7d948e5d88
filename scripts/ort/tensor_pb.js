'use strict';
// onnx.TensorProto <-> { name, dtype, dims, data } for the onnxruntime harness.
// Only what ONNX test directories use: dims, data_type, name, raw_data and the typed
// repeated fields (float_data, int32_data, int64_data, double_data, uint64_data).
// External data (data_location = EXTERNAL) is refused: test .pb files never use it.

const DTYPES = {
  1: { ort: 'float32', array: Float32Array },
  2: { ort: 'uint8', array: Uint8Array },
  3: { ort: 'int8', array: Int8Array },
  4: { ort: 'uint16', array: Uint16Array },
  5: { ort: 'int16', array: Int16Array },
  6: { ort: 'int32', array: Int32Array },
  7: { ort: 'int64', array: BigInt64Array },
  9: { ort: 'bool', array: Uint8Array },
  10: { ort: 'float16', array: Uint16Array },
  11: { ort: 'float64', array: Float64Array },
  12: { ort: 'uint32', array: Uint32Array },
  13: { ort: 'uint64', array: BigUint64Array },
};

class Reader {
  constructor(buf, what) {
    this.buf = buf;
    this.pos = 0;
    this.what = what;
  }
  fail(msg) {
    throw new Error(`${this.what}: ${msg} at byte ${this.pos}`);
  }
  varint() {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.buf.length) this.fail('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
    }
    this.fail('varint too long');
  }
  bytes() {
    const n = Number(this.varint());
    if (n > this.buf.length - this.pos) this.fail('length past the end');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else this.fail(`unsupported wire type ${wire}`);
    if (this.pos > this.buf.length) this.fail('field past the end');
  }
}

// Repeated scalar fields come packed (wire 2) or one by one (varint / fixed).
function readRepeated(r, wire, kind, out) {
  const one = (rr) => {
    if (kind === 'varint') out.push(rr.varint());
    else if (kind === 'f32') { out.push(rr.buf.readFloatLE(rr.pos)); rr.pos += 4; }
    else { out.push(rr.buf.readDoubleLE(rr.pos)); rr.pos += 8; }
  };
  if (wire === 2) {
    const sub = new Reader(r.bytes(), r.what);
    while (sub.pos < sub.buf.length) one(sub);
  } else {
    one(r);
  }
}

function signed64(v) {
  return BigInt.asIntN(64, v);
}

function decodeTensor(buf, what) {
  const r = new Reader(buf, what);
  const t = { name: '', dtype: 0, dims: [], raw: null, floats: [], ints32: [], ints64: [],
              doubles: [], uints64: [] };
  while (r.pos < buf.length) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    if (field === 1) { const d = []; readRepeated(r, wire, 'varint', d); t.dims.push(...d.map((v) => Number(signed64(v)))); }
    else if (field === 2) t.dtype = Number(r.varint());
    else if (field === 4) readRepeated(r, wire, 'f32', t.floats);
    else if (field === 5) readRepeated(r, wire, 'varint', t.ints32);
    else if (field === 7) readRepeated(r, wire, 'varint', t.ints64);
    else if (field === 8) t.name = r.bytes().toString('utf8');
    else if (field === 9) t.raw = Buffer.from(r.bytes());
    else if (field === 10) readRepeated(r, wire, 'f64', t.doubles);
    else if (field === 11) readRepeated(r, wire, 'varint', t.uints64);
    else if (field === 14) { r.bytes(); r.fail('external data is not supported'); }
    else if (field === 15) { const loc = Number(r.varint()); if (loc === 1) r.fail('external data is not supported'); }
    else r.skip(wire);
  }
  const info = DTYPES[t.dtype];
  if (!info) throw new Error(`${what}: unsupported data_type ${t.dtype}`);
  const count = t.dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.raw) {
    const bytesPer = info.array.BYTES_PER_ELEMENT;
    if (t.raw.length !== count * bytesPer)
      throw new Error(`${what}: raw_data has ${t.raw.length} bytes, dims ${JSON.stringify(t.dims)} need ${count * bytesPer}`);
    const copy = new Uint8Array(t.raw); // aligned copy
    data = new info.array(copy.buffer, 0, count);
  } else {
    const src = { 1: t.floats, 11: t.doubles, 7: t.ints64, 13: t.uints64 }[t.dtype] || t.ints32;
    if (src.length !== count)
      throw new Error(`${what}: ${src.length} values, dims ${JSON.stringify(t.dims)} need ${count}`);
    data = new info.array(count);
    for (let i = 0; i < count; i++) {
      const v = src[i];
      if (t.dtype === 7) data[i] = signed64(v);
      else if (t.dtype === 13) data[i] = BigInt.asUintN(64, v);
      else if (typeof v === 'bigint') data[i] = Number(BigInt.asIntN(32, v));
      else data[i] = v;
    }
  }
  return { name: t.name, dtype: t.dtype, ortType: info.ort, dims: t.dims, data };
}

function readTensorFile(path) {
  return decodeTensor(require('fs').readFileSync(path), path);
}

function varintBytes(v) {
  let n = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
}

// TensorProto with dims, data_type, name and raw_data (the layout ONNX's test data uses).
function encodeTensor({ name, dtype, dims, data }) {
  const parts = [];
  for (const d of dims) parts.push(Buffer.from([0x08]), varintBytes(d));
  parts.push(Buffer.from([0x10]), varintBytes(dtype));
  if (name) {
    const nb = Buffer.from(name, 'utf8');
    parts.push(Buffer.from([0x42]), varintBytes(nb.length), nb);
  }
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  parts.push(Buffer.from([0x4a]), varintBytes(raw.length), raw);
  return Buffer.concat(parts);
}

module.exports = { decodeTensor, readTensorFile, encodeTensor, DTYPES };
