import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
import { FastCompressionHashTable, compressWithDictionary } from '../segments/compress/LZ4.js';
import { LuceneIndex, type LuceneSegment } from '../segments/lucene/LuceneIndex.js';
import { ByteArrayDataInput } from '../segments/store/DataInput.js';
import { ByteArrayDataOutput, type DataOutput } from '../segments/store/DataOutput.js';
import { readSliceBytes } from '../segments/store/FileSlice.js';
import { CompressedUnit } from '../segments/storedfields/CompressionMode.js';
import { LZ4_WITH_PRESET_DICT } from '../segments/storedfields/LZ4WithPresetDictCompressionMode.js';
import { MODE_KEY, type StoredFieldsModeName } from '../segments/storedfields/Lucene90StoredFieldsFormat.js';
import { StoredFieldsReader, directoryFiles } from '../segments/storedfields/StoredFieldsReader.js';
import { readStoredFieldsInts, writeStoredFieldsInts } from '../segments/storedfields/StoredFieldsInts.js';
import { readTLong, readZDouble, readZFloat, readZInt, writeTLong, writeZDouble, writeZFloat, writeZInt } from '../segments/storedfields/StoredFieldValues.js';
import type { StoredField, StoredFieldVisitor, StoredValue } from '../segments/storedfields/StoredFieldVisitor.js';
import { StoredFieldsWriter } from '../segments/storedfields/StoredFieldsWriter.js';
import { ZSTD814_COMPRESSION, ZSTD814_STORED_FIELDS } from '../segments/storedfields/Zstd814StoredFieldsFormat.js';
import { mulberry32 } from '../src/gen/Rng.js';
import { unzipLuceneFixture, type LuceneFixtureZip } from './support/luceneFixtures.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const tmpDirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'prescore-storedfields-'));
  tmpDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

function encode(write: (out: ByteArrayDataOutput) => void): string {
  const out = new ByteArrayDataOutput();
  write(out);
  return hex(out.toBytes());
}
const input = (h: string) => new ByteArrayDataInput(Buffer.from(h, 'hex'), 'test');

// What Lucene's backward-compatibility test (TestBasicBackwardsCompatibility.addDoc) stores for doc
// `id`, in the order it adds the fields; and the one doc of addNoProxDoc.
const UTF8_VALUE = 'Lu\uD834\uDD1Ece\uD834\uDD60ne \u0000 \u2620 ab\ud917\udc17cd';
const CONTENT = 'here is more content with aaa aaa aaa';
function expectedFixtureDoc(id: number): [string, string][] {
  return [
    ['id', String(id)],
    ['autf8', UTF8_VALUE],
    ['utf8', UTF8_VALUE],
    ['content2', CONTENT],
    ['fie\u2C77ld', 'field with non-ascii name'],
    ['content5', CONTENT],
    ['content6', CONTENT],
  ];
}
const NO_PROX_DOC: [string, string][] = [
  ['content3', 'aaa'],
  ['content4', 'aaa'],
];

function openSegment(segment: LuceneSegment, readPath: 'mmap' | 'pread' = 'mmap'): StoredFieldsReader {
  return StoredFieldsReader.open(segment.directory, segment.name, segment.id, {
    mode: segment.info.attributes.get(MODE_KEY) as StoredFieldsModeName,
    maxDoc: segment.maxDoc,
    readPath,
  });
}

