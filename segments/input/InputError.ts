/** Where in an input file a problem was found. Rows are 0-based vector indices; lines are 1-based. */
export interface InputLocation {
  /** 0-based index of the vector (row) in the file. */
  readonly row?: number;
  /** 1-based line number (JSONL only). */
  readonly line?: number;
  /** 0-based component index inside the vector, when one value is at fault. */
  readonly component?: number;
}

/**
 * Bad vector input (a user's file, not one of our index files): the message always names the
 * file and, when known, the row (and the JSONL line), then the reason, e.g.
 * `data/base.jsonl: row 41 (line 43): vector has 767 dims, expected 768`.
 */
export class InputError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly location: InputLocation = {},
  ) {
    super(`${file}: ${describeLocation(location)}${reason}`);
    this.name = 'InputError';
  }
}

function describeLocation(loc: InputLocation): string {
  const parts: string[] = [];
  if (loc.row !== undefined) parts.push(`row ${loc.row}`);
  if (loc.line !== undefined) parts.push(parts.length ? `(line ${loc.line})` : `line ${loc.line}`);
  if (loc.component !== undefined) parts.push(`component ${loc.component}`);
  return parts.length ? `${parts.join(' ')}: ` : '';
}

/** Turns a filesystem error into an InputError naming the file (ENOENT, EACCES, EISDIR...). */
export function ioError(file: string, err: unknown, what = 'cannot read'): InputError {
  const e = err as NodeJS.ErrnoException;
  const detail = e && typeof e === 'object' && 'code' in e && e.code ? `${e.code}: ${e.message}` : String(err);
  const error = new InputError(file, `${what} (${detail})`);
  (error as { cause?: unknown }).cause = err;
  return error;
}
