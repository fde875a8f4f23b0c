import { CHUNK_ROWS, type GenSimilarity, STREAM_FIELDS } from './DatasetSpec.js';
import { CLUSTERS } from './EmbeddingModel.js';
import { parseSeed, Rng } from './Rng.js';

/**
 * The documents' metadata for `prescore gen --filters`: one record per base row (row i is doc id
 * "i"), written to fields.jsonl, one JSON object per line, row-aligned with base.fvecs:
 *
 *   {"cluster":"c17","u":0.7342119026184082,"tags":["s50","s1"],"ts":1717171717171}
 *
 * - `cluster` (keyword): the id of the model cluster that generated the row's vector, "c0".."c1023"
 *   (EmbeddingModel's clusters; they are near each other in vector space).
 * - `u` (double): uniform in [0, 1), 53 random bits, written in JavaScript's shortest round-trip
 *   form (parseFloat gives back the same double).
 * - `tags` (keyword, multi-valued, possibly empty): each tag independently, `s50` with probability
 *   0.5, `s10` 0.1, `s1` 0.01, `s01` 0.001, `s001` 0.0001 (in that order in the array).
 * - `ts` (date): epoch milliseconds, an integer uniform over 2024 (UTC, 366 days).
 *
 * `u`, `tags` and `ts` come from the RNG stream (seed, STREAM_FIELDS, chunk): chunk c of CHUNK_ROWS
 * rows draws u (2 x 32 bits), the five tags (32 bits each) and ts (2 x 32 bits) row by row, so a
 * row's fields depend only on (seed, row) and not on the vectors, dim or similarity. `cluster`
 * is recorded while the base vectors are drawn (the base stream is unchanged).
 */
export interface FieldColumns {
  /** Cluster id per row (SharedArrayBuffer-backed when passed to workers). */
  readonly cluster: Uint16Array;
  readonly u: Float64Array;
  /** Bit t set when the row carries TAGS[t].name. */
  readonly tags: Uint8Array;
  /** Epoch milliseconds. */
  readonly ts: Float64Array;
}

export const TAGS: readonly { readonly name: string; readonly probability: number }[] = [
  { name: 's50', probability: 0.5 },
  { name: 's10', probability: 0.1 },
  { name: 's1', probability: 0.01 },
  { name: 's01', probability: 0.001 },
  { name: 's001', probability: 0.0001 },
];

/** `ts` is uniform in [TS_START, TS_START + TS_SPAN_MS): the year 2024, UTC. */
export const TS_START = Date.UTC(2024, 0, 1);
export const TS_SPAN_MS = Date.UTC(2025, 0, 1) - TS_START;

/** Columns for n rows in shared memory (workers write them, the main thread reads them). */
export function sharedFieldColumns(n: number): FieldColumns {
  return {
    cluster: new Uint16Array(new SharedArrayBuffer(n * 2)),
    u: new Float64Array(new SharedArrayBuffer(n * 8)),
    tags: new Uint8Array(new SharedArrayBuffer(n)),
    ts: new Float64Array(new SharedArrayBuffer(n * 8)),
  };
}

const TWO_POW_M53 = 2 ** -53;

/** A uniform double in [0, 1) with 53 random bits (two draws). */
function nextDouble53(rng: Rng): number {
  const hi = rng.nextInt32() >>> 5; // 27 bits
  const lo = rng.nextInt32() >>> 6; // 26 bits
  return (hi * 67108864 + lo) * TWO_POW_M53;
}

/**
 * Draws u, tags and ts for rows [firstChunk * CHUNK_ROWS, + rows) into the columns (cluster is
 * not touched: it comes with the vectors).
 */
export function drawFields(seed: string, firstChunk: number, rows: number, out: FieldColumns): void {
  const s = parseSeed(seed);
  const first = firstChunk * CHUNK_ROWS;
  for (let done = 0, c = firstChunk; done < rows; c++) {
    const rng = Rng.from(s, STREAM_FIELDS, c);
    const end = Math.min(CHUNK_ROWS, rows - done);
    for (let r = 0; r < end; r++) {
      const row = first + done + r;
      out.u[row] = nextDouble53(rng);
      let tags = 0;
      for (let t = 0; t < TAGS.length; t++) if (rng.nextDouble() < TAGS[t].probability) tags |= 1 << t;
      out.tags[row] = tags;
      out.ts[row] = TS_START + Math.floor(nextDouble53(rng) * TS_SPAN_MS);
    }
    done += end;
  }
}

const CLUSTER_NAMES = Array.from({ length: CLUSTERS }, (_, c) => `c${c}`);

/** The keyword value of cluster c (one string per cluster, shared by every filter that names it). */
export function clusterName(c: number): string {
  return CLUSTER_NAMES[c] ?? `c${c}`;
}

/** Tag names of a tags bit set, in TAGS order. */
export function tagNames(bits: number): string[] {
  const names: string[] = [];
  for (let t = 0; t < TAGS.length; t++) if (bits & (1 << t)) names.push(TAGS[t].name);
  return names;
}

/** fields.jsonl lines for rows [from, to), each ending in '\n'. */
export function fieldLines(columns: FieldColumns, from: number, to: number): string {
  let out = '';
  for (let r = from; r < to; r++) {
    const bits = columns.tags[r];
    let tags = '';
    for (let t = 0; t < TAGS.length; t++) if (bits & (1 << t)) tags += tags ? `,"${TAGS[t].name}"` : `"${TAGS[t].name}"`;
    out += `{"cluster":"c${columns.cluster[r]}","u":${JSON.stringify(columns.u[r])},"tags":[${tags}],"ts":${columns.ts[r]}}\n`;
  }
  return out;
}

/** Elasticsearch's dense_vector similarity for a generator similarity. */
export function esSimilarity(similarity: GenSimilarity): string {
  return similarity === 'euclidean' ? 'l2_norm' : similarity;
}

/**
 * mapping.json: the Elasticsearch `mappings` object (the value of "mappings" in a create-index
 * body) for the fields of fields.jsonl plus the vector of base.fvecs as `vector`. `ts` is a date
 * with the default format (strict_date_optional_time||epoch_millis), so the epoch milliseconds of
 * fields.jsonl and ISO 8601 bounds in range queries both work.
 */
export function esMapping(dim: number, similarity: GenSimilarity): object {
  return {
    properties: {
      vector: { type: 'dense_vector', dims: dim, index: true, similarity: esSimilarity(similarity) },
      cluster: { type: 'keyword' },
      tags: { type: 'keyword' },
      u: { type: 'double' },
      ts: { type: 'date' },
    },
  };
}
