import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildCommand } from './buildCommand.js';
import { startCommand } from './startCommand.js';
import { genCommand } from './gen/genCommand.js';
import { serveCommand, serveUsage } from './http/index.js';
import { serveExamplesText } from './serveHelp.js';
import { loadCommand } from '../load/index.js';
import { openIndex } from './api/openIndex.js';
import { openLuceneIndex, sidecarEventLine } from './api/openLuceneIndex.js';
import { indexOpener } from './indexOpener.js';
import { checkCommand, infoCommand } from './inspectCommands.js';
import { calibrateCommand } from './calibrateCommand.js';

export const USAGE = `Usage: prescore <command> [options]

Commands:
  start     demo: generate + build a 100k x 384 index on first run, then serve it
  gen       generate an embedding-like dataset with exact ground truth
  build     build an index from documents (.jsonl, _bulk NDJSON) or .fvecs/.npy vectors
  serve     serve an index over HTTP (POST /v1/search, POST /:index/_search, /metrics)
  load      open-loop Poisson load test against a running server
  info      describe an index (segments, sizes, page-cache residency)
  check     verify every byte of an index (CRC32 of every file)
  calibrate measure what oversample and beam reach what recall on an index (for recall_target)

Run \`prescore <command> --help\` for a command's options; \`prescore serve --help\` also shows
a filtered search returning documents (\`_source\`) in both request shapes and from the library.
`;

/** `prescore serve --help`: the options, then examples of filtered searches (serveHelp.ts). */
export function serveHelp(): string {
  return `${serveUsage()}\n\n${serveExamplesText()}\n`;
}

const wantsHelp = (argv: readonly string[]) => argv.some((a) => a === '-h' || a === '--help');

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  start: startCommand,
  gen: genCommand,
  build: buildCommand,
  serve: async (argv) => {
    if (wantsHelp(argv)) {
      process.stdout.write(serveHelp());
      return 0;
    }
    return serveCommand(
      argv,
      indexOpener(openIndex, (dir, o) => openLuceneIndex(dir, { ...o, onSidecar: (e) => process.stderr.write(sidecarEventLine(e) + '\n') })),
    );
  },
  load: (argv) => loadCommand(argv),
  info: infoCommand,
  check: checkCommand,
  calibrate: calibrateCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`prescore: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

const invokedDirectly = process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly || process.env.PRESCORE_CLI === '1') {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`prescore: ${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
