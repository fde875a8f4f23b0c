import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, segmentFileName } from '../flat/FlatVectorsFormat.js';
import { SQ_DATA_EXTENSION, SQ_META_EXTENSION } from '../quantized/ScalarQuantizedVectorsFormat.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION } from '../hnsw/HnswVectorsReader.js';
import { commitFileName, listCommitGenerations, readCommit } from './CommitPoint.js';
import { docIdsFileName } from './DocIds.js';
import { DV_DATA_EXTENSION, DV_META_EXTENSION } from '../docvalues/Lucene90DocValuesFormat.js';
import { FIELD_INFOS_EXTENSION } from '../lucene/FieldInfos.js';
import { DOC_VALUES_SUFFIX } from './SegmentDocumentsWriter.js';
import { LIVE_DOCS_EXTENSION, liveDocsFileName } from '../lucene/LiveDocs.js';

const SEGMENT_EXTENSIONS = [FLAT_DATA_EXTENSION, FLAT_META_EXTENSION, SQ_DATA_EXTENSION, SQ_META_EXTENSION, HNSW_META_EXTENSION, HNSW_INDEX_EXTENSION];
/** A segment's document files: `_N.fdt/.fdx/.fdm` (stored fields), `_N.fnm` (field infos). */
const DOCUMENT_EXTENSIONS = ['fdt', 'fdx', 'fdm', FIELD_INFOS_EXTENSION];
const DOC_VALUES_EXTENSIONS = [DV_DATA_EXTENSION, DV_META_EXTENSION];

/** Segment files by their exact shapes: `_N.ids`, `_N.<document ext>`, `_N_<format>_<n>.<ext>` and `_N_<delGen>.liv`. */
const SEGMENT_FILE = new RegExp(
  `^_[0-9a-z]+(\\.(ids|${DOCUMENT_EXTENSIONS.join('|')})|_[A-Za-z0-9]+_\\d+\\.(${[...SEGMENT_EXTENSIONS, ...DOC_VALUES_EXTENSIONS].join('|')})|_[0-9a-z]+\\.${LIVE_DOCS_EXTENSION})$`,
);

/** Files prescore writes into an index directory (anything else there is left alone). */
function isIndexFile(name: string): boolean {
  return /^commit_[0-9a-z]+$/.test(name) || SEGMENT_FILE.test(name) || /^\.commit_.*\.tmp$/.test(name);
}

/**
 * Lucene's IndexFileDeleter, for prescore's directories: deletes every index file the newest
 * commit does not reference (older commits, segments of a build that was killed or failed,
 * temp files of an unpublished commit). The caller must hold the directory's write lock, so no
 * live writer's files are taken. With no commit at all, every index file is an orphan (unless
 * `onlyWithCommit`: a reader only cleans what is evidently a prescore index). When the
 * newest commit cannot be read nothing is deleted: a corrupt commit is reported on open, and
 * its files may be what a user wants to recover. `keep` names files to leave alone (a running
 * merge's). Returns the deleted names.
 */
export function deleteUnreferencedFiles(dir: string, options: { readonly onlyWithCommit?: boolean; readonly keep?: Iterable<string> } = {}): string[] {
  const generation = listCommitGenerations(dir).at(-1);
  if (generation === undefined && options.onlyWithCommit) return [];
  // Files a live writer is still writing (a merge's new segment): no commit names them yet.
  const keep = new Set<string>(options.keep ?? []);
  if (generation !== undefined) {
    let segments;
    try {
      segments = readCommit(dir, generation).segments;
    } catch {
      return [];
    }
    keep.add(commitFileName(generation));
    for (const s of segments) {
      keep.add(docIdsFileName(s.name));
      for (const ext of SEGMENT_EXTENSIONS) keep.add(segmentFileName(s.name, s.suffix, ext));
      for (const ext of DOCUMENT_EXTENSIONS) keep.add(`${s.name}.${ext}`);
      for (const ext of DOC_VALUES_EXTENSIONS) keep.add(segmentFileName(s.name, DOC_VALUES_SUFFIX, ext));
      if (s.delGen >= 1) keep.add(liveDocsFileName(s.name, s.delGen));
    }
  }
  const deleted: string[] = [];
  for (const f of readdirSync(dir)) {
    if (isIndexFile(f) && !keep.has(f)) {
      rmSync(join(dir, f), { force: true });
      deleted.push(f);
    }
  }
  return deleted;
}
