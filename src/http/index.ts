/** The HTTP layer's public surface. */
export { createApp, type PrescoreApp } from './app.js';
export { startServer, type RunningServer, type CloseOptions, type StartServerDeps } from './server.js';
export {
  serveCommand,
  parseServeArgs,
  serveUsage,
  SERVE_SETTINGS,
  type IndexOpener,
  type OpenIndexRequest,
  type ServeConfig,
  type ServeIo,
  type SignalSource,
} from './serve.js';
export { DEFAULT_SERVER_OPTIONS, resolveServerOptions, type ServerOptions } from './options.js';
export { ServerRuntime } from './ServerRuntime.js';
export { ReopeningIndex, IncompatibleRefreshError, type RefreshOutcome } from './ReopeningIndex.js';
export { HttpError, type ValidationIssue } from './errors.js';
export { IndexWrites, DEFAULT_REFRESH_INTERVAL_MS, type Reopenable } from './IndexWrites.js';
export { DataDirectory, openServedIndex, type ServedIndexDeps } from './DataDirectory.js';
export { SingleIndexCatalog, servedIndex, type IndexCatalog, type ServedIndex } from './IndexCatalog.js';
export { defaultIndexSettings, type IndexSettings } from './IndexSettings.js';
