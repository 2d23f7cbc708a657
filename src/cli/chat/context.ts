// What the slash commands work on: the server, the conversation, the printer and the screen.
import type { ApiClient } from './api-client.js';
import type { MessagePrinter } from './render/message-printer.js';
import type { ChatSession } from './session.js';
import type { Terminal } from './terminal.js';

export interface ChatContext {
  api: ApiClient;
  session: ChatSession;
  printer: MessagePrinter;
  term: Terminal;
  /** 'local': a pgmcp started by this process; 'remote': --url. */
  mode: 'local' | 'remote';
  /** Where the line history is kept (null: none, e.g. not a terminal). */
  historyFile: string | null;
  /** Names offered by tab completion after commands that take a table (refreshed lazily). */
  tableNames: string[];
  /** The conversation ids of the last /history listing, so /history load 2 can name one. */
  listed: string[];
  /** Ends the program after the current command. */
  quit(): void;
}
