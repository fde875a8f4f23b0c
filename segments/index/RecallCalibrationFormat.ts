import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendFooter, checkIndexHeader, openChecksummed, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { publishAtomically } from '../store/files.js';
import { newSegmentId } from './CommitPoint.js';
import type { CalibrationSource, RecallCalibration, RecallPoint } from './RecallCalibration.js';

/**
 * `recall.cal`: an index's recall calibration (RecallCalibration), one file beside its commits,
 * replaced atomically when measured again. It belongs to the index, not to one commit: writes and
 * merges change the segments a little at a time, and the file says which commit and how many docs
 * it measured so that an index grown far past them is measured again.
 *
 * Bytes (Lucene's DataOutput encodings; header and footer as every prescore file):
 * - index header: codec "PrescoreRecallCalibration", version 1 (0: one beam per oversample, read
 *   as well), a random 16-byte id, suffix ""
 * - vint k; vint queries; byte source (0 documents, 1 held-out); vlong generation; vlong docs;
 *   long measuredAt (ms since the epoch); vint confidence (parts per million); vint defaultTarget
 *   (parts per million + 1; 0: none)
 * - vint points; per point, oversample ascending and at one oversample numCandidates descending:
 *   float oversample; vint numCandidates;
 *   vint recall, vint lowerBound (parts per million, the bound rounded down: a target compares
 *   against exactly what was measured or less); vint meanMs in microseconds
 * - footer: magic, algorithm 0, CRC32 of every byte before it
 */
export const RECALL_CALIBRATION_FILE = 'recall.cal';
const CODEC = 'PrescoreRecallCalibration';
const VERSION_START = 0;
/** Several beams per oversample (a reader of version 0 would take them for a corrupt order). */
const VERSION_BEAMS = 1;
const VERSION_CURRENT = VERSION_BEAMS;
const PPM = 1_000_000;
const ppm = (fraction: number) => Math.round(fraction * PPM);
const SOURCES: readonly CalibrationSource[] = ['documents', 'held-out'];

export function encodeRecallCalibration(c: RecallCalibration): Uint8Array {
  const out = new ByteArrayDataOutput(64 + c.points.length * 20);
  writeIndexHeader(out, CODEC, VERSION_CURRENT, newSegmentId(), '');
  out.writeVInt(c.k);
  out.writeVInt(c.queries);
  out.writeByte(SOURCES.indexOf(c.source));
  out.writeVLong(c.generation);
  out.writeVLong(c.docs);
  out.writeLong(Math.round(c.measuredAt));
  out.writeVInt(ppm(c.confidence));
  out.writeVInt(c.defaultTarget === null ? 0 : ppm(c.defaultTarget) + 1);
  out.writeVInt(c.points.length);
  for (const p of c.points) {
    out.writeFloat(p.oversample);
    out.writeVInt(p.numCandidates);
    out.writeVInt(ppm(p.recall));
    out.writeVInt(Math.floor(p.lowerBound * PPM + 1e-9));
    out.writeVInt(Math.round(p.meanMs * 1000));
  }
  appendFooter(out);
  return out.toBytes();
}

/** Decodes a `recall.cal` image; a CorruptIndexException naming `resource` when its checksum or contents are wrong. */
export function decodeRecallCalibration(bytes: Uint8Array, resource: string): RecallCalibration {
  const input = openChecksummed(bytes, resource);
  checkIndexHeader(input, CODEC, VERSION_START, VERSION_CURRENT, undefined, '');
  const k = input.readVInt();
  const queries = input.readVInt();
  const source = SOURCES[input.readByte()];
  const generation = input.readVLong();
  const docs = input.readVLong();
  const measuredAt = input.readLong();
  const confidence = input.readVInt() / PPM;
  const target = input.readVInt();
  const count = input.readVInt();
  if (source === undefined || k < 1 || queries < 1 || !(confidence > 0 && confidence < 1) || count < 1) {
    throw new CorruptIndexException(`invalid calibration (k ${k}, queries ${queries}, source ${String(source)}, confidence ${confidence}, ${count} settings)`, resource);
  }
  const points: RecallPoint[] = [];
  for (let i = 0; i < count; i++) {
    const p = {
      oversample: input.readFloat(),
      numCandidates: input.readVInt(),
      recall: input.readVInt() / PPM,
      lowerBound: input.readVInt() / PPM,
      meanMs: input.readVInt() / 1000,
    };
    const previous = points.at(-1);
    const ordered = previous === undefined || p.oversample > previous.oversample || (p.oversample === previous.oversample && p.numCandidates < previous.numCandidates);
    if (!(p.oversample >= 1) || !ordered || !(p.numCandidates >= 1) || !(p.recall >= 0 && p.recall <= 1) || !(p.lowerBound <= p.recall)) {
      throw new CorruptIndexException(`invalid calibration point ${i}: ${JSON.stringify(p)}`, resource);
    }
    points.push(p);
  }
  if (!input.eof()) throw new CorruptIndexException(`${input.remaining} trailing bytes`, resource);
  return { k, queries, source, generation, docs, measuredAt, confidence, defaultTarget: target === 0 ? null : (target - 1) / PPM, points };
}

/** Publishes the calibration as `dir/recall.cal` (atomically: a reader sees the old file or the new one). */
export function writeRecallCalibration(dir: string, calibration: RecallCalibration): void {
  publishAtomically(dir, RECALL_CALIBRATION_FILE, encodeRecallCalibration(calibration));
}

/** The calibration stored in `dir`, or null when it has none; a corrupt file throws, naming it. */
export function readRecallCalibration(dir: string): RecallCalibration | null {
  const path = join(dir, RECALL_CALIBRATION_FILE);
  if (!existsSync(path)) return null;
  return decodeRecallCalibration(new Uint8Array(readFileSync(path)), path);
}
