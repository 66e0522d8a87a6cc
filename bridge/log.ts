import { createWriteStream, type WriteStream } from 'node:fs';
import { Redactor } from '../main/lib/redact.ts';

/**
 * Logs for people, one line per record, on stderr (stdout belongs to the
 * protocol) and optionally appended to --log-file. Every line is redacted:
 * the secrets the bridge was given (token, header values) are masked by value,
 * and anything shaped like a secret is masked by shape (main/lib/redact.ts,
 * the service's own rules), so a secret echoed back by a server is masked too.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export { Redactor };

export interface BridgeLogger {
  readonly level: LogLevel;
  readonly redactor: Redactor;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  enabled(level: LogLevel): boolean;
  close(): Promise<void>;
}

export interface LoggerOptions {
  level: LogLevel;
  file?: string | undefined;
  /** Where lines go besides the file; stderr unless a test says otherwise. */
  sink?: (line: string) => void;
  redactor?: Redactor;
}

export function createBridgeLogger(opts: LoggerOptions): BridgeLogger {
  const redactor = opts.redactor ?? new Redactor();
  const sink = opts.sink ?? ((line: string) => process.stderr.write(line));
  let file: WriteStream | undefined;
  if (opts.file) {
    file = createWriteStream(opts.file, { flags: 'a', mode: 0o600 });
    // A log file we cannot write must not take the bridge down; say so once on stderr.
    file.on('error', (e) => {
      sink(`gatehouse-bridge error: cannot write the log file: ${redactor.apply(e.message)}\n`);
      file = undefined;
    });
  }
  const threshold = RANK[opts.level];

  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] < threshold) return;
    let line = `gatehouse-bridge ${level}: ${msg}`;
    if (fields) {
      for (const [k, v] of Object.entries(fields)) {
        if (v === undefined) continue;
        line += ` ${k}=${typeof v === 'string' ? v : safeJson(v)}`;
      }
    }
    line = `${redactor.apply(line)}\n`;
    sink(line);
    file?.write(`${new Date().toISOString()} ${line}`);
  };

  return {
    level: opts.level,
    redactor,
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    enabled: (level) => RANK[level] >= threshold,
    close: () =>
      new Promise<void>((resolve) => {
        if (!file) return resolve();
        file.end(() => resolve());
      }),
  };
}

function safeJson(v: unknown): string {
  try {
    return v instanceof Error ? v.message : JSON.stringify(v);
  } catch {
    return String(v);
  }
}
