import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RECALL_TARGET, defaultBeam, openIndex } from '../src/api/openIndex.js';
import { DEFAULT_OVERSAMPLE } from '../src/api/types.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import type { RecallCalibration } from '../segments/index/RecallCalibration.js';
import {
  decodeRecallCalibration,
  encodeRecallCalibration,
  RECALL_CALIBRATION_FILE,
  readRecallCalibration,
  writeRecallCalibration,
} from '../segments/index/RecallCalibrationFormat.js';
import { CALIBRATE_AT_OPEN_DOCS } from '../src/calibration/IndexRecallCalibration.js';
import { meanAndLowerBound } from '../src/calibration/calibrateRecall.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';
import { startServer } from '../src/http/server.js';
import { buildIndex } from '../src/api/buildIndex.js';

/**
 * Recall targets: an index's calibration (what oversample reaches what recall@10, measured on its
 * own docs against exact neighbours) is stored beside its commits, measured at open when missing,
 * and a search with a target runs only a setting the calibration measured to reach it.
 */
const measured: RecallCalibration = {
  k: 10,
  queries: 200,
  source: 'documents',
  generation: 3,
  docs: 20_000,
  measuredAt: Date.UTC(2026, 11, 5),
  confidence: 0.95,
  defaultTarget: null,
  points: [
    { oversample: 1, numCandidates: 200, recall: 0.62, lowerBound: 0.6, meanMs: 0.4 },
    { oversample: 2, numCandidates: 200, recall: 0.83, lowerBound: 0.8, meanMs: 0.5 },
    { oversample: 4, numCandidates: 200, recall: 0.95, lowerBound: 0.93, meanMs: 0.7 },
    { oversample: 8, numCandidates: 320, recall: 0.975, lowerBound: 0.96, meanMs: 1 },
  ],
};

let t: TestIndex;
beforeAll(async () => {
  t = await buildTestIndex({ n: CALIBRATE_AT_OPEN_DOCS, dims: 16, segmentDocs: 10_000, queries: 50 });
}, 180_000);
afterAll(() => t?.cleanup());

describe('the recall calibration file', () => {
  it('round-trips every field', () => {
    const back = decodeRecallCalibration(encodeRecallCalibration(measured), 'recall.cal');
    expect(back.points.map((p) => p.oversample)).toEqual([1, 2, 4, 8]);
    expect(back).toMatchObject({ k: 10, queries: 200, source: 'documents', generation: 3, docs: 20_000, measuredAt: measured.measuredAt, defaultTarget: null });
    expect(back.confidence).toBe(0.95);
    expect(back.points).toEqual(measured.points);
    expect(decodeRecallCalibration(encodeRecallCalibration({ ...measured, defaultTarget: 0.9 }), 'recall.cal').defaultTarget).toBe(0.9);
  });

  it('keeps several beams per oversample, beam descending, and rejects any other order as corrupt', () => {
    const beams: RecallCalibration = {
      ...measured,
      points: [measured.points[0]!, measured.points[1]!, { oversample: 2, numCandidates: 100, recall: 0.82, lowerBound: 0.79, meanMs: 0.35 }, ...measured.points.slice(2)],
    };
    expect(decodeRecallCalibration(encodeRecallCalibration(beams), 'recall.cal').points).toEqual(beams.points);
    const swapped = { ...beams, points: [beams.points[0]!, beams.points[2]!, beams.points[1]!, ...beams.points.slice(3)] };
    expect(() => decodeRecallCalibration(encodeRecallCalibration(swapped), '/x/recall.cal')).toThrow(/invalid calibration point 2.*resource=\/x\/recall\.cal/);
  });

  it('is detected as corrupt when a byte changes, naming the file', () => {
    const bytes = encodeRecallCalibration(measured);
    bytes[bytes.length - 30]! ^= 0x10;
    expect(() => decodeRecallCalibration(bytes, '/x/recall.cal')).toThrow(CorruptIndexException);
    expect(() => decodeRecallCalibration(bytes, '/x/recall.cal')).toThrow(/checksum failed.*resource=\/x\/recall\.cal/);
  });
});

describe('the lower bound of a setting', () => {
  it('is the one-sided 99% normal bound on the mean recall, never above the mean nor below 0', () => {
    const recalls = Float64Array.from({ length: 200 }, (_, i) => (i % 10 === 0 ? 0.8 : 1));
    const { mean, lowerBound } = meanAndLowerBound(recalls);
    expect(mean).toBeCloseTo(0.98, 12);
    const sd = Math.sqrt((20 * 0.18 ** 2 + 180 * 0.02 ** 2) / 199);
    expect(lowerBound).toBeCloseTo(0.98 - (2.3263 * sd) / Math.sqrt(200), 9);
    expect(meanAndLowerBound(Float64Array.of(1, 1, 1))).toEqual({ mean: 1, lowerBound: 1 });
    expect(meanAndLowerBound(Float64Array.of(0, 1)).lowerBound).toBe(0);
  });
});