describe('field value encodings (Lucene90 field records)', () => {
  it('ZInt is a zig-zag vint', () => {
    expect(encode((o) => writeZInt(o, 0))).toBe('00');
    expect(encode((o) => writeZInt(o, -1))).toBe('01');
    expect(encode((o) => writeZInt(o, 1))).toBe('02');
    expect(encode((o) => writeZInt(o, -2147483648))).toBe('ffffffff0f');
    for (const v of [0, 1, -1, 63, -64, 64, 2147483647, -2147483648]) expect(readZInt(input(encode((o) => writeZInt(o, v))))).toBe(v);
  });

  it('ZFloat: one byte for small integers, 4 bytes (top byte first) for positive floats, 0xFF + LE bits for negative ones', () => {
    expect(encode((o) => writeZFloat(o, -1))).toBe('80');
    expect(encode((o) => writeZFloat(o, 0))).toBe('81');
    expect(encode((o) => writeZFloat(o, 125))).toBe('fe');
    expect(encode((o) => writeZFloat(o, 126))).toBe('42' + '00' + 'fc' + '00'); // 0x42FC0000: bits 24-31, then 8-15, 16-23, 0-7
    expect(encode((o) => writeZFloat(o, 0.5))).toBe('3f000000');
    expect(encode((o) => writeZFloat(o, 1.1))).toBe('3fcc8ccd'); // 0x3F8CCCCD
    expect(encode((o) => writeZFloat(o, -0))).toBe('ff00000080');
    expect(encode((o) => writeZFloat(o, -2.5))).toBe('ff000020c0');
    expect(encode((o) => writeZFloat(o, NaN))).toBe('7f00c000'); // Java's canonical NaN 0x7FC00000
    const specials = [0, -0, 1, -1, 125, 126, -2, 0.1, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45, Infinity, -Infinity, NaN];
    for (const v of specials) expect(Object.is(readZFloat(input(encode((o) => writeZFloat(o, v)))), Math.fround(v)), String(v)).toBe(true);
  });

  it('ZDouble: one byte for small integers, 0xFE + float bits when exact as a float, 8 or 9 bytes otherwise', () => {
    expect(encode((o) => writeZDouble(o, 124))).toBe('fd');
    expect(encode((o) => writeZDouble(o, 1.5))).toBe('fe0000c03f');
    expect(encode((o) => writeZDouble(o, 0.1))).toBe('3f999999b999999a'); // 0x3FB999999999999A
    expect(encode((o) => writeZDouble(o, -0.1))).toBe('ff9a9999999999b9bf');
    expect(encode((o) => writeZDouble(o, -0))).toBe('fe00000080');
    const specials = [0, -0, 124, 125, -1, -2, 0.1, -0.1, Math.PI, 1e300, -1e300, Number.MIN_VALUE, Number.MAX_VALUE, Infinity, -Infinity, NaN, 2 ** 40 + 0.5];
    for (const v of specials) expect(Object.is(readZDouble(input(encode((o) => writeZDouble(o, v)))), v), String(v)).toBe(true);
  });

  it('TLong: day, hour and second multiples are scaled down before the zig-zag', () => {
    expect(encode((o) => writeTLong(o, 0n))).toBe('c0'); // 0 is a multiple of a day
    expect(encode((o) => writeTLong(o, 1n))).toBe('02');
    expect(encode((o) => writeTLong(o, -1n))).toBe('01');
    expect(encode((o) => writeTLong(o, 1000n))).toBe('42');
    expect(encode((o) => writeTLong(o, 3_600_000n))).toBe('82');
    expect(encode((o) => writeTLong(o, 86_400_000n))).toBe('c2');
    // a second-precision timestamp: 1.7e9 s, zig-zag 3.4e9 = 0xCAA7E200: header 0x40 | 0x20 | 0 (low 5 bits), vlong(3.4e9 >> 5)
    expect(encode((o) => writeTLong(o, 1_700_000_000_000n))).toBe('60' + '90fed432');
    expect(encode((o) => writeTLong(o, 33n))).toBe('2202');
    const specials = [0n, 1n, -1n, 31n, 32n, 1000n, -86_400_000n, 1_700_000_123_456n, 2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n, -(2n ** 63n) + 1000n * 2n ** 40n];
    for (const v of specials) expect(readTLong(input(encode((o) => writeTLong(o, v)))), String(v)).toBe(v);
  });

  it('StoredFieldsInts: all-equal, then 8/16/32-bit values, 128 at a time in interleaved LE words', () => {
    const write = (values: number[]) => encode((o) => writeStoredFieldsInts(Int32Array.from(values), values.length, o));
    expect(write([7, 7, 7])).toBe('0007');
    expect(write([1, 2, 3])).toBe('08010203');
    expect(write([1, 0x1234])).toBe('10' + '0100' + '3412');
    expect(write([1, 0x12345])).toBe('20' + '01000000' + '45230100');
    // 128 values 0..127 in 8 bits: word 0 holds values 0, 16, 32, ..., 112, value 0 in its top byte
    expect(write(Array.from({ length: 128 }, (_, i) => i)).slice(0, 18)).toBe('08' + '7060504030201000');
    const rnd = mulberry32(3);
    for (const count of [2, 3, 127, 128, 129, 255, 256, 300, 1024]) {
      for (const max of [1, 255, 256, 65535, 65536, 2 ** 31 - 1]) {
        const values = Int32Array.from({ length: count }, () => Math.floor(rnd() * (max + 1)));
        const out = new ByteArrayDataOutput();
        writeStoredFieldsInts(values, count, out);
        const back = new Int32Array(count + 1);
        readStoredFieldsInts(new ByteArrayDataInput(out.toBytes(), 'ints'), count, back, 1);
        expect(Array.from(back.subarray(1)), `${count} values < ${max + 1}`).toEqual(Array.from(values));
      }
    }
  });
});

