import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RandomizedHadamard, DEFAULT_ROTATION_SEED, HADAMARD_ROUNDS } from '../segments/quantization/RandomizedHadamard.js';
import { SplittableRandom } from '../segments/hnsw/SplittableRandom.js';
import { quantizationSettings, quantizeField, writeQuantizedField, LUCENE_SETTINGS } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { ScalarQuantizedVectorsReader } from '../segments/quantized/ScalarQuantizedVectorsReader.js';
import { SQ_META_EXTENSION, SQ_DATA_EXTENSION } from '../segments/quantized/ScalarQuantizedVectorsFormat.js';
import { segmentFileName } from '../segments/flat/FlatVectorsFormat.js';
import { wholeFile as fileSlice } from '../segments/store/FileSlice.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { QueryQuantizer } from '../segments/quantized/QueryQuantizer.js';
import { EncodedQuantizedScorer, EncodedVectorScorer } from '../segments/quantized/EncodedVectorScorer.js';
import { generateVectors } from '../src/gen/generateDataset.js';
import { DOC_BITS_CHOICES, encodingForBits } from '../segments/quantized/ScalarEncodings.js';
import { codeDot } from '../segments/quantized/ScalarCodes.js';
import { Kernels } from '../segments/kernels/Kernels.js';
import { BinaryQuantizedScorer } from '../segments/quantized/BinaryQuantizedScorer.js';

const dot64 = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

describe('RandomizedHadamard', () => {
  it.each([1, 8, 100, 384, 784, 1024])('is orthogonal for %i dims: norms and dot products are kept', (dims) => {
    const r = new RandomizedHadamard(dims, 7n);
    const a = Float32Array.from({ length: dims }, (_, i) => Math.sin(i + 1));
    const b = Float32Array.from({ length: dims }, (_, i) => Math.cos(3 * i));
    const ra = new Float32Array(dims);
    const rb = new Float32Array(dims);
    r.apply(a, ra);
    r.apply(b, rb);
    expect(dot64(ra, ra)).toBeCloseTo(dot64(a, a), 4);
    expect(dot64(ra, rb)).toBeCloseTo(dot64(a, b), 4);
  });

  it('mixes every coordinate when the dimension is not a power of two', () => {
    const dims = 784;
    const r = new RandomizedHadamard(dims, 1n);
    // A unit vector on the last coordinate (outside the head block) spreads its energy as a random
    // Gaussian vector would (whose largest squared coordinate is ~2 ln(512) / 512 = 0.024 here),
    // and the coordinates outside the tail block get their share.
    const e = new Float32Array(dims);
    e[dims - 1] = 1;
    r.apply(e, e);
    expect(Math.max(...Array.from(e, (x) => x * x))).toBeLessThan(0.03);
    expect(dot64(e.subarray(0, dims - r.block), e.subarray(0, dims - r.block))).toBeGreaterThan(0.1);
  });

  it('is a function of (dims, seed) only, and works in place', () => {
    const v = Float32Array.from({ length: 100 }, (_, i) => i - 50);
    const a = new Float32Array(100);
    new RandomizedHadamard(100, 42n).apply(v, a);
    const b = Float32Array.from(v);
    new RandomizedHadamard(100, 42n).apply(b, b);
    expect(b).toEqual(a);
    const c = new Float32Array(100);
    new RandomizedHadamard(100, 43n).apply(v, c);
    expect(c).not.toEqual(a);
  });

  it.each([1, 2, 3, 4, 8, 100, 384, 768, 784, 1024])('is the documented transform, bit for bit, for %i dims', (dims) => {
    // The class comment's definition, one butterfly stage at a time, in float64.
    const rng = new SplittableRandom(9n);
    const signs = Array.from({ length: HADAMARD_ROUNDS * 2 * dims }, () => ((rng.nextLongBits() & 1n) === 1n ? -1 : 1));
    let p = 1;
    while (p * 2 <= dims) p *= 2;
    const stageByStage = (w: Float64Array, from: number) => {
      for (let h = 1; h < p; h *= 2) {
        for (let i = from; i < from + p; i += 2 * h) {
          for (let j = i; j < i + h; j++) [w[j], w[j + h]] = [w[j] + w[j + h], w[j] - w[j + h]];
        }
      }
      for (let i = from; i < from + p; i++) w[i] *= 1 / Math.sqrt(p);
    };
    const v = Float32Array.from({ length: dims }, (_, i) => Math.sin(7 * i + 1));
    const w = Float64Array.from(v);
    for (let r = 0; r < HADAMARD_ROUNDS; r++) {
      for (let i = 0; i < dims; i++) w[i] *= signs[2 * r * dims + i];
      stageByStage(w, 0);
      if (dims > p) {
        for (let i = 0; i < dims; i++) w[i] *= signs[(2 * r + 1) * dims + i];
        stageByStage(w, dims - p);
      }
    }
    const out = new Float32Array(dims);
    new RandomizedHadamard(dims, 9n).apply(v, out);
    expect(out).toEqual(Float32Array.from(w));
  });

  it('gives the same output when one instance rotates a query again, another vector, or in place', () => {
    // apply() keeps the last input's transform (a query is rotated once per segment).
    const dims = 784;
    const fresh = (v: Float32Array) => {
      const out = new Float32Array(dims);
      new RandomizedHadamard(dims, 5n).apply(v, out);
      return out;
    };
    const a = Float32Array.from({ length: dims }, (_, i) => Math.sin(i));
    const b = Float32Array.from({ length: dims }, (_, i) => Math.cos(i));
    const shared = new RandomizedHadamard(dims, 5n);
    const outs = [a, a, b, a].map((v) => {
      const out = new Float32Array(dims);
      shared.apply(v, out);
      return out;
    });
    expect(outs).toEqual([fresh(a), fresh(a), fresh(b), fresh(a)]);
    const inPlace = Float32Array.from(a);
    shared.apply(inPlace, inPlace);
    shared.apply(inPlace, inPlace);
    expect(inPlace).toEqual(fresh(fresh(a)));
  });
});

