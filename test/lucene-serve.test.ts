import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../src/api/openIndex.js';
import { openLuceneIndex, type OpenLuceneIndexOptions } from '../src/api/openLuceneIndex.js';
import { MAX_NUM_CANDIDATES, READ_PATHS, type SearchHit, type VectorIndex } from '../src/api/types.js';
import { Executor } from '../src/executor/Executor.js';
import { segmentBuilder } from '../src/executor/tasks.js';
import { serveCommand, startServer, type RunningServer, type ServeIo } from '../src/http/index.js';
import { indexOpener } from '../src/indexOpener.js';
import { appendFooter, checkIndexHeader, writeIndexHeader } from '../segments/codec/CodecUtil.js';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { parseSegmentInfo } from '../segments/lucene/SegmentInfo.js';
import { DirectMonotonicWriter } from '../segments/packed/DirectMonotonicWriter.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { LuceneIndex } from '../segments/lucene/LuceneIndex.js';
import { LuceneIndexReader, type LuceneIndexReaderOptions } from '../segments/lucene/LuceneIndexReader.js';
import { checkServableField, type PresentVectorField } from '../segments/lucene/LuceneFlatVectors.js';
import { defaultSidecarDir } from '../segments/lucene/LuceneSidecar.js';
import { docToOrd, ordToDoc } from '../segments/index/SegmentHandle.js';
import { readSliceBytes } from '../segments/store/FileSlice.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { fixtureVector, LUCENE_FIXTURE_ZIPS, luceneCosine, luceneFixturesDir, type LuceneFixtureZip } from './support/luceneFixtures.js';

const f = Math.fround;

const FIXTURES = luceneFixturesDir();
const ZIPS = LUCENE_FIXTURE_ZIPS;
type Zip = LuceneFixtureZip;

/** What each fixture holds (fixtures README + lucene.test.ts). */
const FACTS: Record<Zip, { maxDocs: number[]; deleted: number[]; noVector: number[]; fieldNumber: number; format: string; vectorDataOffset: number }> = {
  'index.9.12.3-cfs.zip': { maxDocs: [10, 10, 10, 5, 1], deleted: [7], noVector: [35], fieldNumber: 33, format: 'Lucene99HnswVectorsFormat', vectorDataOffset: 84 },
  'index.10.0.0-cfs.zip': { maxDocs: [10, 10, 10, 5, 1], deleted: [7], noVector: [35], fieldNumber: 33, format: 'Lucene99HnswVectorsFormat', vectorDataOffset: 84 },
  'int7_hnsw.9.12.3.zip': { maxDocs: [10, 10, 10], deleted: [], noVector: [], fieldNumber: 0, format: 'Lucene99HnswScalarQuantizedVectorsFormat', vectorDataOffset: 100 },
};

const QUERIES = [Float32Array.of(0.2, -0.1, 0.5), Float32Array.of(1, 0, 0), Float32Array.of(-0.3, 0.4, -1), Float32Array.of(0.05, 0.9, 2.5)];

let root = '';
const dirs = {} as Record<Zip, string>;
const sidecars = {} as Record<Zip, string>;
let scratch = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'prescore-lucene-serve-'));
  for (const z of ZIPS) {
    const d = join(root, 'fixtures', z.replace(/\.zip$/, ''));
    mkdirSync(d, { recursive: true });
    execFileSync('unzip', ['-q', '-o', join(FIXTURES, z), '-d', d]);
    dirs[z] = d;
    sidecars[z] = join(root, 'sidecars', z.replace(/\.zip$/, ''));
  }
});

afterAll(async () => {
  await Executor.shutdown();
  if (root) rmSync(root, { recursive: true, force: true });
});

function readerOptions(zip: Zip, extra: Partial<LuceneIndexReaderOptions> = {}): LuceneIndexReaderOptions {
  return { field: 'knn_field', sidecarDir: sidecars[zip], buildSegment: segmentBuilder(Executor.get()), ...extra };
}

function openFixture(zip: Zip, extra: OpenLuceneIndexOptions = {}): Promise<VectorIndex> {
  return openLuceneIndex(dirs[zip], { field: 'knn_field', sidecarDir: sidecars[zip], ...extra });
}

/** A private copy of a fixture directory, to damage. */
function copyOf(zip: Zip): string {
  const d = join(root, `copy-${scratch++}`);
  cpSync(dirs[zip], d, { recursive: true });
  return d;
}