describe.each(['index.9.12.3-cfs.zip', 'index.10.0.0-cfs.zip'] as LuceneFixtureZip[])('Lucene fixture %s', (zip) => {
  const dir = unzipLuceneFixture(zip);
  tmpDirs.push(dir);

  it.each(['mmap', 'pread'] as const)('reads every stored field of every doc as Lucene stored it (%s)', (readPath) => {
    const index = LuceneIndex.open(dir);
    let docs = 0;
    const ids = new Set<number>();
    for (const segment of index.segments) {
      const reader = openSegment(segment, readPath);
      try {
        expect(reader.mode.name).toBe('BEST_SPEED');
        expect(reader.maxDoc).toBe(segment.maxDoc);
        for (let doc = 0; doc < segment.maxDoc; doc++) {
          const fields = reader.documentFields(doc).map((f: StoredField) => {
            expect(f.type, `${segment.name} doc ${doc}`).toBe('string');
            return [segment.fieldInfos.fieldInfo(f.fieldNumber)!.name, f.value] as [string, unknown];
          });
          const id = fields.find(([name]) => name === 'id');
          if (id === undefined) {
            expect(fields).toEqual(NO_PROX_DOC);
          } else {
            // addDoc(writer, i) wrote doc i: the id field says which doc this is
            expect(Number(id[1])).toBe(segment.docBase + doc);
            ids.add(Number(id[1]));
            expect(fields).toEqual(expectedFixtureDoc(Number(id[1])));
          }
          docs++;
        }
        reader.checkIntegrity();
      } finally {
        reader.close();
      }
    }
    expect(docs).toBe(36); // 35 docs of addDoc (doc 7 deleted, still stored) + the no-prox doc
    expect(ids.size).toBe(35);
  });

  it('writes byte-identical .fdt, .fdx and .fdm from the fixture documents (same segment name and id)', () => {
    const index = LuceneIndex.open(dir);
    for (const segment of index.segments) {
      const reader = openSegment(segment);
      const out = tmp();
      const writer = StoredFieldsWriter.create(out, segment.name, segment.id);
      for (let doc = 0; doc < segment.maxDoc; doc++) {
        writer.startDocument();
        for (const f of reader.documentFields(doc)) writer.writeField(f.fieldNumber, f);
        writer.finishDocument();
      }
      writer.finish(segment.maxDoc);
      writer.close();
      reader.close();
      for (const ext of ['fdt', 'fdx', 'fdm']) {
        const theirs = readSliceBytes(segment.directory.openSlice(`${segment.name}.${ext}`));
        const ours = readFileSync(join(out, `${segment.name}.${ext}`));
        expect(hex(ours), `${segment.name}.${ext}`).toBe(hex(theirs));
      }
    }
  });

  it("each chunk's LZ4 dictionary and blocks, decompressed and compressed again (same split, one hash table), are the fixture's bytes", () => {
    const index = LuceneIndex.open(dir);
    let blocks = 0;
    for (const segment of index.segments) {
      const reader = openSegment(segment);
      const fdt = readSliceBytes(segment.directory.openSlice(`${segment.name}.fdt`));
      const { start, end } = reader.chunkRange(0);
      reader.close();
      // the chunk header: docBase, token, then the two int arrays (all docs of a chunk alike here)
      const header = new ByteArrayDataInput(fdt, 'fdt', start, end - start);
      header.readVInt();
      const n = header.readVInt() >>> 2;
      const ints = new Int32Array(n + 1);
      if (n === 1) {
        header.readVInt(); // fields of the doc
        ints[1] = header.readVInt();
      } else {
        readStoredFieldsInts(header, n, ints, 0);
        readStoredFieldsInts(header, n, ints, 1);
      }
      const total = n === 1 ? ints[1] : ints.subarray(1).reduce((a, b) => a + b, 0);
      const unit = new CompressedUnit();
      LZ4_WITH_PRESET_DICT.parseUnit(fdt, header.position, end, total, unit, 'fdt');
      const ht = new FastCompressionHashTable(); // Lucene's writer starts the segment with a fresh table
      const buffer = new Uint8Array(unit.dictLength + unit.blockLength);
      const recompressed = new ByteArrayDataOutput();
      LZ4_WITH_PRESET_DICT.decodeDictionary(fdt, unit, buffer, 'fdt');
      compressWithDictionary(buffer, 0, 0, unit.dictLength, recompressed, ht);
      for (let b = 0; b < unit.numBlocks; b++, blocks++) {
        LZ4_WITH_PRESET_DICT.decodeBlock(fdt, unit, b, buffer, 'fdt');
        compressWithDictionary(buffer, 0, unit.dictLength, unit.blockSize(b), recompressed, ht);
      }
      expect(hex(recompressed.toBytes()), segment.name).toBe(hex(fdt.subarray(unit.dictStart, unit.end)));
    }
    expect(blocks).toBeGreaterThan(40);
  });

  it("a flipped byte inside the compound file's .fdt is found by checkIntegrity, naming _0.cfs[_0.fdt]", () => {
    const copy = tmp();
    for (const f of readdirSync(dir)) copyFileSync(join(dir, f), join(copy, f));
    const segment = LuceneIndex.open(copy).segments[0];
    const slice = segment.directory.openSlice('_0.fdt');
    const cfs = readFileSync(join(copy, '_0.cfs'));
    cfs[slice.offset + 100] ^= 0x10;
    writeFileSync(join(copy, '_0.cfs'), cfs);
    const reader = openSegment(segment);
    expect(() => reader.checkIntegrity()).toThrow(CorruptIndexException);
    expect(() => reader.checkIntegrity()).toThrow(/resource=_0\.cfs\[_0\.fdt\]/);
    reader.close();
  });
});