describe('quantization settings in the .vemq meta', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'prescore-rot-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const dims = 100;
  const count = 300;
  const vectors = generateVectors({ seed: '9', dim: dims, similarity: 'cosine' }, 'base', count);
  const source = { size: count, dims, vector: (o: number) => vectors.subarray(o * dims, (o + 1) * dims) };
  const id = new Uint8Array(16).fill(3);
  const suffix = 'Lucene104HnswScalarQuantizedVectorsFormat_0';

  function roundTrip(name: string, settings = LUCENE_SETTINGS) {
    const sim = VectorSimilarityFunction.COSINE;
    const q = quantizeField(source, sim, { settings });
    writeQuantizedField(dir, name, id, suffix, { fieldNumber: 0, similarity: sim, dims, count, maxDoc: count }, q);
    const meta = fileSlice(join(dir, segmentFileName(name, suffix, SQ_META_EXTENSION)));
    const data = fileSlice(join(dir, segmentFileName(name, suffix, SQ_DATA_EXTENSION)));
    const reader = ScalarQuantizedVectorsReader.open(meta, data, id, suffix);
    return { q, entry: reader.field(0), records: reader.readRecords(0), metaBytes: readFileSync(meta.path) };
  }

  it('rotated codes with the plain-mean centroid round-trip: rule, seed, centroid and records', () => {
    const settings = quantizationSettings({ bits: 1, centroid: 'mean', rotation: -5n });
    const { q, entry, records, metaBytes } = roundTrip('_r', settings);
    expect(entry.rotationSeed).toBe(-5n);
    expect(entry.centroidRule).toBe('mean');
    expect(entry.centroid).toEqual(q.centroid);
    expect(records).toEqual(q.records);
    // Version 1 (prescore's extensions): the header's big-endian int after the codec name.
    const codec = 'Lucene104ScalarQuantizedVectorsFormatMeta';
    expect(new DataView(metaBytes.buffer, metaBytes.byteOffset).getInt32(4 + 1 + codec.length)).toBe(1);
  });

  it("without extensions the segment is Lucene's version 0 and reads back as not rotated", () => {
    const { entry, metaBytes } = roundTrip('_l');
    expect(entry.rotationSeed).toBeNull();
    expect(entry.centroidRule).toBe('lucene');
    const codec = 'Lucene104ScalarQuantizedVectorsFormatMeta';
    expect(new DataView(metaBytes.buffer, metaBytes.byteOffset).getInt32(4 + 1 + codec.length)).toBe(0);
  });

  it("the plain mean is the mean of the unit vectors; Lucene's is that mean re-normalised", () => {
    const lucene = roundTrip('_c1').q.centroid;
    const plain = roundTrip('_c2', quantizationSettings({ centroid: 'mean', rotation: false })).q.centroid;
    const norm = Math.sqrt(dot64(plain, plain));
    expect(norm).toBeLessThan(1);
    for (let i = 0; i < dims; i++) expect(lucene[i]).toBeCloseTo(plain[i] / norm, 5);
  });
});

