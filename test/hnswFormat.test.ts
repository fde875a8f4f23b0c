import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { HnswGraphBuilder } from '../segments/hnsw/HnswGraphBuilder.js';
import { exactSearch, searchGraph } from '../segments/hnsw/HnswGraphSearcher.js';
import { VectorEncoding } from '../segments/hnsw/HnswVectorsFormat.js';
import { HnswVectorsReader } from '../segments/hnsw/HnswVectorsReader.js';
import { HnswVectorsWriter, type HnswFieldInfo } from '../segments/hnsw/HnswVectorsWriter.js';
import { OnHeapHnswGraph } from '../segments/hnsw/OnHeapHnswGraph.js';
import { Fp32ScorerSupplier } from '../segments/hnsw/RandomVectorScorer.js';
import { checkIndexHeader } from '../segments/codec/CodecUtil.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { wholeFile } from '../segments/store/FileSlice.js';
import { clusteredVectors } from '../src/bench/hnsw.js';
import { LUCENE_FIXTURE_ZIPS, unzipLuceneFixture } from './support/luceneFixtures.js';

/**
 * Minimal Lucene90CompoundFormat reading, enough to pull sub-files out of a `.cfs`: the `.cfe`
 * holds a header (with the segment id), a vint count, then per sub-file its name (segment name
 * stripped), int64 offset and int64 length in the `.cfs`.
 */
function readCompound(dir: string, segment: string): { id: Uint8Array; cfs: Uint8Array; entries: { name: string; offset: number; length: number }[] } {
  const input = new ByteArrayDataInput(new Uint8Array(readFileSync(join(dir, `${segment}.cfe`))), `${segment}.cfe`);
  const { id } = checkIndexHeader(input, 'Lucene90CompoundEntries', 0, 0, undefined, '');
  const n = input.readVInt();
  const entries = [];
  for (let i = 0; i < n; i++) entries.push({ name: input.readString(), offset: input.readLong(), length: input.readLong() });
  return { id, cfs: new Uint8Array(readFileSync(join(dir, `${segment}.cfs`))), entries };
}

function compoundSegments(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cfe'))
    .map((f) => f.slice(0, -4))
    .sort();
}

const ID = new Uint8Array(16).map((_, i) => i * 11 + 3);
const SUFFIX = 'Lucene104HnswScalarQuantizedVectorsFormat_0';
const FIELD: HnswFieldInfo = { fieldNumber: 0, encoding: VectorEncoding.FLOAT32, similarity: VectorSimilarityFunction.DOT_PRODUCT, dimension: 16 };