// --- documents for the writer round trips ---

type Doc = StoredField[];

function randomString(rnd: () => number, maxLength: number): string {
  const alphabet = ['a', 'b', 'z', ' ', '"', '{', '}', 'é', 'ß', '中', '文', '\u0000', '😀', '𝄞', 'Ω', '\n'];
  let s = '';
  const n = Math.floor(rnd() * maxLength);
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
  return s;
}

function randomValue(rnd: () => number): StoredValue {
  switch (Math.floor(rnd() * 6)) {
    case 0:
      return { type: 'string', value: randomString(rnd, 200) };
    case 1:
      return { type: 'bytes', value: Uint8Array.from({ length: Math.floor(rnd() * 300) }, () => Math.floor(rnd() * 4) * 60) };
    case 2:
      return { type: 'int', value: [0, -1, 1, 2147483647, -2147483648, Math.floor(rnd() * 1e6) - 5e5][Math.floor(rnd() * 6)] };
    case 3:
      return {
        type: 'long',
        value: [0n, -1n, 1_700_000_000_000n + BigInt(Math.floor(rnd() * 1e6)) * 1000n, 2n ** 63n - 1n, -(2n ** 63n), BigInt(Math.floor(rnd() * 1e12))][Math.floor(rnd() * 6)],
      };
    case 4:
      return { type: 'float', value: Math.fround([0, -0, 1, 125, 3.5, -7.25, rnd() * 1e6, -rnd(), NaN, Infinity][Math.floor(rnd() * 10)]) };
    default:
      return { type: 'double', value: [0, -0, 124, 0.1, -0.1, rnd() * 1e300, -rnd(), NaN, -Infinity, 1.5][Math.floor(rnd() * 10)] };
  }
}

function randomDocs(count: number, seed: number): Doc[] {
  const rnd = mulberry32(seed);
  const docs: Doc[] = [];
  for (let d = 0; d < count; d++) {
    const kind = rnd();
    const numFields = kind < 0.05 ? 0 : kind < 0.1 ? 50 + Math.floor(rnd() * 150) : 1 + Math.floor(rnd() * 8);
    const doc: Doc = [];
    for (let f = 0; f < numFields; f++) doc.push({ fieldNumber: Math.floor(rnd() * 40), ...randomValue(rnd) });
    docs.push(doc);
  }
  return docs;
}

function writeDocs(dir: string, docs: Doc[], mode: StoredFieldsModeName = 'BEST_SPEED', segmentId = new Uint8Array(16).fill(7)): void {
  const w = StoredFieldsWriter.create(dir, '_3', segmentId, { mode });
  for (const doc of docs) {
    w.startDocument();
    for (const f of doc) w.writeField(f.fieldNumber, f);
    w.finishDocument();
  }
  w.finish(docs.length);
  w.close();
}

const ID = new Uint8Array(16).fill(7);
const open = (dir: string, options: Parameters<typeof StoredFieldsReader.open>[3] = {}) => StoredFieldsReader.open(directoryFiles(dir), '_3', ID, options);

/** One line per field (floats and doubles as their text: NaN and -0 compare; bytes as hex): cheap to diff. */
function normalize(doc: Doc): string[] {
  return doc.map((f) => {
    const v = f.type === 'bytes' ? hex(f.value) : Object.is(f.value, -0) ? '-0' : typeof f.value === 'string' ? JSON.stringify(f.value) : String(f.value);
    return `${f.fieldNumber} ${f.type} ${v}`;
  });
}

