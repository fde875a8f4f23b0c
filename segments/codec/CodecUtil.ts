import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import type { IndexOutput } from '../store/IndexOutput.js';
import { ByteArrayDataInput as Input } from '../store/DataInput.js';
import { CorruptIndexException, IndexFormatTooNewOrOldException } from './CorruptIndexException.js';

/**
 * Lucene's CodecUtil framing, shared by every file prescore writes or reads (segments/FORMATS.md
 * lists them): an index header at offset 0 and a 16-byte footer at the end.
 *
 * Index header (L = codec name length, S = suffix length; 9 + L + 16 + 1 + S bytes in all):
 *
 * | offset  | field       | type                       | meaning / check                                     |
 * |---------|-------------|----------------------------|-----------------------------------------------------|
 * | 0       | magic       | BE uint32 0x3FD76C17       | bytes 3F D7 6C 17; else "codec header mismatch"      |
 * | 4       | codec name  | string (1-byte vint L + ASCII, L <= 127) | must equal the reader's codec name       |
 * | 5 + L   | version     | BE int32                   | must lie in the reader's [min, max] (else "too new or old") |
 * | 9 + L   | object id   | 16 bytes                   | the segment id (commit and sidecar files: a random id); must equal the expected id |
 * | 25 + L  | suffix len  | 1 byte, S <= 255           |                                                     |
 * | 26 + L  | suffix      | S ASCII bytes              | the per-field format suffix (`<format>_<n>`), a generation in base 36, or empty; must equal the expected one |
 *
 * Footer (the last 16 bytes):
 *
 * | offset from end | field        | type                 | meaning / check                                  |
 * |-----------------|--------------|----------------------|--------------------------------------------------|
 * | -16             | footer magic | BE uint32 0xC02893E8 | ~CODEC_MAGIC, bytes C0 28 93 E8                   |
 * | -12             | algorithm id | BE int32             | 0 = zlib CRC-32; anything else is refused         |
 * | -8              | checksum     | BE int64             | CRC-32 (IEEE/zlib) of every byte before this field, footer magic and algorithm id included; the upper 32 bits must be 0 |
 *
 * How much is checked, and when: small files (meta, commit, `.ids`, Lucene's `.si`/`.fnm`/...)
 * are read whole and CRC-verified at open (openChecksummed); big data files are checked
 * structurally at open (header, footer magic, algorithm id, high checksum bits:
 * checkDataFileStructure / retrieveChecksum) and CRC-verified in full only by checkIntegrity()
 * (checksumEntireFile). A meta/data pair must also agree on version, id and suffix
 * (openMetaAndData). Failures throw CorruptIndexException naming the file.
 */
export const CODEC_MAGIC = 0x3fd76c17;
export const FOOTER_MAGIC = ~CODEC_MAGIC >>> 0; // 0xC02893E8
export const FOOTER_LENGTH = 16;
export const ID_LENGTH = 16;

export function headerLength(codec: string): number {
  return 9 + codec.length;
}

export function indexHeaderLength(codec: string, suffix: string): number {
  return headerLength(codec) + ID_LENGTH + 1 + suffix.length;
}

export function writeIndexHeader(out: DataOutput, codec: string, version: number, id: Uint8Array, suffix: string): void {
  if (id.length !== ID_LENGTH) throw new Error(`segment id must be ${ID_LENGTH} bytes, got ${id.length}`);
  checkAscii(codec, 127, 'codec name');
  checkAscii(suffix, 255, 'suffix');
  out.writeBEInt(CODEC_MAGIC);
  out.writeString(codec);
  out.writeBEInt(version);
  out.writeBytes(id);
  out.writeByte(suffix.length);
  out.writeBytes(new TextEncoder().encode(suffix));
}

/** Writes the footer; the checksum covers everything before it, including its own magic and algorithm id. */
export function writeFooter(out: IndexOutput): void {
  out.writeBEInt(FOOTER_MAGIC | 0);
  out.writeBEInt(0);
  out.writeBELong(out.checksum);
}

/** Appends a footer to an in-memory file image. */
export function appendFooter(out: DataOutput & { toBytes(): Uint8Array }): void {
  out.writeBEInt(FOOTER_MAGIC | 0);
  out.writeBEInt(0);
  out.writeBELong(crc32(out.toBytes()));
}

export interface IndexHeader {
  readonly version: number;
  readonly id: Uint8Array;
  readonly suffix: string;
}

/**
 * Checks an index header at the input's position. `expectedId`/`expectedSuffix` of undefined skip
 * that check (used when discovering files, e.g. segments_N). Returns the header's version.
 */