/**
 * The estimator is exactly the dot product of the dequantized vectors plus corrections:
 * s = Σ (a_x + l_x·x_i)(a_y + l_y·y_i). The reference evaluates that in float64 from the unpacked
 * codes, so it checks the packing, the corrective terms and the estimator for every encoding.
 */
describe('estimates for every encoding and with rotation equal a float64 reference', () => {
  const dims = 100;
  const count = 200;
  const sim = VectorSimilarityFunction.DOT_PRODUCT;
  const vectors = generateVectors({ seed: '5', dim: dims, similarity: 'dot_product' }, 'base', count);
  const queries = generateVectors({ seed: '5', dim: dims, similarity: 'dot_product' }, 'query', 5);
  const source = { size: count, dims, vector: (o: number) => vectors.subarray(o * dims, (o + 1) * dims) };

  for (const bits of DOC_BITS_CHOICES) {
    for (const rotation of [false, true]) {
      it(`${bits}-bit docs${rotation ? ', rotated' : ''}`, () => {
        const settings = quantizationSettings({ bits, rotation, centroid: 'lucene' });
        const enc = encodingForBits(bits);
        const q = quantizeField(source, sim, { settings });
        const rot = rotation ? new RandomizedHadamard(dims, DEFAULT_ROTATION_SEED) : null;
        const qq = new QueryQuantizer(sim, dims);
        const code = new Uint8Array(enc.queryCodeBytes(dims));
        const docCodes = new Int32Array(dims);
        const queryCodes = new Int32Array(dims);
        const recordBytes = enc.docCodeBytes(dims) + 16;
        const view = new DataView(q.records.buffer);
        for (let qi = 0; qi < 5; qi++) {
          const r = qq.quantize(queries.subarray(qi * dims, (qi + 1) * dims), q.centroid, code, enc, rot);
          const query = {
            code,
            lower: r.lower,
            upper: r.upper,
            additionalCorrection: r.additionalCorrection,
            componentSum: r.componentSum,
            dims,
            similarity: sim.ordinal,
            centroidDP: q.centroidDP,
          };
          const scorer = new EncodedVectorScorer(enc, dims, q.records, query);
          unpackQuery(enc.docBits, code, queryCodes);
          const ly = (r.upper - r.lower) / ((1 << enc.queryBits) - 1);
          expect(queryCodes.reduce((a, b) => a + b, 0)).toBe(r.componentSum);
          for (let o = 0; o < count; o += 7) {
            const off = o * recordBytes;
            unpackDoc(bits, q.records.subarray(off, off + enc.docCodeBytes(dims)), docCodes);
            const c = off + enc.docCodeBytes(dims);
            const ax = view.getFloat32(c, true),
              ux = view.getFloat32(c + 4, true),
              corrX = view.getFloat32(c + 8, true);
            expect(docCodes.reduce((a, b) => a + b, 0)).toBe(view.getInt32(c + 12, true));
            const lx = (ux - ax) / ((1 << bits) - 1);
            let s = 0;
            for (let i = 0; i < dims; i++) s += (ax + lx * docCodes[i]) * (r.lower + ly * queryCodes[i]);
            const s2 = s + r.additionalCorrection + corrX - q.centroidDP;
            const want = (1 + Math.min(Math.max(s2, -1), 1)) / 2;
            expect(scorer.score(o)).toBeCloseTo(want, 4);
            // qc through the packed layouts equals the plain sum of code products
            let qc = 0;
            for (let i = 0; i < dims; i++) qc += docCodes[i] * queryCodes[i];
            expect(codeDot(enc, dims, code, 0, q.records, off)).toBe(qc);
          }
        }
      });
    }
  }

  it("the wasm 1-bit scorer gives the JS estimator's scores bit for bit on rotated codes", async () => {
    const k = await Kernels.load();
    const settings = quantizationSettings({ bits: 1, rotation: true });
    const enc = encodingForBits(1);
    const q = quantizeField(source, sim, { settings });
    const codeBytes = enc.docCodeBytes(dims);
    const recordsPtr = k.alloc(q.records.length);
    k.u8().set(q.records, recordsPtr);
    const planesPtr = k.alloc(4 * codeBytes);
    const qq = new QueryQuantizer(sim, dims);
    const rot = new RandomizedHadamard(dims, DEFAULT_ROTATION_SEED);
    const code = new Uint8Array(4 * codeBytes);
    const r = qq.quantize(queries.subarray(0, dims), q.centroid, code, enc, rot);
    k.u8().set(code, planesPtr);
    const corr = {
      lower: r.lower,
      upper: r.upper,
      additionalCorrection: r.additionalCorrection,
      componentSum: r.componentSum,
      dims,
      similarity: sim.ordinal,
      centroidDP: q.centroidDP,
    };
    const wasm = new BinaryQuantizedScorer({ kernels: k, recordsPtr, count, codeBytes, recordBytes: codeBytes + 16 }, { planesPtr, ...corr });
    const js = new EncodedVectorScorer(enc, dims, q.records, { code, ...corr });
    const a = new Float32Array(count),
      b = new Float32Array(count);
    wasm.scoreRange(0, count, a);
    js.scoreRange(0, count, b);
    expect(a).toEqual(b);
  });
});

