import { randomBytes } from 'node:crypto';
import { DocumentError, type DocumentParser, type FieldValues } from '../document/DocumentParser.js';
import { withoutTopLevelMember } from '../document/SourceBytes.js';
import { openForRead } from './fileIo.js';
import { InputError } from './InputError.js';
import { lines } from './lines.js';
import type { VectorBatch, VectorSource } from './VectorSource.js';

/** A document ready for a segment: what is stored (`_source`) and what is indexed. */
export interface IndexedDocument {
  /** The document's JSON as given, without the vector's top-level member (it lives in `.vec`). */
  readonly source: Uint8Array;
  /** Doc-values fields and their values (DocumentParser). */
  readonly values: ReadonlyMap<string, FieldValues>;
}

export interface DocumentBatch extends VectorBatch {
  readonly ids: string[];
  readonly docs: readonly IndexedDocument[];
}

/** A build input whose rows are documents: each batch also carries the documents (ids are the documents' own). */
export interface DocumentSource extends VectorSource {
  readonly hasIds: true;
  batches(maxRows: number): AsyncIterable<DocumentBatch>;
}

export type DocumentFormat = 'jsonl' | 'bulk';

const EMPTY_SOURCE = new Uint8Array([0x7b, 0x7d]); // {}
const encoder = new TextEncoder();

/**
 * Documents from JSON Lines: one object per line, `{"id": "doc-1", "vector": [...], ...fields}`
 * (`id`, a string or number, is required; it also stays a field of the document), or NDJSON in
 * the shape of an Elasticsearch `_bulk` body: an `index` or `create` action line
 * (`{"index": {"_id": "1"}}`, `_id` optional: generated when absent, as Elasticsearch does) before
 * each document line. Every document is read by `parser` (its mapping grows with dynamically
 * mapped fields); the vector is the field `vectorField`, mapped as a dense_vector (added to the
 * mapping when absent). Errors name the file, the row
 * and line, and the field. Ids must be unique in the file.
 */
export async function openDocuments(path: string, parser: DocumentParser, vectorField: string): Promise<DocumentSource> {
  const format = await sniffFormat(path);
  const mapped = parser.mapping.field(vectorField);
  if (mapped === undefined) parser.mapping.put(vectorField, { type: 'dense_vector', docValues: false, dims: undefined, similarity: undefined, indexOptions: null });
  else if (mapped.type !== 'dense_vector') throw new InputError(path, `field [${vectorField}] is mapped as ${mapped.type}, not as the index's dense_vector`);
  let dims = mapped?.type === 'dense_vector' ? mapped.dims : undefined;
  if (dims === undefined) {
    // The first document gives the dims (and is read again by the first pass).
    for await (const doc of rawDocuments(path, format)) {
      const v = (doc.json as Record<string, unknown>)[vectorField];
      if (!Array.isArray(v)) throw new InputError(path, `missing "${vectorField}" (the vector field): every document needs one`, { row: 0, line: doc.line });
      dims = v.length;
      break;
    }
    if (dims === undefined) throw new InputError(path, 'empty file (no documents)');
  }
  return new JsonDocumentSource(path, format, dims, parser, vectorField);
}

/**
 * Documents as two row-aligned files: vectors from a vector file (fvecs, npy, ...) and the rest of
 * each document from a JSON Lines file (`--fields`: row i's object holds doc i's fields; an `id`
 * there is the doc's id, else the row number). Both must have the same number of rows.
 */
export function pairDocuments(vectors: VectorSource, fieldsPath: string, parser: DocumentParser, vectorField: string): DocumentSource {
  return new PairedDocumentSource(vectors, fieldsPath, parser, vectorField);
}

/** Vector-only input (no fields): every document's `_source` is `{}` (the vector is served from `.vec`). */
export function vectorDocuments(vectors: VectorSource): DocumentSource {
  return new VectorOnlyDocuments(vectors);
}

interface RawDocument {
  readonly line: number;
  readonly json: unknown;
  readonly text: string;
  /** The `_id` of a bulk action line (absent: generated); undefined for JSON Lines. */
  readonly bulkId?: string | null;
}

async function sniffFormat(path: string): Promise<DocumentFormat> {
  const { fh } = await openForRead(path);
  try {
    for await (const line of lines(fh, path)) {
      if (line.text.trim() === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(line.text);
      } catch (e) {
        throw new InputError(path, `invalid JSON (${(e as Error).message})`, { row: 0, line: line.number });
      }
      return isAction(json) ? 'bulk' : 'jsonl';
    }
  } finally {
    await fh.close().catch(() => {});
  }
  throw new InputError(path, 'empty file (no documents)');
}

