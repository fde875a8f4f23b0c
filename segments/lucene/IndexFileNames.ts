/**
 * Lucene's file-naming rules (org.apache.lucene.index.IndexFileNames): generations are written
 * in base 36, per-segment files are `<segment>[_<suffix>].<ext>`, and compound-file entries are
 * stored with the segment name stripped.
 */

export const SEGMENTS = 'segments';
/** The pre-4.0 generation file; never a commit. */
export const OLD_SEGMENTS_GEN = 'segments.gen';

/** Parses a base-36 generation ("a" -> 10). Rejects anything but [0-9a-z]+ and values beyond 2^53. */
export function parseGeneration(text: string): number {
  if (!/^[0-9a-z]+$/.test(text)) throw new Error(`invalid base-36 generation "${text}"`);
  let v = 0;
  for (const ch of text) {
    v = v * 36 + parseInt(ch, 36);
    if (!Number.isSafeInteger(v)) throw new Error(`generation "${text}" exceeds 2^53`);
  }
  return v;
}

export function generationToString(gen: number): string {
  return gen.toString(36);
}

/**
 * The generation of a `segments_N` file name (`segments` alone is generation 0), or -1 when the
 * name is not a commit file.
 */
export function generationFromSegmentsFileName(fileName: string): number {
  if (fileName === SEGMENTS) return 0;
  if (!fileName.startsWith(`${SEGMENTS}_`)) return -1;
  try {
    return parseGeneration(fileName.slice(SEGMENTS.length + 1));
  } catch {
    return -1;
  }
}

/** The newest commit file among `files` (largest generation), or undefined when there is none. */
export function lastCommitSegmentsFileName(files: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestGen = -1;
  for (const f of files) {
    if (f.startsWith(OLD_SEGMENTS_GEN)) continue;
    const gen = generationFromSegmentsFileName(f);
    if (gen > bestGen) {
      bestGen = gen;
      best = f;
    }
  }
  return best;
}

/** `<base>_<gen base36>.<ext>` for gen > 0, `<base>.<ext>` for gen 0 (Lucene's fileNameFromGeneration). */
export function fileNameFromGeneration(base: string, ext: string, gen: number): string {
  if (gen < 0) throw new Error(`no file for generation ${gen}`);
  const dotExt = ext.length > 0 ? `.${ext}` : '';
  return gen === 0 ? `${base}${dotExt}` : `${base}_${generationToString(gen)}${dotExt}`;
}

/** `<segment>[_<suffix>].<ext>` (Lucene's segmentFileName). */
export function segmentFileName(segmentName: string, suffix: string, ext: string): string {
  const dotExt = ext.length > 0 ? `.${ext}` : '';
  return suffix.length > 0 ? `${segmentName}_${suffix}${dotExt}` : `${segmentName}${dotExt}`;
}

function indexOfSegmentName(fileName: string): number {
  // A name with a second '_' keeps it (e.g. `_0_1.liv` -> `_1.liv`); otherwise cut at the '.'.
  const idx = fileName.indexOf('_', 1);
  return idx === -1 ? fileName.indexOf('.') : idx;
}

/** `_0_Lucene99HnswVectorsFormat_0.vec` -> `_Lucene99HnswVectorsFormat_0.vec`, `_0.fnm` -> `.fnm`. */
export function stripSegmentName(fileName: string): string {
  const idx = indexOfSegmentName(fileName);
  return idx === -1 ? fileName : fileName.slice(idx);
}

/** `_0_Lucene99HnswVectorsFormat_0.vec` -> `_0`. */
export function parseSegmentName(fileName: string): string {
  const idx = indexOfSegmentName(fileName);
  return idx === -1 ? fileName : fileName.slice(0, idx);
}