describe('the wasm multi-bit kernel', () => {
  for (const dims of [100, 384, 33]) {
    for (const bits of [2, 4, 7, 8] as const) {
      it(`gives the JS estimator's scores bit for bit (${bits}-bit, ${dims} dims, every similarity)`, async () => {
        const k = await Kernels.load();
        const count = 120;
        for (const sim of VectorSimilarityFunction.values) {
          const name = sim === VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT ? 'max_inner_product' : sim.userName;
          const vectors = generateVectors({ seed: '11', dim: dims, similarity: name as never }, 'base', count);
          const query = generateVectors({ seed: '11', dim: dims, similarity: name as never }, 'query', 1);
          const source = { size: count, dims, vector: (o: number) => vectors.subarray(o * dims, (o + 1) * dims) };
          const enc = encodingForBits(bits);
          const q = quantizeField(source, sim, { settings: quantizationSettings({ bits, rotation: true }) });
          const code = new Uint8Array(enc.queryCodeBytes(dims));
          const r = new QueryQuantizer(sim, dims).quantize(query, q.centroid, code, enc, new RandomizedHadamard(dims, DEFAULT_ROTATION_SEED));
          const corr = {
            lower: r.lower,
            upper: r.upper,
            additionalCorrection: r.additionalCorrection,
            componentSum: r.componentSum,
            dims,
            similarity: sim.ordinal,
            centroidDP: q.centroidDP,
          };
          const recordsPtr = k.alloc(q.records.length);
          k.u8().set(q.records, recordsPtr);
          const codePtr = k.alloc(code.length);
          k.u8().set(code, codePtr);
          const codeBytes = enc.docCodeBytes(dims);
          const wasm = new EncodedQuantizedScorer(enc, { kernels: k, recordsPtr, count, codeBytes, recordBytes: codeBytes + 16 }, { codePtr, ...corr });
          const js = new EncodedVectorScorer(enc, dims, q.records, { code, ...corr });
          const a = new Float32Array(count),
            b = new Float32Array(count);
          wasm.scoreRange(0, count, a);
          js.scoreRange(0, count, b);
          expect(a).toEqual(b);
          const ords = Int32Array.from([5, 0, 119, 5, 77]);
          const c = new Float32Array(5);
          wasm.bulkScore(ords, 5, c);
          expect([...c]).toEqual([...ords].map((o) => b[o]));
          wasm.release();
          k.free(recordsPtr);
          k.free(codePtr);
        }
      });
    }
  }
});