const tmp = mkdtempSync(join(tmpdir(), 'hnsw-format-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function buildGraph(n: number, dim = 16, seed = 4): { graph: OnHeapHnswGraph; supplier: Fp32ScorerSupplier } {
  const supplier = new Fp32ScorerSupplier(clusteredVectors(n, dim, 8, seed, true), dim, VectorSimilarityFunction.DOT_PRODUCT);
  return { graph: new HnswGraphBuilder(supplier).build(), supplier };
}

function writeInMemory(fields: { field: HnswFieldInfo; size: number; graph: OnHeapHnswGraph | null }[], version?: number): { vem: Uint8Array; vex: Uint8Array } {
  const meta = new ByteArrayDataOutput();
  const index = new ByteArrayDataOutput();
  const w = new HnswVectorsWriter(meta, index, ID, SUFFIX, version);
  for (const f of fields) w.writeField(f.field, f.size, f.graph);
  w.close();
  return { vem: meta.toBytes().slice(), vex: index.toBytes().slice() };
}

function expectSameGraph(actual: OnHeapHnswGraph, expected: OnHeapHnswGraph): void {
  expect(actual.size()).toBe(expected.size());
  expect(actual.numLevels).toBe(expected.numLevels);
  // Lucene's reader takes the first node of the top level as the entry point; the builder's entry
  // is the node that opened the top level, which is the smallest ordinal on it
  expect(actual.entryNode).toBe(expected.getNodesOnLevel(expected.numLevels - 1)[0]);
  expect(actual.entryNode).toBe(expected.entryNode);
  for (let level = 0; level < expected.numLevels; level++) {
    const nodes = expected.getNodesOnLevel(level);
    expect(actual.getNodesOnLevel(level)).toEqual(nodes);
    for (const node of nodes) {
      const want = expected.getNeighbors(level, node).sort();
      expect(actual.getNeighbors(level, node), `level ${level} node ${node}`).toEqual(want);
    }
  }
}

describe('Lucene99HnswVectorsFormat writer/reader', () => {
  const { graph, supplier } = buildGraph(1500);

  for (const version of [1, 0]) {
    it(`round-trips a graph (version ${version}: ${version ? 'group-varint' : 'vint'} neighbours)`, () => {
      const { vem, vex } = writeInMemory([{ field: FIELD, size: 1500, graph }], version);
      const r = HnswVectorsReader.fromBytes(vem, vex, ID, SUFFIX);
      expect(r.version).toBe(version);
      r.checkIntegrity();
      const entry = r.field(0)!;
      expect(entry).toMatchObject({ fieldNumber: 0, encoding: 1, dimension: 16, size: 1500, M: 16, numLevels: graph.numLevels, offsetsBlockShift: 16 });
      expect(entry.similarity).toBe(VectorSimilarityFunction.DOT_PRODUCT);
      const loaded = r.graph(0)!;
      expectSameGraph(loaded, graph);
      // the loaded graph searches like the built one (neighbour order differs, results do not change much)
      const scorer = supplier.queryScorer(supplier.vectors.subarray(16 * 7, 16 * 8));
      expect(searchGraph(scorer, loaded, 10, 100).ords[0]).toBe(7);
    });
  }

  it('writes files through IndexOutput and reads them back through FileSlices', () => {
    const vemPath = join(tmp, `_0_${SUFFIX}.vem`);
    const vexPath = join(tmp, `_0_${SUFFIX}.vex`);
    const w = HnswVectorsWriter.create(vemPath, vexPath, ID, SUFFIX);
    w.writeField(FIELD, 1500, graph);
    w.writeField({ ...FIELD, fieldNumber: 3, similarity: VectorSimilarityFunction.EUCLIDEAN }, 40, null);
    w.close();
    const r = HnswVectorsReader.open(wholeFile(vemPath), wholeFile(vexPath), ID, SUFFIX);
    r.checkIntegrity();
    expectSameGraph(r.graph(0)!, graph);
    expect(r.graph(3)).toBeNull();
    expect(r.field(3)).toMatchObject({ size: 40, numLevels: 0, vectorIndexLength: 0, offsetsMeta: null });
    // the same bytes as the in-memory writer
    const mem = writeInMemory([
      { field: FIELD, size: 1500, graph },
      { field: { ...FIELD, fieldNumber: 3, similarity: VectorSimilarityFunction.EUCLIDEAN }, size: 40, graph: null },
    ]);
    expect(new Uint8Array(readFileSync(vemPath))).toEqual(mem.vem);
    expect(new Uint8Array(readFileSync(vexPath))).toEqual(mem.vex);
  });

  it('encodes neighbours as a vint count then sorted, de-duplicated group-varint deltas (the group-varint example bytes of segments/store/DataOutput.ts)', () => {
    // node 0 -> {70304, 3, 303, 70303, 3}: sorted and de-duplicated 3, 303, 70303, 70304 -> deltas 3, 300, 70000, 1
    const size = 70305;
    const g = new OnHeapHnswGraph({ maxConn: 16, expectedSize: size, withScores: false });
    g.addNode(0, size - 1);
    g.setNeighbors(0, 0, [70304, 3, 303, 70303, 3]);
    g.setEntryNode(0, 0);
    const { vem, vex } = writeInMemory([{ field: FIELD, size, graph: g }]);
    const r = HnswVectorsReader.fromBytes(vem, vex, ID, SUFFIX);
    const e = r.field(0)!;
    const start = e.vectorIndexOffset;
    expect(Buffer.from(vex.subarray(start, start + 9)).toString('hex')).toBe('04' + '18032c0170110101');
    expect(e.vectorIndexLength).toBe(9 + (size - 1)); // every other node: vint 0
    expect(Array.from(r.graph(0)!.getNeighbors(0, 0))).toEqual([3, 303, 70303, 70304]);
    // version 0: plain vints 3, 300, 70000, 1
    const v0 = writeInMemory([{ field: FIELD, size, graph: g }], 0);
    const e0 = HnswVectorsReader.fromBytes(v0.vem, v0.vex, ID, SUFFIX).field(0)!;
    expect(Buffer.from(v0.vex.subarray(e0.vectorIndexOffset, e0.vectorIndexOffset + 8)).toString('hex')).toBe('04' + '03' + 'ac02' + 'f0a204' + '01');
  });

  it('names the .vem file when one byte of it is corrupt', () => {
    const { vem, vex } = writeInMemory([{ field: FIELD, size: 1500, graph }]);
    const bad = vem.slice();
    bad[Math.floor(bad.length / 2)] ^= 0x20;
    expect(() => HnswVectorsReader.fromBytes(bad, vex, ID, SUFFIX, { meta: '_0_x.vem' })).toThrow(CorruptIndexException);
    expect(() => HnswVectorsReader.fromBytes(bad, vex, ID, SUFFIX, { meta: '_0_x.vem' })).toThrow(/checksum failed.*_0_x\.vem/);
    const vemPath = join(tmp, 'corrupt.vem');
    const vexPath = join(tmp, 'corrupt.vex');
    writeFileSync(vemPath, bad);
    writeFileSync(vexPath, vex);
    expect(() => HnswVectorsReader.open(wholeFile(vemPath), wholeFile(vexPath), ID, SUFFIX)).toThrow(/corrupt\.vem/);
  });

  it('detects .vex damage: structural at open, any byte in checkIntegrity', () => {
    const { vem, vex } = writeInMemory([{ field: FIELD, size: 1500, graph }]);
    const truncated = vex.slice(0, vex.length - 3);
    expect(() => HnswVectorsReader.fromBytes(vem, truncated, ID, SUFFIX, { index: '_0_x.vex' })).toThrow(/_0_x\.vex/);
    const flipped = vex.slice();
    const e = HnswVectorsReader.fromBytes(vem, vex, ID, SUFFIX).field(0)!;
    flipped[e.vectorIndexOffset + 2] ^= 0x01; // first neighbour ordinal +-1: still parses, but the CRC no longer matches
    const r = HnswVectorsReader.fromBytes(vem, flipped, ID, SUFFIX, { index: '_0_x.vex' });
    expect(r.graph(0)!.size()).toBe(1500);
    expect(() => r.checkIntegrity()).toThrow(/checksum failed.*_0_x\.vex/);
    const wild = vex.slice();
    wild[e.vectorIndexOffset] = 0x7f; // neighbour count 127 > what follows / allowed
    const lazy = HnswVectorsReader.fromBytes(vem, wild, ID, SUFFIX, { index: '_0_x.vex' });
    expect(() => lazy.graph(0)).toThrow(CorruptIndexException);
    expect(() => lazy.graph(0)).toThrow(/_0_x\.vex/);
  });

  it('rejects another segment id or suffix, and a meta/index version mismatch', () => {
    const { vem, vex } = writeInMemory([{ field: FIELD, size: 1500, graph }]);
    const otherId = ID.slice();
    otherId[0] ^= 1;
    expect(() => HnswVectorsReader.fromBytes(vem, vex, otherId, SUFFIX)).toThrow(/file mismatch, expected id/);
    expect(() => HnswVectorsReader.fromBytes(vem, vex, ID, 'Other_0')).toThrow(/expected suffix/);
    const v0 = writeInMemory([{ field: FIELD, size: 1500, graph }], 0);
    expect(() => HnswVectorsReader.fromBytes(vem, v0.vex, ID, SUFFIX)).toThrow(/Format versions mismatch/);
  });

  it('writes an empty graph as "no graph"', () => {
    const empty = new OnHeapHnswGraph({ maxConn: 16 });
    const { vem, vex } = writeInMemory([{ field: FIELD, size: 0, graph: empty }]);
    const r = HnswVectorsReader.fromBytes(vem, vex, ID, SUFFIX);
    expect(r.graph(0)).toBeNull();
    expect(r.field(0)!.numLevels).toBe(0);
  });
});

describe('Lucene-written fixtures (9.12.3, 10.0.0)', () => {
  for (const zip of LUCENE_FIXTURE_ZIPS) {
    it(`parses every .vem/.vex pair in ${zip} and matches our own build`, () => {
      const dir = unzipLuceneFixture(zip);
      try {
        let fieldsSeen = 0;
        for (const seg of compoundSegments(dir)) {
          const { id, cfs, entries } = readCompound(dir, seg);
          const vem = entries.find((e) => e.name.endsWith('.vem'));
          const vex = entries.find((e) => e.name.endsWith('.vex'));
          if (!vem || !vex) continue; // the 1-doc segment has no vectors
          const suffix = vem.name.slice(1, -'.vem'.length);
          const r = HnswVectorsReader.fromBytes(cfs.subarray(vem.offset, vem.offset + vem.length), cfs.subarray(vex.offset, vex.offset + vex.length), id, suffix, {
            meta: `${seg}.cfs[${vem.name}]`,
            index: `${seg}.cfs[${vex.name}]`,
          });
          r.checkIntegrity();
          for (const f of r.fields.values()) {
            fieldsSeen++;
            expect(f.dimension).toBe(3);
            expect(f.similarity).toBe(VectorSimilarityFunction.COSINE);
            expect(f.M).toBe(16);
            const g = r.graph(f.fieldNumber)!;
            expect(g.size()).toBe(f.size);
            // doc i of the segment has (0.2, -0.1, 0.1 + 0.1 * (docBase + i)); rebuild with Lucene's defaults (seed 42)
            const docBase = seg === '_0' ? 0 : Number(seg.slice(1)) * 10;
            const v = new Float32Array(f.size * 3);
            for (let i = 0; i < f.size; i++) {
              v[i * 3] = 0.2;
              v[i * 3 + 1] = -0.1;
              v[i * 3 + 2] = Math.fround(Math.fround(0.1) + Math.fround(Math.fround(0.1) * (docBase + i)));
            }
            const supplier = new Fp32ScorerSupplier(v, 3, VectorSimilarityFunction.COSINE);
            const ours = new HnswGraphBuilder(supplier).build();
            expectSameGraph(g, ours);
            const scorer = supplier.queryScorer(new Float32Array([0.2, -0.1, 0.35]));
            expect(Array.from(searchGraph(scorer, g, 3, 10).ords)).toEqual(Array.from(exactSearch(scorer, 3).ords));
            // Lucene's DirectMonotonic offsets: entry i starts where i-1 ended (vint count + vint deltas in version 0)
            expect(f.offsetsMeta!.blocks[0].bitsPerValue).toBe(1);
            expect(f.offsetsMeta!.blocks[0].avg).toBe(Math.fround((f.vectorIndexLength - 1) / f.size));
            // and writing our graph with the same id, suffix and version reproduces Lucene's files byte for byte
            if (r.fields.size === 1) {
              const meta = new ByteArrayDataOutput();
              const index = new ByteArrayDataOutput();
              const w = new HnswVectorsWriter(meta, index, id, suffix, r.version);
              w.writeField({ fieldNumber: f.fieldNumber, encoding: VectorEncoding.FLOAT32, similarity: f.similarity, dimension: 3 }, f.size, ours);
              w.close();
              expect(Buffer.from(meta.toBytes()).toString('hex')).toBe(Buffer.from(cfs.subarray(vem.offset, vem.offset + vem.length)).toString('hex'));
              expect(Buffer.from(index.toBytes()).toString('hex')).toBe(Buffer.from(cfs.subarray(vex.offset, vex.offset + vex.length)).toString('hex'));
            }
          }
        }
        expect(fieldsSeen).toBeGreaterThanOrEqual(3);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
