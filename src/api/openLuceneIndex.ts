import { Mapping } from '../../segments/document/Mapping.js';
import { Executor } from '../executor/Executor.js';
import { segmentBuilder } from '../executor/tasks.js';
import { LuceneIndexReader } from '../../segments/lucene/LuceneIndexReader.js';
import type { LuceneIndexOptions } from '../../segments/lucene/LuceneIndex.js';
import type { SidecarBuildParams, SidecarEvent } from '../../segments/lucene/LuceneSidecar.js';
import { openReader, type OpenIndexOptions } from './openIndex.js';
import type { VectorIndex } from './types.js';

export interface OpenLuceneIndexOptions extends OpenIndexOptions, Partial<SidecarBuildParams> {
  /** The FLOAT32 vector field to serve; may be omitted when the index has exactly one vector field. */
  readonly field?: string;
  /**
   * Directory for prescore's 1-bit codes and graphs (never inside the Lucene directory; may be
   * shared by several indexes: sidecar segments are named by segment id and field number).
   * Default: the PRESCORE_SIDECAR_DIR environment variable if set, else
   * `$XDG_CACHE_HOME/prescore/lucene-sidecars/<sha256(realpath(dir) + field)[0:20]>`, with
   * XDG_CACHE_HOME defaulting to `~/.cache`.
   */
  readonly sidecarDir?: string;
  /** Delete sidecar segments of Lucene segments this commit no longer has. Default false. */
  readonly pruneSidecars?: boolean;
  /** Verify every byte (CRC32) of the Lucene files and the sidecar before serving. Default false. */
  readonly checkIntegrity?: boolean;
  /** Open an older commit, or vouch for custom codec names (see LuceneIndex.open). */
  readonly lucene?: LuceneIndexOptions;
  /** Sidecar progress per segment: building, built, reused, rebuilt (with the reason). */
  readonly onSidecar?: (event: SidecarEvent) => void;
  /**
   * The index's mapping (Elasticsearch's `mappings` object), which Lucene's files do not hold: it
   * says how doc values read (a `double` field's longs are sortable doubles), and lets searches
   * filter on those fields by name. Default: none (numbers read as longs; filters still work on
   * keyword and long fields through the library's query classes).
   */
  readonly mapping?: Record<string, unknown> | Mapping;
}

/**
 * Opens a Lucene index directory (9.9+ / 10.x, read-only) for searching one FLOAT32 vector
 * field, with the same search facade as `openIndex`: 1-bit first phase over codes prescore keeps
 * in a sidecar directory (built on first open, reused after), then fp32 rescoring straight from
 * the Lucene `.vec` data. With `firstPhase: 'graph'` no sidecar exists: the first phase searches
 * Lucene's own HNSW graph (`.vex`) with exact fp32 scores from `.vec`, both read in place. Hits carry Lucene's global doc numbers; `id` is that number as a
 * string (Lucene docs have no prescore ids). Deleted docs are never returned.
 */
export async function openLuceneIndex(dir: string, options: OpenLuceneIndexOptions = {}): Promise<VectorIndex> {
  const hadExecutor = Executor.exists();
  const executor = Executor.get({ threads: options.threads });
  let reader: LuceneIndexReader;
  try {
    reader = await LuceneIndexReader.open(dir, {
      field: options.field,
      sidecarDir: options.sidecarDir ?? nonEmpty(process.env.PRESCORE_SIDECAR_DIR),
      buildSegment: segmentBuilder(executor),
      lucene: options.lucene,
      pruneSidecars: options.pruneSidecars,
      onSidecar: options.onSidecar,
      flatThreshold: options.flatThreshold,
      m: options.m,
      beamWidth: options.beamWidth,
      firstPhase: options.firstPhase,
    });
    if (options.checkIntegrity) reader.checkIntegrity();
    if (options.mapping) reader.mapping = options.mapping instanceof Mapping ? options.mapping : Mapping.parse(options.mapping);
  } catch (e) {
    // Do not leave a pool this call created running (it would keep the process alive).
    if (!hadExecutor) await Executor.shutdownSearch();
    throw e;
  }
  return openReader(reader, options);
}

/** A line per sidecar event, for `prescore serve --lucene` (stderr). */
export function sidecarEventLine(e: SidecarEvent): string {
  const why = e.reason ? ` (${e.reason})` : '';
  const took = e.ms !== undefined ? ` in ${(e.ms / 1000).toFixed(1)} s` : '';
  return `prescore: sidecar ${e.segment}: ${e.status}${took}${why} [${e.dir}]`;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
