/** Reading Markdown pages in tests: their fenced code blocks and their tables. */

export interface Block {
  readonly lang: string;
  readonly flags: readonly string[];
  readonly code: string;
  readonly line: number;
}

/** The fenced code blocks of a Markdown page, with their info strings and first lines. */
export function codeBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  for (const m of markdown.matchAll(/^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm)) {
    const [lang = '', ...flags] = m[1]!.trim().split(/\s+/);
    out.push({ lang, flags, code: m[2]!, line: markdown.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** The rows of every table of a Markdown page whose header row starts with `firstHeader`, as cells (backticks kept). */
export function tableRows(markdown: string, firstHeader: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    if (!inTable) {
      inTable = cells[0]!.toLowerCase() === firstHeader.toLowerCase();
      continue;
    }
    if (/^:?-+:?$/.test(cells[0]!)) continue;
    rows.push(cells);
  }
  return rows;
}
