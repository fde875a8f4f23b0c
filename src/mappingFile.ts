import { readFileSync } from 'node:fs';
import { Mapping, MappingError } from '../segments/document/Mapping.js';
import { UsageError } from './cliFlags.js';

/**
 * A `--mapping FILE` (build, and serve for Lucene directories), read as Elasticsearch's
 * `mappings` object. Errors name the file, then the field path (`--mapping m.json: [price]: ...`).
 */
export function readMappingFile(path: string): Mapping {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`--mapping ${path}: ${(e as Error).message}`);
  }
  try {
    return Mapping.parse(json);
  } catch (e) {
    if (e instanceof MappingError) {
      const named = new MappingError(e.path, e.reason);
      named.message = `--mapping ${path}: ${e.message}`;
      throw named;
    }
    throw e;
  }
}
