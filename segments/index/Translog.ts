import { closeSync, fdatasync, ftruncateSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { checkIndexHeader, ID_LENGTH, idToString, indexHeaderLength, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { fsyncDirectory } from '../store/files.js';

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);

/**
 * The write-ahead log of an IndexWriter (Elasticsearch's translog): every write is appended here
 * before it is acknowledged, so that what a commit does not yet hold survives a crash, and is
 * replayed into the writer when the directory is opened again.
 *
 * `translog-<generation base 36>.tlog`, one file per generation (a commit starts a new one and
 * the files before it are deleted once the commit is durable). Little-endian:
 *
 * | field        | type               | meaning / check                                              |
 * |--------------|--------------------|--------------------------------------------------------------|
 * | index header |                    | codec `PrescoreTranslog`, version 0, the translog's 16-byte uuid (the commit names it: a log of another index is never replayed), suffix = the generation in base 36 |
 * | per op:      |                    |                                                              |
 * | size         | int32              | bytes of the body                                            |
 * | body         | size bytes         | op byte (1 index, 2 delete), seqNo (vlong), version (vlong), id (string); index: source length (vint) + source bytes (the `_source` as stored), dims (vint) + dims float32 (the vector) |
 * | checksum     | int32              | CRC32 of the body                                            |
 *
 * No footer: the file only grows. An op is acknowledged once `sync` has written and fdatasync'ed
 * it (group commit: one fdatasync covers every op appended before it started, from any number of
 * concurrent requests). A crash can leave the last ops partly written; at open the first op that
 * is short or fails its checksum ends the log (a torn tail, cut off the file): no op after it
 * was ever acknowledged, because every sync writes the generations in order and returns only
 * when all of them are durable.
 */
export const TRANSLOG_CODEC = 'PrescoreTranslog';
export const TRANSLOG_VERSION = 0;
const PREFIX = 'translog-';
const EXTENSION = '.tlog';
const OP_INDEX = 1;
const OP_DELETE = 2;

export type TranslogOp =
  | { readonly kind: 'index'; readonly seqNo: number; readonly version: number; readonly id: string; readonly source: Uint8Array; readonly vector: Float32Array }
  | { readonly kind: 'delete'; readonly seqNo: number; readonly version: number; readonly id: string };

/** What `Translog.open` found: the ops to replay, and how many bytes of a torn tail it cut. */
export interface TranslogRecovery {
  readonly translog: Translog;
  readonly ops: readonly TranslogOp[];
  readonly cutBytes: number;
}

export function translogFileName(generation: number): string {
  return `${PREFIX}${generation.toString(36)}${EXTENSION}`;
}

/** Generations of every translog file in `dir`, ascending. */
export function translogGenerations(dir: string): number[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(PREFIX) && f.endsWith(EXTENSION) && /^[0-9a-z]+$/.test(f.slice(PREFIX.length, -EXTENSION.length)))
    .map((f) => parseInt(f.slice(PREFIX.length, -EXTENSION.length), 36))
    .sort((a, b) => a - b);
}

/** One file of the log: what is written of it, and what waits for the next sync. */
interface Generation {
  readonly generation: number;
  readonly fd: number;
  readonly name: string;
  /** Bytes durable in the file (everything before this offset was fdatasync'ed). */
  written: number;
  pending: Uint8Array[];
}

export class Translog {
  private readonly generations: Generation[] = [];
  private appended = 0;
  private synced = 0;
  private syncing: Promise<void> | null = null;
  private directoryDirty = false;
  private closed = false;
  /** Bytes appended since the generation the last commit started. */
  private bytesSinceRoll = 0;
  /** fdatasync calls so far (with many writers in flight, far fewer than their syncs: group commit). */
  syncCalls = 0;

  private constructor(
    readonly dir: string,
    /** Names the log in its files' headers and in the commit's user data. */
    readonly uuid: Uint8Array,
  ) {}

  /** A new, empty log (its first generation file created, the directory fsynced). */
  static create(dir: string, generation = 1): Translog {
    const log = new Translog(dir, new Uint8Array(randomBytes(ID_LENGTH)));
    log.startGeneration(generation);
    fsyncDirectory(dir);
    log.directoryDirty = false;
    return log;
  }

