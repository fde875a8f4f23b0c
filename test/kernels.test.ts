import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { Kernels, type OsqQuery } from '../segments/kernels/Kernels.js';
import { JsKernels, QUERY_SCALE_4BIT, type JsOsqQuery } from '../segments/kernels/JsKernels.js';
import { FirstFitHeap } from '../segments/kernels/FirstFitHeap.js';
import * as VectorUtil from '../segments/util/VectorUtil.js';
import { mulberry32 as rng } from '../src/gen/Rng.js';

// ---- helpers: the SINGLE_BIT_QUERY_NIBBLE layouts (segments/quantized/ScalarQuantizedVectorsFormat.ts), kept local

/** 0/1 codes, 8 per byte, first dimension in the most significant bit. */
function packBits(bits: ArrayLike<number>, codeBytes = Math.ceil(bits.length / 8)): Uint8Array {
  const out = new Uint8Array(codeBytes);
  for (let i = 0; i < bits.length; i++) out[i >> 3] |= (bits[i] & 1) << (7 - (i & 7));
  return out;
}

/** 4-bit codes to 4 bit planes of codeBytes bytes, plane p = bit p, LSB plane first. */
function transposeNibbles(nibbles: ArrayLike<number>, codeBytes = Math.ceil(nibbles.length / 8)): Uint8Array {
  const out = new Uint8Array(4 * codeBytes);
  for (let p = 0; p < 4; p++)
    out.set(
      packBits(
        Array.from(nibbles, (v) => (v >> p) & 1),
        codeBytes,
      ),
      p * codeBytes,
    );
  return out;
}

function f32Bits(x: number): number {
  const b = new DataView(new ArrayBuffer(4));
  b.setFloat32(0, x, true);
  return b.getUint32(0, true);
}