describe('StoredFieldsWriter -> StoredFieldsReader', () => {
  const docs = randomDocs(3000, 11);
  // a doc larger than 2 x chunkSize (a sliced chunk) and an empty doc right after it
  const rnd = mulberry32(5);
  docs.splice(1500, 0, [
    { fieldNumber: 1, type: 'string', value: 'big' },
    { fieldNumber: 2, type: 'bytes', value: Uint8Array.from({ length: 400_000 }, () => Math.floor(rnd() * 3)) },
    { fieldNumber: 3, type: 'string', value: randomString(rnd, 200_000) },
    { fieldNumber: 4, type: 'int', value: 42 },
  ]);
  docs.splice(1501, 0, []);

  it.each([
    ['BEST_SPEED', 'mmap'],
    ['BEST_SPEED', 'pread'],
    ['BEST_COMPRESSION', 'mmap'],
  ] as const)('reads back every doc (%s, %s): all value types, unicode, empty docs, many fields, a doc over a chunk', (mode, readPath) => {
    const dir = tmp();
    writeDocs(dir, docs, mode);
    const reader = open(dir, { readPath, maxDoc: docs.length });
    try {
      expect(reader.mode.name).toBe(mode);
      expect(reader.numChunks).toBeGreaterThan(mode === 'BEST_SPEED' ? 10 : 2);
      expect(reader.numDirtyChunks).toBe(1);
      // the big doc's chunk reached 2 x chunkSize: its token has the sliced bit
      const { start } = reader.chunkRange(1500);
      const header = new ByteArrayDataInput(readFileSync(join(dir, '_3.fdt')), '_3.fdt', start);
      header.readVInt();
      expect(header.readVInt() & 1).toBe(1);
      for (let d = 0; d < docs.length; d++) expect(normalize(reader.documentFields(d)), `doc ${d}`).toEqual(normalize(docs[d]));
      // random order: every chunk is loaded again, in any order
      const order = mulberry32(9);
      for (let k = 0; k < 500; k++) {
        const d = Math.floor(order() * docs.length);
        expect(normalize(reader.documentFields(d)), `doc ${d}`).toEqual(normalize(docs[d]));
      }
      reader.checkIntegrity();
    } finally {
      reader.close();
    }
  });

  it('chunks by size and by doc count, and the index spans several DirectMonotonic blocks', () => {
    // 5,000 tiny docs: chunks of 1,024 docs (maxDocsPerChunk); 2,000 docs of ~1 KB: chunks of 80 KiB
    const dir = tmp();
    const tiny: Doc[] = Array.from({ length: 5000 }, (_, i) => [{ fieldNumber: 0, type: 'int', value: i }]);
    writeDocs(dir, tiny);
    const r = open(dir);
    expect(r.numChunks).toBe(5);
    expect(r.chunkRange(1023)).not.toEqual(r.chunkRange(1024));
    expect(r.chunkRange(0)).toEqual(r.chunkRange(1023));
    for (const d of [0, 1023, 1024, 4999]) expect(r.documentFields(d)).toEqual([{ fieldNumber: 0, type: 'int', value: d }]);
    r.close();

    // > 1,024 chunks: the .fdx arrays need two blocks of 2^10 values each
    const many = tmp();
    const big: Doc[] = Array.from({ length: 1100 }, (_, i) => [{ fieldNumber: 0, type: 'bytes', value: new Uint8Array(81_920).fill(i & 0xff) }]);
    writeDocs(many, big);
    const r2 = open(many);
    expect(r2.numChunks).toBe(1100); // every doc fills a chunk
    expect(r2.numDirtyChunks).toBe(0);
    for (const d of [0, 1, 1023, 1024, 1025, 1099]) {
      const [f] = r2.documentFields(d);
      expect(f.type === 'bytes' && f.value.length === 81_920 && f.value.every((b) => b === (d & 0xff))).toBe(true);
    }
    r2.checkIntegrity();
    r2.close();
  });

  it('consecutive docs of a chunk decompress it once; a visitor may skip fields and stop', () => {
    const dir = tmp();
    writeDocs(dir, docs);
    const reader = open(dir);
    const mode = reader.mode.compression;
    const blocks = vi.spyOn(mode, 'decodeBlock');
    const dicts = vi.spyOn(mode, 'decodeDictionary');
    const { start, end } = reader.chunkRange(0);
    let d = 0;
    while (d < docs.length && reader.chunkRange(d).start === start) reader.documentFields(d++);
    expect(d).toBeGreaterThan(10);
    expect(dicts).toHaveBeenCalledTimes(1);
    expect(blocks.mock.calls.length).toBeLessThanOrEqual(10);
    reader.documentFields(0); // cached
    expect(dicts).toHaveBeenCalledTimes(1);
    expect(end).toBeGreaterThan(start);
    blocks.mockRestore();
    dicts.mockRestore();

    // skip every field but number 3; stop at the first field numbered 7
    const target = docs.findIndex((doc) => doc.some((f) => f.fieldNumber === 3) && doc.some((f) => f.fieldNumber === 7));
    const seen: number[] = [];
    const visitor: StoredFieldVisitor = {
      needsField: (n) => (n === 7 ? 'stop' : n === 3 ? 'yes' : 'no'),
      stringField: (n) => seen.push(n),
      binaryField: (n) => seen.push(n),
      intField: (n) => seen.push(n),
      longField: (n) => seen.push(n),
      floatField: (n) => seen.push(n),
      doubleField: (n) => seen.push(n),
    };
    reader.document(target, visitor);
    const firstStop = docs[target].findIndex((f) => f.fieldNumber === 7);
    expect(seen).toEqual(
      docs[target]
        .slice(0, firstStop)
        .filter((f) => f.fieldNumber === 3)
        .map(() => 3),
    );
    reader.close();
  });

  it('prefetch advises the byte range of each distinct chunk holding the docs', () => {
    const dir = tmp();
    writeDocs(dir, docs);
    const reader = open(dir);
    vi.spyOn(reader.mapping!, 'isResident').mockReturnValue(false); // cold
    const advise = vi.spyOn(reader.mapping!, 'prefetch');
    const hits = [2999, 5, 6, 2000, 5, 1500];
    const chunks = new Map(hits.map((d) => [reader.chunkRange(d).start, reader.chunkRange(d)]));
    expect(reader.prefetch(hits)).toBe(chunks.size);
    expect(advise.mock.calls.map(([rel, length]) => ({ start: rel, end: rel + length }))).toEqual([...chunks.values()]);
    reader.close();

    const pread = open(dir, { readPath: 'pread' });
    expect(pread.mapping).toBeNull();
    expect(pread.prefetch(hits)).toBe(chunks.size); // posix_fadvise on the same ranges
    pread.close();
  });

  it('prefetch skips resident chunks, only samples once warm, and advises again as soon as a probe finds one cold', () => {
    const dir = tmp();
    writeDocs(dir, docs);
    const reader = open(dir);
    let resident = true;
    const probe = vi.spyOn(reader.mapping!, 'isResident').mockImplementation(() => resident);
    const advise = vi.spyOn(reader.mapping!, 'prefetch');
    // Resident: each chunk is probed, none advised; after 64 chunks in a row, calls stop probing.
    for (let doc = 0; probe.mock.calls.length < 64; doc++) reader.prefetch([doc % docs.length]);
    expect(advise).not.toHaveBeenCalled();
    probe.mockClear();
    for (let i = 0; i < 32; i++) reader.prefetch([2999, 5, 1500]);
    expect(probe.mock.calls.length).toBe(2); // one chunk in every 16th call
    expect(advise).not.toHaveBeenCalled();
    // The file went cold: the next probe misses, and from there every chunk is advised.
    resident = false;
    for (let i = 0; i < 16; i++) reader.prefetch([2999, 5, 1500]);
    expect(advise.mock.calls.length).toBeGreaterThan(0);
    advise.mockClear();
    const hits = [2999, 5, 2000, 1500];
    reader.prefetch(hits);
    expect(advise.mock.calls.length).toBe(new Set(hits.map((d) => reader.chunkRange(d).start)).size);
    reader.close();
  });

  it('a segment without docs has no chunks and reads as empty', () => {
    const dir = tmp();
    writeDocs(dir, []);
    const reader = open(dir, { maxDoc: 0 });
    expect(reader.maxDoc).toBe(0);
    expect(reader.numChunks).toBe(0);
    expect(() => reader.documentFields(0)).toThrow(RangeError);
    expect(reader.prefetch([])).toBe(0);
    reader.checkIntegrity();
    reader.close();
  });

  it('the writer writes what Lucene would name and frame: _N.fdt/.fdx/.fdm with the segment id and suffix', () => {
    const dir = tmp();
    const id = Uint8Array.from({ length: 16 }, (_, i) => i);
    const w = StoredFieldsWriter.create(dir, '_a', id, { segmentSuffix: 'x1' });
    w.startDocument();
    w.writeString(0, 'only');
    w.finishDocument();
    w.finish(1);
    w.close();
    const fdt = readFileSync(join(dir, '_a_x1.fdt'));
    expect(fdt.subarray(0, 4).toString('hex')).toBe('3fd76c17');
    expect(fdt.subarray(5, 33).toString()).toBe('Lucene90StoredFieldsFastData');
    expect(fdt.subarray(37, 53)).toEqual(Buffer.from(id));
    expect(fdt.subarray(53, 56).toString('latin1')).toBe('\u0002x1');
    const r = StoredFieldsReader.open(directoryFiles(dir), '_a', id, { segmentSuffix: 'x1' });
    expect(r.documentFields(0)).toEqual([{ fieldNumber: 0, type: 'string', value: 'only' }]);
    r.close();
  });
});

