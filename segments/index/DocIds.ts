import { join } from 'node:path';
import { appendFooter, checkIndexHeader, openChecksummed, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { readSliceBytes, wholeFile } from '../store/FileSlice.js';
import { writeFileAtomicallyNoReplace } from '../store/files.js';

export const DOC_IDS_CODEC = 'PrescoreDocIds';
export const DOC_IDS_EXTENSION = 'ids';
const KIND_SEQUENTIAL = 0;
const KIND_EXPLICIT = 1;

export function docIdsFileName(segmentName: string): string {
  return `${segmentName}.${DOC_IDS_EXTENSION}`;
}

/**
 * The user-facing string id of every doc of a segment. Inputs without ids (fvecs, npy) use
 * the input row number; those are stored as a start number only ("sequential"), anything else
 * as an offsets table plus UTF-8 bytes.
 *
 * `_N.ids` (one per segment, outside the per-format suffix), little-endian:
 *
 * | field        | type                   | meaning / check                                          |
 * |--------------|------------------------|----------------------------------------------------------|
 * | index header |                        | codec `PrescoreDocIds`, version 0, the segment id, empty suffix |
 * | kind         | byte                   | 0 sequential, 1 explicit; anything else is corrupt        |
 * | count        | vint                   | must equal the segment's maxDoc from the commit           |
 * | kind 0:      |                        |                                                          |
 * | first        | vlong                  | doc d's id is the decimal string of first + d             |
 * | kind 1:      |                        |                                                          |
 * | offsets      | int32 x (count + 1)    | byte offsets into the id bytes, offsets[0] = 0, non-decreasing (checked) |
 * | id bytes     | offsets[count] bytes   | UTF-8, doc d's id = bytes [offsets[d], offsets[d+1])      |
 * | footer       |                        | CRC32, verified whole at open                            |
 */
export abstract class DocIds {
  abstract readonly count: number;
  abstract get(doc: number): string;

  static sequential(first: number, count: number): DocIds {
    return new SequentialDocIds(first, count);
  }

  static explicit(ids: readonly string[]): DocIds {
    const enc = new TextEncoder();
    const encoded = ids.map((s) => enc.encode(s));
    const offsets = new Int32Array(ids.length + 1);
    for (let i = 0; i < ids.length; i++) offsets[i + 1] = offsets[i] + encoded[i].length;
    const bytes = new Uint8Array(offsets[ids.length]);
    for (let i = 0; i < ids.length; i++) bytes.set(encoded[i], offsets[i]);
    return new ExplicitDocIds(offsets, bytes);
  }

  abstract write(out: ByteArrayDataOutput): void;

  static write(dir: string, segmentName: string, segmentId: Uint8Array, ids: DocIds): string {
    const path = join(dir, docIdsFileName(segmentName));
    const out = new ByteArrayDataOutput(64);
    writeIndexHeader(out, DOC_IDS_CODEC, 0, segmentId, '');
    ids.write(out);
    appendFooter(out);
    writeFileAtomicallyNoReplace(path, out.toBytes());
    return path;
  }

  static read(dir: string, segmentName: string, segmentId: Uint8Array, maxDoc: number): DocIds {
    const name = docIdsFileName(segmentName);
    const slice = wholeFile(join(dir, name), name);
    const input = openChecksummed(readSliceBytes(slice), name);
    checkIndexHeader(input, DOC_IDS_CODEC, 0, 0, segmentId, '');
    const kind = input.readByte();
    const count = input.readVInt();
    if (count !== maxDoc) throw new CorruptIndexException(`${count} ids for ${maxDoc} docs`, name);
    if (kind === KIND_SEQUENTIAL) return new SequentialDocIds(input.readVLong(), count);
    if (kind !== KIND_EXPLICIT) throw new CorruptIndexException(`unknown ids kind ${kind}`, name);
    const offsetBytes = input.readBytes(4 * (count + 1));
    const offsets = new Int32Array(count + 1);
    new Uint8Array(offsets.buffer).set(offsetBytes);
    const total = offsets[count];
    for (let i = 0; i < count; i++) {
      if (offsets[i + 1] < offsets[i]) throw new CorruptIndexException(`ids offsets not monotonic at ${i}`, name);
    }
    return new ExplicitDocIds(offsets, input.readBytes(total).slice());
  }
}

class SequentialDocIds extends DocIds {
  constructor(
    readonly first: number,
    readonly count: number,
  ) {
    super();
  }

  get(doc: number): string {
    return String(this.first + doc);
  }

  write(out: ByteArrayDataOutput): void {
    out.writeByte(KIND_SEQUENTIAL);
    out.writeVInt(this.count);
    out.writeVLong(this.first);
  }
}

class ExplicitDocIds extends DocIds {
  private static readonly decoder = new TextDecoder();

  constructor(
    private readonly offsets: Int32Array,
    private readonly bytes: Uint8Array,
  ) {
    super();
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  get(doc: number): string {
    return ExplicitDocIds.decoder.decode(this.bytes.subarray(this.offsets[doc], this.offsets[doc + 1]));
  }

  write(out: ByteArrayDataOutput): void {
    out.writeByte(KIND_EXPLICIT);
    out.writeVInt(this.count);
    out.writeBytes(new Uint8Array(this.offsets.buffer, this.offsets.byteOffset, this.offsets.byteLength));
    out.writeBytes(this.bytes);
  }
}
