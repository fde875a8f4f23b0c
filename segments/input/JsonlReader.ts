import { describeNonFinite, firstNonFinite } from './finite.js';
import { openForRead } from './fileIo.js';
import { lines } from './lines.js';
import { InputError } from './InputError.js';
import type { VectorBatch, VectorSource } from './VectorSource.js';

/**
 * JSON Lines: one object per line, `{"id": "doc-1", "vector": [0.1, ...]}` (other keys are
 * ignored). Blank lines are skipped; a UTF-8 BOM and CRLF line ends are accepted. Ids are
 * required (strings, or numbers which are converted with String()) and must be unique; every
 * vector must have the dims of the first one. The row count is not known until the end.
 * Duplicate detection keeps every id of a pass in a Set (the only memory that grows with the file).
 */
export async function openJsonl(path: string): Promise<VectorSource> {
  let dims = -1;
  // Dims come from the first row: stream until one non-blank line is parsed.
  const { fh } = await openForRead(path);
  try {
    for await (const line of lines(fh, path)) {
      if (isBlank(line.text)) continue;
      const parsed = parseRow(path, line.text, 0, line.number, -1);
      dims = parsed.vector.length;
      break;
    }
  } finally {
    await fh.close().catch(() => {});
  }
  if (dims < 0) throw new InputError(path, 'empty file (no vectors)');
  return new JsonlSource(path, dims);
}

class JsonlSource implements VectorSource {
  readonly format = 'jsonl' as const;
  readonly hasIds = true;
  readonly count = undefined;

  constructor(
    readonly path: string,
    readonly dims: number,
  ) {}

  async *batches(maxRows: number): AsyncGenerator<VectorBatch> {
    const { path, dims } = this;
    const batchRows = Math.max(1, Math.floor(maxRows));
    const seen = new Map<string, number>();
    let vectors = new Float32Array(batchRows * dims);
    let ids: string[] = [];
    let firstRow = 0;
    let row = 0;
    const { fh } = await openForRead(path);
    try {
      for await (const line of lines(fh, path)) {
        if (isBlank(line.text)) continue;
        const r = row - firstRow;
        const { id, vector } = parseRow(path, line.text, row, line.number, dims);
        const previous = seen.get(id);
        if (previous !== undefined) {
          throw new InputError(path, `duplicate id ${JSON.stringify(id)} (first used by row ${previous})`, { row, line: line.number });
        }
        seen.set(id, row);
        const base = r * dims;
        for (let i = 0; i < dims; i++) {
          const x = vector[i];
          if (typeof x !== 'number') {
            throw new InputError(path, `"vector" component ${i} is not a number (got ${describeJson(x)})`, { row, line: line.number });
          }
          vectors[base + i] = x;
        }
        // Finite JSON numbers can still overflow float32 (e.g. 1e39).
        const bad = firstNonFinite(vectors, base, base + dims);
        if (bad >= 0) {
          throw new InputError(path, `"vector" component ${bad - base} = ${vector[bad - base]} is ${describeNonFinite(vectors[bad])} as float32`, { row, line: line.number });
        }
        ids.push(id);
        row++;
        if (row - firstRow === batchRows) {
          yield { firstRow, rows: batchRows, vectors, ids };
          vectors = new Float32Array(batchRows * dims);
          ids = [];
          firstRow = row;
        }
      }
      if (row > firstRow) {
        const rows = row - firstRow;
        yield { firstRow, rows, vectors: vectors.slice(0, rows * dims), ids };
      }
    } finally {
      await fh.close().catch(() => {});
    }
    if (row === 0) throw new InputError(path, 'empty file (no vectors)');
  }
}

function isBlank(text: string): boolean {
  return text.length === 0 || text.trim().length === 0;
}

function describeJson(x: unknown): string {
  const s = JSON.stringify(x);
  return s === undefined ? String(x) : s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/** Parses and checks one line; `dims < 0` accepts any non-empty vector length (the first row). */
function parseRow(path: string, text: string, row: number, line: number, dims: number): { id: string; vector: unknown[] } {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new InputError(path, `invalid JSON (${(err as Error).message})`, { row, line });
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new InputError(path, `expected an object {"id": ..., "vector": [...]}, got ${describeJson(obj)}`, { row, line });
  }
  const o = obj as { id?: unknown; vector?: unknown };
  if (!('id' in o) || o.id === null || o.id === undefined) throw new InputError(path, 'missing "id"', { row, line });
  let id: string;
  if (typeof o.id === 'string') {
    if (o.id.length === 0) throw new InputError(path, '"id" is an empty string', { row, line });
    id = o.id;
  } else if (typeof o.id === 'number') {
    id = String(o.id);
  } else {
    throw new InputError(path, `"id" must be a string or a number, got ${describeJson(o.id)}`, { row, line });
  }
  if (!('vector' in o) || o.vector === null || o.vector === undefined) throw new InputError(path, 'missing "vector"', { row, line });
  if (!Array.isArray(o.vector)) {
    throw new InputError(path, `"vector" must be an array of numbers, got ${describeJson(o.vector)}`, { row, line });
  }
  const n = o.vector.length;
  if (dims < 0 ? n === 0 : n !== dims) {
    throw new InputError(path, dims < 0 ? '"vector" is empty' : `"vector" has ${n} dims, expected ${dims} (the dims of row 0)`, {
      row,
      line,
    });
  }
  if (dims < 0) {
    // The first row is also checked here, since its dims define the file.
    for (let i = 0; i < n; i++) {
      const x = o.vector[i];
      if (typeof x !== 'number' || !Number.isFinite(Math.fround(x))) {
        throw new InputError(path, `"vector" component ${i} is not a finite float32 number (got ${describeJson(x)})`, { row, line });
      }
    }
  }
  return { id, vector: o.vector };
}