function bitsOf(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

interface RecordFields {
  code: Uint8Array;
  lower: number;
  upper: number;
  additionalCorrection: number;
  componentSum: number;
}

function writeRecord(buf: Uint8Array, off: number, r: RecordFields): void {
  buf.set(r.code, off);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const c = off + r.code.length;
  v.setFloat32(c, r.lower, true);
  v.setFloat32(c + 4, r.upper, true);
  v.setFloat32(c + 8, r.additionalCorrection, true);
  v.setInt32(c + 12, r.componentSum, true);
}

const SIMS = [0, 1, 2, 3] as const;
const SIM_NAMES = ['EUCLIDEAN', 'DOT_PRODUCT', 'COSINE', 'MAXIMUM_INNER_PRODUCT'];

let k: Kernels;
beforeAll(async () => {
  k = await Kernels.load();
});

// ---- BBQ bit layout and estimator, worked example with D = 8 ------------------------------

describe('1-bit layout facts (worked example in ScalarQuantizedVectorsFormat.ts)', () => {
  const docBits = [1, 0, 1, 1, 0, 0, 1, 0];
  const nibbles = [15, 0, 7, 8, 3, 12, 1, 0];

  it('packs doc bits [1,0,1,1,0,0,1,0] MSB-first to 0xB2', () => {
    expect(Array.from(packBits(docBits))).toEqual([0xb2]);
  });

  it('transposes query nibbles [15,0,7,8,3,12,1,0] to planes [0xAA,0xA8,0xA4,0x94]', () => {
    expect(Array.from(transposeNibbles(nibbles))).toEqual([0xaa, 0xa8, 0xa4, 0x94]);
  });

  it('int4BitDotProduct is 31, the plain Σ qᵢdᵢ, in wasm and JS', () => {
    const planes = transposeNibbles(nibbles);
    const code = packBits(docBits);
    expect(nibbles.reduce((s, q, i) => s + q * docBits[i], 0)).toBe(31);
    expect(JsKernels.int4BitDotProduct(planes, 0, code, 0, 1)).toBe(31);
    const q = k.alloc(4),
      d = k.alloc(1);
    k.u8().set(planes, q);
    k.u8().set(code, d);
    expect(k.int4BitDotProduct(q, d, 1)).toBe(31);
    k.free(q);
    k.free(d);
  });
});

describe('OSQ estimator example (D = 8)', () => {
  // a_x = −0.5, u_x = 0.5 (l_x = 1), x₁ = 4; a_y = −1, u_y = 2 (l_y = 0.20000002), y₁ = 46; qc = 31.
  const planes = transposeNibbles([15, 0, 7, 8, 3, 12, 1, 0]);
  const code = packBits([1, 0, 1, 1, 0, 0, 1, 0]);
  const cases = [
    { sim: 0, corrY: 10, corrX: 3, centroidDP: 0, bits: 0x3dbda130, value: 0.0925926 },
    { sim: 1, corrY: -0.5, corrX: -0.4, centroidDP: 0.5, bits: 0x3f19999d, value: 0.6000002 },
    { sim: 2, corrY: -0.5, corrX: -0.4, centroidDP: 0.5, bits: 0x3f19999d, value: 0.6000002 },
    { sim: 3, corrY: -0.5, corrX: -0.4, centroidDP: 0.5, bits: 0x3f99999d, value: 1.2000004 },
  ];
  const corrections = (sim: number, corrY: number, centroidDP: number) => ({
    lower: -1,
    upper: 2,
    additionalCorrection: corrY,
    componentSum: 46,
    dims: 8,
    similarity: sim,
    centroidDP,
  });

  it('l_y = 0.20000002 (0x3E4CCCCE) and s = 1.6000004 (0x3FCCCCD0)', () => {
    expect(f32Bits(Math.fround(Math.fround(2 - -1) * QUERY_SCALE_4BIT))).toBe(0x3e4cccce);
    expect(f32Bits(QUERY_SCALE_4BIT)).toBe(0x3d888889);
    const s = JsKernels.osqCenteredDot(corrections(0, 10, 0), 31, -0.5, 0.5, 4);
    expect(f32Bits(s)).toBe(0x3fccccd0);
    // d² for EUCLIDEAN: 13 − 2s = 9.799999 (0x411CCCCC)
    expect(f32Bits(Math.fround(Math.fround(10 + 3) - Math.fround(2 * s)))).toBe(0x411ccccc);
    // s' for the others: s + ((−0.5 + −0.4) − 0.5) = 0.2000004 (0x3E4CCCE8)
    const s2 = Math.fround(s + Math.fround(Math.fround(Math.fround(-0.5) + Math.fround(-0.4)) - 0.5));
    expect(f32Bits(s2)).toBe(0x3e4ccce8);
  });

  for (const c of cases) {
    it(`${SIM_NAMES[c.sim]} scores ${c.value} (0x${c.bits.toString(16).toUpperCase()}) in wasm and JS`, () => {
      const rec = new Uint8Array(1 + 16);
      writeRecord(rec, 0, { code, lower: -0.5, upper: 0.5, additionalCorrection: c.corrX, componentSum: 4 });
      const jq: JsOsqQuery = { ...corrections(c.sim, c.corrY, c.centroidDP), planes };
      const jsOut = new Float32Array(1);
      JsKernels.scoreOsqRange(jq, rec, 17, 1, 0, 1, jsOut);
      expect(f32Bits(jsOut[0])).toBe(c.bits);
      expect(jsOut[0]).toBeCloseTo(c.value, 6);

      const planesPtr = k.alloc(4),
        recPtr = k.alloc(17),
        outPtr = k.alloc(8),
        ordsPtr = k.alloc(4);
      k.u8().set(planes, planesPtr);
      k.u8().set(rec, recPtr);
      k.i32()[ordsPtr >>> 2] = 0;
      const wq: OsqQuery = { ...corrections(c.sim, c.corrY, c.centroidDP), planesPtr };
      k.scoreOsqRange(wq, recPtr, 17, 1, 0, 1, outPtr);
      expect(k.i32()[outPtr >>> 2] >>> 0).toBe(c.bits);
      k.scoreOsqOrds(wq, recPtr, 17, 1, ordsPtr, 1, outPtr + 4);
      expect(k.i32()[(outPtr >>> 2) + 1] >>> 0).toBe(c.bits);
      for (const p of [planesPtr, recPtr, outPtr, ordsPtr]) k.free(p);
    });
  }

  it('clamps: EUCLIDEAN d² < 0 scores 1, DOT_PRODUCT s′ > 1 scores 1 and s′ < −1 scores 0, MIP s′ < 0 maps to 1/(1 − s′)', () => {
    const rec = new Uint8Array(17);
    writeRecord(rec, 0, { code, lower: -0.5, upper: 0.5, additionalCorrection: 0, componentSum: 4 });
    const out = new Float32Array(1);
    const score = (sim: number, corrY: number, centroidDP: number) => {
      JsKernels.scoreOsqRange({ ...corrections(sim, corrY, centroidDP), planes }, rec, 17, 1, 0, 1, out);
      return out[0];
    };
    expect(score(0, 0, 0)).toBe(1); // d² = −2s < 0
    expect(score(1, 5, 0)).toBe(1); // s′ = s + 5 > 1
    expect(score(2, -10, 0)).toBe(0); // s′ < −1
    const s = JsKernels.osqCenteredDot(corrections(3, -10, 0), 31, -0.5, 0.5, 4);
    const s2 = Math.fround(s - 10);
    expect(score(3, -10, 0)).toBe(Math.fround(1 / Math.fround(1 - s2)));
  });
});

// ---- wasm vs JS -----------------------------------------------------------------------------

interface Segment {
  dims: number;
  codeBytes: number;
  recordSize: number;
  n: number;
  records: Uint8Array;
  planes: Uint8Array;
  lower: number;
  upper: number;
  componentSum: number;
  queryCorr: number;
  centroidDP: number;
}

/**
 * Random codes with corrections scaled like real OSQ output for unit-ish vectors (per-dim
 * spread ~ 1/sqrt(D)), so that the estimate s is O(1) and scores are mostly not clamped.
 */
function randomSegment(dims: number, n: number, seed: number): Segment {
  const r = rng(seed);
  const sigma = 1 / Math.sqrt(dims);
  const codeBytes = Math.ceil(dims / 8);
  const recordSize = codeBytes + 16;
  const records = new Uint8Array(n * recordSize);
  for (let i = 0; i < n; i++) {
    const bits = Array.from({ length: dims }, (): number => (r() < 0.5 ? 1 : 0));
    writeRecord(records, i * recordSize, {
      code: packBits(bits, codeBytes),
      lower: Math.fround(-sigma * (0.7 + 0.1 * r())),
      upper: Math.fround(sigma * (0.7 + 0.1 * r())),
      additionalCorrection: Math.fround(0.3 + 0.6 * r()),
      componentSum: bits.reduce((s, b) => s + b, 0),
    });
  }
  const nibbles = Array.from({ length: dims }, () => Math.floor(r() * 16));
  return {
    dims,
    codeBytes,
    recordSize,
    n,
    records,
    planes: transposeNibbles(nibbles, codeBytes),
    lower: Math.fround(-sigma * (2 + r())),
    upper: Math.fround(sigma * (2 + r())),
    componentSum: nibbles.reduce((s, v) => s + v, 0),
    queryCorr: Math.fround(0.2 * r()),
    centroidDP: Math.fround(0.5 + 0.2 * r()),
  };
}

describe('wasm estimator is bit-identical to the JS reference', () => {
  for (const dims of [8, 100, 384, 768, 1024, 1536]) {
    it(`dims ${dims}: int4BitDotProduct and all four similarities, range and ords`, () => {
      const seg = randomSegment(dims, 300, dims * 7919);
      const { codeBytes, recordSize, n } = seg;
      // Records at an odd address: the kernel must not depend on alignment.
      const recBlock = k.alloc(seg.records.length + 3);
      const recPtr = recBlock + 3;
      const planesPtr = k.alloc(seg.planes.length);
      const outPtr = k.alloc(4 * n);
      const ordsPtr = k.alloc(4 * n);
      const r = rng(dims);
      const ords = Int32Array.from({ length: n }, () => Math.floor(r() * n));
      const mem = k.u8();
      mem.set(seg.records, recPtr);
      mem.set(seg.planes, planesPtr);
      k.i32().set(ords, ordsPtr >>> 2);

      for (let i = 0; i < n; i++) {
        const js = JsKernels.int4BitDotProduct(seg.planes, 0, seg.records, i * recordSize, codeBytes);
        expect(k.int4BitDotProduct(planesPtr, recPtr + i * recordSize, codeBytes)).toBe(js);
      }

      for (const sim of SIMS) {
        const corr = {
          lower: seg.lower,
          upper: seg.upper,
          // ‖q − c‖² for EUCLIDEAN; q·c otherwise (centred so that s' stays mostly inside [−1, 1])
          additionalCorrection: Math.fround(sim === 0 ? 1 + seg.queryCorr : seg.queryCorr - 0.1),
          componentSum: seg.componentSum,
          dims,
          similarity: sim,
          centroidDP: seg.centroidDP,
        };
        const js = new Float32Array(n);
        JsKernels.scoreOsqRange({ ...corr, planes: seg.planes }, seg.records, recordSize, codeBytes, 0, n, js);
        // Most scores must come from the formula, not from a clamp, for the comparison to mean much.
        expect(js.filter((x) => Number.isFinite(x) && x !== 0 && x !== 1).length).toBeGreaterThan(0.8 * n);

        k.scoreOsqRange({ ...corr, planesPtr }, recPtr, recordSize, codeBytes, 0, n, outPtr);
        expect(bitsOf(k.f32().slice(outPtr >>> 2, (outPtr >>> 2) + n))).toEqual(bitsOf(js));

        // A sub-range starting mid-segment.
        k.scoreOsqRange({ ...corr, planesPtr }, recPtr, recordSize, codeBytes, 17, 50, outPtr);
        expect(bitsOf(k.f32().slice(outPtr >>> 2, (outPtr >>> 2) + 50))).toEqual(bitsOf(js.slice(17, 67)));

        const jsOrds = new Float32Array(n);
        JsKernels.scoreOsqOrds({ ...corr, planes: seg.planes }, seg.records, recordSize, codeBytes, ords, n, jsOrds);
        expect(jsOrds).toEqual(Float32Array.from(ords, (o) => js[o]));
        k.scoreOsqOrds({ ...corr, planesPtr }, recPtr, recordSize, codeBytes, ordsPtr, n, outPtr);
        expect(bitsOf(k.f32().slice(outPtr >>> 2, (outPtr >>> 2) + n))).toEqual(bitsOf(jsOrds));
      }
      for (const p of [recBlock, planesPtr, outPtr, ordsPtr]) k.free(p);
    });
  }

  it('int4BitDotProduct matches Σ qᵢdᵢ, including many chunks of all-ones bytes (no lane overflow)', () => {
    for (const codeBytes of [1, 7, 8, 9, 15, 16, 17, 31, 33, 2048, 2049, 5000]) {
      const r = rng(codeBytes);
      for (const fill of ['ones', 'random'] as const) {
        const planes = Uint8Array.from({ length: 4 * codeBytes }, () => (fill === 'ones' ? 0xff : Math.floor(r() * 256)));
        const code = Uint8Array.from({ length: codeBytes }, () => (fill === 'ones' ? 0xff : Math.floor(r() * 256)));
        let naive = 0;
        for (let i = 0; i < codeBytes * 8; i++) {
          const bit = (code[i >> 3] >> (7 - (i & 7))) & 1;
          let nib = 0;
          for (let p = 0; p < 4; p++) nib |= ((planes[p * codeBytes + (i >> 3)] >> (7 - (i & 7))) & 1) << p;
          naive += nib * bit;
        }
        if (fill === 'ones') expect(naive).toBe(15 * 8 * codeBytes);
        expect(JsKernels.int4BitDotProduct(planes, 0, code, 0, codeBytes)).toBe(naive);
        const q = k.alloc(planes.length),
          d = k.alloc(codeBytes + 16);
        k.u8().set(planes, q);
        k.u8().set(code, d);
        expect(k.int4BitDotProduct(q, d, codeBytes)).toBe(naive);

        // The estimator path (padded planes, whole-chunk loads) agrees for long codes too.
        const rec = new Uint8Array(codeBytes + 16);
        writeRecord(rec, 0, { code, lower: -0.01, upper: 0.01, additionalCorrection: 0.1, componentSum: 3 });
        k.u8().set(rec, d);
        const out = k.alloc(4);
        const corr = { lower: -0.02, upper: 0.03, additionalCorrection: 0.2, componentSum: 7, dims: codeBytes * 8, similarity: 3, centroidDP: 0.1 };
        k.scoreOsqRange({ ...corr, planesPtr: q }, d, codeBytes + 16, codeBytes, 0, 1, out);
        const js = new Float32Array(1);
        JsKernels.scoreOsqRange({ ...corr, planes }, rec, codeBytes + 16, codeBytes, 0, 1, js);
        expect(k.i32()[out >>> 2] >>> 0).toBe(f32Bits(js[0]));
        for (const p of [q, d, out]) k.free(p);
      }
    }
  });

  it('rejects records shorter than code + 16 bytes and dims that do not match the code size', () => {
    const q: OsqQuery = { planesPtr: 64, lower: 0, upper: 1, additionalCorrection: 0, componentSum: 0, dims: 100, similarity: 0, centroidDP: 0 };
    expect(() => k.scoreOsqRange(q, 64, 28, 13, 0, 1, 64)).toThrow(RangeError);
    expect(() => k.scoreOsqRange({ ...q, dims: 104 + 1 }, 64, 29, 13, 0, 1, 64)).toThrow(RangeError);
    expect(() => k.scoreOsqRange({ ...q, similarity: 4 }, 64, 29, 13, 0, 1, 64)).toThrow(RangeError);
  });
});

// ---- fp32 -----------------------------------------------------------------------------------

function relClose(a: number, b: number, scale: number, tol = 1e-5): boolean {
  return Math.abs(a - b) <= tol * Math.max(Math.abs(b), scale, 1e-30);
}

describe('fp32 kernels', () => {
  it('match Lucene score facts (VectorSimilarityFunction.ts formulas)', () => {
    const vec = (xs: number[]) => {
      const p = k.alloc(4 * xs.length);
      k.f32().set(xs, p >>> 2);
      return p;
    };
    const a = vec([1, 2, 3]),
      b = vec([4, 6, 8]);
    expect(k.squareDistance(a, b, 3)).toBe(50);
    expect(f32Bits(Math.fround(1 / Math.fround(1 + k.squareDistance(a, b, 3))))).toBe(0x3ca0a0a1);
    const c = vec([1, 0]),
      d = vec([1, 1]);
    expect(f32Bits(Math.fround(Math.fround(1 + k.cosine(c, d, 2)) / 2))).toBe(0x3f5a827a);
    const e = vec([0.6, 0.8]),
      g = vec([0.8, 0.6]);
    expect(f32Bits(Math.fround(Math.fround(1 + k.dot(e, g, 2)) / 2))).toBe(0x3f7ae148);
    const h = vec([3, 4]),
      i = vec([6, 8]);
    expect(k.cosine(h, i, 2)).toBe(1);
    const z = vec([0, 0]);
    expect(k.cosine(z, h, 2)).toBeNaN();
    for (const p of [a, b, c, d, e, g, h, i, z]) k.free(p);
  });

  it('dot, squareDistance, cosine and cosineParts agree with the JS reference within 1e-5 relative', () => {
    const r = rng(42);
    for (const dim of [1, 3, 4, 7, 16, 17, 33, 100, 384, 768, 1024, 1027, 1536]) {
      const a = Float32Array.from({ length: dim }, () => r() * 2 - 1);
      const b = Float32Array.from({ length: dim }, () => r() * 2 - 1);
      const pa = k.alloc(4 * dim),
        pb = k.alloc(4 * dim),
        po = k.alloc(12);
      k.f32().set(a, pa >>> 2);
      k.f32().set(b, pb >>> 2);
      // Errors of a sum scale with Σ|terms| rather than the (possibly cancelling) result.
      let absDot = 0,
        sq = 0;
      for (let i = 0; i < dim; i++) {
        absDot += Math.abs(a[i] * b[i]);
        sq += (a[i] - b[i]) ** 2;
      }
      expect(relClose(k.dot(pa, pb, dim), JsKernels.dot(a, 0, b, 0, dim), absDot)).toBe(true);
      expect(relClose(k.squareDistance(pa, pb, dim), JsKernels.squareDistance(a, 0, b, 0, dim), sq)).toBe(true);
      const jsCos = JsKernels.cosine(a, 0, b, 0, dim);
      const jsParts = new Float32Array(3);
      JsKernels.cosineParts(a, 0, b, 0, dim, jsParts);
      k.cosineParts(pa, pb, dim, po);
      const wParts = k.f32().slice(po >>> 2, (po >>> 2) + 3);
      expect(relClose(wParts[0], jsParts[0], absDot)).toBe(true);
      expect(relClose(wParts[1], jsParts[1], 0)).toBe(true);
      expect(relClose(wParts[2], jsParts[2], 0)).toBe(true);
      expect(relClose(k.cosine(pa, pb, dim), jsCos, absDot / Math.sqrt(jsParts[1] * jsParts[2]))).toBe(true);
      // cosine is exactly its parts combined in double.
      const [sd, sa, sb] = k.cosineSums(pa, pb, dim);
      expect(k.cosine(pa, pb, dim)).toBe(Math.fround(sd / Math.sqrt(sa * sb)));
      for (const p of [pa, pb, po]) k.free(p);
    }
  });

  it("the JS reference follows Lucene's scalar order bit for bit (segments/util/VectorUtil)", () => {
    const r = rng(7);
    for (const dim of [3, 32, 33, 100, 1024]) {
      const a = Float32Array.from({ length: dim }, () => r() * 2 - 1);
      const b = Float32Array.from({ length: dim }, () => r() * 2 - 1);
      expect(JsKernels.dot(a, 0, b, 0, dim)).toBe(VectorUtil.dotProduct(a, 0, b, 0, dim));
      expect(JsKernels.squareDistance(a, 0, b, 0, dim)).toBe(VectorUtil.squareDistance(a, 0, b, 0, dim));
      expect(JsKernels.cosine(a, 0, b, 0, dim)).toBe(VectorUtil.cosine(a, 0, b, 0, dim));
    }
  });

  for (const [nq, nd, dim] of [
    [1, 1, 1],
    [4, 2, 8],
    [7, 13, 37],
    [9, 101, 1024],
    [4, 130, 769],
    [3, 5, 1536],
  ] as const) {
    it(`dotBatch ${nq} queries x ${nd} docs x ${dim} dims matches per-pair dot`, () => {
      const r = rng(nq * 1000 + nd);
      const qs = Float32Array.from({ length: nq * dim }, () => r() * 2 - 1);
      const ds = Float32Array.from({ length: nd * dim }, () => r() * 2 - 1);
      const pq = k.alloc(qs.byteLength),
        pd = k.alloc(ds.byteLength),
        po = k.alloc(4 * nq * nd + 16);
      k.f32().set(qs, pq >>> 2);
      k.f32().set(ds, pd >>> 2);
      const sentinel = (po >>> 2) + nq * nd;
      k.f32()[sentinel] = 12345;
      k.dotBatch(pq, nq, pd, nd, dim, po);
      const out = k.f32().slice(po >>> 2, (po >>> 2) + nq * nd);
      expect(k.f32()[sentinel]).toBe(12345);
      const ref = new Float32Array(nq * nd);
      JsKernels.dotBatch(qs, nq, ds, nd, dim, ref);
      for (let q = 0; q < nq; q++) {
        for (let d = 0; d < nd; d++) {
          let abs = 0;
          for (let i = 0; i < dim; i++) abs += Math.abs(qs[q * dim + i] * ds[d * dim + i]);
          expect(relClose(out[q * nd + d], ref[q * nd + d], abs), `q${q} d${d}`).toBe(true);
        }
      }
      for (const p of [pq, pd, po]) k.free(p);
    });
  }
});

// ---- allocator ------------------------------------------------------------------------------

describe('allocator', () => {
  it('first fit: reuses freed blocks, splits and coalesces', () => {
    const heap = new FirstFitHeap(64, 64 + 4096, () => {
      throw new RangeError('full');
    });
    const a = heap.alloc(100);
    const b = heap.alloc(100);
    const c = heap.alloc(100);
    expect([a % 16, b % 16, c % 16]).toEqual([0, 0, 0]);
    expect(b).toBe(a + 112);
    heap.free(a);
    expect(heap.alloc(50)).toBe(a); // first fit reuses the hole
    const d = heap.alloc(40); // the rest of a's 112 bytes is 48 bytes: fits
    expect(d).toBe(a + 64);
    heap.free(a);
    heap.free(d);
    heap.free(b); // a..b coalesce into one 224-byte hole
    expect(heap.stats().freeBlocks).toBe(2);
    expect(heap.alloc(224)).toBe(a);
    heap.free(a);
    heap.free(c);
    expect(heap.stats()).toMatchObject({ freeBlocks: 1, usedBytes: 0, freeBytes: 4096, allocations: 0 });
    expect(() => heap.alloc(8192)).toThrow('full');
    expect(() => heap.free(a)).toThrow(/not an allocated pointer/);
    expect(() => heap.alloc(8, 3)).toThrow(RangeError);
  });

  it('honours large alignments and keeps the leading fragment free', () => {
    const heap = new FirstFitHeap(64, 65536, () => {
      throw new RangeError('full');
    });
    const a = heap.alloc(10);
    const b = heap.alloc(10, 4096);
    expect(b % 4096).toBe(0);
    const c = heap.alloc(16);
    expect(c).toBe(a + 16); // the gap before b is still usable
    for (const p of [a, b, c]) heap.free(p);
    expect(heap.stats().freeBlocks).toBe(1);
  });

  it('grows the wasm memory for large blocks, keeps data, and refreshes the views', async () => {
    const kk = await Kernels.load({ initialBytes: 1 << 16 });
    const small = kk.alloc(64);
    kk.u8().set([1, 2, 3, 4], small);
    const f32 = kk.f32();
    f32[(small >>> 2) + 4] = 3.5;
    const before = kk.memory.buffer.byteLength;
    const big = kk.alloc(150 * 1024 * 1024); // a segment's worth of records
    expect(kk.memory.buffer.byteLength).toBeGreaterThan(before);
    expect(kk.memory.buffer.byteLength).toBeGreaterThanOrEqual(big + 150 * 1024 * 1024);
    expect(f32.length).toBe(0); // the old view is detached by growth ...
    expect(kk.u8().buffer).toBe(kk.memory.buffer); // ... the getters hand out fresh ones
    expect(Array.from(kk.u8().subarray(small, small + 4))).toEqual([1, 2, 3, 4]);
    expect(kk.f32()[(small >>> 2) + 4]).toBe(3.5);
    kk.u8()[big + 150 * 1024 * 1024 - 1] = 7;
    expect(kk.u8()[big + 150 * 1024 * 1024 - 1]).toBe(7);
    kk.free(big);
    // The freed region is reused without growing again.
    const len = kk.memory.buffer.byteLength;
    const again = kk.alloc(100 * 1024 * 1024);
    expect(kk.memory.buffer.byteLength).toBe(len);
    expect(again).toBe(big);
    kk.free(again);
    kk.free(small);
    expect(() => kk.alloc(5 * 1024 * 1024 * 1024)).toThrow(RangeError);
    expect(kk.heapStats().usedBytes).toBe(0);
  });

  it('works at addresses above 2 GiB (pointers are unsigned)', async () => {
    const grown: number[] = [];
    const kk = await Kernels.load({ onGrow: (b) => grown.push(b.byteLength) });
    const low = kk.alloc(2 ** 31); // never touched, so never committed
    const p = kk.alloc(1024);
    expect(p).toBeGreaterThan(2 ** 31);
    expect(grown.length).toBeGreaterThanOrEqual(2);
    expect(grown[grown.length - 1]).toBe(kk.memory.buffer.byteLength);
    const planes = transposeNibbles([15, 0, 7, 8, 3, 12, 1, 0]);
    const rec = new Uint8Array(17);
    writeRecord(rec, 0, { code: packBits([1, 0, 1, 1, 0, 0, 1, 0]), lower: -0.5, upper: 0.5, additionalCorrection: -0.4, componentSum: 4 });
    kk.u8().set(planes, p);
    kk.u8().set(rec, p + 16);
    kk.i32()[(p + 64) >>> 2] = 0;
    expect(kk.int4BitDotProduct(p, p + 16, 1)).toBe(31);
    const q: OsqQuery = { planesPtr: p, lower: -1, upper: 2, additionalCorrection: -0.5, componentSum: 46, dims: 8, similarity: 3, centroidDP: 0.5 };
    kk.scoreOsqOrds(q, p + 16, 17, 1, p + 64, 1, p + 128);
    expect(kk.i32()[(p + 128) >>> 2] >>> 0).toBe(0x3f99999d);
    kk.f32().set([1, 2, 3, 4, 6, 8], (p + 256) >>> 2);
    expect(kk.squareDistance(p + 256, p + 268, 3)).toBe(50);
    kk.free(p);
    kk.free(low);
  });

  it('gives every instance its own memory', async () => {
    const k2 = await Kernels.load();
    expect(k2.memory).not.toBe(k.memory);
    const p = k2.alloc(16);
    k2.u8()[p] = 99;
    expect(k.u8()[p]).not.toBe(99);
  });
});

// ---- loading --------------------------------------------------------------------------------

describe('loading', () => {
  it('reports where the binary came from', async () => {
    await Kernels.module();
    const info = Kernels.binaryInfo();
    expect(info).toBeDefined();
    expect(['wasm', 'wat']).toContain(info!.source);
    expect(info!.byteLength).toBeGreaterThan(1000);
  });

  it('posts the compiled module to a worker thread, which instantiates it with its own memory', async () => {
    const module = await Kernels.module();
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
      WebAssembly.instantiate(workerData.module, { env: { memory } }).then((inst) => {
        const u8 = new Uint8Array(memory.buffer);
        u8.set([0xaa, 0xa8, 0xa4, 0x94, 0xb2], 64);
        parentPort.postMessage(inst.exports.int4BitDotProduct(64, 68, 1));
      });`;
    const result = await new Promise((resolve, reject) => {
      const w = new Worker(code, { eval: true, workerData: { module } });
      w.once('message', (m) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
    expect(result).toBe(31);
  });

  const distKernels = fileURLToPath(new URL('../dist/segments/kernels/Kernels.js', import.meta.url));
  it.skipIf(!existsSync(distKernels))('loads from the compiled dist/ in a worker thread', async () => {
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.url).then(async ({ Kernels }) => {
        const k = await Kernels.load();
        const q = k.alloc(4), d = k.alloc(1);
        k.u8().set([0xaa, 0xa8, 0xa4, 0x94], q);
        k.u8()[d] = 0xb2;
        parentPort.postMessage({ qc: k.int4BitDotProduct(q, d, 1), source: Kernels.binaryInfo().source });
      });`;
    const result = await new Promise<{ qc: number; source: string }>((resolve, reject) => {
      const w = new Worker(code, { eval: true, workerData: { url: pathToFileURL(distKernels).href } });
      w.once('message', (m) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
    expect(result.qc).toBe(31);
  });
});