export function checkIndexHeader(input: ByteArrayDataInput, codec: string, minVersion: number, maxVersion: number, expectedId?: Uint8Array, expectedSuffix?: string): IndexHeader {
  const r = input.resource;
  const magic = input.readBEInt() >>> 0;
  if (magic !== CODEC_MAGIC) {
    throw new CorruptIndexException(`codec header mismatch: actual header=0x${hex32(magic)} vs expected header=0x${hex32(CODEC_MAGIC)}`, r);
  }
  const actualCodec = input.readString();
  if (actualCodec !== codec) throw new CorruptIndexException(`codec mismatch: actual codec=${actualCodec} vs expected codec=${codec}`, r);
  const version = input.readBEInt();
  if (version < minVersion || version > maxVersion) {
    throw new IndexFormatTooNewOrOldException(r, `codec ${codec} version ${version}, supported [${minVersion}, ${maxVersion}]`);
  }
  const id = input.readBytes(ID_LENGTH).slice();
  if (expectedId && !bytesEqual(id, expectedId)) {
    throw new CorruptIndexException(`file mismatch, expected id=${idToString(expectedId)}, got=${idToString(id)}`, r);
  }
  const suffixLength = input.readByte();
  const suffix = new TextDecoder().decode(input.readBytes(suffixLength));
  if (expectedSuffix !== undefined && suffix !== expectedSuffix) {
    throw new CorruptIndexException(`file mismatch, expected suffix=${expectedSuffix}, got=${suffix}`, r);
  }
  return { version, id, suffix };
}

/**
 * Fully verifies a small file held in memory (meta files): footer structure and the CRC32 of
 * every byte. Returns an input positioned at 0 that excludes the footer.
 */
export function openChecksummed(bytes: Uint8Array, resource: string): ByteArrayDataInput {
  const expected = validateFooter(bytes.subarray(Math.max(0, bytes.length - FOOTER_LENGTH)), bytes.length, resource);
  const actual = crc32(bytes.subarray(0, bytes.length - 8));
  if (actual !== expected) {
    throw new CorruptIndexException(`checksum failed (hardware problem?) : expected=${hex32(expected)} actual=${hex32(actual)}`, resource);
  }
  return new Input(bytes, resource, 0, bytes.length - FOOTER_LENGTH);
}

/** Structural footer check of a (possibly huge) file without reading it: returns the stored checksum. */
export function retrieveChecksum(slice: FileSlice): number {
  const tail = readSliceBytes(slice, Math.max(0, slice.length - FOOTER_LENGTH), Math.min(slice.length, FOOTER_LENGTH));
  return validateFooter(tail, slice.length, slice.name);
}

/** Reads every byte of the slice and compares the CRC32 with the footer (Lucene's checkIntegrity). */
export function checksumEntireFile(slice: FileSlice): number {
  const expected = retrieveChecksum(slice);
  const fd = openSync(slice.path, 'r');
  const buf = new Uint8Array(1 << 20);
  let crc = 0;
  try {
    const end = slice.length - 8;
    for (let pos = 0; pos < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), slice.offset + pos);
      if (n <= 0) throw new CorruptIndexException(`unexpected EOF at ${pos}`, slice.name);
      crc = crc32(buf.subarray(0, n), crc);
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
  if (crc !== expected) {
    throw new CorruptIndexException(`checksum failed (hardware problem?) : expected=${hex32(expected)} actual=${hex32(crc)}`, slice.name);
  }
  return crc;
}

/** Chunk of a checksummed read (sequential reads of this size keep the disk streaming). */
const READ_CHUNK = 8 << 20;

/**
 * Reads a whole file slice once, front to back, checking its CRC32 footer on the way: the bytes
 * at [at, at + into.length) of the slice land directly in `into` (e.g. a segment's records in
 * an arena), the rest (header, other regions, footer) pass through a chunk buffer. One pass, so
 * the check costs no second read of the data (Lucene's checksum-while-reading inputs).
 * Throws CorruptIndexException naming the file on a mismatch or a truncated file.
 */