/** Path, size and mtime of every file: proof that nothing was written into the Lucene directory. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((n) => {
      const s = statSync(join(dir, n));
      return `${n}:${s.size}:${s.mtimeMs}:${crc32(readFileSync(join(dir, n)))}`;
    });
}

function expectCorrupt(fn: () => unknown, resource: string): CorruptIndexException {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, `expected a CorruptIndexException naming ${resource}`).toBeInstanceOf(CorruptIndexException);
  expect((err as CorruptIndexException).resource).toBe(resource);
  return err as CorruptIndexException;
}

async function expectCorruptAsync(p: Promise<unknown>, resource: string): Promise<CorruptIndexException> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, `expected a CorruptIndexException naming ${resource}`).toBeInstanceOf(CorruptIndexException);
  expect((err as CorruptIndexException).resource).toBe(resource);
  return err as CorruptIndexException;
}

function refooter(bytes: Uint8Array): void {
  const crc = crc32(bytes.subarray(0, bytes.length - 8));
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(bytes.length - 4, crc, false);
}

/** Edits a compound sub-file in place (and fixes its own CRC so only the edit is seen). */
function editSubFile(dir: string, segment: string, logical: string, edit: (sub: Buffer) => void): void {
  const s = LuceneIndex.open(dir).segments.find((x) => x.name === segment)!;
  const slice = s.directory.openSlice(logical);
  const cfs = readFileSync(slice.path);
  const sub = cfs.subarray(slice.offset, slice.offset + slice.length);
  edit(sub);
  refooter(sub);
  writeFileSync(slice.path, cfs);
}

/** Rewrites segment `seg` of a copied index as plain (non-compound) files, as Lucene would write it with useCompoundFile=false. */
function uncompound(d: string, seg: string): void {
  const s = LuceneIndex.open(d).segments.find((x) => x.name === seg)!;
  const names = s.directory.listAll();
  for (const n of names) writeFileSync(join(d, n), readSliceBytes(s.directory.openSlice(n)));
  const siBytes = readFileSync(join(d, `${seg}.si`));
  const input = new ByteArrayDataInput(siBytes, `${seg}.si`, 0, siBytes.length - 16);
  checkIndexHeader(input, 'Lucene90SegmentInfo', 0, 0, s.id, '');
  const si = parseSegmentInfo(input, seg, s.id);
  const out = new ByteArrayDataOutput();
  writeIndexHeader(out, 'Lucene90SegmentInfo', 0, s.id, '');
  for (const v of [si.version.major, si.version.minor, si.version.bugfix]) out.writeInt(v);
  out.writeByte(1);
  for (const v of [si.minVersion!.major, si.minVersion!.minor, si.minVersion!.bugfix]) out.writeInt(v);
  out.writeInt(si.maxDoc);
  out.writeByte(0xff); // not compound
  out.writeByte(0xff); // no blocks
  out.writeMapOfStrings(si.diagnostics);
  out.writeSetOfStrings([...names, `${seg}.si`]);
  out.writeMapOfStrings(si.attributes);
  out.writeVInt(0);
  appendFooter(out);
  writeFileSync(join(d, `${seg}.si`), out.toBytes());
  rmSync(join(d, `${seg}.cfs`));
  rmSync(join(d, `${seg}.cfe`));
}

/**
 * Replaces a plain segment's Lucene99 flat vectors with a SPARSE field (only `localDocs` have a
 * vector, the fixture's vectors for them): `.vec` = header, vectors, IndexedDISI (one SPARSE
 * block + sentinel), DirectMonotonic ord->doc, footer; `.vemf` with the OrdToDoc configuration
 * (segments/flat/OrdToDoc.ts). `reordered` writes the graph-reordered dense variant (-3) instead.
 */