const ACTIONS = ['index', 'create', 'update', 'delete'];

function isAction(json: unknown): boolean {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const keys = Object.keys(json);
  return keys.length === 1 && ACTIONS.includes(keys[0]!) && typeof (json as Record<string, unknown>)[keys[0]!] === 'object';
}

async function* rawDocuments(path: string, format: DocumentFormat): AsyncGenerator<RawDocument> {
  const { fh } = await openForRead(path);
  let row = 0;
  let action: { line: number; id: string | null } | null = null;
  try {
    for await (const line of lines(fh, path)) {
      if (line.text.trim() === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(line.text);
      } catch (e) {
        throw new InputError(path, `invalid JSON (${(e as Error).message})`, { row, line: line.number });
      }
      if (format === 'bulk' && action === null) {
        if (!isAction(json)) throw new InputError(path, `expected a bulk action line ({"index": {...}} or {"create": {...}}), got ${describe(json)}`, { row, line: line.number });
        const [verb, meta] = Object.entries(json as Record<string, Record<string, unknown>>)[0]!;
        if (verb !== 'index' && verb !== 'create')
          throw new InputError(path, `a build takes index and create actions only, got [${verb}] (updates and deletes apply to a running index)`, { row, line: line.number });
        const id = meta._id;
        if (id !== undefined && id !== null && (typeof id !== 'string' || id === '') && typeof id !== 'number')
          throw new InputError(path, `_id must be a non-empty string, got ${describe(id)}`, { row, line: line.number });
        action = { line: line.number, id: id === undefined || id === null ? null : String(id) };
        continue;
      }
      yield { line: line.number, json, text: line.text, ...(format === 'bulk' ? { bulkId: action!.id } : {}) };
      action = null;
      row++;
    }
    if (action !== null) throw new InputError(path, 'the last bulk action has no document line', { row, line: action.line });
  } finally {
    await fh.close().catch(() => {});
  }
}

/** A generated id, as Elasticsearch generates one for a document indexed without: 20 URL-safe base64 characters. */
export function generatedId(): string {
  return randomBytes(15).toString('base64url');
}

function idOf(path: string, json: unknown, row: number, line: number | undefined): string {
  const id = (json as { id?: unknown }).id;
  if (id === undefined || id === null) throw new InputError(path, 'missing "id"', { row, line });
  if (typeof id === 'number') return String(id);
  if (typeof id !== 'string' || id === '') throw new InputError(path, `"id" must be a non-empty string or a number, got ${describe(id)}`, { row, line });
  return id;
}

/** Reads one document by the parser, errors named by file, row, line and field. */
function index(path: string, parser: DocumentParser, json: unknown, row: number, line: number | undefined) {
  try {
    return parser.parse(json);
  } catch (e) {
    if (e instanceof DocumentError) throw new InputError(path, e.message, { row, line });
    throw e;
  }
}

class Batcher {
  private vectors: Float32Array;
  private ids: string[] = [];
  private docs: IndexedDocument[] = [];
  private firstRow = 0;
  private rows = 0;

  constructor(
    private readonly dims: number,
    private readonly maxRows: number,
  ) {
    this.vectors = new Float32Array(maxRows * dims);
  }

  add(id: string, vector: Float32Array, doc: IndexedDocument): DocumentBatch | null {
    this.vectors.set(vector, this.rows * this.dims);
    this.ids.push(id);
    this.docs.push(doc);
    return ++this.rows === this.maxRows ? this.take() : null;
  }

  take(): DocumentBatch | null {
    if (this.rows === 0) return null;
    const batch: DocumentBatch = {
      firstRow: this.firstRow,
      rows: this.rows,
      vectors: this.rows === this.maxRows ? this.vectors : this.vectors.slice(0, this.rows * this.dims),
      ids: this.ids,
      docs: this.docs,
    };
    this.firstRow += this.rows;
    this.rows = 0;
    this.vectors = new Float32Array(this.maxRows * this.dims);
    this.ids = [];
    this.docs = [];
    return batch;
  }
}

class UniqueIds {
  private readonly seen = new Map<string, number>();

  constructor(private readonly path: string) {}

  check(id: string, row: number, line: number | undefined): void {
    const previous = this.seen.get(id);
    if (previous !== undefined) throw new InputError(this.path, `duplicate id ${JSON.stringify(id)} (first used by row ${previous})`, { row, line });
    this.seen.set(id, row);
  }
}

class JsonDocumentSource implements DocumentSource {
  readonly hasIds = true;
  readonly count = undefined;

  constructor(
    readonly path: string,
    readonly docFormat: DocumentFormat,
    readonly dims: number,
    private readonly parser: DocumentParser,
    private readonly vectorField: string,
  ) {}

