import { extname } from 'node:path';
import { InputError } from './InputError.js';
import { openJsonl } from './JsonlReader.js';
import { openNpy } from './NpyReader.js';
import { openXvecs } from './XvecsReader.js';
import { VECTOR_FORMATS, type VectorBatch, type VectorFormat, type VectorSource } from './VectorSource.js';

export interface OpenVectorSourceOptions {
  /** Overrides detection by file extension. */
  readonly format?: VectorFormat;
}

/** Picks the format from the extension: .fvecs, .ivecs, .npy, .jsonl / .ndjson. */
export function detectFormat(path: string): VectorFormat {
  const ext = extname(path).toLowerCase();
  switch (ext) {
    case '.fvecs':
      return 'fvecs';
    case '.ivecs':
      return 'ivecs';
    case '.npy':
      return 'npy';
    case '.jsonl':
    case '.ndjson':
    case '.jsonlines':
      return 'jsonl';
    default:
      throw new InputError(
        path,
        `cannot tell the vector format from the extension ${ext ? `'${ext}'` : '(none)'}; ` +
          `use .fvecs, .ivecs, .npy or .jsonl, or pass the format explicitly (${VECTOR_FORMATS.join('|')})`,
      );
  }
}

export function parseVectorFormat(name: string): VectorFormat {
  const f = name.trim().toLowerCase();
  if (f === 'ndjson') return 'jsonl';
  if ((VECTOR_FORMATS as readonly string[]).includes(f)) return f as VectorFormat;
  throw new RangeError(`unknown vector format "${name}" (expected ${VECTOR_FORMATS.join(', ')})`);
}

/**
 * Opens a vector file for streaming. Throws InputError (naming the file, and the row when one is
 * at fault) for missing/unreadable/empty files, bad headers, truncation and ragged rows found at
 * open; errors inside rows surface from `batches`.
 */
export async function openVectorSource(path: string, options: OpenVectorSourceOptions = {}): Promise<VectorSource> {
  const format = options.format ?? detectFormat(path);
  switch (format) {
    case 'fvecs':
    case 'ivecs':
      return openXvecs(path, format);
    case 'npy':
      return openNpy(path);
    case 'jsonl':
      return openJsonl(path);
    default:
      throw new RangeError(`unknown vector format "${String(format)}"`);
  }
}

/** The batch's ids: the user's ids, or the row numbers as strings for formats without ids. */
export function batchIds(batch: VectorBatch): string[] {
  if (batch.ids) return batch.ids;
  const ids = new Array<string>(batch.rows);
  for (let i = 0; i < batch.rows; i++) ids[i] = String(batch.firstRow + i);
  return ids;
}

/** Reads a whole (small) vector file into one array. For tests and tools, not for big data. */
export async function readAllVectors(path: string, options: OpenVectorSourceOptions = {}): Promise<{ dims: number; count: number; vectors: Float32Array; ids?: string[] }> {
  const source = await openVectorSource(path, options);
  const parts: Float32Array[] = [];
  const ids: string[] = [];
  let count = 0;
  for await (const batch of source.batches(4096)) {
    parts.push(batch.vectors);
    if (batch.ids) ids.push(...batch.ids);
    count += batch.rows;
  }
  const vectors = new Float32Array(count * source.dims);
  let off = 0;
  for (const p of parts) {
    vectors.set(p, off);
    off += p.length;
  }
  return source.hasIds ? { dims: source.dims, count, vectors, ids } : { dims: source.dims, count, vectors };
}
