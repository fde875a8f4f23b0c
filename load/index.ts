/** The load tester's public surface: the CLI entry and the engine as a library. */
export { loadCommand, LOAD_HELP, type LoadCommandIo } from './command.js';
export { runLoad, recallOf, type LoadOptions } from './runLoad.js';
export { findMax, judgeStep, type FindMaxOptions, type FindMaxResult, type FindMaxStep } from './findMax.js';
export { renderHtml, renderFindMaxHtml } from './html.js';
export { formatReport, LATENCY_BASIS, type LoadReport, type LatencySummary, type Counts, type SecondStats, type LoadConfig } from './report.js';
export { parseDuration, formatDuration } from './duration.js';
export { resolveTarget, isLoopbackIp, NotLoopbackError, type Target } from './target.js';
export { queriesFromFvecs, randomUnitQueries, type QuerySet } from './queries.js';
export { readFvecs, readIvecs, type VecRows } from './vecfile.js';
export { realClock, type Clock, type ClockTimer } from './clock.js';
export { SocketTransport } from './SocketTransport.js';
export { HttpTransport, classifyStatus, type Transport, type TransportFactory, type Outcome, type OutcomeKind } from './transport.js';
export { percentile } from './percentile.js';
export { singleStream, type SingleStream } from './singleStream.js';
export type { SearchParams } from './body.js';
export { runClosedLoop, type ClosedLoopOptions, type ClosedLoopReport } from './closedLoop.js';
