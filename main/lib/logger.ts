import { redact, redactFields } from './redact.ts';

/**
 * Structured logs, one line per record, to stderr unless told otherwise (the
 * bridge keeps stdout for protocol). Every record passes through redact.ts:
 * no token, admin key, bearer value or secret-named field reaches the stream,
 * even when a caller passes one by mistake. Used by the service and cloud/.
 */

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  level?: LogLevel;
  stream?: NodeJS.WritableStream;
  /** one JSON object per line instead of `time LEVEL message key=value` */
  json?: boolean;
  /** fields added to every record (e.g. {component: 'bridge'}) */
  bindings?: Record<string, unknown>;
}

export type GatehouseLogger = Logger & {
  child(bindings: Record<string, unknown>): GatehouseLogger;
  readonly level: LogLevel;
};

export function createLogger(opts: LoggerOptions = {}): GatehouseLogger {
  const level = opts.level ?? 'info';
  const stream = opts.stream ?? process.stderr;
  const threshold = LEVELS[level];
  const bindings = opts.bindings ?? {};

  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (LEVELS[lvl] < threshold) return;
    const at = new Date().toISOString();
    const safeMsg = redact(String(msg));
    const safeFields = redactFields({ ...bindings, ...fields }) as Record<string, unknown>;
    let line: string;
    if (opts.json) {
      line = JSON.stringify({ at, level: lvl, msg: safeMsg, ...safeFields });
    } else {
      const pairs = Object.entries(safeFields).map(([k, v]) => `${k}=${formatValue(v)}`);
      line = [at, lvl.toUpperCase().padEnd(5), oneLine(safeMsg), ...pairs].join(' ');
    }
    try {
      stream.write(`${line}\n`);
    } catch {
      // A closed stderr must not take the service down.
    }
  };

  return {
    level,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (more) => createLogger({ ...opts, bindings: { ...bindings, ...more } }),
  };
}

function oneLine(s: string): string {
  return s.replace(/\r?\n/g, '\\n');
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === undefined) return 'undefined';
  return JSON.stringify(v) ?? String(v);
}

/** For code paths that must log somewhere but were given no logger. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
