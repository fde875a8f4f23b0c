import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFooter, checkIndexHeader, writeIndexHeader } from '../segments/codec/CodecUtil.js';
import { CorruptIndexException, IndexFormatTooNewOrOldException } from '../segments/codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { ByteArrayDataOutput } from '../segments/store/DataOutput.js';
import { readSliceBytes } from '../segments/store/FileSlice.js';
import type { CompoundDirectory } from '../segments/lucene/CompoundDirectory.js';
import {
  fileNameFromGeneration,
  generationFromSegmentsFileName,
  lastCommitSegmentsFileName,
  parseGeneration,
  parseSegmentName,
  segmentFileName,
  stripSegmentName,
} from '../segments/lucene/IndexFileNames.js';
import { LuceneIndex, vectorFormatFileName } from '../segments/lucene/LuceneIndex.js';
import { codecTraits } from '../segments/lucene/LuceneFormat.js';
import { parseSegmentInfo } from '../segments/lucene/SegmentInfo.js';
import { LUCENE_FIXTURE_ZIPS, luceneFixturesDir } from './support/luceneFixtures.js';

const FIXTURES = luceneFixturesDir();
const ZIPS = LUCENE_FIXTURE_ZIPS;

let root = '';
const dirs: Record<string, string> = {};
let scratch = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'prescore-lucene-'));
  for (const z of ZIPS) {
    const d = join(root, z.replace(/\.zip$/, ''));
    execFileSync('unzip', ['-q', '-o', join(FIXTURES, z), '-d', d]);
    dirs[z] = d;
  }
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A private copy of a fixture directory, to corrupt. */
function copyOf(zip: (typeof ZIPS)[number]): string {
  const d = join(root, `copy-${scratch++}`);
  cpSync(dirs[zip], d, { recursive: true });
  return d;
}

/** Rewrites the CRC32 footer of a whole file image (after a deliberate edit). */
function refooter(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const crc = crc32(out.subarray(0, out.length - 8));
  new DataView(out.buffer, out.byteOffset).setUint32(out.length - 4, crc, false);
  return out;
}

function replaceAscii(bytes: Uint8Array, from: string, to: string): Uint8Array {
  expect(to.length).toBe(from.length);
  const hay = Buffer.from(bytes);
  const at = hay.indexOf(Buffer.from(from, 'latin1'));
  expect(at).toBeGreaterThanOrEqual(0);
  const out = bytes.slice();
  out.set(Buffer.from(to, 'latin1'), at);
  return out;
}

function expectCorrupt(fn: () => unknown, resource: string | RegExp): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, 'expected a CorruptIndexException').toBeInstanceOf(CorruptIndexException);
  const r = (err as CorruptIndexException).resource;
  if (typeof resource === 'string') expect(r).toBe(resource);
  else expect(r).toMatch(resource);
}

function float32s(bytes: Uint8Array): Float32Array {
  const copy = bytes.slice();
  return new Float32Array(copy.buffer, 0, copy.length / 4);
}

