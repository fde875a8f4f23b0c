/** A file failed a structural or checksum check. The message always names the file (resource). */
export class CorruptIndexException extends Error {
  constructor(
    readonly reason: string,
    readonly resource: string,
  ) {
    super(`${reason} (resource=${resource})`);
    this.name = 'CorruptIndexException';
  }
}

/** The file is valid but written by a format or version this reader does not support. */
export class IndexFormatTooNewOrOldException extends Error {
  constructor(
    readonly resource: string,
    readonly detail: string,
  ) {
    super(`unsupported format in ${resource}: ${detail}`);
    this.name = 'IndexFormatTooNewOrOldException';
  }
}