describe('corruption and truncation are reported naming the file', () => {
  const docs = randomDocs(2500, 23);
  for (const ext of ['fdm', 'fdx', 'fdt'] as const) {
    it(`a flipped byte in _3.${ext}`, () => {
      const dir = tmp();
      writeDocs(dir, docs);
      const path = join(dir, `_3.${ext}`);
      const bytes = readFileSync(path);
      bytes[Math.floor(bytes.length / 2)] ^= 0x01;
      writeFileSync(path, bytes);
      const name = new RegExp(`resource=_3\\.${ext}`);
      if (ext === 'fdt') {
        // the data file is CRC-checked by checkIntegrity (too big to read at open, as in Lucene)
        const reader = open(dir);
        expect(() => reader.checkIntegrity()).toThrow(name);
        reader.close();
      } else {
        expect(() => open(dir)).toThrow(CorruptIndexException);
        expect(() => open(dir)).toThrow(name);
      }
    });

    it(`a truncated _3.${ext}`, () => {
      const dir = tmp();
      writeDocs(dir, docs);
      const path = join(dir, `_3.${ext}`);
      truncateSync(path, readFileSync(path).length - 7);
      expect(() => open(dir)).toThrow(CorruptIndexException);
      expect(() => open(dir)).toThrow(new RegExp(`truncated.*resource=_3\\.${ext}`));
    });
  }

  it('a corrupt chunk fails to read with CorruptIndexException, not garbage or a hang', () => {
    const dir = tmp();
    writeDocs(dir, docs);
    const reader = open(dir);
    const { start, end } = reader.chunkRange(0);
    const path = join(dir, '_3.fdt');
    const clean = readFileSync(path);
    let failures = 0;
    const rnd = mulberry32(77);
    const chunkDocs = docs.findIndex((_, d) => d > 0 && reader.chunkRange(d).start !== start);
    for (let k = 0; k < 40; k++) {
      const bytes = Buffer.from(clean);
      bytes[start + Math.floor(rnd() * (end - start))] ^= 1 << Math.floor(rnd() * 8);
      writeFileSync(path, bytes);
      const r = open(dir);
      try {
        for (let d = 0; d < chunkDocs; d++) r.documentFields(d);
      } catch (e) {
        expect(e).toBeInstanceOf(CorruptIndexException);
        expect((e as Error).message).toMatch(/resource=_3\.fdt/);
        failures++;
      } finally {
        r.close();
      }
    }
    reader.close();
    // a flip inside a literal run changes a value without breaking the structure: only
    // checkIntegrity's CRC catches those; the rest must fail as corruption
    expect(failures).toBeGreaterThan(5);
  });

  it('a wrong segment id or mode is refused', () => {
    const dir = tmp();
    writeDocs(dir, docs.slice(0, 10));
    expect(() => StoredFieldsReader.open(directoryFiles(dir), '_3', new Uint8Array(16), {})).toThrow(/file mismatch, expected id/);
    expect(() => open(dir, { mode: 'BEST_COMPRESSION' })).toThrow(/codec mismatch/);
    expect(() => open(dir, { maxDoc: 11 })).toThrow(/the segment has 11/);
  });
});

