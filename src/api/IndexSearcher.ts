import type { IndexReader } from '../../segments/index/IndexReader.js';
import { IndexSearcher as QueryIndexSearcher, type IndexSearcherOptions as QueryIndexSearcherOptions } from '../../query/IndexSearcher.js';
import { Executor } from '../executor/Executor.js';

/** Options of {@link IndexSearcher}: the query module's options, the executor defaulting to the process-wide one. */
export interface IndexSearcherOptions extends Omit<QueryIndexSearcherOptions, 'executor'> {
  /** Default: the process-wide executor (created on first use). */
  readonly executor?: QueryIndexSearcherOptions['executor'];
}

/**
 * The library's IndexSearcher: query/'s searcher with the process-wide executor as the default,
 * so `new IndexSearcher(DirectoryReader.open(dir))` works as in Lucene.
 *
 * @example
 *   const searcher = new IndexSearcher(DirectoryReader.open('data/demo/index'));
 *   const { topDocs } = await searcher.search(new KnnFloatVectorQuery('vector', target, 10), 10);
 */
export class IndexSearcher extends QueryIndexSearcher {
  constructor(reader: IndexReader, options: IndexSearcherOptions = {}) {
    super(reader, { ...options, executor: options.executor ?? Executor.get() });
  }
}