  /**
   * Reads every generation from `minGeneration` on of the log `uuid` (the commit's), cutting a
   * torn tail, and continues the log in a new generation. Returns the ops in log order.
   */
  static open(dir: string, uuid: Uint8Array, minGeneration: number): TranslogRecovery {
    const all = translogGenerations(dir);
    // Generations before the commit's are obsolete (a crash came between the commit and their deletion).
    for (const g of all) if (g < minGeneration) rmSync(join(dir, translogFileName(g)), { force: true });
    const gens = all.filter((g) => g >= minGeneration);
    const ops: TranslogOp[] = [];
    let cutBytes = 0;
    let torn = false;
    for (const generation of gens) {
      const name = translogFileName(generation);
      const path = join(dir, name);
      if (torn) {
        // Nothing after a torn op was acknowledged: the files after it go too.
        cutBytes += readFileSync(path).length;
        rmSync(path, { force: true });
        continue;
      }
      const bytes = new Uint8Array(readFileSync(path));
      const end = readOps(bytes, name, uuid, generation, ops);
      if (end < bytes.length) {
        torn = true;
        cutBytes += bytes.length - end;
        const fd = openSync(path, 'r+');
        try {
          ftruncateSync(fd, end);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    const log = new Translog(dir, uuid);
    log.startGeneration((gens.at(-1) ?? minGeneration - 1) + 1);
    fsyncDirectory(dir);
    log.directoryDirty = false;
    return { translog: log, ops, cutBytes };
  }

  /** The generation new ops go to. */
  get generation(): number {
    return this.generations.at(-1)!.generation;
  }

  /**
   * Where the log is durable: every generation file still kept, with the bytes of it that were
   * fdatasync'ed (what a crash cannot take; anything after is a tail a crash may tear).
   */
  get durable(): readonly { readonly file: string; readonly bytes: number }[] {
    return this.generations.map((g) => ({ file: g.name, bytes: g.written }));
  }

  /** Bytes appended since the current generation began (the log a commit would make obsolete). */
  get sizeInBytes(): number {
    return this.bytesSinceRoll;
  }

  /** Appends an op (in memory until the next sync). */
  add(op: TranslogOp): void {
    if (this.closed) throw new Error('the translog is closed');
    const body = new ByteArrayDataOutput(op.kind === 'index' ? 64 + op.source.length + 4 * op.vector.length : 32);
    body.writeByte(op.kind === 'index' ? OP_INDEX : OP_DELETE);
    body.writeVLong(op.seqNo);
    body.writeVLong(op.version);
    body.writeString(op.id);
    if (op.kind === 'index') {
      body.writeVInt(op.source.length);
      body.writeBytes(op.source);
      body.writeVInt(op.vector.length);
      body.writeBytes(new Uint8Array(op.vector.buffer, op.vector.byteOffset, op.vector.byteLength));
    }
    const bytes = body.toBytes();
    const record = new Uint8Array(bytes.length + 8);
    const view = new DataView(record.buffer);
    view.setInt32(0, bytes.length, true);
    record.set(bytes, 4);
    view.setInt32(4 + bytes.length, crc32(bytes) | 0, true);
    this.generations.at(-1)!.pending.push(record);
    this.appended++;
    this.bytesSinceRoll += record.length;
  }

  /**
   * Makes every op appended so far durable. Concurrent callers share the work: while one
   * fdatasync runs, later callers wait for it and then one more covers all of them. A failed
   * write (disk full, I/O error) is undone (the file cut back to its durable length) and
   * rejected; the ops stay pending and the next sync tries them again.
   */
  async sync(): Promise<void> {
    const target = this.appended;
    while (this.synced < target) {
      if (this.syncing === null) {
        this.syncing = this.writePending().finally(() => {
          this.syncing = null;
        });
      }
      await this.syncing;
    }
  }

  /**
   * Starts a new generation: ops appended from now on go to it. The ops before stay in the
   * older files (written by the next sync) until `deleteBelow` drops them after a commit.
   */
  rollGeneration(): number {
    this.startGeneration(this.generation + 1);
    this.bytesSinceRoll = 0;
    return this.generation;
  }

  /** Deletes the files of generations before `generation` (a durable commit holds their ops). Call after sync. */
  deleteBelow(generation: number): void {
    for (let i = 0; i < this.generations.length - 1; ) {
      const g = this.generations[i]!;
      if (g.generation >= generation || g.pending.length > 0) {
        i++;
        continue;
      }
      closeSync(g.fd);
      rmSync(join(this.dir, g.name), { force: true });
      this.generations.splice(i, 1);
    }
    for (const g of translogGenerations(this.dir)) {
      if (g < generation && !this.generations.some((x) => x.generation === g)) rmSync(join(this.dir, translogFileName(g)), { force: true });
    }
  }

  /** Deletes the files of generations `generation` and later (a rollback: their ops are discarded). Call after close. */
  deleteFrom(generation: number): void {
    for (const g of translogGenerations(this.dir)) if (g >= generation) rmSync(join(this.dir, translogFileName(g)), { force: true });
  }

  /** Syncs what is pending and closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.sync();
    } finally {
      this.closed = true;
      for (const g of this.generations.splice(0)) closeSync(g.fd);
    }
  }

  private startGeneration(generation: number): void {
    const name = translogFileName(generation);
    const fd = openSync(join(this.dir, name), 'wx');
    const header = new ByteArrayDataOutput(64);
    writeIndexHeader(header, TRANSLOG_CODEC, TRANSLOG_VERSION, this.uuid, generation.toString(36));
    this.generations.push({ generation, fd, name, written: 0, pending: [header.toBytes()] });
    this.directoryDirty = true;
  }

  private async writePending(): Promise<void> {
    const upTo = this.appended;
    if (this.directoryDirty) {
      this.directoryDirty = false;
      fsyncDirectory(this.dir);
    }
    for (const g of this.generations) {
      if (g.pending.length === 0) continue;
      const chunks = g.pending.splice(0);
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      try {
        let done = 0;
        while (done < bytes.length) done += (await writeAsync(g.fd, bytes, done, bytes.length - done, g.written + done)).bytesWritten;
        this.syncCalls++;
        await fdatasyncAsync(g.fd);
      } catch (e) {
        g.pending.unshift(bytes);
        try {
          ftruncateSync(g.fd, g.written);
        } catch {
          // The next sync rewrites from the durable length all the same (positional writes).
        }
        throw e;
      }
      g.written += bytes.length;
    }
    this.synced = Math.max(this.synced, upTo);
  }
}

/** Reads a generation's ops into `ops`; returns the end of its last whole op (the file's length unless its tail is torn). */
function readOps(bytes: Uint8Array, name: string, uuid: Uint8Array, generation: number, ops: TranslogOp[]): number {
  const suffix = generation.toString(36);
  // A header cut short by a crash right after the file was created: nothing in it was acknowledged.
  if (bytes.length < indexHeaderLength(TRANSLOG_CODEC, suffix)) return 0;
  const input = new ByteArrayDataInput(bytes, name);
  const header = checkIndexHeader(input, TRANSLOG_CODEC, TRANSLOG_VERSION, TRANSLOG_VERSION, undefined, suffix);
  if (idToString(header.id) !== idToString(uuid)) throw new CorruptIndexException(`translog uuid ${idToString(header.id)} is not the commit's ${idToString(uuid)}`, name);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = input.position;
  while (pos < bytes.length) {
    if (bytes.length - pos < 8) return pos;
    const size = view.getInt32(pos, true);
    if (size < 3 || pos + 8 + size > bytes.length) return pos;
    const body = bytes.subarray(pos + 4, pos + 4 + size);
    if ((crc32(body) | 0) !== view.getInt32(pos + 4 + size, true)) return pos;
    ops.push(parseOp(new ByteArrayDataInput(body, name)));
    pos += 8 + size;
  }
  return pos;
}

function parseOp(input: ByteArrayDataInput): TranslogOp {
  const kind = input.readByte();
  const seqNo = input.readVLong();
  const version = input.readVLong();
  const id = input.readString();
  if (kind === OP_DELETE) return { kind: 'delete', seqNo, version, id };
  if (kind !== OP_INDEX) throw new CorruptIndexException(`unknown translog op ${kind}`, input.resource);
  const source = input.readBytes(input.readVInt()).slice();
  const dims = input.readVInt();
  const vector = new Float32Array(input.readBytes(4 * dims).slice().buffer);
  return { kind: 'index', seqNo, version, id, source, vector };
}
