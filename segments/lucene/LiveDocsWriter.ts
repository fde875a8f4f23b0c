import { join } from 'node:path';
import { appendFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { writeFileAtomicallyNoReplace } from '../store/files.js';
import { generationToString } from './IndexFileNames.js';
import { LIVE_DOCS_CODEC, LIVE_DOCS_VERSION_CURRENT, liveDocsFileName } from './LiveDocs.js';

/**
 * Writes a segment's deletions as Lucene90LiveDocsFormat (the bytes LiveDocs.ts documents):
 * `live` holds bit d of word d >>> 5 set for every live doc, which on a little-endian machine is
 * byte for byte the format's little-endian int64 words. The file is new for every deletion
 * generation (created exclusively, fsynced): a generation a commit names is never rewritten.
 * Returns the file's name.
 */
export function writeLiveDocs(dir: string, segment: { readonly name: string; readonly id: Uint8Array; readonly maxDoc: number }, delGen: number, live: Uint32Array): string {
  if (!(Number.isSafeInteger(delGen) && delGen >= 1)) throw new RangeError(`delGen must be a positive integer, got ${delGen}`);
  const words32 = 2 * Math.ceil(segment.maxDoc / 64);
  if (live.length < Math.ceil(segment.maxDoc / 32)) throw new RangeError(`${live.length} words cannot hold ${segment.maxDoc} docs`);
  const out = new ByteArrayDataOutput(64 + 4 * words32);
  writeIndexHeader(out, LIVE_DOCS_CODEC, LIVE_DOCS_VERSION_CURRENT, segment.id, generationToString(delGen));
  const words = new Uint32Array(words32);
  words.set(live.subarray(0, Math.min(live.length, words32)));
  // Bits at and past maxDoc are never set (a reader rejects them).
  const tail = segment.maxDoc & 31;
  if (tail !== 0) words[segment.maxDoc >>> 5]! &= (1 << tail) - 1;
  words.fill(0, Math.ceil(segment.maxDoc / 32));
  out.writeBytes(new Uint8Array(words.buffer));
  appendFooter(out);
  const name = liveDocsFileName(segment.name, delGen);
  writeFileAtomicallyNoReplace(join(dir, name), out.toBytes());
  return name;
}