  get format(): 'jsonl' {
    return 'jsonl';
  }

  async *batches(maxRows: number): AsyncGenerator<DocumentBatch> {
    const batcher = new Batcher(this.dims, Math.max(1, Math.floor(maxRows)));
    const ids = new UniqueIds(this.path);
    const spliceVector = !this.vectorField.includes('.');
    let row = 0;
    for await (const raw of rawDocuments(this.path, this.docFormat)) {
      const id = raw.bulkId === undefined ? idOf(this.path, raw.json, row, raw.line) : (raw.bulkId ?? generatedId());
      ids.check(id, row, raw.line);
      const parsed = index(this.path, this.parser, raw.json, row, raw.line);
      if (parsed.vector === null) throw new InputError(this.path, `missing "${this.vectorField}" (the vector field): every document needs one`, { row, line: raw.line });
      if (parsed.vector.length !== this.dims)
        throw new InputError(this.path, `field [${this.vectorField}]: the vector has ${parsed.vector.length} dims, expected ${this.dims}`, { row, line: raw.line });
      const bytes = encoder.encode(raw.text);
      const source = spliceVector ? withoutTopLevelMember(bytes, this.vectorField) : bytes;
      const full = batcher.add(id, parsed.vector, { source, values: parsed.values });
      row++;
      if (full) yield full;
    }
    const last = batcher.take();
    if (last) yield last;
    if (row === 0) throw new InputError(this.path, 'empty file (no documents)');
  }
}

class PairedDocumentSource implements DocumentSource {
  readonly hasIds = true;

  constructor(
    private readonly vectors: VectorSource,
    private readonly fieldsPath: string,
    private readonly parser: DocumentParser,
    private readonly vectorField: string,
  ) {}

  get path(): string {
    return this.vectors.path;
  }

  get format() {
    return this.vectors.format;
  }

  get dims(): number {
    return this.vectors.dims;
  }

  get count(): number | undefined {
    return this.vectors.count;
  }

  async *batches(maxRows: number): AsyncGenerator<DocumentBatch> {
    const fields = rawDocuments(this.fieldsPath, 'jsonl')[Symbol.asyncIterator]();
    const ids = new UniqueIds(this.fieldsPath);
    for await (const batch of this.vectors.batches(maxRows)) {
      const batchIds: string[] = [];
      const docs: IndexedDocument[] = [];
      for (let r = 0; r < batch.rows; r++) {
        const row = batch.firstRow + r;
        const next = await fields.next();
        if (next.done) throw new InputError(this.fieldsPath, `has ${row} rows, the vectors (${this.vectors.path}) have more`);
        const raw = next.value;
        if (typeof raw.json === 'object' && raw.json !== null && !Array.isArray(raw.json) && this.vectorField in raw.json) {
          throw new InputError(this.fieldsPath, `field [${this.vectorField}]: the vectors come from ${this.vectors.path}; the fields file must not hold them`, {
            row,
            line: raw.line,
          });
        }
        const id = (raw.json as { id?: unknown } | null)?.id === undefined ? String(row) : idOf(this.fieldsPath, raw.json, row, raw.line);
        ids.check(id, row, raw.line);
        const parsed = index(this.fieldsPath, this.parser, raw.json, row, raw.line);
        batchIds.push(id);
        docs.push({ source: encoder.encode(raw.text), values: parsed.values });
      }
      yield { ...batch, ids: batchIds, docs };
    }
    const extra = await fields.next();
    if (!extra.done) throw new InputError(this.fieldsPath, `has more rows than the vectors (${this.vectors.path})`, { line: extra.value.line });
  }
}

class VectorOnlyDocuments implements DocumentSource {
  readonly hasIds = true;

  constructor(private readonly vectors: VectorSource) {}

  get path(): string {
    return this.vectors.path;
  }

  get format() {
    return this.vectors.format;
  }

  get dims(): number {
    return this.vectors.dims;
  }

  get count(): number | undefined {
    return this.vectors.count;
  }

  async *batches(maxRows: number): AsyncGenerator<DocumentBatch> {
    const none = new Map<string, FieldValues>();
    for await (const batch of this.vectors.batches(maxRows)) {
      const ids = batch.ids ?? Array.from({ length: batch.rows }, (_, r) => String(batch.firstRow + r));
      yield { ...batch, ids, docs: Array.from({ length: batch.rows }, () => ({ source: EMPTY_SOURCE, values: none })) };
    }
  }
}

function describe(x: unknown): string {
  const s = JSON.stringify(x);
  return s === undefined ? String(x) : s.length > 60 ? `${s.slice(0, 60)}...` : s;
}