function writeFlatField(d: string, seg: string, localDocs: number[], mode: 'sparse' | 'reordered'): void {
  const s = LuceneIndex.open(d).segments.find((x) => x.name === seg)!;
  const suffix = 'Lucene99HnswVectorsFormat_0';
  const vec = new ByteArrayDataOutput();
  writeIndexHeader(vec, 'Lucene99FlatVectorsFormatData', 0, s.id, suffix);
  while (vec.length % 4 !== 0) vec.writeByte(0);
  const vectorDataOffset = vec.length;
  for (const doc of localDocs) for (const x of fixtureVector(s.docBase + doc)) vec.writeFloat(x);
  const vectorDataLength = vec.length - vectorDataOffset;
  const meta = new ByteArrayDataOutput();
  writeIndexHeader(meta, 'Lucene99FlatVectorsFormatMeta', 0, s.id, suffix);
  meta.writeInt(33);
  meta.writeInt(1); // FLOAT32
  meta.writeInt(2); // COSINE
  meta.writeVLong(vectorDataOffset);
  meta.writeVLong(vectorDataLength);
  meta.writeVInt(3);
  meta.writeInt(localDocs.length);
  if (mode === 'sparse') {
    const disiOffset = vec.length;
    vec.writeShort(0);
    vec.writeShort(localDocs.length - 1);
    for (const doc of localDocs) vec.writeShort(doc);
    vec.writeShort(32767);
    vec.writeShort(0);
    vec.writeShort(0xffff);
    meta.writeLong(disiOffset);
    meta.writeLong(vec.length - disiOffset);
    meta.writeShort(0); // a set whose only block is block 0 has no jump table
    meta.writeByte(9);
    const addressesOffset = vec.length;
    meta.writeLong(addressesOffset);
    meta.writeVInt(16);
    const w = DirectMonotonicWriter.getInstance(meta, vec, localDocs.length, 16);
    for (const doc of localDocs) w.add(doc);
    w.finish();
    meta.writeLong(vec.length - addressesOffset);
  } else {
    meta.writeLong(-3);
    meta.writeLong(0);
    meta.writeShort(-1);
    meta.writeByte(0xff);
    meta.writeLong(vec.length);
    meta.writeVInt(0);
    meta.writeLong(0);
    meta.writeLong(0);
  }
  meta.writeInt(-1);
  appendFooter(meta);
  appendFooter(vec);
  writeFileSync(join(d, `${seg}_${suffix}.vemf`), meta.toBytes());
  writeFileSync(join(d, `${seg}_${suffix}.vec`), vec.toBytes());
}

