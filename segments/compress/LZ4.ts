import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { DataOutput } from '../store/DataOutput.js';

/**
 * Lucene's LZ4 block format (org.apache.lucene.util.compress.LZ4): raw LZ4 sequences, no frame,
 * no checksum, no length prefix. The stored-fields chunks of Lucene90StoredFieldsFormat (BEST_SPEED)
 * and the terms dictionary of Lucene90DocValuesFormat are written in it.
 *
 * A block is a run of sequences, each:
 *
 * | bytes      | field            | meaning                                                              |
 * |------------|------------------|----------------------------------------------------------------------|
 * | 1          | token            | high nibble: literal length L (15 = more follows), low nibble: match length M - 4 (15 = more follows) |
 * | 0..n       | literal length+  | only when the nibble is 15: bytes added to 15, each 0xFF means "add 255 and read another" |
 * | L          | literals         | copied to the output as they are                                     |
 * | 2          | match offset     | uint16 little-endian distance D back from the current output position, 1..65535 (0 is corrupt) |
 * | 0..n       | match length+    | only when the low nibble is 15: as for the literal length             |
 *
 * The match copies M bytes from D bytes back; D < M is legal and repeats the last D bytes. The
 * last sequence of a block has no offset or match: it ends right after its literals, once the
 * decompressed length is reached (the decoder is told that length; the block does not say it). A
 * compressor always leaves the last 5 bytes (LAST_LITERALS) as literals and never starts a match in
 * the last 9 bytes, so an input of at most 9 bytes is a single literal run.
 *
 * A preset dictionary is not part of the block: the decoder is given an output buffer that already
 * holds the dictionary right before the output position, and matches may reach back into it (at
 * most MAX_DISTANCE bytes of it matter). Lucene compresses the dictionary itself first, as an
 * ordinary block, then every sub-block with that dictionary in front.
 *
 * Byte-identical output: the compressor below finds matches with Lucene's "fast" hash table (one
 * slot per hash of 4 bytes, 16 KiB of slots), hashes 4-byte words read in little-endian order (Java
 * reads them in native order, which is little-endian on every platform Lucene is built for), and
 * keeps the table across calls without clearing it, as Lucene does: a slot left by an earlier input
 * is only trusted when the 4 bytes it points at still match. So for the same inputs, in the same
 * order, through one table, the bytes equal Lucene's. A fresh table is all zeros (Java's new short[]),
 * which points every hash at the first byte: that too is what Lucene does and what we keep.
 */

/** Largest distance a match may reach back: offsets are uint16 and 0 is invalid. */
export const MAX_DISTANCE = 1 << 16;
/** Shortest match the format can express. */
export const MIN_MATCH = 4;
/** Bytes at the end of every block that are always literals. */
export const LAST_LITERALS = 5;
/** The fast table's size: 2^14 bytes, so 2^13 16-bit or 2^12 32-bit slots. */
const MEMORY_USAGE = 14;

/** An upper bound on the compressed size of `length` bytes (one literal run plus its length bytes). */
export function maxCompressedLength(length: number): number {
  return length + Math.floor(length / 255) + 16;
}

/**
 * Where a compressor looks for earlier occurrences of 4 bytes. Offsets passed to get() must be
 * strictly increasing between two resets.
 */
export interface LZ4HashTable {
  /** Prepares to compress bytes[off, off + len) (dictionary included). */
  reset(bytes: Uint8Array, off: number, len: number): void;
  /** Records the first `dictLen` positions (the dictionary) as candidates. */
  initDictionary(dictLen: number): void;
  /** Records `off` and returns an earlier position holding the same 4 bytes, or -1. */
  get(off: number): number;
  /** An earlier position than `off` with the same 4 bytes (a second choice), or -1. */
  previous(off: number): number;
}

/**
 * Lucene's FastCompressionHashTable: one slot per hash, holding the last position (relative to the
 * input start) whose 4 bytes hashed there. 16-bit slots while the input (dictionary included, minus
 * the last literals) stays under 64 KiB, else 32-bit slots. Reused across inputs without clearing
 * (clearing 16 KiB per short input would dominate); a stale slot is harmless because get() checks
 * that the candidate lies before `off`, within MAX_DISTANCE, and holds the same 4 bytes.
 */
export class FastCompressionHashTable implements LZ4HashTable {
  private bytes: Uint8Array = new Uint8Array(0);
  private base = 0;
  private hashLog = 0;
  private table: Uint16Array | Int32Array | null = null;

  reset(bytes: Uint8Array, off: number, len: number): void {
    checkRange(bytes, off, len);
    this.bytes = bytes;
    this.base = off;
    const wide = len - LAST_LITERALS >= 1 << 16;
    // 2^14 bytes of slots: 2^13 shorts or 2^12 ints.
    this.hashLog = MEMORY_USAGE + 3 - (wide ? 5 : 4);
    const t = this.table;
    // Replace the table only when it is too small or too narrow, as Lucene does: switching between
    // narrow and wide inputs reallocates (and so zeroes) it, reusing it keeps stale slots.
    if (t === null || t.length < 1 << this.hashLog || (wide && t instanceof Uint16Array)) {
      this.table = wide ? new Int32Array(1 << this.hashLog) : new Uint16Array(1 << this.hashLog);
    }
  }