describe('IndexFileNames', () => {
  it('parses base-36 generations and picks the newest commit', () => {
    expect(parseGeneration('3')).toBe(3);
    expect(parseGeneration('a')).toBe(10);
    expect(parseGeneration('10')).toBe(36);
    expect(generationFromSegmentsFileName('segments')).toBe(0);
    expect(generationFromSegmentsFileName('segments_z')).toBe(35);
    expect(generationFromSegmentsFileName('segments_Z')).toBe(-1);
    expect(generationFromSegmentsFileName('_0.si')).toBe(-1);
    expect(lastCommitSegmentsFileName(['segments_9', 'segments_a', 'segments.gen', 'write.lock', 'segments_2'])).toBe('segments_a');
    expect(lastCommitSegmentsFileName(['write.lock'])).toBeUndefined();
  });

  it('builds and strips segment file names like Lucene', () => {
    expect(fileNameFromGeneration('_0', 'liv', 1)).toBe('_0_1.liv');
    expect(fileNameFromGeneration('_0', 'liv', 36)).toBe('_0_10.liv');
    expect(fileNameFromGeneration('segments', '', 3)).toBe('segments_3');
    expect(segmentFileName('_0', 'Lucene99HnswVectorsFormat_0', 'vec')).toBe('_0_Lucene99HnswVectorsFormat_0.vec');
    expect(segmentFileName('_0', '', 'fnm')).toBe('_0.fnm');
    expect(stripSegmentName('_0_Lucene99HnswVectorsFormat_0.vec')).toBe('_Lucene99HnswVectorsFormat_0.vec');
    expect(stripSegmentName('_0.fnm')).toBe('.fnm');
    expect(stripSegmentName('_a3_1.liv')).toBe('_1.liv');
    expect(parseSegmentName('_a3_Lucene90_0.dvd')).toBe('_a3');
    expect(parseSegmentName('_a3.cfs')).toBe('_a3');
  });

  it('maps codec names to releases and rejects what it cannot read', () => {
    expect(codecTraits('Lucene99', 'x')).toMatchObject({ major: 9, minor: 9 });
    expect(codecTraits('Lucene912', 'x')).toMatchObject({ major: 9, minor: 12 });
    expect(codecTraits('Lucene100', 'x')).toMatchObject({ major: 10, minor: 0 });
    expect(codecTraits('Lucene104', 'x')).toMatchObject({ major: 10, minor: 4 });
    expect(() => codecTraits('Lucene95', 'segments_1')).toThrow(/Lucene95.*9\.5.*not supported/);
    expect(() => codecTraits('Lucene87', 'segments_1')).toThrow(/Lucene87 \(Lucene 8\.7\)/);
    expect(() => codecTraits('Elasticsearch900', 'segments_1')).toThrow(/unknown segment codec Elasticsearch900/);
    expect(codecTraits('Elasticsearch900', 'x', ['Elasticsearch900']).name).toBe('Elasticsearch900');
  });
});

