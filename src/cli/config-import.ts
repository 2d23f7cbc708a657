// `pgmcp config import --from pgedge|npgsqlrest FILE [--out FILE]`: the pgmcp config on stdout
// (or in --out), and on stderr every setting of the source that did not carry over, and why.
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { AppError, ErrorCodes } from '../core/errors.js';
import { importConfig, IMPORT_SOURCES, type ImportSource } from '../config/import.js';

export interface ImportOptions {
  from: string;
  out?: string;
}

export function configImport(file: string, options: ImportOptions): number {
  if (!(IMPORT_SOURCES as readonly string[]).includes(options.from)) {
    throw new AppError(
      ErrorCodes.CONFIG_IMPORT_FAILED,
      `--from must be one of ${IMPORT_SOURCES.join(', ')} (got ${options.from})`,
      { category: 'config' },
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AppError(
      ErrorCodes.CONFIG_IMPORT_FAILED,
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        category: 'config',
      },
    );
  }
  const { config, unmapped } = importConfig(options.from as ImportSource, text, file);
  const yaml =
    `# pgmcp configuration imported from ${options.from} (${file}) by pgmcp config import.\n` +
    `# Every key is explained in docs/configuration.md; what did not carry over was listed on stderr.\n` +
    stringify(config);
  if (options.out) writeFileSync(options.out, yaml, { mode: 0o600 });
  else process.stdout.write(yaml);
  for (const { key, why } of unmapped) process.stderr.write(`not imported: ${key}: ${why}\n`);
  if (unmapped.length === 0) process.stderr.write('every setting was imported\n');
  return 0;
}