describe('Lucene indexes served by prescore', () => {
  for (const zip of ZIPS) {
    const facts = FACTS[zip];
    const maxDoc = facts.maxDocs.reduce((a, b) => a + b, 0);
    const live = (doc: number) => !facts.deleted.includes(doc) && !facts.noVector.includes(doc);
    const expectedDocs = Array.from({ length: maxDoc }, (_, i) => i).filter(live);

    describe(zip, () => {
      it('reports every segment (docBase includes deleted docs), maxDoc, deletions and the field', async () => {
        const reader = await LuceneIndexReader.open(dirs[zip], readerOptions(zip));
        expect(reader.field).toMatchObject({ name: 'knn_field', number: facts.fieldNumber, dims: 3 });
        expect(reader.field.similarity).toBe(VectorSimilarityFunction.COSINE);
        expect(reader.maxDoc).toBe(maxDoc);
        expect(reader.numDocs).toBe(maxDoc - facts.deleted.length);
        expect(reader.leaves.map((l) => l.reader.name)).toEqual(facts.maxDocs.map((_, i) => `_${i}`));
        expect(reader.leaves.map((l) => l.reader.maxDoc)).toEqual(facts.maxDocs);
        let base = 0;
        for (const [i, leaf] of reader.leaves.entries()) {
          expect(leaf.ord).toBe(i);
          expect(leaf.docBase).toBe(base);
          base += leaf.reader.maxDoc;
          const h = leaf.reader.handle;
          const docs = Array.from({ length: leaf.reader.maxDoc }, (_, d) => leaf.docBase + d);
          expect(leaf.reader.numVectors).toBe(docs.filter(live).length);
          expect(h).toMatchObject({ name: `_${i}`, maxDoc: leaf.reader.maxDoc, dims: 3, similarity: 2 });
          if (docs.every((d) => facts.noVector.includes(d))) {
            // _4: its only doc has no knn_field at all.
            expect(h.vectors.size).toBe(0);
            expect(h.quantized).toBeNull();
            expect(h.graph).toBeNull();
            expect(h.liveOrds).toBeNull();
            expect(leaf.reader.bytes).toEqual({ vectors: 0, codes: 0, graph: 0 });
            continue;
          }
          // Raw vectors in place: the .cfs, at the .vec sub-file's offset + vectorDataOffset; dense.
          const seg = reader.index.segments[i];
          const vec = seg.directory.openSlice(`_${i}_${facts.format}_0.vec`);
          expect(h.vectors).toEqual({ path: join(reader.dir, `_${i}.cfs`), offset: vec.offset + facts.vectorDataOffset, byteSize: 12, size: leaf.reader.maxDoc, ordToDoc: null });
          expect(h.quantized).toMatchObject({ count: leaf.reader.maxDoc, codeBytes: 1, recordBytes: 17 });
          expect(h.quantized!.path.startsWith(reader.sidecarDir + '/')).toBe(true);
          expect(h.quantized!.centroid.buffer).toBeInstanceOf(SharedArrayBuffer);
          expect(h.graph).toBeNull(); // 10 docs < the default flat threshold
          const deletedHere = facts.deleted.filter((d) => d >= leaf.docBase && d < leaf.docBase + leaf.reader.maxDoc);
          if (deletedHere.length === 0) expect(h.liveOrds).toBeNull();
          else {
            expect(h.liveOrds!.buffer).toBeInstanceOf(SharedArrayBuffer);
            for (let ord = 0; ord < h.vectors.size; ord++) {
              const doc = leaf.docBase + ordToDoc(h.vectors, ord);
              expect(((h.liveOrds![ord >>> 5] >>> (ord & 31)) & 1) === 1, `ord ${ord}`).toBe(!deletedHere.includes(doc));
            }
          }
          expect(leaf.reader.id(3)).toBe(String(leaf.docBase + 3));
        }
        expect(reader.sidecarStatus.filter((s) => s.status !== 'none').length).toBe(facts.maxDocs.length - facts.noVector.length);
        reader.checkIntegrity();
        for (const leaf of reader.leaves) leaf.reader.checkIntegrity();
      });

      it('reads the fixture vectors through the handles, bit for bit (float32: 0.1f + 0.1f * i)', async () => {
        const reader = await LuceneIndexReader.open(dirs[zip], readerOptions(zip));
        let seen = 0;
        for (const leaf of reader.leaves) {
          const v = leaf.reader.handle.vectors;
          for (let doc = 0; doc < leaf.reader.maxDoc; doc++) {
            const ord = docToOrd(v, doc);
            const global = leaf.docBase + doc;
            if (facts.noVector.includes(global)) {
              expect(ord).toBe(-1);
              continue;
            }
            const bytes = readSliceBytes({ path: v.path, name: v.path, offset: v.offset, length: v.size * v.byteSize }, ord * v.byteSize, v.byteSize);
            const got = new Float32Array(bytes.buffer, bytes.byteOffset, 3);
            expect([...got], `doc ${global}`).toEqual([...fixtureVector(global)]);
            seen++;
          }
        }
        expect(seen).toBe(maxDoc - facts.noVector.length); // deleted docs keep their vectors
        // The other plausible rule (one rounding of the double sum) does not match the bytes.
        expect(fixtureVector(6)[2]).not.toBe(f(0.1 + 0.1 * 6));
      });

      it('an exact query returns Lucene COSINE scores, score desc then doc asc, without deleted or vector-less docs, on every read path', async () => {
        const index = await openFixture(zip);
        try {
          for (const q of QUERIES) {
            const results = await Promise.all(READ_PATHS.map((readPath) => index.search(q, { k: maxDoc, numCandidates: MAX_NUM_CANDIDATES, readPath })));
            const hits = results[0].hits;
            expect(hits.map((h) => h.doc).sort((a, b) => a - b)).toEqual(expectedDocs);
            expect(results[0].totalHits).toBe(expectedDocs.length);
            for (const h of hits) {
              expect(h.id).toBe(String(h.doc));
              expect(Math.abs(h.score - luceneCosine(q, fixtureVector(h.doc))), `doc ${h.doc}`).toBeLessThanOrEqual(1e-6);
            }
            for (let i = 1; i < hits.length; i++) {
              const a = hits[i - 1],
                b = hits[i];
              expect(a.score > b.score || (a.score === b.score && a.doc < b.doc), `hit ${i}`).toBe(true);
            }
            // Ranked as Lucene would (where the exact scores are more than float noise apart).
            const expected = expectedDocs.map((doc) => ({ doc, score: luceneCosine(q, fixtureVector(doc)) }));
            for (let i = 1; i < hits.length; i++) {
              const ea = expected.find((e) => e.doc === hits[i - 1].doc)!,
                eb = expected.find((e) => e.doc === hits[i].doc)!;
              expect(ea.score >= eb.score - 1e-6).toBe(true);
            }
            for (const r of results.slice(1)) expect(r.hits).toEqual(hits);
            // Top k smaller than the candidates: the head of the same ranking.
            const top4 = await index.search(q, { k: 4, oversample: 10 });
            expect(top4.hits).toEqual(hits.slice(0, 4));
          }
          const d = await index.describe();
          expect(d).toMatchObject({ field: 'knn_field', similarity: 'cosine', dims: 3, docs: maxDoc });
          expect(d.segments.map((s) => s.docs)).toEqual(facts.maxDocs);
        } finally {
          await index.close();
        }
      });

      it('a sidecar with HNSW graphs (flat threshold 0) gives the same exact results', async () => {
        const flat = await openFixture(zip);
        const graph = await openFixture(zip, { flatThreshold: 0, name: 'graph' });
        try {
          const d = await graph.describe();
          expect(d.segments.map((s) => s.hasGraph)).toEqual(facts.maxDocs.map((_, i) => !(facts.noVector.length > 0 && i === 4)));
          for (const q of QUERIES) {
            const a = await flat.search(q, { k: maxDoc, numCandidates: MAX_NUM_CANDIDATES });
            const b = await graph.search(q, { k: maxDoc, numCandidates: MAX_NUM_CANDIDATES });
            expect(b.hits).toEqual(a.hits);
          }
        } finally {
          await graph.close();
          await flat.close();
        }
      });

      it('reports a CRC mismatch in any compound sub-file with the sub-file name (at open or in checkIntegrity)', async () => {
        await LuceneIndexReader.open(dirs[zip], readerOptions(zip)); // sidecar in place
        const names = LuceneIndex.open(dirs[zip]).segments[1].directory.listAll();
        expect(names.length).toBeGreaterThan(5);
        const atOpen: string[] = [];
        for (const name of names) {
          const d = copyOf(zip);
          const s = LuceneIndex.open(d).segments[1];
          const slice = s.directory.openSlice(name);
          const bytes = readFileSync(slice.path);
          bytes[slice.offset + slice.length - 17] ^= 0x01; // the last byte the CRC covers before the footer
          writeFileSync(slice.path, bytes);
          const resource = `_1.cfs[${name}]`;
          let reader: LuceneIndexReader | undefined;
          let err: unknown;
          try {
            reader = await LuceneIndexReader.open(d, readerOptions(zip));
          } catch (e) {
            err = e;
          }
          if (err) {
            atOpen.push(name);
            expect(err, name).toBeInstanceOf(CorruptIndexException);
            expect((err as CorruptIndexException).resource).toBe(resource);
          } else {
            const e = expectCorrupt(() => reader!.checkIntegrity(), resource);
            expect(e.message).toMatch(/checksum failed/);
            expectCorrupt(() => reader!.leaves[1].reader.checkIntegrity(), resource);
          }
          rmSync(d, { recursive: true, force: true });
        }
        // Field infos, the vectors' meta and the documents' meta files (stored fields' .fdm and
        // .fdx, doc values' .dvm) are verified at open; the rest (.vec, .fdt, .dvd) by checkIntegrity.
        const docValuesMeta = names.filter((n) => n.endsWith('.dvm'));
        expect(atOpen.sort()).toEqual(['_1.fdm', '_1.fdx', '_1.fnm', ...docValuesMeta, `_1_${facts.format}_0.vemf`].sort());
      });
    });
  }

  it('serves a sparse field (plain-file segment): ord -> doc from IndexedDISI, docs without a vector never returned', async () => {
    const zip = 'index.9.12.3-cfs.zip';
    const d = copyOf(zip);
    uncompound(d, '_1');
    const local = [0, 1, 3, 4, 6, 8, 9];
    writeFlatField(d, '_1', local, 'sparse');
    const reader = await LuceneIndexReader.open(d, readerOptions(zip, { sidecarDir: join(root, 'sparse-sidecar') }));
    const leaf = reader.leaves[1];
    expect(leaf.reader.handle.vectors.path).toBe(join(reader.dir, '_1_Lucene99HnswVectorsFormat_0.vec'));
    expect([...leaf.reader.handle.vectors.ordToDoc!]).toEqual(local);
    expect(leaf.reader.handle.vectors.ordToDoc!.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(leaf.reader.numVectors).toBe(7);
    expect(docToOrd(leaf.reader.handle.vectors, 2)).toBe(-1);
    expect(docToOrd(leaf.reader.handle.vectors, 6)).toBe(4);
    reader.checkIntegrity();

    const index = await openLuceneIndex(d, { field: 'knn_field', sidecarDir: join(root, 'sparse-sidecar'), flatThreshold: 0 });
    try {
      const q = QUERIES[0];
      const expected = Array.from({ length: 36 }, (_, i) => i).filter((i) => ![7, 12, 15, 17, 35].includes(i));
      for (const readPath of READ_PATHS) {
        const { hits } = await index.search(q, { k: 36, numCandidates: MAX_NUM_CANDIDATES, readPath });
        expect(hits.map((h) => h.doc).sort((a, b) => a - b)).toEqual(expected);
        for (const h of hits) expect(Math.abs(h.score - luceneCosine(q, fixtureVector(h.doc)))).toBeLessThanOrEqual(1e-6);
      }
    } finally {
      await index.close();
    }

    // Graph-reordered ords are refused by name (doc -> ord needs ords in doc order).
    const r = copyOf(zip);
    uncompound(r, '_1');
    writeFlatField(r, '_1', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'reordered');
    await expect(LuceneIndexReader.open(r, readerOptions(zip))).rejects.toThrow(/_1_Lucene99HnswVectorsFormat_0\.vec: the vector ordinals are reordered/);
  });

  it('with no sidecar yet, damaged vectors are refused at open (never quantized), naming the .vec sub-file', async () => {
    const d = copyOf('index.10.0.0-cfs.zip');
    const s = LuceneIndex.open(d).segments[2];
    const slice = s.directory.openSlice('_2_Lucene99HnswVectorsFormat_0.vec');
    const bytes = readFileSync(slice.path);
    bytes[slice.offset + 84 + 5] ^= 0x40; // inside doc 20's vector
    writeFileSync(slice.path, bytes);
    const e = await expectCorruptAsync(
      LuceneIndexReader.open(d, readerOptions('index.10.0.0-cfs.zip', { sidecarDir: join(root, 'fresh-sidecar') })),
      '_2.cfs[_2_Lucene99HnswVectorsFormat_0.vec]',
    );
    expect(e.message).toMatch(/checksum failed/);
  });

  it('never writes into the Lucene directory; the sidecar is keyed by segment id, reused when valid, rebuilt when not', async () => {
    const zip = 'index.9.12.3-cfs.zip';
    const before = snapshot(dirs[zip]);
    const side = join(root, 'reuse-sidecar');
    const events: string[] = [];
    const open = () => LuceneIndexReader.open(dirs[zip], readerOptions(zip, { sidecarDir: side, onSidecar: (e) => events.push(`${e.segment}:${e.status}`) }));
    const first = await open();
    expect(first.sidecarStatus.map((s) => s.status)).toEqual(['built', 'built', 'built', 'built', 'none']);
    const second = await open();
    expect(second.sidecarStatus.map((s) => s.status)).toEqual(['reused', 'reused', 'reused', 'reused', 'none']);
    // Keys: `<open index id>#...#<sidecar manifest CRC>`: per open reader, and per sidecar build.
    const keyOf = (r: LuceneIndexReader, i: number) => r.leaves[i].reader.handle.key.replace(/^\d+#/, '');
    expect(second.id).not.toBe(first.id);
    expect(second.leaves.map((l) => l.reader.handle.indexId)).toEqual(second.leaves.map(() => second.id));
    expect([0, 1, 2, 3, 4].map((i) => keyOf(second, i))).toEqual([0, 1, 2, 3, 4].map((i) => keyOf(first, i)));
    // One directory per segment, named by segment and id; the other fixture's segments have other ids.
    const segDirs = readdirSync(side)
      .filter((n) => !n.startsWith('.') && n !== 'SOURCE')
      .sort();
    expect(segDirs).toEqual(first.index.segments.slice(0, 4).map((s) => `${s.name}-${Buffer.from(s.id).toString('hex')}-f33-flat`));
    await LuceneIndexReader.open(dirs['index.10.0.0-cfs.zip'], readerOptions('index.10.0.0-cfs.zip', { sidecarDir: side }));
    expect(readdirSync(side).filter((n) => n.includes('-f33-')).length).toBe(8);

    // A damaged sidecar file is not an error: that segment's sidecar is rebuilt (and gets a new key).
    const veq = join(side, segDirs[1], '_1_PrescoreSidecar_0.veq');
    const bad = readFileSync(veq);
    bad[bad.length - 20] ^= 0xff;
    writeFileSync(veq, bad);
    events.length = 0;
    const third = await open();
    expect(third.sidecarStatus.map((s) => s.status)).toEqual(['reused', 'rebuilt', 'reused', 'reused', 'none']);
    expect(events).toContain('_1:building');
    expect(keyOf(third, 1)).not.toBe(keyOf(first, 1));
    expect(keyOf(third, 0)).toBe(keyOf(first, 0));
    // So is a foreign manifest (e.g. another segment's).
    cpSync(join(side, segDirs[0], '_0_PrescoreSidecar_0.psm'), join(side, segDirs[2], '_2_PrescoreSidecar_0.psm'));
    expect((await open()).sidecarStatus[2].status).toBe('rebuilt');
    // Damage found after open is reported by checkIntegrity, naming the sidecar file.
    const live = await open();
    const veq0 = join(side, segDirs[0], '_0_PrescoreSidecar_0.veq');
    const b0 = readFileSync(veq0);
    b0[b0.length - 20] ^= 0x01;
    writeFileSync(veq0, b0);
    expectCorrupt(() => live.checkIntegrity(), veq0);

    // Concurrent first opens of one sidecar both succeed and agree.
    const race = join(root, 'race-sidecar');
    const [a, b] = await Promise.all([0, 1].map(() => LuceneIndexReader.open(dirs[zip], readerOptions(zip, { sidecarDir: race }))));
    expect(a.leaves.map((l) => l.reader.handle.quantized?.path)).toEqual(b.leaves.map((l) => l.reader.handle.quantized?.path));
    expect(readdirSync(race).filter((n) => n.startsWith('.'))).toEqual([]);

    // A sidecar inside the Lucene directory is refused before anything is created.
    await expect(LuceneIndexReader.open(dirs[zip], readerOptions(zip, { sidecarDir: join(dirs[zip], 'sidecar') }))).rejects.toThrow(
      /inside the Lucene index.*never writes into a Lucene directory/,
    );
    await expect(LuceneIndexReader.open(dirs[zip], readerOptions(zip, { sidecarDir: dirs[zip] }))).rejects.toThrow(/inside the Lucene index/);
    expect(snapshot(dirs[zip])).toEqual(before);
  });

  it('defaults the sidecar to $XDG_CACHE_HOME/prescore/lucene-sidecars/<hash of realpath + field>, and the field to the only vector field', async () => {
    const zip = 'int7_hnsw.9.12.3.zip';
    const cache = join(root, 'xdg-cache');
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cache;
    try {
      const reader = await LuceneIndexReader.open(dirs[zip], { buildSegment: segmentBuilder(Executor.get()) });
      expect(reader.field.name).toBe('knn_field');
      expect(reader.sidecarDir).toBe(defaultSidecarDir(reader.dir, 'knn_field'));
      expect(reader.sidecarDir!.startsWith(join(cache, 'prescore', 'lucene-sidecars') + '/')).toBe(true);
      expect(readFileSync(join(reader.sidecarDir!, 'SOURCE'), 'utf8')).toBe(`${reader.dir}\tknn_field\n`);
      expect(defaultSidecarDir(reader.dir, 'other')).not.toBe(reader.sidecarDir);
      // The facade also takes PRESCORE_SIDECAR_DIR (what `prescore serve --lucene` can be given).
      const envDir = join(root, 'env-sidecar');
      process.env.PRESCORE_SIDECAR_DIR = envDir;
      const index = await openLuceneIndex(dirs[zip]);
      await index.close();
      expect(readdirSync(envDir).filter((n) => n.endsWith('-f0-flat')).length).toBe(3);
    } finally {
      delete process.env.PRESCORE_SIDECAR_DIR;
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });

  it('names an unknown, non-vector, BYTE or unsupported-format field and lists the vector fields', async () => {
    const zip = 'index.10.0.0-cfs.zip';
    const listing = /the vector fields are: knn_field \(3d FLOAT32 COSINE, Lucene99HnswVectorsFormat\)/;
    await expect(LuceneIndexReader.open(dirs[zip], readerOptions(zip, { field: 'embedding' }))).rejects.toThrow(
      /unknown vector field "embedding".*the vector fields are: knn_field/,
    );
    await expect(LuceneIndexReader.open(dirs[zip], readerOptions(zip, { field: 'embedding' }))).rejects.toThrow(listing);
    await expect(LuceneIndexReader.open(dirs[zip], readerOptions(zip, { field: 'content' }))).rejects.toThrow(
      /field "content" .* is not a vector field: the vector fields are: knn_field/,
    );
    // The facade closes the executor it created when the open fails.
    await Executor.shutdown();
    await expect(openLuceneIndex(dirs[zip], { field: 'nope', sidecarDir: sidecars[zip] })).rejects.toThrow(/unknown vector field "nope"/);
    expect(Executor.exists()).toBe(false);

    // An unsupported per-field format (the .fnm attribute edited, its CRC fixed).
    const other = copyOf(zip);
    editSubFile(other, '_1', '_1.fnm', (sub) => {
      const at = sub.indexOf(Buffer.from('Lucene99HnswVectorsFormat', 'latin1'));
      expect(at).toBeGreaterThan(0);
      sub.write('Lucene95HnswVectorsFormat', at, 'latin1');
    });
    await expect(LuceneIndexReader.open(other, readerOptions(zip))).rejects.toThrow(
      /vector field "knn_field" uses the per-field format Lucene95HnswVectorsFormat in segment _1: prescore reads the raw vectors of Lucene99HnswVectorsFormat and Lucene99HnswScalarQuantizedVectorsFormat only/,
    );

    // BYTE vectors: the encoding byte after knn_field's dimension (vint 3, byte 1 = FLOAT32, byte 2 = COSINE).
    const bytesDir = copyOf(zip);
    for (const seg of ['_0', '_1', '_2', '_3']) {
      editSubFile(bytesDir, seg, `${seg}.fnm`, (sub) => {
        const name = sub.indexOf(Buffer.from('knn_field', 'latin1'));
        const at = sub.indexOf(Buffer.from([0x00, 0x03, 0x01, 0x02]), name);
        expect(at).toBeGreaterThan(name);
        sub[at + 2] = 0x00;
      });
    }
    await expect(LuceneIndexReader.open(bytesDir, readerOptions(zip))).rejects.toThrow(
      /vector field "knn_field" of .* has BYTE vectors: prescore serves FLOAT32 vector fields only/,
    );
    const present = LuceneIndex.open(dirs[zip]).findVectorField('knn_field')!.segments[0] as PresentVectorField;
    expect(() => checkServableField({ ...present, encoding: 'BYTE' }, 'knn_field')).toThrow(/has BYTE vectors \(segment _0\)/);
  });

  describe('over HTTP', () => {
    const zip = 'index.9.12.3-cfs.zip';
    let index: VectorIndex;
    let server: RunningServer;

    beforeAll(async () => {
      index = await openLuceneIndex(dirs[zip], { field: 'knn_field', sidecarDir: sidecars[zip], name: 'lucene912' });
      server = await startServer(index, { host: '127.0.0.1', port: 0 });
    });

    afterAll(async () => {
      await server?.close();
      await index?.close();
    });

    const post = async (path: string, body: unknown) => {
      const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };

    it('answers POST /v1/search and the Elasticsearch knn body with the same hits as the library', async () => {
      for (const q of QUERIES) {
        const direct = await index.search(q, { k: 36, numCandidates: MAX_NUM_CANDIDATES });
        expect(direct.hits.map((h) => h.doc)).not.toContain(7);
        expect(direct.hits.map((h) => h.doc)).not.toContain(35);
        expect(direct.hits.length).toBe(34);

        const v1 = await post('/v1/search', { vector: [...q], k: 36, num_candidates: MAX_NUM_CANDIDATES });
        expect(v1.status).toBe(200);
        expect(v1.body.hits).toEqual(direct.hits.map((h: SearchHit) => ({ id: h.id, doc: h.doc, score: h.score })));
        expect(v1.body.total_hits).toBe(34);

        const es = await post('/lucene912/_search', { knn: { field: 'knn_field', query_vector: [...q], k: 36, num_candidates: MAX_NUM_CANDIDATES }, size: 36 });
        expect(es.status).toBe(200);
        expect(es.body.hits.total).toEqual({ value: 34, relation: 'eq' });
        expect(es.body.hits.hits).toEqual(direct.hits.map((h) => ({ _index: 'lucene912', _id: String(h.doc), _score: h.score })));
        expect(es.body.hits.max_score).toBe(direct.hits[0].score);
      }
    });

    it('rejects another knn.field, naming the served one', async () => {
      const res = await post('/lucene912/_search', { knn: { field: 'content', query_vector: [1, 0, 0], k: 3 } });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/not a vector field of this index \(it serves \[knn_field\]\)/);
    });
  });

  it('prescore serve --lucene DIR --field NAME opens it through the opener and serves it', async () => {
    const zip = 'int7_hnsw.9.12.3.zip';
    const signals = new EventEmitter();
    const out: string[] = [];
    let listening!: (s: RunningServer) => void;
    const ready = new Promise<RunningServer>((r) => (listening = r));
    const io: ServeIo = { env: {}, stdout: (l) => out.push(l), stderr: () => {}, signals: signals as unknown as ServeIo['signals'], onListening: listening };
    const opener = indexOpener(openIndex, (dir, o) => openLuceneIndex(dir, { ...o, sidecarDir: sidecars[zip] }));
    const exit = serveCommand(['--lucene', dirs[zip], '--field', 'knn_field', '--port', '0', '--name', 'int7'], opener, io);
    const server = await Promise.race([ready, exit.then((c) => Promise.reject(new Error(`serve exited ${c}`)))]);
    expect(out.join('\n')).toContain('serving index "int7" (30 docs, 3 dims)');
    const res = await fetch(`${server.url}/int7/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ knn: { field: 'knn_field', query_vector: [0.2, -0.1, 0.5], k: 30, num_candidates: 100 }, size: 30 }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.hits.hits.map((h: any) => Number(h._id)).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(body.hits.hits[0]).toMatchObject({ _id: '4' }); // 0.1f + 0.1f*4 = 0.5: the query itself
    signals.emit('SIGTERM');
    expect(await exit).toBe(0);
  });
});