describe('Elasticsearch Zstd814StoredFieldsFormat (read only)', () => {
  // 'prescore zstd stored fields, ' x 20 + 'end' (583 bytes), compressed by the zstd CLI as
  // Elasticsearch compresses (level 3, no checksum), and at level 19 with a checksum
  const TEXT = 'prescore zstd stored fields, '.repeat(20) + 'end';
  const FRAME_L3 = '28b52ffd6047014d0100040270726573636f7265207a7374642073746f726564206669656c64732c20656e6401009100957202';
  const FRAME_L19_CHECKSUM = '28b52ffd6447014d0100040270726573636f7265207a7374642073746f726564206669656c64732c20656e640100910095720266ea4c2d';

  function unitOf(frameHex: string): Uint8Array {
    const out = new ByteArrayDataOutput();
    const frame = Buffer.from(frameHex, 'hex');
    out.writeVInt(frame.length);
    out.writeBytes(frame);
    return out.toBytes().slice();
  }

  it('a unit is a vint length and one zstd frame; the frame decodes to the unit', () => {
    for (const frame of [FRAME_L3, FRAME_L19_CHECKSUM]) {
      const src = unitOf(frame);
      const unit = new CompressedUnit();
      ZSTD814_COMPRESSION.parseUnit(src, 0, src.length, TEXT.length, unit, '_0.fdt');
      expect(unit.end).toBe(src.length);
      const dest = new Uint8Array(TEXT.length);
      ZSTD814_COMPRESSION.decodeBlock(src, unit, 0, dest, '_0.fdt');
      expect(new TextDecoder().decode(dest)).toBe(TEXT);
    }
  });

  it('a frame whose content size or bytes do not match the unit is corrupt', () => {
    const src = unitOf(FRAME_L3);
    const unit = new CompressedUnit();
    ZSTD814_COMPRESSION.parseUnit(src, 0, src.length, TEXT.length + 1, unit, '_0.fdt');
    expect(() => ZSTD814_COMPRESSION.decodeBlock(src, unit, 0, new Uint8Array(TEXT.length + 1), '_0.fdt')).toThrow(/declares 583 bytes.*resource=_0\.fdt/);
    const bad = unitOf(FRAME_L3);
    bad[8] ^= 0x06; // the block header: a compressed block becomes a run of one byte
    ZSTD814_COMPRESSION.parseUnit(bad, 0, bad.length, TEXT.length, unit, '_0.fdt');
    expect(() => ZSTD814_COMPRESSION.decodeBlock(bad, unit, 0, new Uint8Array(TEXT.length), '_0.fdt')).toThrow(CorruptIndexException);
    expect(() => ZSTD814_COMPRESSION.parseUnit(src, 0, src.length - 1, TEXT.length, unit, '_0.fdt')).toThrow(/invalid zstd frame length/);
  });

  /**
   * Elasticsearch's writer with one difference: frames of raw (stored) blocks instead of zstd's
   * compressed ones, a valid Zstandard encoding any decoder reads. Empty units are written as
   * nothing, as Elasticsearch does.
   */
  const rawZstd = {
    ...ZSTD814_COMPRESSION,
    newCompressor: () => ({
      compress(bytes: Uint8Array, off: number, len: number, out: DataOutput): void {
        if (len === 0) return;
        const frame = new ByteArrayDataOutput();
        frame.writeBytes(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xe0)); // magic; 8-byte content size, single segment
        frame.writeInt(len);
        frame.writeInt(0);
        for (let start = 0; start < len || start === 0; start += 1 << 17) {
          const size = Math.min(1 << 17, len - start);
          const header = (size << 3) | (start + size >= len ? 1 : 0); // raw block, last flag
          frame.writeBytes(Uint8Array.of(header & 0xff, (header >>> 8) & 0xff, header >>> 16));
          frame.writeBytes(bytes, off + start, size);
        }
        out.writeVInt(frame.length);
        out.writeBytes(frame.toBytes());
      },
    }),
  };

  it.each(['mmap', 'pread'] as const)('reads a whole segment in the zstd layout: chunks of 14 KiB / 128 docs, sliced chunks, empty docs (%s)', (readPath) => {
    const dir = tmp();
    const docs = randomDocs(1200, 31);
    docs.splice(600, 0, [{ fieldNumber: 1, type: 'bytes', value: new Uint8Array(300_000).fill(9) }], [], [], []);
    // 300 empty docs make at least one chunk of 128 empty docs: its unit is empty, nothing is written for it
    docs.splice(900, 0, ...Array.from({ length: 300 }, (): Doc => []));
    const w = StoredFieldsWriter.create(dir, '_3', ID, { format: { ...ZSTD814_STORED_FIELDS, compression: rawZstd } });
    for (const doc of docs) {
      w.startDocument();
      for (const f of doc) w.writeField(f.fieldNumber, f);
      w.finishDocument();
    }
    w.finish(docs.length);
    w.close();
    const fdt = readFileSync(join(dir, '_3.fdt'));
    expect(fdt.subarray(5, 24).toString()).toBe('ZstdStoredFields814');
    const reader = open(dir, { readPath });
    expect(reader.mode.name).toBe('ZSTD814');
    expect(reader.chunkSize).toBe(14 * 1024);
    expect(reader.numChunks).toBeGreaterThan(1200 / 128);
    for (let d = 0; d < docs.length; d++) expect(normalize(reader.documentFields(d)), `doc ${d}`).toEqual(normalize(docs[d]));
    reader.checkIntegrity();
    reader.close();
    expect(() => StoredFieldsWriter.create(tmp(), '_0', ID, { format: ZSTD814_STORED_FIELDS })).toThrow(/not supported/);
  });
});
