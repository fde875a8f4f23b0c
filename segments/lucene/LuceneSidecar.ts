import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { appendFooter, checkIndexHeader, checksumEntireFile, bytesEqual, ID_LENGTH, idToString, openChecksummed, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { segmentFileName } from '../flat/FlatVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION, HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import { ScalarQuantizedVectorsReader, type QuantizedFieldEntry } from '../quantized/ScalarQuantizedVectorsReader.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { wholeFile, type FileSlice } from '../store/FileSlice.js';
import { fsyncDirectory, writeFileAtomicallyNoReplace } from '../store/files.js';
import type { SegmentBuilder } from '../index/SegmentBuildTask.js';

/**
 * prescore's first phase needs 1-bit codes (and, for big segments, an HNSW graph built over
 * them); a Lucene index has neither, and prescore never writes into a Lucene directory. So they
 * live in a sidecar: a separate directory holding, per Lucene segment, a subdirectory named
 *
 *   `<segment>-<segment id hex>-f<field number>-<flat | hnsw-m<M>-b<beamWidth>>`
 *
 * with `_N_PrescoreSidecar_0.vemq/.veq` (prescore's 1-bit OSQ records of EVERY ord of the
 * segment's field, deleted docs included: deletions are applied at search time through the
 * live-ords bitset), `_N_PrescoreSidecar_0.vem/.vex` (the graph, when the segment has more than
 * `flatThreshold` vectors) and `_N_PrescoreSidecar_0.psm`, the manifest (codec
 * `PrescoreLuceneSidecar`): what the sidecar was derived from (segment name and id, field,
 * similarity, dims, vector count, the `.vec` CRC32 from its footer, the build parameters).
 *
 * Every file of one sidecar segment carries the sidecar's own random 16-byte id in its header
 * (not the Lucene segment's), so files of different builds cannot be mixed. Lucene segments are
 * write-once and their ids unique, so the segment id keys the sidecar: a rebuilt or merged index
 * has new segment ids and gets new sidecar segments. A sidecar segment is reused only when its
 * manifest matches the Lucene segment and every sidecar file passes its header and full CRC32
 * check; otherwise it is rebuilt (a sidecar is a cache: a corrupt one is replaced, not fatal).
 *
 * A segment is built in a temporary directory and renamed into place whole, so concurrent
 * openers of the same index never see (or mix) partial builds: the first rename wins, later
 * builders discard theirs and use it.
 *
 * `.vemq/.veq` and `.vem/.vex` have the layouts of segments/quantized/ScalarQuantizedVectorsFormat.ts
 * and segments/hnsw/HnswVectorsFormat.ts (suffix `PrescoreSidecar_0`, the sidecar id). The
 * manifest `_N_PrescoreSidecar_0.psm`, little-endian:
 *
 * | field             | type     | meaning                                                         |
 * |-------------------|----------|-----------------------------------------------------------------|
 * | index header      |          | codec `PrescoreLuceneSidecar`, version 0, the sidecar's random id, suffix `PrescoreSidecar_0` |
 * | segment name      | string   | the Lucene segment (`_3`)                                       |
 * | segment id        | 16 bytes | the Lucene segment's id                                         |
 * | maxDoc            | vint     |                                                                 |
 * | field name        | string   |                                                                 |
 * | field number      | vint     |                                                                 |
 * | similarity        | vint     | ordinal 0..3                                                    |
 * | dims              | vint     |                                                                 |
 * | vector count      | vint     | ords of the flat field                                          |
 * | `.vec` checksum   | int64    | the CRC32 in the Lucene `.vec` footer (upper 32 bits 0)          |
 * | vectorDataOffset  | vlong    | ord 0 within the `.vec`                                         |
 * | has graph         | byte     | 1: `.vem/.vex` exist; 0: flat                                   |
 * | M, beamWidth, seed| 3 vints  | the graph's build parameters (0, 0, 0 when flat)                 |
 * | footer            |          | CRC32                                                           |
 *
 * The body must equal, byte for byte, what the current Lucene segment and build parameters
 * would produce; anything else rebuilds the sidecar segment. The root's `SOURCE` file is plain
 * text, one `<real index path>\t<field>\n` line per index served from it (informational only).
 */
export const SIDECAR_CODEC = 'PrescoreLuceneSidecar';
export const SIDECAR_VERSION_START = 0;
export const SIDECAR_VERSION_CURRENT = 0;
export const SIDECAR_SUFFIX = 'PrescoreSidecar_0';
export const SIDECAR_MANIFEST_EXTENSION = 'psm';
/** A file in the sidecar root naming the index it serves (for people browsing the cache). */
export const SIDECAR_SOURCE_FILE = 'SOURCE';
const TMP_PREFIX = '.tmp-';
const TRASH_PREFIX = '.trash-';
/** A build directory this old is abandoned even if its pid was reused (a week). */
const STALE_TMP_MS = 7 * 24 * 3_600_000;
const SEGMENT_DIR = /^(_[0-9a-z]+)-([0-9a-f]{32})-f(\d+)-(flat|hnsw-m\d+-b\d+)$/;

export interface SidecarBuildParams {
  /** Segments with more vectors than this get an HNSW graph; smaller ones are scanned. */
  readonly flatThreshold: number;
  readonly m: number;
  readonly beamWidth: number;
}

/** What a sidecar segment is derived from: one Lucene segment's raw vectors of one field. */
export interface SidecarSource {
  readonly segmentName: string;
  readonly segmentId: Uint8Array;
  readonly maxDoc: number;
  readonly fieldName: string;
  readonly fieldNumber: number;
  readonly similarity: number;
  readonly dims: number;
  /** Vector ordinals (the flat field's size). */
  readonly size: number;
  /** The `.vec` logical file (its CRC is checked before a build and recorded in the manifest). */
  readonly vecSlice: FileSlice;
  /** The CRC32 stored in the `.vec` footer. */
  readonly vecChecksum: number;
  /** Offset of ord 0 within the `.vec` slice. */
  readonly vectorDataOffset: number;
}

export type SidecarStatus = 'reused' | 'built' | 'rebuilt';

export interface SidecarEvent {
  readonly segment: string;
  readonly status: 'building' | SidecarStatus;
  readonly dir: string;
  /** Why an existing sidecar segment was not reused. */
  readonly reason?: string;
  readonly ms?: number;
}

export interface SidecarSegment {
  readonly dir: string;
  readonly id: Uint8Array;
  readonly suffix: string;
  readonly status: SidecarStatus;
  readonly quantized: ScalarQuantizedVectorsReader;
  readonly entry: QuantizedFieldEntry;
  readonly graph: { readonly vem: FileSlice; readonly vex: FileSlice; readonly reader: HnswVectorsReader } | null;
  /** The manifest's CRC32 (part of the handle key: a rebuilt sidecar gets fresh worker state). */
  readonly checksum: number;
  checkIntegrity(): void;
}

/** `$XDG_CACHE_HOME/prescore/lucene-sidecars/<sha256(realpath + field)[0:20]>` (XDG_CACHE_HOME defaults to ~/.cache). */
export function defaultSidecarDir(realIndexDir: string, field: string): string {
  const cache = process.env.XDG_CACHE_HOME?.startsWith('/') ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const hash = createHash('sha256').update(realIndexDir).update('\0').update(field).digest('hex').slice(0, 20);
  return join(cache, 'prescore', 'lucene-sidecars', hash);
}

/**
 * Creates the sidecar root, refusing one inside (or equal to) the Lucene directory: checked on
 * the real path of its nearest existing ancestor before anything is created.
 */
export function prepareSidecarRoot(sidecarDir: string, realIndexDir: string, fieldName: string): string {
  const wanted = resolve(sidecarDir);
  let existing = wanted;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) break;
    rest.unshift(basename(existing));
    existing = parent;
  }
  const real = join(realpathSync(existing), ...rest);
  if (real === realIndexDir || real.startsWith(realIndexDir + sep)) {
    throw new Error(`the sidecar directory ${sidecarDir} lies inside the Lucene index ${realIndexDir}: prescore never writes into a Lucene directory; pick another sidecarDir`);
  }
  try {
    mkdirSync(real, { recursive: true });
  } catch (e) {
    throw new Error(`cannot create the sidecar directory ${real} (${(e as Error).message}): pass another sidecarDir`, { cause: e });
  }
  const source = join(real, SIDECAR_SOURCE_FILE);
  const line = `${realIndexDir}\t${fieldName}\n`;
  try {
    const had = existsSync(source) ? readFileSync(source, 'utf8') : '';
    if (!had.split('\n').includes(line.trimEnd())) writeFileSync(source, had + line);
  } catch {
    // informational only
  }
  cleanLeftovers(real);
  return real;
}

