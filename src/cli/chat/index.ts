// `pgmcp chat`: the terminal client. Remote mode talks to a pgmcp's /api over HTTP with a bearer
// token; local mode starts the pgmcp HTTP app in this process on a loopback port and then talks
// to it the same way, so there is one client code path. Loaded only when the command runs.
import { answerOf } from '../../core/error-table.js';
import { isAppError } from '../../core/errors.js';
import { configFrom, type CommonOptions } from '../commands.js';
import { readPassword } from '../password-input.js';
import { ChatClientError, createApiClient, type ApiClient } from './api-client.js';
import type { ChatContext } from './context.js';
import { historyFile } from './history-file.js';
import { startLocalServer, type LocalServer } from './local-server.js';
import { runOnce } from './once.js';
import { createMessagePrinter } from './render/message-printer.js';
import { runRepl } from './repl.js';
import { createChatSession, oneLine } from './session.js';
import { createTerminal } from './terminal.js';

export interface ChatOptions extends Pick<
  CommonOptions,
  'config' | 'database' | 'dataDir' | 'allowWrites' | 'logLevel'
> {
  url?: string;
  token?: string;
  user?: string;
  provider?: string;
  model?: string;
  use?: string;
  once?: string;
  json?: boolean;
  yes?: boolean;
}

/** Exit codes (docs/chat.md): 0 done, 1 failed, 2 bad usage, 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

class UsageError extends Error {}

function checkUsage(options: ChatOptions): void {
  if (options.url !== undefined) {
    if (!/^https?:\/\/[^/]/i.test(options.url)) {
      throw new UsageError(`--url must be an http:// or https:// address, not ${options.url}`);
    }
    if (options.database !== undefined || options.dataDir !== undefined) {
      throw new UsageError(
        '--url talks to a running pgmcp; --database and --data-dir are for local mode',
      );
    }
  } else if (options.token !== undefined || options.user !== undefined) {
    throw new UsageError('--token and --user sign in to a server given with --url');
  }
  if (options.token !== undefined && options.user !== undefined) {
    throw new UsageError('give --token or --user, not both');
  }
  if (options.json && options.once === undefined) {
    throw new UsageError('--json goes with --once "question"');
  }
  if (options.once !== undefined && options.once.trim() === '') {
    throw new UsageError('--once needs a question');
  }
}

export async function runChat(options: ChatOptions): Promise<number> {
  const once = options.once !== undefined;
  const term = createTerminal({
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    quiet: once,
  });
  let local: LocalServer | null = null;
  try {
    checkUsage(options);
    let api: ApiClient;
    if (options.url !== undefined) {
      const token = options.token ?? process.env.PGMCP_TOKEN ?? null;
      api = createApiClient(options.url, token === '' ? null : token);
      if (options.user !== undefined) await logIn(api, options.user);
    } else {
      term.spinner.start('starting pgmcp…');
      local = await startLocalServer(
        await configFrom({
          config: options.config,
          database: options.database,
          dataDir: options.dataDir,
          allowWrites: options.allowWrites,
          logLevel: options.logLevel ?? (process.env.PGMCP_LOG_LEVEL as never) ?? 'warn',
        }),
      );
      term.spinner.stop();
      api = createApiClient(local.baseUrl, null);
    }
    const info = await api.get<{ authenticated?: boolean; username?: string }>('/api/user/info');
    if (api.hasToken() && !info.authenticated) {
      throw new ChatClientError('the server did not accept the token');
    }
    if (local === null && !info.authenticated) await checkAnonymousWelcome(api);
    if (options.use) await api.send('POST', '/api/databases/select', { name: options.use });

    const printer = createMessagePrinter({
      write: options.json ? () => undefined : term.write,
      width: term.width,
      style: term.style,
    });
    const session = createChatSession({
      api,
      settings: {
        ...(options.provider ? { provider: options.provider } : {}),
        ...(options.model ? { model: options.model } : {}),
        ...(options.use ? { database: options.use } : {}),
      },
      onChange: (messages) => {
        const index = messages.length - 1;
        const last = messages[index];
        if (!last) return;
        printer.update(last, index);
        if (session.busy) term.spinner.start(printer.activity(last));
      },
    });
    const interactive = !once && process.stdin.isTTY === true;
    const context: ChatContext = {
      api,
      session,
      printer,
      term,
      mode: local ? 'local' : 'remote',
      historyFile: interactive ? historyFile(process.env) : null,
      tableNames: [],
      listed: [],
      quit: () => undefined,
    };
    if (once)
      return await runOnce(options.once!, context, { json: !!options.json, yes: !!options.yes });

    void loadTableNames(api).then((names) => context.tableNames.push(...names));
    const where = local ? `${local.database} (started here)` : api.baseUrl;
    term.print(
      `${term.style.bold('pgmcp chat')} ${term.style.dim(`· ${where}${info.authenticated ? ` · ${info.username}` : ''}`)}`,
    );
    term.print(
      term.style.dim(
        'Ask in plain words; /help lists commands; Ctrl-C stops an answer, Ctrl-D leaves.',
      ),
    );
    return await runRepl(context, {
      stdin: process.stdin,
      stdout: process.stdout,
      databases: async () =>
        (await api.get<{ databases: { name: string }[] }>('/api/databases')).databases.map(
          (d) => d.name,
        ),
    });
  } catch (error) {
    term.spinner.stop();
    if (error instanceof UsageError) {
      term.error(error.message);
      return EXIT.usage;
    }
    if (isAppError(error) && answerOf(error).exit === EXIT.usage) {
      term.error(error.message);
      return EXIT.usage;
    }
    term.error(oneLine(error));
    return EXIT.failed;
  } finally {
    await local?.close().catch(() => undefined);
  }
}

/** A server that requires authentication is said so at once, with how to give a credential. */
async function checkAnonymousWelcome(api: ApiClient): Promise<void> {
  try {
    await api.get('/api/databases');
  } catch (error) {
    if (error instanceof ChatClientError && error.status === 401) {
      throw new ChatClientError(
        `${error.message} Pass --token (or set PGMCP_TOKEN), or --user NAME to log in.`,
        401,
      );
    }
    throw error;
  }
}

async function logIn(api: ApiClient, username: string): Promise<void> {
  const password = await readPassword(`Password for ${username}: `);
  const answer = await api.send<{ session_token: string }>('POST', '/api/login', {
    username,
    password,
  });
  api.setToken(answer.session_token);
}

/** Table names for tab completion; none when the server does not list them. */
async function loadTableNames(api: ApiClient): Promise<string[]> {
  try {
    const answer = await api.get<{ tables?: unknown[] }>('/api/tables');
    return (answer.tables ?? []).filter((t): t is string => typeof t === 'string');
  } catch {
    return [];
  }
}