describe('LuceneIndex on the real fixtures', () => {
  const expectations = {
    'index.9.12.3-cfs.zip': { gen: 'segments_3', codec: 'Lucene912', version: '9.12.3', fnmFormat: 1, maxDocs: [10, 10, 10, 5, 1], field: 33, format: 'Lucene99HnswVectorsFormat' },
    'index.10.0.0-cfs.zip': { gen: 'segments_3', codec: 'Lucene100', version: '10.0.0', fnmFormat: 2, maxDocs: [10, 10, 10, 5, 1], field: 33, format: 'Lucene99HnswVectorsFormat' },
    'int7_hnsw.9.12.3.zip': {
      gen: 'segments_1',
      codec: 'Lucene99',
      version: '9.12.3',
      fnmFormat: 1,
      maxDocs: [10, 10, 10],
      field: 0,
      format: 'Lucene99HnswScalarQuantizedVectorsFormat',
    },
  } as const;

  for (const zip of ZIPS) {
    const exp = expectations[zip];
    describe(zip, () => {
      it('reads the commit and the segments in docBase order', () => {
        const idx = LuceneIndex.open(dirs[zip]);
        expect(idx.commit.fileName).toBe(exp.gen);
        expect(idx.commit.format).toBe(10);
        expect(idx.segments.map((s) => s.maxDoc)).toEqual(exp.maxDocs);
        expect(idx.segments.map((s) => s.name)).toEqual(exp.maxDocs.map((_, i) => `_${i}`));
        let base = 0;
        for (const s of idx.segments) {
          expect(s.docBase).toBe(base);
          base += s.maxDoc;
          expect(s.codec).toBe(exp.codec);
          expect(`${s.info.version.major}.${s.info.version.minor}.${s.info.version.bugfix}`).toBe(exp.version);
          expect(s.info.isCompoundFile).toBe(true);
          expect(s.directory.isCompound).toBe(true);
          expect(s.info.hasBlocks).toBe(false);
          expect([...s.info.files].sort()).toEqual([`${s.name}.cfe`, `${s.name}.cfs`, `${s.name}.si`]);
          expect(s.info.diagnostics.get('lucene.version')).toBe(exp.version);
          expect(s.info.attributes.get('Lucene90StoredFieldsFormat.mode')).toBe('BEST_SPEED');
          expect(s.fieldInfos.format).toBe(exp.fnmFormat);
          expect(s.id).toEqual(s.commitInfo.id);
          expect(s.commitInfo.commitId).not.toBeNull();
        }
        expect(idx.maxDoc).toBe(base);
        expect(idx.segmentForDoc(0)).toMatchObject({ doc: 0 });
        expect(idx.segmentForDoc(base - 1).segment.name).toBe(`_${exp.maxDocs.length - 1}`);
        expect(idx.segmentForDoc(12)).toMatchObject({ doc: 2, segment: { name: '_1' } });
      });

      it('reads the deletions', () => {
        const idx = LuceneIndex.open(dirs[zip]);
        if (zip.startsWith('index.')) {
          const s0 = idx.segments[0];
          expect(s0.commitInfo.delGen).toBe(1);
          expect(s0.delCount).toBe(1);
          expect(s0.liveDocs).not.toBeNull();
          expect(s0.liveDocs!.deletedDocs()).toEqual([7]);
          expect(s0.liveDocs!.isLive(7)).toBe(false);
          expect(s0.liveDocs!.isLive(6)).toBe(true);
          expect(s0.numDocs).toBe(9);
          for (const s of idx.segments.slice(1)) expect(s.liveDocs).toBeNull();
          expect(idx.numDocs).toBe(35);
        } else {
          for (const s of idx.segments) expect(s.liveDocs).toBeNull();
          expect(idx.numDocs).toBe(30);
        }
      });

      it('finds the vector field, its format and its files', () => {
        const idx = LuceneIndex.open(dirs[zip]);
        const v = idx.findVectorField('knn_field')!;
        expect(v).not.toBeNull();
        expect(v).toMatchObject({ dimension: 3, encoding: 'FLOAT32', similarity: 'COSINE', similarityOrdinal: 2 });
        expect(idx.findVectorField('content')).toBeNull();
        expect(idx.findVectorField('no_such_field')).toBeNull();
        const withVectors = zip.startsWith('index.') ? 4 : 3;
        for (const [i, e] of v.segments.entries()) {
          if (i >= withVectors) {
            expect(e).toMatchObject({ present: false, reason: 'no-field' });
            continue;
          }
          if (!e.present) throw new Error(`segment ${e.segment.name} lacks the field`);
          expect(e.fieldNumber).toBe(exp.field);
          expect(e.formatName).toBe(exp.format);
          expect(e.formatSuffix).toBe('0');
          expect(e.segmentSuffix).toBe(`${exp.format}_0`);
          const names = e.segment.directory.listAll();
          const exts = exp.format === 'Lucene99HnswVectorsFormat' ? ['vec', 'vem', 'vemf', 'vex'] : ['vec', 'vem', 'vemf', 'vemq', 'veq', 'vex'];
          for (const ext of exts) expect(names).toContain(vectorFormatFileName(e, ext));

          // The raw float delegate: header with the segment id and suffix, vectors at 4-aligned offset.
          const vemfName = vectorFormatFileName(e, 'vemf');
          const meta = e.segment.directory.openChecksummed(vemfName);
          expect(meta.resource).toBe(`${e.segment.name}.cfs[${vemfName}]`);
          checkIndexHeader(meta, 'Lucene99FlatVectorsFormatMeta', 0, 0, e.segment.id, e.segmentSuffix);
          expect(meta.readInt()).toBe(exp.field);
          expect(meta.readInt()).toBe(1); // FLOAT32
          expect(meta.readInt()).toBe(2); // COSINE
          const dataOffset = meta.readVLong();
          const dataLength = meta.readVLong();
          expect(meta.readVInt()).toBe(3);
          const size = meta.readInt();
          expect(size).toBe(e.segment.maxDoc); // dense: deleted docs keep their vectors
          expect(dataLength).toBe(size * 3 * 4);
          expect(meta.readLong()).toBe(-1); // dense
          const vec = e.segment.directory.openSlice(vectorFormatFileName(e, 'vec'));
          const floats = float32s(readSliceBytes(vec, dataOffset, dataLength));
          for (let ord = 0; ord < size; ord++) {
            const doc = e.segment.docBase + ord;
            expect(floats[ord * 3]).toBe(Math.fround(0.2));
            expect(floats[ord * 3 + 1]).toBe(Math.fround(-0.1));
            expect(floats[ord * 3 + 2]).toBeCloseTo(0.1 + 0.1 * doc, 5);
          }
        }
      });

      it('passes the full integrity check', () => {
        expect(() => LuceneIndex.open(dirs[zip]).checkIntegrity()).not.toThrow();
      });
    });
  }

  it('reads the doc-values skip-index byte of .fnm format 2 (10.0) and not in format 1 (9.12)', () => {
    const f912 = LuceneIndex.open(dirs['index.9.12.3-cfs.zip']).segments[0];
    const f100 = LuceneIndex.open(dirs['index.10.0.0-cfs.zip']).segments[0];
    expect(f912.fieldInfos.size).toBe(34);
    expect(f100.fieldInfos.size).toBe(34);
    const len = (s: typeof f912) => s.directory.openSlice(`${s.name}.fnm`).length;
    // Same fields, same attributes: exactly one more byte per field in format 2.
    expect(len(f100) - len(f912)).toBe(34);
    for (const f of f100.fieldInfos.fields) expect(f.docValuesSkipIndexType).toBe('NONE');
    const dv = f100.fieldInfos.fieldInfo('dvSortedNumeric')!;
    expect(dv.docValuesType).toBe('SORTED_NUMERIC');
    const pt = f100.fieldInfos.fieldInfo('doublePoint2d')!;
    expect([pt.pointDimensionCount, pt.pointIndexDimensionCount, pt.pointNumBytes]).toEqual([2, 2, 8]);
    expect(f100.fieldInfos.fieldInfo(33)!.name).toBe('knn_field');
  });

  it('names compound sub-files in slices and rejects unknown ones', () => {
    const s = LuceneIndex.open(dirs['index.9.12.3-cfs.zip']).segments[0];
    const slice = s.directory.openSlice('_0.fnm');
    expect(slice.name).toBe('_0.cfs[_0.fnm]');
    expect(slice.path.endsWith('_0.cfs')).toBe(true);
    expect(slice.offset % 8).toBe(0);
    expect(s.directory.exists('_0.fnm')).toBe(true);
    expect(s.directory.exists('_1.fnm')).toBe(false);
    expect(() => s.directory.openSlice('_0.nope')).toThrow(/no file _0\.nope in compound file _0\.cfs/);
    const cd = s.directory as CompoundDirectory;
    expect(cd.entries.get('.fnm')!.name).toBe('_0.fnm');
    expect(cd.entries.get('_Lucene99HnswVectorsFormat_0.vec')).toBeDefined();
  });

  describe('corruption is reported with the file (and sub-file) name', () => {
    function flipInSubFile(d: string, seg: string, logical: string, at = 40): void {
      const idx = LuceneIndex.open(d);
      const s = idx.segments.find((x) => x.name === seg)!;
      const slice = s.directory.openSlice(logical);
      const bytes = readFileSync(slice.path);
      bytes[slice.offset + Math.min(at, slice.length - 17)] ^= 0x10;
      writeFileSync(slice.path, bytes);
    }

    it('a flipped byte in the compound .fnm fails open, naming _0.cfs[_0.fnm]', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      flipInSubFile(d, '_0', '_0.fnm', 100);
      expectCorrupt(() => LuceneIndex.open(d), '_0.cfs[_0.fnm]');
    });

    it('a flipped byte in the .vec passes open but fails checkIntegrity, naming the sub-file', () => {
      const d = copyOf('index.10.0.0-cfs.zip');
      flipInSubFile(d, '_2', '_2_Lucene99HnswVectorsFormat_0.vec', 90);
      const idx = LuceneIndex.open(d);
      expectCorrupt(() => idx.checkIntegrity(), '_2.cfs[_2_Lucene99HnswVectorsFormat_0.vec]');
    });

    it('a flipped byte in the quantized .veq fails checkIntegrity naming it', () => {
      const d = copyOf('int7_hnsw.9.12.3.zip');
      flipInSubFile(d, '_1', '_1_Lucene99HnswScalarQuantizedVectorsFormat_0.veq', 120);
      expectCorrupt(() => LuceneIndex.open(d).checkIntegrity(), '_1.cfs[_1_Lucene99HnswScalarQuantizedVectorsFormat_0.veq]');
    });

    it('a damaged sub-file footer fails open (structural check of every entry)', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      const s = LuceneIndex.open(d).segments[1];
      const slice = s.directory.openSlice('_1_Lucene99HnswVectorsFormat_0.vex');
      const bytes = readFileSync(slice.path);
      bytes[slice.offset + slice.length - 15] ^= 0xff; // footer magic
      writeFileSync(slice.path, bytes);
      expectCorrupt(() => LuceneIndex.open(d), '_1.cfs[_1_Lucene99HnswVectorsFormat_0.vex]');
    });

    for (const [file, resource] of [
      ['_0.cfe', '_0.cfe'],
      ['_3.si', '_3.si'],
      ['_0_1.liv', '_0_1.liv'],
      ['segments_3', 'segments_3'],
    ] as const) {
      it(`a flipped byte in ${file} fails open`, () => {
        const d = copyOf('index.9.12.3-cfs.zip');
        const bytes = readFileSync(join(d, file));
        bytes[Math.min(50, bytes.length - 20)] ^= 0x01;
        writeFileSync(join(d, file), bytes);
        expectCorrupt(() => LuceneIndex.open(d), resource);
      });
    }

    it('a truncated or extended .cfs fails open', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      const bytes = readFileSync(join(d, '_2.cfs'));
      const longer = Buffer.concat([bytes.subarray(0, bytes.length - 16), Buffer.alloc(8), bytes.subarray(bytes.length - 16)]);
      writeFileSync(join(d, '_2.cfs'), longer);
      expect(() => LuceneIndex.open(d)).toThrow(/length should be \d+ bytes.*_2\.cfs/);
    });

    it('a missing segment file is named', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      unlinkSync(join(d, '_1.cfe'));
      expect(() => LuceneIndex.open(d)).toThrow(/no file _1\.cfe/);
    });

    it('a .liv whose deleted count disagrees with the commit fails', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      const p = join(d, '_0_1.liv');
      const bytes = readFileSync(p);
      // The bit set starts right after the 43-byte header (suffix "1"); revive doc 7.
      expect(bytes[43]).toBe(0x7f);
      bytes[43] = 0xff;
      writeFileSync(p, refooter(bytes));
      expect(() => LuceneIndex.open(d)).toThrow(/bits\.deleted=0 info\.delcount=1.*_0_1\.liv/);
    });
  });

  describe('unsupported codecs and versions are named', () => {
    it('an unknown segment codec', () => {
      const d = copyOf('index.9.12.3-cfs.zip');
      const p = join(d, 'segments_3');
      writeFileSync(p, refooter(replaceAscii(readFileSync(p), 'Lucene912', 'Lucene812')));
      let err: unknown;
      try {
        LuceneIndex.open(d);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IndexFormatTooNewOrOldException);
      expect(String(err)).toMatch(/segments_3 \(segment _0\).*Lucene812/);
    });

    it('a segments_N header version beyond 10', () => {
      const d = copyOf('index.10.0.0-cfs.zip');
      const p = join(d, 'segments_3');
      const bytes = readFileSync(p);
      expect(bytes.readInt32BE(13)).toBe(10);
      bytes.writeInt32BE(11, 13);
      writeFileSync(p, refooter(bytes));
      expect(() => LuceneIndex.open(d)).toThrow(/segments_3.*codec segments version 11, supported \[9, 10\]/);
    });

    it('a .fnm format beyond 2, named as the compound sub-file', () => {
      const d = copyOf('index.10.0.0-cfs.zip');
      const s = LuceneIndex.open(d).segments[4];
      const slice = s.directory.openSlice('_4.fnm');
      const cfs = readFileSync(slice.path);
      const sub = cfs.subarray(slice.offset, slice.offset + slice.length);
      const versionAt = 4 + 1 + 'Lucene94FieldInfos'.length;
      expect(sub.readInt32BE(versionAt)).toBe(2);
      sub.writeInt32BE(3, versionAt);
      sub.set(refooter(sub));
      writeFileSync(slice.path, cfs);
      expect(() => LuceneIndex.open(d)).toThrow(/_4\.cfs\[_4\.fnm\].*Lucene94FieldInfos version 3, supported \[0, 2\]/);
    });
  });

  it('reads field infos from a generation file when fieldInfosGen != -1', () => {
    const d = copyOf('index.10.0.0-cfs.zip');
    const s0 = LuceneIndex.open(d).segments[0];
    // Build `_0_1.fnm` (outside the .cfs, header suffix "1") from the compound `_0.fnm`, renaming
    // the vector field so the test can tell which file was read.
    const orig = readSliceBytes(s0.directory.openSlice('_0.fnm'));
    const headerLen = 4 + 1 + 'Lucene94FieldInfos'.length + 4 + 16 + 1;
    const body = replaceAscii(orig.subarray(headerLen, orig.length - 16), 'knn_field', 'knn_gen_1');
    const out = new ByteArrayDataOutput();
    writeIndexHeader(out, 'Lucene94FieldInfos', 2, s0.id, '1');
    out.writeBytes(body);
    appendFooter(out);
    writeFileSync(join(d, '_0_1.fnm'), out.toBytes());
    // Point the commit at it: fieldInfosGen of _0 is the BE int64 after delGen (8) and delCount (4).
    const p = join(d, 'segments_3');
    const seg = readFileSync(p);
    const at = seg.indexOf(Buffer.from('Lucene100', 'latin1')) + 'Lucene100'.length + 8 + 4;
    expect(seg.readBigInt64BE(at)).toBe(-1n);
    seg.writeBigInt64BE(1n, at);
    writeFileSync(p, refooter(seg));

    const idx = LuceneIndex.open(d);
    expect(idx.segments[0].commitInfo.fieldInfosGen).toBe(1);
    expect(idx.segments[0].fieldInfos.resource).toBe('_0_1.fnm');
    expect(idx.segments[0].fieldInfos.fieldInfo('knn_field')).toBeUndefined();
    const v = idx.findVectorField('knn_gen_1')!;
    expect(v.segments.map((e) => e.present)).toEqual([true, false, false, false, false]);
    expect(idx.findVectorField('knn_field')!.segments.map((e) => e.present)).toEqual([false, true, true, true, false]);
    idx.checkIntegrity();
  });

  it('opens a non-compound segment (the same files as plain files)', () => {
    const d = copyOf('index.9.12.3-cfs.zip');
    const before = LuceneIndex.open(d);
    const s1 = before.segments[1];
    // Extract every sub-file of _1.cfs as a plain file and rewrite _1.si as non-compound.
    const names = s1.directory.listAll();
    for (const n of names) writeFileSync(join(d, n), readSliceBytes(s1.directory.openSlice(n)));
    const siBytes = readFileSync(join(d, '_1.si'));
    const input = new ByteArrayDataInput(siBytes, '_1.si', 0, siBytes.length - 16);
    checkIndexHeader(input, 'Lucene90SegmentInfo', 0, 0, s1.id, '');
    const si = parseSegmentInfo(input, '_1', s1.id);
    const out = new ByteArrayDataOutput();
    writeIndexHeader(out, 'Lucene90SegmentInfo', 0, s1.id, '');
    out.writeInt(si.version.major);
    out.writeInt(si.version.minor);
    out.writeInt(si.version.bugfix);
    out.writeByte(1); // has a min version
    out.writeInt(si.minVersion!.major);
    out.writeInt(si.minVersion!.minor);
    out.writeInt(si.minVersion!.bugfix);
    out.writeInt(si.maxDoc);
    out.writeByte(0xff); // NO: not compound
    out.writeByte(0xff); // no blocks
    out.writeMapOfStrings(si.diagnostics);
    out.writeSetOfStrings([...names, '_1.si']);
    out.writeMapOfStrings(si.attributes);
    out.writeVInt(0);
    appendFooter(out);
    writeFileSync(join(d, '_1.si'), out.toBytes());
    unlinkSync(join(d, '_1.cfs'));
    unlinkSync(join(d, '_1.cfe'));

    const idx = LuceneIndex.open(d);
    const s = idx.segments[1];
    expect(s.info.isCompoundFile).toBe(false);
    expect(s.directory.isCompound).toBe(false);
    expect(s.directory.openSlice('_1.fnm')).toMatchObject({ name: '_1.fnm', offset: 0 });
    expect(() => s.directory.openSlice('_0.fnm')).toThrow(/other segment/);
    const e = idx.findVectorField('knn_field')!.segments[1];
    expect(e.present && e.fieldNumber).toBe(33);
    idx.checkIntegrity();
    // And a flipped byte in a plain vector file is named plainly.
    const vec = join(d, '_1_Lucene99HnswVectorsFormat_0.vec');
    const b = readFileSync(vec);
    b[90] ^= 4;
    writeFileSync(vec, b);
    expectCorrupt(() => LuceneIndex.open(d).checkIntegrity(), '_1_Lucene99HnswVectorsFormat_0.vec');
  });

  it('refuses a directory without a commit', () => {
    const d = mkdtempSync(join(root, 'empty-'));
    expect(() => LuceneIndex.open(d)).toThrow(/no file segments_N/);
  });
});