  initDictionary(dictLen: number): void {
    const t = this.table!;
    const shift = 32 - this.hashLog;
    for (let i = 0; i < dictLen; i++) t[hash(readInt(this.bytes, this.base + i), shift)] = i;
  }

  get(off: number): number {
    const t = this.table!;
    const v = readInt(this.bytes, off);
    const h = hash(v, 32 - this.hashLog);
    const ref = this.base + t[h];
    t[h] = off - this.base;
    return ref < off && off - ref < MAX_DISTANCE && readInt(this.bytes, ref) === v ? ref : -1;
  }

  previous(): number {
    return -1;
  }
}

/** Compresses bytes[off, off + len) into `out` as one block. */
export function compress(bytes: Uint8Array, off: number, len: number, out: DataOutput, ht: LZ4HashTable): void {
  compressWithDictionary(bytes, off, 0, len, out, ht);
}

/**
 * Compresses bytes[dictOff + dictLen, dictOff + dictLen + len) into `out` as one block whose matches
 * may refer to the dictionary bytes[dictOff, dictOff + dictLen) (at most MAX_DISTANCE bytes). The
 * dictionary itself is not written. Inputs of at most 9 bytes leave the table untouched.
 */
export function compressWithDictionary(bytes: Uint8Array, dictOff: number, dictLen: number, len: number, out: DataOutput, ht: LZ4HashTable): void {
  checkRange(bytes, dictOff, dictLen);
  checkRange(bytes, dictOff + dictLen, len);
  if (dictLen > MAX_DISTANCE) throw new RangeError(`LZ4 dictionary of ${dictLen} bytes exceeds ${MAX_DISTANCE}`);
  // The block is encoded into a scratch array and handed to `out` in one call: a call per
  // sequence to a DataOutput costs more than the matching itself.
  const enc = encoder(maxCompressedLength(len));
  const end = dictOff + dictLen + len;
  let off = dictOff + dictLen;
  let anchor = off;
  if (len > LAST_LITERALS + MIN_MATCH) {
    const limit = end - LAST_LITERALS;
    const matchLimit = limit - MIN_MATCH;
    ht.reset(bytes, dictOff, dictLen + len);
    ht.initDictionary(dictLen);
    search: while (off <= limit) {
      let ref: number;
      for (;;) {
        if (off >= matchLimit) break search;
        ref = ht.get(off);
        if (ref !== -1) break;
        off++;
      }
      let matchLen = MIN_MATCH + commonBytes(bytes, ref + MIN_MATCH, off + MIN_MATCH, limit);
      // A table that remembers several candidates offers them here; the longest match wins.
      const min = Math.max(off - MAX_DISTANCE + 1, dictOff);
      for (let r = ht.previous(ref); r >= min; r = ht.previous(r)) {
        const rLen = MIN_MATCH + commonBytes(bytes, r + MIN_MATCH, off + MIN_MATCH, limit);
        if (rLen > matchLen) {
          ref = r;
          matchLen = rLen;
        }
      }
      encodeSequence(enc, bytes, anchor, off - ref, off, matchLen);
      off += matchLen;
      anchor = off;
    }
  }
  const literalLen = end - anchor;
  writeLiterals(enc, bytes, Math.min(literalLen, 15) << 4, anchor, literalLen);
  out.writeBytes(enc.buf, 0, enc.pos);
  // a huge input's scratch is not worth keeping
  if (enc.buf.length > 1 << 20) scratch = { buf: new Uint8Array(0), pos: 0 };
}

/**
 * Decompresses one block starting at src[srcPos] into dest[destPos, destPos + length), reading no
 * further than srcEnd. Bytes before destPos are the preset dictionary (if any): matches may reach
 * into them. The block must produce exactly `length` bytes. Returns the position in `src` right
 * after the block.
 *
 * Throws CorruptIndexException naming `resource` for an offset of 0, a match reaching before
 * dest[0], a read past srcEnd or output past destPos + length. Allocation-free.
 */
