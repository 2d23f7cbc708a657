// Passwords for `pgmcp user add|passwd`: typed at a prompt that does not echo when stdin is a
// terminal, or read from standard input (its first line) when it is not, so scripts can pipe
// one in. Never from a flag: flags end up in shell history and in `ps`.
import { AppError, ErrorCodes } from '../core/errors.js';

export interface PasswordSource {
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

const defaultSource = (): PasswordSource => ({ stdin: process.stdin, stderr: process.stderr });

function invalid(message: string): AppError {
  return new AppError(ErrorCodes.AUTH_INVALID_INPUT, message, { category: 'input' });
}

/** Reads a new password; at a terminal it is asked twice and the two must match. */
export async function readNewPassword(username: string, source = defaultSource()): Promise<string> {
  if (!source.stdin.isTTY) return readPipedPassword(source.stdin);
  const first = await promptHidden(`New password for ${username}: `, source);
  const second = await promptHidden('Repeat it: ', source);
  if (first !== second) throw invalid('the two passwords differ; nothing was changed');
  return first;
}

/** Reads an existing password: asked once at a terminal (not echoed), else stdin's first line. */
export async function readPassword(question: string, source = defaultSource()): Promise<string> {
  if (!source.stdin.isTTY) return readPipedPassword(source.stdin);
  return promptHidden(question, source);
}

export async function readPipedPassword(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) {
    text += chunk as string;
    if (text.includes('\n')) break;
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') throw invalid('expected the password on the first line of standard input');
  return line;
}

function promptHidden(question: string, { stdin, stderr }: PasswordSource): Promise<string> {
  stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(invalid('cancelled')); // Ctrl-C
        if (char === '\u0004') return finish(value === '' ? invalid('cancelled') : undefined); // Ctrl-D
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('');
        else if (char >= ' ') value += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
