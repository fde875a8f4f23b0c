import type { IndexOpener } from './http/index.js';
import type { VectorIndex } from './api/types.js';
import type { OpenIndexOptions } from './api/openIndex.js';
import type { Mapping } from '../segments/document/Mapping.js';

type Open = (dir: string, options: OpenIndexOptions) => Promise<VectorIndex>;

/** The `prescore serve` opener: prescore index directories, and (with --lucene) Lucene directories. */
export function indexOpener(
  openPrescore: Open,
  openLucene?: (dir: string, options: OpenIndexOptions & { field?: string; sidecarDir?: string; mapping?: Mapping }) => Promise<VectorIndex>,
): IndexOpener {
  return (dir, req) => {
    if (req.format === 'lucene') {
      if (!openLucene) throw new Error('serving Lucene directories is not available in this build');
      return openLucene(dir, {
        name: req.name,
        readPath: req.readPath,
        field: req.field,
        sidecarDir: req.sidecarDir,
        mapping: req.mapping,
        firstPhase: req.firstPhase,
        knnThread: req.knnThread,
        rescoreThread: req.rescoreThread,
        calibrate: req.calibrate,
        recallTarget: req.recallTarget,
      });
    }
    return openPrescore(dir, {
      name: req.name,
      readPath: req.readPath,
      firstPhase: req.firstPhase,
      knnThread: req.knnThread,
      rescoreThread: req.rescoreThread,
      calibrate: req.calibrate,
      recallTarget: req.recallTarget,
    });
  };
}