describe('a search with a recall target', () => {
  it('runs the cheapest setting measured to reach it, and refuses a target none reached', async () => {
    writeRecallCalibration(t.dir, measured);
    try {
      const idx = await openIndex(t.dir, { calibrate: 'never' });
      try {
        const q = t.queries.subarray(0, 16);
        const r = await idx.search(q, { k: 10, recallTarget: 0.9 });
        expect(r.stats.recall).toEqual({ target: 0.9, oversample: 4, numCandidates: defaultBeam(40), calibratedRecall: 0.93, reached: true });
        expect(r.stats.candidates).toBe(40);
        expect((await idx.search(q, { k: 10, recallTarget: 0.8 })).stats.recall?.oversample).toBe(2);
        // At another k than the calibration's, never a smaller beam than it measured nor than the default.
        expect((await idx.search(q, { k: 5, recallTarget: 0.96 })).stats).toMatchObject({ candidates: 40, recall: { oversample: 8, numCandidates: 320 } });
        expect((await idx.search(q, { k: 100, recallTarget: 0.96 })).stats).toMatchObject({ candidates: 800, recall: { oversample: 8, numCandidates: defaultBeam(800) } });
        await expect(idx.search(q, { k: 10, recallTarget: 0.97 })).rejects.toThrow(
          /recall target 0.97 is above what index .* measured: at best recall@10 >= 0.96 \(oversample 8\)/,
        );
        await expect(idx.search(q, { k: 10, recallTarget: 0.9, oversample: 3 })).rejects.toThrow(/either recallTarget or those/);
        await expect(idx.search(q, { k: 10, recallTarget: 1.5 })).rejects.toThrow(/recallTarget must be a recall@10 in \[0.01, 0.999\]/);
        // No setting named: the default target, 0.95, on a calibrated index.
        const plain = await idx.search(q, { k: 10 });
        expect(plain.stats.recall).toMatchObject({ target: DEFAULT_RECALL_TARGET, oversample: 8, reached: true });
        expect(plain.stats.candidates).toBe(80);
        // k x oversample stays within 10,000 candidates: an asked target that needs more is refused, the default takes the largest setting that fits.
        await expect(idx.search(q, { k: 1500, recallTarget: 0.95 })).rejects.toThrow(/needs oversample 8: k 1500 x 8 exceeds 10000 candidates; lower k/);
        expect((await idx.search(q, { k: 1500 })).stats).toMatchObject({ candidates: 6000, recall: { oversample: 4, reached: false } });
        // A named oversample is run as named.
        const named = await idx.search(q, { k: 10, oversample: 2 });
        expect(named.stats.recall).toBeUndefined();
        expect(named.stats.candidates).toBe(20);
        expect((await idx.describe()).calibration?.points).toHaveLength(4);
      } finally {
        await idx.close();
      }
      // Without a default target (null), such searches run the default oversample.
      const plainDefault = await openIndex(t.dir, { calibrate: 'never', recallTarget: null });
      try {
        const r = await plainDefault.search(t.queries.subarray(0, 16), { k: 10 });
        expect(r.stats.recall).toBeUndefined();
        expect(r.stats.candidates).toBe(10 * DEFAULT_OVERSAMPLE);
      } finally {
        await plainDefault.close();
      }
      // An index default target applies to searches that name no setting.
      const defaulted = await openIndex(t.dir, { calibrate: 'never', recallTarget: 0.8 });
      try {
        const r = await defaulted.search(t.queries.subarray(0, 16), { k: 10 });
        expect(r.stats.recall).toMatchObject({ target: 0.8, oversample: 2, reached: true });
        expect((await defaulted.search(t.queries.subarray(0, 16), { k: 10, oversample: 3 })).stats.recall).toBeUndefined();
        expect((await defaulted.describe()).recallTarget).toBe(0.8);
      } finally {
        await defaulted.close();
      }
    } finally {
      rmSync(join(t.dir, RECALL_CALIBRATION_FILE));
    }
  });

  it('takes the smallest oversample measured to reach it, at the smallest beam there that does, whatever the times', async () => {
    writeRecallCalibration(t.dir, {
      ...measured,
      points: [
        { oversample: 2, numCandidates: 200, recall: 0.9, lowerBound: 0.88, meanMs: 0.5 },
        { oversample: 2, numCandidates: 100, recall: 0.89, lowerBound: 0.87, meanMs: 0.3 },
        { oversample: 3, numCandidates: 200, recall: 0.94, lowerBound: 0.92, meanMs: 0.6 },
        { oversample: 3, numCandidates: 100, recall: 0.935, lowerBound: 0.915, meanMs: 0.4 },
        { oversample: 3, numCandidates: 50, recall: 0.9, lowerBound: 0.88, meanMs: 0.25 },
        // Measured faster (a warmer page cache), but more candidates to read cold.
        { oversample: 4, numCandidates: 200, recall: 0.96, lowerBound: 0.95, meanMs: 0.2 },
        { oversample: 4, numCandidates: 100, recall: 0.955, lowerBound: 0.94, meanMs: 0.1 },
      ],
    });
    try {
      const idx = await openIndex(t.dir, { calibrate: 'never' });
      try {
        const q = t.queries.subarray(0, 16);
        // 0.9: oversample 3, whose beam 100 reaches 0.915 (beam 50 only 0.88).
        expect((await idx.search(q, { k: 10, recallTarget: 0.9 })).stats).toMatchObject({ candidates: 30, recall: { oversample: 3, numCandidates: 100, calibratedRecall: 0.915 } });
        expect((await idx.search(q, { k: 10, recallTarget: 0.87 })).stats.recall).toMatchObject({ oversample: 2, numCandidates: 100 });
        expect((await idx.search(q, { k: 10, recallTarget: 0.88 })).stats.recall).toMatchObject({ oversample: 2, numCandidates: 200 });
        expect((await idx.search(q, { k: 10, recallTarget: 0.92 })).stats.recall).toMatchObject({ oversample: 3, numCandidates: 200 });
        expect((await idx.search(q, { k: 10, recallTarget: 0.93 })).stats.recall).toMatchObject({ oversample: 4, numCandidates: 100 });
      } finally {
        await idx.close();
      }
    } finally {
      rmSync(join(t.dir, RECALL_CALIBRATION_FILE));
    }
  });

  it('is refused, saying how to calibrate, when the index has none and may not measure one', async () => {
    const idx = await openIndex(t.dir, { calibrate: 'never' });
    try {
      await expect(idx.search(t.queries.subarray(0, 16), { k: 10, recallTarget: 0.9 })).rejects.toThrow(/has no recall calibration \(run `prescore calibrate/);
    } finally {
      await idx.close();
    }
  });

  it('a corrupt calibration file fails the open, naming it', async () => {
    writeRecallCalibration(t.dir, measured);
    const path = join(t.dir, RECALL_CALIBRATION_FILE);
    const bytes = readFileSync(path);
    bytes[bytes.length - 30]! ^= 0x01;
    writeFileSync(path, bytes);
    try {
      await expect(openIndex(t.dir, { calibrate: 'never' })).rejects.toThrow(new RegExp(`checksum failed.*${RECALL_CALIBRATION_FILE}`));
    } finally {
      rmSync(path);
    }
  });
});

describe('a rebuild in place', () => {
  it('drops the calibration of the docs it replaces', async () => {
    const small = await buildTestIndex({ n: 300, dims: 8, segmentDocs: 300 });
    try {
      writeRecallCalibration(small.dir, measured);
      await buildIndex({ input: small.input, out: small.dir, similarity: small.similarity, segmentDocs: 300, progress: false });
      expect(readRecallCalibration(small.dir)).toBeNull();
    } finally {
      small.cleanup();
    }
  });
});

describe('recall_target over HTTP', () => {
  it('is taken in both request shapes, says what it ran, and is a 400 beside oversample or beyond the calibration', async () => {
    writeRecallCalibration(t.dir, measured);
    const idx = await openIndex(t.dir, { calibrate: 'never' });
    const server = await startServer(idx, { host: '127.0.0.1', port: 0, warmUpRequests: 0 }, { log: () => {} });
    const post = (path: string, body: unknown) => fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    try {
      const vector = Array.from(t.queries.subarray(0, 16));
      const native = await post('/v1/search', { vector, k: 10, recall_target: 0.9, stats: true });
      expect(native.status).toBe(200);
      const body = (await native.json()) as any;
      expect(body.hits).toHaveLength(10);
      expect(body.stats.recall).toEqual({ target: 0.9, oversample: 4, num_candidates: defaultBeam(40), calibrated_recall: 0.93, reached: true });
      expect(body.stats.candidates).toBe(40);

      const es = await post('/index/_search', { knn: { field: 'vector', query_vector: vector, k: 10, recall_target: 0.96 }, _source: false });
      expect(es.status).toBe(200);
      expect(((await es.json()) as any).hits.hits).toHaveLength(10);
      const query = await post('/index/_search', { query: { knn: { field: 'vector', query_vector: vector, k: 10, recall_target: 0.8 } }, _source: false });
      expect(query.status).toBe(200);

      const both = await post('/v1/search', { vector, k: 10, recall_target: 0.9, oversample: 3 });
      expect(both.status).toBe(400);
      expect(await both.text()).toMatch(/recall_target.*give recall_target or oversample, not both/);
      const esBoth = await post('/index/_search', { knn: { field: 'vector', query_vector: vector, k: 10, num_candidates: 100, recall_target: 0.9 } });
      expect(esBoth.status).toBe(400);
      expect(await esBoth.text()).toMatch(/knn\.recall_target.*num_candidates, not both/);
      const high = await post('/v1/search', { vector, k: 10, recall_target: 0.99 });
      expect(high.status).toBe(400);
      expect(await high.text()).toMatch(/above what index .* calibration measured/);
      const outOfRange = await post('/v1/search', { vector, k: 10, recall_target: 1 });
      expect(outOfRange.status).toBe(400);
      expect(await outOfRange.text()).toMatch(/recall_target/);

      const indexes = (await (await fetch(`${server.url}/v1/indexes`)).json()) as any;
      expect(JSON.stringify(indexes)).toContain('"lowerBound":0.93');
    } finally {
      await server.close({ force: true });
      await idx.close();
      rmSync(join(t.dir, RECALL_CALIBRATION_FILE));
    }
  });
});

describe('an index without a calibration', () => {
  it('measures one at open, in the background, and keeps it in its directory', async () => {
    expect(existsSync(join(t.dir, RECALL_CALIBRATION_FILE))).toBe(false);
    const idx = await openIndex(t.dir, { calibrationProgress: false });
    try {
      expect((await idx.describe()).calibrating).toBe(true);
      // A search with a target waits for the measurement under way.
      const r = await idx.search(t.queries.subarray(0, 16), { k: 10, recallTarget: 0.9 });
      const description = await idx.describe();
      expect(description.calibrating).toBe(false);
      const c = description.calibration!;
      expect(c).toMatchObject({ k: 10, queries: 200, source: 'documents', docs: CALIBRATE_AT_OPEN_DOCS });
      expect(c.points[0]!).toMatchObject({ oversample: 1, numCandidates: defaultBeam(10) });
      // Per oversample the default beam, then (once its recall reached 0.8) half and a quarter of it
      // while they stay above the candidates; oversample ascending, beam descending.
      const defaults = c.points.filter((p) => p.numCandidates === defaultBeam(Math.ceil(10 * p.oversample)));
      expect(new Set(defaults.map((p) => p.oversample)).size).toBe(defaults.length);
      for (const [i, p] of c.points.entries()) {
        const before = c.points[i - 1];
        if (before) expect(p.oversample > before.oversample || (p.oversample === before.oversample && p.numCandidates < before.numCandidates)).toBe(true);
        const atDefault = defaults.find((d) => d.oversample === p.oversample)!;
        expect([atDefault.numCandidates, Math.round(atDefault.numCandidates / 2), Math.round(atDefault.numCandidates / 4)]).toContain(p.numCandidates);
        expect(p.numCandidates).toBeGreaterThan(Math.ceil(10 * p.oversample));
      }
      const smaller = c.points.filter((p) => !defaults.includes(p));
      expect(smaller.length).toBeGreaterThan(0);
      for (const p of smaller) expect(defaults.filter((d) => d.oversample < p.oversample).at(-1)!.recall).toBeGreaterThanOrEqual(0.8);
      // Measured until the default beam's bound passes 0.999, its mean 0.999, or three more oversamples found nothing.
      const last = defaults.at(-1)!;
      const plateau = defaults.length >= 4 && last.recall - defaults.at(-4)!.recall < 0.001;
      expect(last.lowerBound >= 0.999 || last.recall >= 0.999 || plateau || last.oversample === 100).toBe(true);
      expect(c.confidence).toBe(0.99);
      for (const p of c.points) expect(p.lowerBound).toBeLessThanOrEqual(p.recall);
      expect(last.recall).toBeGreaterThan(c.points[0]!.recall);
      // The search ran the smallest oversample measured to reach 0.9, at its smallest beam that does.
      const oversample = c.points.find((p) => p.lowerBound >= 0.9)!.oversample;
      const beam = c.points.filter((p) => p.oversample === oversample && p.lowerBound >= 0.9).at(-1)!.numCandidates;
      expect(r.stats.recall).toMatchObject({ target: 0.9, oversample, numCandidates: beam, reached: true });
      expect(readRecallCalibration(t.dir)).toMatchObject({ queries: 200, points: expect.any(Array) });
    } finally {
      await idx.close();
    }
    // The next open reads it and measures nothing.
    const again = await openIndex(t.dir);
    try {
      expect(await again.describe()).toMatchObject({ calibrating: false, calibration: { queries: 200 } });
    } finally {
      await again.close();
    }
  }, 120_000);
});