/** Independent unpacking from the documented layouts (ScalarQuantizedVectorsFormat.ts). */
function unpackDoc(bits: number, code: Uint8Array, out: Int32Array): void {
  const dims = out.length;
  const bit = (plane: number, planeBytes: number, i: number) => (code[plane * planeBytes + (i >> 3)] >> (7 - (i & 7))) & 1;
  if (bits === 1 || bits === 2) {
    const planeBytes = Math.ceil(dims / 8);
    for (let i = 0; i < dims; i++) out[i] = bits === 1 ? bit(0, planeBytes, i) : bit(0, planeBytes, i) | (bit(1, planeBytes, i) << 1);
  } else if (bits === 4) {
    const half = Math.ceil(dims / 2);
    for (let i = 0; i < dims; i++) out[i] = i < half ? code[i] >> 4 : code[i - half] & 15;
  } else {
    for (let i = 0; i < dims; i++) out[i] = code[i];
  }
}

function unpackQuery(docBits: number, code: Uint8Array, out: Int32Array): void {
  const dims = out.length;
  if (docBits <= 2) {
    const planeBytes = Math.ceil(dims / 8);
    for (let i = 0; i < dims; i++) {
      let v = 0;
      for (let p = 0; p < 4; p++) v |= ((code[p * planeBytes + (i >> 3)] >> (7 - (i & 7))) & 1) << p;
      out[i] = v;
    }
  } else {
    for (let i = 0; i < dims; i++) out[i] = code[i];
  }
}

describe('multi-bit doc layouts (worked examples)', () => {
  it('DIBIT_QUERY_NIBBLE: low-bit plane, then high-bit plane, MSB first', async () => {
    const { transposeDibit } = await import('../segments/quantized/ScalarCodes.js');
    const out = new Uint8Array(2);
    transposeDibit(Uint8Array.from([0, 1, 2, 3, 3, 2, 1, 0]), out, 0, 8);
    expect([...out]).toEqual([0b01011010, 0b00111100]);
  });

  it("PACKED_NIBBLE: byte i = code[i] << 4 | code[i + D'/2]", async () => {
    const { packNibbles } = await import('../segments/quantized/ScalarCodes.js');
    const out = new Uint8Array(2);
    packNibbles(Uint8Array.from([1, 2, 3, 4]), out, 0, 4);
    expect([...out]).toEqual([0x13, 0x24]);
  });

  it('record sizes follow the encoding (D = 100)', () => {
    expect(encodingForBits(1).docCodeBytes(100)).toBe(13);
    expect(encodingForBits(2).docCodeBytes(100)).toBe(26);
    expect(encodingForBits(4).docCodeBytes(100)).toBe(50);
    expect(encodingForBits(7).docCodeBytes(100)).toBe(100);
    expect(encodingForBits(8).docCodeBytes(100)).toBe(100);
  });
});
