import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Client, type ClientOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { clientEntry } from '../../../main/contract/client-config.ts';
import { BIN } from './bundle.ts';

// Launched the way `gatehouse-bridge config` writes it into a client's config.
const launch = (args: string[]) => {
  const { entry } = clientEntry(
    'cursor',
    { command: process.execPath, args: [BIN], platform: process.platform },
    { kind: 'none' },
    args,
  );
  return { command: entry.command as string, args: entry.args as string[] };
};

/**
 * The real SDK client talking to the real bin over stdio, as an MCP client
 * application would start it.
 */

export interface BridgedClient {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
  pid: number;
  close(): Promise<void>;
}

export async function bridgedClient(
  args: string[],
  opts: {
    env?: Record<string, string>;
    clientOptions?: ClientOptions;
    setup?: (c: Client) => void;
    connect?: boolean;
  } = {},
): Promise<BridgedClient> {
  const transport = new StdioClientTransport({
    ...launch(args),
    env: { ...(process.env as Record<string, string>), ...opts.env },
    stderr: 'pipe',
  });
  let err = '';
  (transport.stderr as Readable).on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'bridge-test', version: '1.0.0' }, opts.clientOptions ?? { capabilities: {} });
  opts.setup?.(client);
  if (opts.connect !== false) await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => err,
    get pid() {
      return transport.pid ?? -1;
    },
    close: () => client.close(),
  };
}

/** The bin as a bare child process, for exit codes and raw stdio. */
export interface RawBridge {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  send(message: unknown): void;
  /** Resolves with the first stdout line that parses to a message with this id. */
  reply(id: number | string, timeoutMs?: number): Promise<Record<string, unknown>>;
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function rawBridge(args: string[], env: Record<string, string | undefined> = {}): RawBridge {
  const { command, args: argv } = launch(args);
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    send: (m) => child.stdin!.write(`${JSON.stringify(m)}\n`),
    reply: (id, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const look = () => {
          for (const line of out.split('\n')) {
            if (!line.trim()) continue;
            const msg = JSON.parse(line) as Record<string, unknown>;
            if (msg.id === id && !('method' in msg)) return resolve(msg);
          }
          if (Date.now() - started > timeoutMs)
            return reject(new Error(`no reply to ${id}; stdout: ${out}\nstderr: ${err}`));
          setTimeout(look, 20);
        };
        look();
      }),
    exit: () => exited,
  };
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
