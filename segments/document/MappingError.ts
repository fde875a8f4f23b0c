/** A mapping that cannot be read (Elasticsearch's `mapper_parsing_exception`): names the field path. */
export class MappingError extends Error {
  constructor(
    /** Dotted path of the field or parameter at fault ('' for the root). */
    readonly path: string,
    readonly reason: string,
  ) {
    super(path === '' ? reason : `[${path}]: ${reason}`);
    this.name = 'MappingError';
  }
}