/**
 * Removes trash and the build directories of builders that died (`.tmp-<pid>-...` whose process
 * no longer exists; a live builder's directory is kept however long its graph build takes).
 */
function cleanLeftovers(root: string): void {
  for (const name of readdirSync(root)) {
    const p = join(root, name);
    try {
      if (name.startsWith(TRASH_PREFIX)) rmSync(p, { recursive: true, force: true });
      else if (name.startsWith(TMP_PREFIX)) {
        const pid = Number(/^\.tmp-(\d+)-/.exec(name)?.[1]);
        if (!pid || !processAlive(pid) || Date.now() - lstatSync(p).mtimeMs > STALE_TMP_MS) rmSync(p, { recursive: true, force: true });
      }
    } catch {
      // another opener may be removing it too
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes sidecar segments of the root that none of `keep` (segment dir names) refers to. */
export function pruneSidecarRoot(root: string, keep: ReadonlySet<string>): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(root)) {
    if (!SEGMENT_DIR.test(name) || keep.has(name)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export function sidecarSegmentDirName(source: SidecarSource, params: SidecarBuildParams): string {
  return `${source.segmentName}-${idToString(source.segmentId)}-f${source.fieldNumber}-${expectsGraph(source, params) ? `hnsw-m${params.m}-b${params.beamWidth}` : 'flat'}`;
}

function expectsGraph(source: SidecarSource, params: SidecarBuildParams): boolean {
  return source.size > params.flatThreshold;
}

/** Graph seed: fixed per Lucene segment, so a rebuild produces the same graph. */
function seedOf(source: SidecarSource): number {
  return Buffer.from(source.segmentId).readInt32LE(0) & 0x7fffffff;
}

/**
 * The sidecar segment for `source`: reused when valid, else built (by `buildSegment`, on the executor) and
 * published. Sources with no vectors have no sidecar (callers skip them).
 */
export async function ensureSidecarSegment(
  root: string,
  source: SidecarSource,
  params: SidecarBuildParams,
  buildSegment: SegmentBuilder,
  onEvent?: (e: SidecarEvent) => void,
): Promise<SidecarSegment> {
  const dir = join(root, sidecarSegmentDirName(source, params));
  let reason: string | undefined;
  if (existsSync(dir)) {
    try {
      return openSidecarSegment(dir, source, params, 'reused', onEvent);
    } catch (e) {
      reason = (e as Error).message;
    }
  }
  onEvent?.({ segment: source.segmentName, status: 'building', dir, reason });
  const started = performance.now();
  // Never quantize damaged vectors: the whole .vec is read anyway, verify its CRC first.
  checksumEntireFile(source.vecSlice);
  const tmp = join(root, `${TMP_PREFIX}${process.pid}-${basename(dir)}-${randomBytes(6).toString('hex')}`);
  mkdirSync(tmp);
  try {
    await buildInto(tmp, source, params, buildSegment);
    fsyncDirectory(tmp);
    if (reason !== undefined && existsSync(dir)) {
      // The existing one is invalid: move it aside atomically, then delete it.
      const trash = join(root, `${TRASH_PREFIX}${basename(dir)}-${randomBytes(6).toString('hex')}`);
      try {
        renameSync(dir, trash);
        rmSync(trash, { recursive: true, force: true });
      } catch {
        // someone else replaced it already
      }
    }
    try {
      renameSync(tmp, dir);
      fsyncDirectory(root);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
      // A concurrent builder published first: use theirs.
      rmSync(tmp, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const status: SidecarStatus = reason === undefined ? 'built' : 'rebuilt';
  const seg = openSidecarSegment(dir, source, params, status);
  onEvent?.({ segment: source.segmentName, status, dir, reason, ms: performance.now() - started });
  return seg;
}

async function buildInto(tmp: string, source: SidecarSource, params: SidecarBuildParams, buildSegment: SegmentBuilder): Promise<void> {
  const id = new Uint8Array(randomBytes(ID_LENGTH));
  const buildGraph = expectsGraph(source, params);
  await buildSegment({
    dir: tmp,
    name: source.segmentName,
    id,
    suffix: SIDECAR_SUFFIX,
    fieldNumber: source.fieldNumber,
    similarity: source.similarity,
    dims: source.dims,
    count: source.size,
    vecPath: source.vecSlice.path,
    vecOffset: source.vecSlice.offset + source.vectorDataOffset,
    buildGraph,
    m: params.m,
    beamWidth: params.beamWidth,
    // Lucene's own rule: a sidecar's header names its build parameters (M, beam, seed), and
    // filled lists (graphBuildPolicy.ts) are not among them yet.
    minConnections: 0,
    seed: seedOf(source),
    progress: new Int32Array(new SharedArrayBuffer(8)),
  });
  const out = new ByteArrayDataOutput(256);
  writeIndexHeader(out, SIDECAR_CODEC, SIDECAR_VERSION_CURRENT, id, SIDECAR_SUFFIX);
  writeManifestBody(out, source, buildGraph, params);
  appendFooter(out);
  writeFileAtomicallyNoReplace(join(tmp, segmentFileName(source.segmentName, SIDECAR_SUFFIX, SIDECAR_MANIFEST_EXTENSION)), out.toBytes());
}

function writeManifestBody(out: ByteArrayDataOutput, source: SidecarSource, hasGraph: boolean, params: SidecarBuildParams): void {
  out.writeString(source.segmentName);
  out.writeBytes(source.segmentId);
  out.writeVInt(source.maxDoc);
  out.writeString(source.fieldName);
  out.writeVInt(source.fieldNumber);
  out.writeVInt(source.similarity);
  out.writeVInt(source.dims);
  out.writeVInt(source.size);
  out.writeLong(source.vecChecksum);
  out.writeVLong(source.vectorDataOffset);
  out.writeByte(hasGraph ? 1 : 0);
  out.writeVInt(hasGraph ? params.m : 0);
  out.writeVInt(hasGraph ? params.beamWidth : 0);
  out.writeVInt(hasGraph ? seedOf(source) : 0);
}

/**
 * Opens and fully verifies a sidecar segment: the manifest (CRC, and every recorded fact equal
 * to the Lucene segment's), then `.vemq/.veq` and `.vem/.vex` (headers carrying the manifest's
 * id and suffix, meta consistent with the source, full CRC32 of every file). Throws on any
 * mismatch; the message says what differed.
 */
export function openSidecarSegment(dir: string, source: SidecarSource, params: SidecarBuildParams, status: SidecarStatus, onEvent?: (e: SidecarEvent) => void): SidecarSegment {
  const file = (ext: string): FileSlice => {
    const path = join(dir, segmentFileName(source.segmentName, SIDECAR_SUFFIX, ext));
    return wholeFile(path, path);
  };
  const manifestSlice = file(SIDECAR_MANIFEST_EXTENSION);
  const manifest = openChecksummed(new Uint8Array(readFileSync(manifestSlice.path)), manifestSlice.name);
  const { id } = checkIndexHeader(manifest, SIDECAR_CODEC, SIDECAR_VERSION_START, SIDECAR_VERSION_CURRENT, undefined, SIDECAR_SUFFIX);
  const hasGraph = expectsGraph(source, params);
  const expected = new ByteArrayDataOutput(256);
  writeManifestBody(expected, source, hasGraph, params);
  const body = manifest.readBytes(manifest.remaining);
  if (!bytesEqual(body, expected.toBytes())) {
    throw new CorruptIndexException(
      `sidecar manifest does not describe segment ${source.segmentName} (id ${idToString(source.segmentId)}) field ${source.fieldName} as it is now`,
      manifestSlice.name,
    );
  }
  const checksum = checksumEntireFile(manifestSlice);

  const vemq = file(SQ_META_EXTENSION);
  const veq = file(SQ_DATA_EXTENSION);
  const quantized = ScalarQuantizedVectorsReader.open(vemq, veq, id, SIDECAR_SUFFIX);
  const entry = quantized.fields.get(source.fieldNumber);
  if (!entry || quantized.fields.size !== 1) throw new CorruptIndexException(`expected exactly field ${source.fieldNumber}`, vemq.name);
  if (entry.count !== source.size || entry.dims !== source.dims || entry.similarity.ordinal !== source.similarity) {
    throw new CorruptIndexException(
      `holds ${entry.count} ${entry.dims}d codes (similarity ${entry.similarity.ordinal}), the segment has ${source.size} ${source.dims}d vectors`,
      vemq.name,
    );
  }
  checksumEntireFile(veq);
  let graph: SidecarSegment['graph'] = null;
  if (hasGraph) {
    const vem = file(HNSW_META_EXTENSION);
    const vex = file(HNSW_INDEX_EXTENSION);
    const reader = HnswVectorsReader.open(vem, vex, id, SIDECAR_SUFFIX);
    const g = reader.fields.get(source.fieldNumber);
    if (!g || g.size !== source.size) throw new CorruptIndexException(`no graph of ${source.size} nodes for field ${source.fieldNumber}`, vem.name);
    checksumEntireFile(vex);
    graph = { vem, vex, reader };
  } else if (existsSync(join(dir, segmentFileName(source.segmentName, SIDECAR_SUFFIX, HNSW_META_EXTENSION)))) {
    throw new CorruptIndexException('a flat sidecar segment holds a graph', dir);
  }
  if (status === 'reused') onEvent?.({ segment: source.segmentName, status, dir });
  return {
    dir,
    id,
    suffix: SIDECAR_SUFFIX,
    status,
    quantized,
    entry,
    graph,
    checksum,
    checkIntegrity(): void {
      checksumEntireFile(manifestSlice);
      quantized.checkIntegrity();
      graph?.reader.checkIntegrity();
    },
  };
}
