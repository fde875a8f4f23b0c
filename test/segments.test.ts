import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, readdirSync, readFileSync, truncateSync, writeFileSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Executor } from '../src/executor/Executor.js';
import { DirectoryReader } from '../segments/index/DirectoryReader.js';
import { readLatestCommit } from '../segments/index/CommitPoint.js';
import { FlatVectorsReader } from '../segments/flat/FlatVectorsReader.js';
import { ScalarQuantizedVectorsReader } from '../segments/quantized/ScalarQuantizedVectorsReader.js';
import { quantizationSettings, quantizeField } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { QueryQuantizer } from '../segments/quantized/QueryQuantizer.js';
import { wholeFile } from '../segments/store/FileSlice.js';
import { segmentFileName } from '../segments/flat/FlatVectorsFormat.js';
import { JsKernels } from '../segments/kernels/JsKernels.js';
import { binaryCodeBytes } from '../segments/quantization/BitPacking.js';
import { buildTestIndex, type TestIndex } from './support/testIndex.js';

let t: TestIndex;

beforeAll(async () => {
  t = await buildTestIndex({ n: 1500, dims: 100, segmentDocs: 600, flatThreshold: 500 });
});

afterAll(async () => {
  t?.cleanup();
  await Executor.shutdown();
});

function segmentFiles(dir: string, segment: string, ext: string) {
  const commit = readLatestCommit(dir);
  const info = commit.segments.find((s) => s.name === segment)!;
  const name = segmentFileName(info.name, info.suffix, ext);
  return { info, name, path: join(dir, name) };
}

describe('an index built from vectors', () => {
  it('commits the segments in docBase order, with graphs only above the flat threshold', () => {
    const commit = readLatestCommit(t.dir);
    expect(commit.field).toMatchObject({ name: 'vector', dims: 100 });
    expect(commit.segments.map((s) => [s.name, s.maxDoc, s.hasGraph])).toEqual([
      ['_0', 600, true],
      ['_1', 600, true],
      ['_2', 300, false],
    ]);
  });

  it('round-trips every fp32 vector exactly', () => {
    const reader = DirectoryReader.open(t.dir);
    let doc = 0;
    for (const leaf of reader.leaves) {
      const { info } = segmentFiles(t.dir, leaf.reader.name, 'vec');
      const flat = FlatVectorsReader.open(
        wholeFile(join(t.dir, segmentFileName(info.name, info.suffix, 'vemf'))),
        wholeFile(join(t.dir, segmentFileName(info.name, info.suffix, 'vec'))),
        info.id,
        info.suffix,
      );
      expect(flat.field(0).vectorDataOffset % 4096).toBe(0);
      for (let d = 0; d < leaf.reader.maxDoc; d++, doc++) {
        expect(flat.readVector(0, d)).toEqual(t.base.subarray(doc * 100, (doc + 1) * 100));
        expect(leaf.reader.id(d)).toBe(String(doc));
      }
    }
    expect(doc).toBe(t.n);
  });

  it('stores exactly the 1-bit codes, corrections and estimates computed in memory before writing', () => {
    const reader = DirectoryReader.open(t.dir);
    for (const leaf of reader.leaves) {
      const { info } = segmentFiles(t.dir, leaf.reader.name, 'veq');
      const sq = ScalarQuantizedVectorsReader.open(
        wholeFile(join(t.dir, segmentFileName(info.name, info.suffix, 'vemq'))),
        wholeFile(join(t.dir, segmentFileName(info.name, info.suffix, 'veq'))),
        info.id,
        info.suffix,
      );
      const vectors = t.base.subarray(leaf.docBase * 100, (leaf.docBase + leaf.reader.maxDoc) * 100);
      // The build's defaults (quantizationSettings()): what `prescore build` used for this index.
      const inMemory = quantizeField({ size: leaf.reader.maxDoc, dims: 100, vector: (o) => vectors.subarray(o * 100, (o + 1) * 100) }, t.similarity, {
        settings: quantizationSettings(),
      });
      const onDisk = sq.readRecords(0);
      expect(onDisk).toEqual(inMemory.records);
      const entry = sq.field(0);
      expect(entry.centroid).toEqual(inMemory.centroid);
      expect(entry.centroidDP).toBe(inMemory.centroidDP);
      // The estimate of a query against every doc is the same from both copies.
      const codeBytes = binaryCodeBytes(100);
      const planes = new Uint8Array(4 * codeBytes);
      const qq = new QueryQuantizer(t.similarity, 100).quantize(t.queries.subarray(0, 100), entry.centroid, planes);
      const jq = { ...qq, planes, dims: 100, similarity: t.similarity.ordinal, centroidDP: entry.centroidDP };
      const a = new Float32Array(leaf.reader.maxDoc);
      const b = new Float32Array(leaf.reader.maxDoc);
      JsKernels.scoreOsqRange(jq as never, onDisk, codeBytes + 16, codeBytes, 0, leaf.reader.maxDoc, a);
      JsKernels.scoreOsqRange(jq as never, inMemory.records, codeBytes + 16, codeBytes, 0, leaf.reader.maxDoc, b);
      expect(a).toEqual(b);
    }
  });

  it('passes checkIntegrity, and checkIntegrity catches a flipped byte in any data file', () => {
    DirectoryReader.open(t.dir).checkIntegrity();
    for (const ext of ['vec', 'veq', 'vex']) {
      const copy = copyIndex(t.dir);
      try {
        const { path, name } = segmentFiles(copy, '_0', ext);
        const bytes = readFileSync(path);
        bytes[Math.floor(bytes.length / 2)] ^= 0x01;
        writeFileSync(path, bytes);
        const reader = DirectoryReader.open(copy); // data files are only checked structurally on open
        expect(() => reader.checkIntegrity()).toThrow(name);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  });

  it('fails to open when any byte of a meta file is flipped, naming the file', () => {
    for (const ext of ['vemf', 'vemq', 'vem']) {
      const copy = copyIndex(t.dir);
      try {
        const { path, name } = segmentFiles(copy, '_1', ext);
        const original = readFileSync(path);
        for (let i = 0; i < original.length; i++) {
          const bad = Buffer.from(original);
          bad[i] ^= 0x04;
          writeFileSync(path, bad);
          expect(() => DirectoryReader.open(copy), `${name} byte ${i}`).toThrow(name);
        }
        writeFileSync(path, original);
        expect(() => DirectoryReader.open(copy)).not.toThrow();
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  });

  it('detects a truncated data file at open, naming it', () => {
    for (const ext of ['vec', 'veq', 'vex']) {
      const copy = copyIndex(t.dir);
      try {
        const { path, name } = segmentFiles(copy, '_0', ext);
        truncateSync(path, statSync(path).size - 3);
        expect(() => DirectoryReader.open(copy)).toThrow(name);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  });
});

function copyIndex(dir: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'prescore-copy-'));
  for (const f of readdirSync(dir)) copyFileSync(join(dir, f), join(copy, f));
  return copy;
}