export function readChecksummedInto(slice: FileSlice, at: number, into: Uint8Array): void {
  if (at < 0 || at + into.length > slice.length - FOOTER_LENGTH + 8) {
    throw new CorruptIndexException(`read [${at}, ${at + into.length}) outside the data of a file of length ${slice.length}`, slice.name);
  }
  const tail = readSliceBytes(slice, Math.max(0, slice.length - FOOTER_LENGTH), Math.min(slice.length, FOOTER_LENGTH));
  const expected = validateFooter(tail, slice.length, slice.name);
  const end = slice.length - 8;
  const fd = openSync(slice.path, 'r');
  let buf: Uint8Array | null = null;
  let crc = 0;
  try {
    const read = (dest: Uint8Array, pos: number): void => {
      for (let done = 0; done < dest.length; ) {
        const n = readSync(fd, dest, done, dest.length - done, slice.offset + pos + done);
        if (n <= 0) throw new CorruptIndexException(`unexpected EOF at ${pos + done}`, slice.name);
        done += n;
      }
      crc = crc32(dest, crc);
    };
    for (let pos = 0; pos < end; ) {
      const inside = pos >= at && pos < at + into.length;
      const stop = Math.min(end, pos + READ_CHUNK, inside ? at + into.length : pos < at ? at : end);
      if (inside) {
        read(into.subarray(pos - at, stop - at), pos);
      } else {
        if (buf === null || buf.length < stop - pos) buf = new Uint8Array(stop - pos);
        read(buf.subarray(0, stop - pos), pos);
      }
      pos = stop;
    }
  } finally {
    closeSync(fd);
  }
  if (crc !== expected) {
    throw new CorruptIndexException(`checksum failed (hardware problem?) : expected=${hex32(expected)} actual=${hex32(crc)}`, slice.name);
  }
}

function validateFooter(tail: Uint8Array, fileLength: number, resource: string): number {
  if (fileLength < FOOTER_LENGTH || tail.length < FOOTER_LENGTH) {
    throw new CorruptIndexException(`misplaced codec footer (file truncated?): length=${fileLength} but footerLength==${FOOTER_LENGTH}`, resource);
  }
  const dv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const magic = dv.getUint32(0, false);
  if (magic !== FOOTER_MAGIC) {
    throw new CorruptIndexException(`codec footer mismatch (file truncated?): actual footer=0x${hex32(magic)} vs expected footer=0x${hex32(FOOTER_MAGIC)}`, resource);
  }
  const algorithm = dv.getInt32(4, false);
  if (algorithm !== 0) throw new CorruptIndexException(`codec footer mismatch: unknown algorithmID: ${algorithm}`, resource);
  const hi = dv.getUint32(8, false);
  if (hi !== 0) throw new CorruptIndexException(`Illegal CRC-32 checksum: upper 32 bits are 0x${hex32(hi)}`, resource);
  return dv.getUint32(12, false);
}

/** Verifies the whole-file structure of a data file: header at 0 and a valid footer at the end. */
export function checkDataFileStructure(slice: FileSlice, codec: string, minVersion: number, maxVersion: number, id: Uint8Array, suffix: string): IndexHeader {
  const headerLen = Math.min(slice.length, indexHeaderLength(codec, suffix));
  const header = checkIndexHeader(new Input(readSliceBytes(slice, 0, headerLen), slice.name), codec, minVersion, maxVersion, id, suffix);
  retrieveChecksum(slice);
  return header;
}

export interface FormatPair {
  readonly metaCodec: string;
  readonly dataCodec: string;
  readonly minVersion: number;
  readonly maxVersion: number;
}

/**
 * Opens a format's meta + data pair the way Lucene's vector readers do: the meta file is read and
 * CRC-verified whole, the data file checked structurally (header, footer), and both must carry the
 * same version, segment id and suffix. Returns the meta input positioned after its header.
 */
export function openMetaAndData(
  metaSlice: FileSlice,
  dataSlice: FileSlice,
  format: FormatPair,
  segmentId: Uint8Array,
  suffix: string,
): { meta: ByteArrayDataInput; version: number } {
  const meta = openChecksummed(readSliceBytes(metaSlice), metaSlice.name);
  const { version } = checkIndexHeader(meta, format.metaCodec, format.minVersion, format.maxVersion, segmentId, suffix);
  const data = checkDataFileStructure(dataSlice, format.dataCodec, format.minVersion, format.maxVersion, segmentId, suffix);
  if (data.version !== version) throw new CorruptIndexException(`format versions mismatch: meta=${version}, data=${data.version}`, dataSlice.name);
  return { meta, version };
}

export function idToString(id: Uint8Array): string {
  return Buffer.from(id).toString('hex');
}

/** The id `idToString` printed (hex); a clear error for anything else. */
export function idFromString(text: string): Uint8Array {
  if (!/^[0-9a-f]{32}$/.test(text)) throw new CorruptIndexException(`invalid id "${text}" (expected ${ID_LENGTH} bytes in hex)`, 'id');
  return new Uint8Array(Buffer.from(text, 'hex'));
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hex32(v: number): string {
  return (v >>> 0).toString(16).padStart(8, '0');
}

function checkAscii(s: string, max: number, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every ASCII code point, control characters included
  if (s.length > max || !/^[\x00-\x7f]*$/.test(s)) throw new Error(`${what} must be ASCII of at most ${max} chars: ${s}`);
}
