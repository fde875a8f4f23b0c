import { CorruptIndexException, IndexFormatTooNewOrOldException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';

/** A Lucene release version (org.apache.lucene.util.Version without prerelease). */
export interface LuceneVersion {
  readonly major: number;
  readonly minor: number;
  readonly bugfix: number;
}

export function versionToString(v: LuceneVersion): string {
  return `${v.major}.${v.minor}.${v.bugfix}`;
}

export function compareVersions(a: LuceneVersion, b: LuceneVersion): number {
  return a.major - b.major || a.minor - b.minor || a.bugfix - b.bugfix;
}

export function checkVersion(v: LuceneVersion, resource: string): LuceneVersion {
  if (v.major < 0 || v.minor < 0 || v.bugfix < 0) throw new CorruptIndexException(`invalid Lucene version ${versionToString(v)}`, resource);
  return v;
}

/**
 * The reader was handed everything but the footer (openChecksummed); Lucene's checkFooter also
 * insists the structure ends exactly there ("misplaced codec footer (file extended?)").
 */
export function expectEnd(input: ByteArrayDataInput): void {
  if (input.remaining !== 0) {
    throw new CorruptIndexException(`misplaced codec footer (file extended?): ${input.remaining} unread bytes before the footer`, input.resource);
  }
}

/** The codec names whose per-segment formats this package reads (segments written by Lucene 9.9 .. 10.x). */
export interface CodecTraits {
  readonly name: string;
  /** The Lucene release that introduced the codec (e.g. Lucene912 -> 9.12). */
  readonly major: number;
  readonly minor: number;
}

/**
 * Lucene99 (9.9), Lucene912 (9.12), Lucene100 (10.0), Lucene101, Lucene103, Lucene104 ...: all
 * use Lucene99SegmentInfoFormat (codec name "Lucene90SegmentInfo", with the hasBlocks byte),
 * Lucene94FieldInfosFormat and Lucene90CompoundFormat. Older codecs (Lucene90..Lucene95) write
 * `.si` without hasBlocks and use vector formats this project does not read, so they are
 * rejected up front rather than misparsed. `extraCodecs` lets a caller vouch for a custom codec
 * name (e.g. a wrapper codec) that uses those same formats.
 */
export function codecTraits(name: string, resource: string, extraCodecs: readonly string[] = []): CodecTraits {
  if (extraCodecs.includes(name)) return { name, major: 10, minor: 0 };
  const m = /^Lucene(\d{2,4})$/.exec(name);
  if (m) {
    const digits = m[1];
    let major: number;
    let minor: number;
    // Lucene70..Lucene99 and Lucene912: a one-digit major; Lucene100, Lucene101, ...: two digits.
    if ('789'.includes(digits[0])) {
      major = Number(digits[0]);
      minor = Number(digits.slice(1));
    } else {
      major = Number(digits.slice(0, 2));
      minor = Number(digits.slice(2));
    }
    if ((major === 9 && minor >= 9) || major === 10) return { name, major, minor };
    throw new IndexFormatTooNewOrOldException(resource, `segment codec ${name} (Lucene ${major}.${minor}) is not supported: only Lucene99 (9.9) .. Lucene10x codecs are`);
  }
  throw new IndexFormatTooNewOrOldException(resource, `unknown segment codec ${name}: only Lucene99 (9.9) .. Lucene10x codecs are supported`);
}