export function decompress(src: Uint8Array, srcPos: number, srcEnd: number, dest: Uint8Array, destPos: number, length: number, resource = 'LZ4 block'): number {
  if (!(srcPos >= 0 && srcEnd <= src.length && destPos >= 0 && length >= 0 && destPos + length <= dest.length)) {
    throw new RangeError(`LZ4 decompress: bad arguments (src [${srcPos}, ${srcEnd}) of ${src.length}, dest [${destPos}, +${length}) of ${dest.length})`);
  }
  const destEnd = destPos + length;
  let s = srcPos;
  let d = destPos;
  // Even an empty block has one token (Lucene writes a zero token for an empty input).
  do {
    if (s >= srcEnd) throw corrupt('read past the end of the compressed bytes', s, resource);
    const token = src[s++];
    let literalLen = token >>> 4;
    if (literalLen !== 0) {
      if (literalLen === 0x0f) {
        let b: number;
        do {
          if (s >= srcEnd) throw corrupt('read past the end of the compressed bytes', s, resource);
          b = src[s++];
          literalLen += b;
        } while (b === 0xff);
      }
      if (literalLen > srcEnd - s) throw corrupt(`literal run of ${literalLen} bytes reads past the end of the compressed bytes`, s, resource);
      if (literalLen > destEnd - d) throw corrupt(`output overflow: ${d - destPos + literalLen} bytes, expected ${length}`, s, resource);
      if (literalLen < 64) {
        for (let i = 0; i < literalLen; i++) dest[d + i] = src[s + i];
      } else {
        dest.set(src.subarray(s, s + literalLen), d);
      }
      s += literalLen;
      d += literalLen;
    }
    if (d >= destEnd) break;

    if (srcEnd - s < 2) throw corrupt('read past the end of the compressed bytes', s, resource);
    const matchDec = src[s] | (src[s + 1] << 8);
    s += 2;
    if (matchDec === 0) throw corrupt('offset 0 is invalid', s - 2, resource);
    let matchLen = token & 0x0f;
    if (matchLen === 0x0f) {
      let b: number;
      do {
        if (s >= srcEnd) throw corrupt('read past the end of the compressed bytes', s, resource);
        b = src[s++];
        matchLen += b;
      } while (b === 0xff);
    }
    matchLen += MIN_MATCH;
    const ref = d - matchDec;
    if (ref < 0) throw corrupt(`match offset ${matchDec} reaches before the start of the output (dictionary included)`, s, resource);
    if (matchLen > destEnd - d) throw corrupt(`output overflow: ${d - destPos + matchLen} bytes, expected ${length}`, s, resource);
    if (matchLen >= 64 && matchDec >= matchLen) {
      dest.copyWithin(d, ref, ref + matchLen);
    } else {
      // Short matches (most of them) copy faster in a loop than through a call; an overlapping
      // match (offset < length) must go byte by byte anyway: it repeats its own output.
      for (let i = 0; i < matchLen; i++) dest[d + i] = dest[ref + i];
    }
    d += matchLen;
  } while (d < destEnd);
  return s;
}

function corrupt(reason: string, at: number, resource: string): CorruptIndexException {
  return new CorruptIndexException(`LZ4: ${reason} (compressed byte ${at})`, resource);
}

/** Lucene's multiplicative hash of a 4-byte word (golden-ratio constant), keeping the top bits. */
function hash(v: number, shift: number): number {
  return Math.imul(v, -1640531535) >>> shift;
}

function readInt(b: Uint8Array, i: number): number {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}

/** Length of the common prefix of b[o1..] and b[o2..], counted up to `limit` (o1 < o2). */
function commonBytes(b: Uint8Array, o1: number, o2: number, limit: number): number {
  let n = 0;
  while (o2 + n < limit && b[o1 + n] === b[o2 + n]) n++;
  return n;
}

/** The output of the block being compressed (compress is synchronous, so one per thread will do). */
interface Encoded {
  buf: Uint8Array;
  pos: number;
}
let scratch: Encoded = { buf: new Uint8Array(0), pos: 0 };

function encoder(capacity: number): Encoded {
  if (scratch.buf.length < capacity) scratch.buf = new Uint8Array(Math.max(capacity, 2 * scratch.buf.length));
  scratch.pos = 0;
  return scratch;
}

function writeLength(enc: Encoded, l: number): void {
  const buf = enc.buf;
  let p = enc.pos;
  while (l >= 0xff) {
    buf[p++] = 0xff;
    l -= 0xff;
  }
  buf[p++] = l;
  enc.pos = p;
}

function writeLiterals(enc: Encoded, bytes: Uint8Array, token: number, anchor: number, literalLen: number): void {
  enc.buf[enc.pos++] = token;
  if (literalLen >= 0x0f) writeLength(enc, literalLen - 0x0f);
  const buf = enc.buf;
  const p = enc.pos;
  if (literalLen < 64) {
    for (let i = 0; i < literalLen; i++) buf[p + i] = bytes[anchor + i];
  } else {
    buf.set(bytes.subarray(anchor, anchor + literalLen), p);
  }
  enc.pos = p + literalLen;
}

function encodeSequence(enc: Encoded, bytes: Uint8Array, anchor: number, matchDec: number, matchOff: number, matchLen: number): void {
  const literalLen = matchOff - anchor;
  writeLiterals(enc, bytes, (Math.min(literalLen, 0x0f) << 4) | Math.min(matchLen - MIN_MATCH, 0x0f), anchor, literalLen);
  enc.buf[enc.pos++] = matchDec & 0xff;
  enc.buf[enc.pos++] = matchDec >>> 8;
  if (matchLen >= MIN_MATCH + 0x0f) writeLength(enc, matchLen - 0x0f - MIN_MATCH);
}

function checkRange(bytes: Uint8Array, off: number, len: number): void {
  if (!(Number.isInteger(off) && Number.isInteger(len) && off >= 0 && len >= 0 && off + len <= bytes.length)) {
    throw new RangeError(`LZ4: range [${off}, +${len}) outside an array of ${bytes.length} bytes`);
  }
}
