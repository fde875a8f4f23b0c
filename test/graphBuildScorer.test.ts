import { describe, expect, it } from 'vitest';
import { Kernels } from '../segments/kernels/Kernels.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { EncodedQuantizedScorerSupplier, EncodedScorerSupplier } from '../segments/quantized/EncodedVectorScorer.js';
import { quantizationSettings, quantizeField } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { CORRECTIONS_BYTES } from '../segments/quantized/ScalarQuantizedVectorsFormat.js';
import type { DocBits } from '../segments/quantized/ScalarEncodings.js';
import { mulberry32 } from '../src/gen/Rng.js';

function randomVectors(n: number, dims: number, seed: number) {
  const rnd = mulberry32(seed);
  const data = Array.from({ length: n }, () => Float32Array.from({ length: dims }, () => rnd() * 2 - 1));
  return { size: n, dims, vector: (o: number) => data[o] };
}

describe('graph construction over multi-bit codes scores in wasm (EncodedQuantizedScorerSupplier)', () => {
  const cases: [DocBits, number, VectorSimilarityFunction][] = [
    [2, 768, VectorSimilarityFunction.COSINE],
    [4, 768, VectorSimilarityFunction.DOT_PRODUCT],
    [4, 101, VectorSimilarityFunction.EUCLIDEAN], // query records of 101 + 16 bytes: not 4-byte aligned
    [7, 64, VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT],
    [8, 100, VectorSimilarityFunction.COSINE],
  ];
  it.each(cases)("gives the JS estimator's doc-vs-doc scores bit for bit: %i-bit docs, %i dims, %s", async (bits, dims, similarity) => {
    const n = 300;
    const q = quantizeField(randomVectors(n, dims, bits * 1000 + dims), similarity, { withQueryRecords: true, settings: quantizationSettings({ bits }) });
    const enc = q.settings.encoding;
    const k = await Kernels.load();
    const codeBytes = enc.docCodeBytes(dims);
    const recordsPtr = k.alloc(q.records.length);
    const queryRecordsPtr = k.alloc(q.queryRecords!.length);
    k.u8().set(q.records, recordsPtr);
    k.u8().set(q.queryRecords!, queryRecordsPtr);
    const records = { kernels: k, recordsPtr, count: n, codeBytes, recordBytes: codeBytes + CORRECTIONS_BYTES };
    const wasmScorer = new EncodedQuantizedScorerSupplier(enc, records, queryRecordsPtr, q.queryRecords!, dims, similarity.ordinal, q.centroidDP).scorer();
    const jsScorer = new EncodedScorerSupplier(enc, dims, q.records, q.queryRecords!, similarity.ordinal, q.centroidDP).scorer();
    const ords = Int32Array.from({ length: n }, (_, i) => (i * 7) % n);
    const fromWasm = new Float32Array(n);
    const fromJs = new Float32Array(n);
    for (const ord of [0, 1, 137, n - 1]) {
      wasmScorer.setScoringOrdinal(ord);
      jsScorer.setScoringOrdinal(ord);
      wasmScorer.bulkScore(ords, n, fromWasm);
      jsScorer.bulkScore(ords, n, fromJs);
      expect(fromWasm).toEqual(fromJs);
      expect(wasmScorer.score(ord)).toBe(jsScorer.score(ord));
    }
  });

  it('refuses 1-bit codes and query records of the wrong size, saying what it needs', async () => {
    const dims = 64;
    const q = quantizeField(randomVectors(10, dims, 1), VectorSimilarityFunction.COSINE, { withQueryRecords: true, settings: quantizationSettings({ bits: 4 }) });
    const k = await Kernels.load();
    const records = { kernels: k, recordsPtr: 0, count: 10, codeBytes: 32, recordBytes: 48 };
    const one = quantizationSettings({ bits: 1 }).encoding;
    expect(() => new EncodedQuantizedScorerSupplier(one, records, 0, q.queryRecords!, dims, 2, 0)).toThrow(/1-bit codes use BinaryQuantizedScorerSupplier/);
    expect(() => new EncodedQuantizedScorerSupplier(q.settings.encoding, records, 0, q.queryRecords!.subarray(1), dims, 2, 0)).toThrow(
      /10 docs need 800 bytes of query records, got 799/,
    );
  });
});
