import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { BoundedLines, idAtEdges } from './bounded-lines.ts';
import type { ClientSdk, StdioSdk } from './client-sdk.ts';

/**
 * The largest message an upstream may send on stdio (an answer, a listing):
 * 16 MiB (docs/upstreams.md, "Limits"). A bigger one is refused at once as
 * its request's answer, and the process keeps running.
 */
export const MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How long a stopping process gets to leave on its own after its stdin closed, then after SIGTERM. */
export const STOP_GRACE_MS = 300;

/** The JSON-RPC error an oversized answer becomes (connection.ts maps it to a clear `upstream_error`). */
export const ANSWER_TOO_LARGE = -32050;

/**
 * Every process group this process started and has not seen end: killed on
 * the way out whatever the way (a stop that ran out of time, an uncaught
 * error, the Electron app quitting), so no upstream outlives the service.
 */
const liveGroups = new Set<number>();
let exitHook = false;
function track(pid: number): void {
  liveGroups.add(pid);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const group of liveGroups) signalGroup(group, 'SIGKILL');
  });
}

/** Process groups of upstreams still running (tests; the exit hook ends each). */
export function runningGroups(): number[] {
  return [...liveGroups];
}

const ownGroup = process.platform !== 'win32';

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(ownGroup ? -pid : pid, signal);
    return true;
  } catch {
    return false; // gone already (ESRCH)
  }
}

export interface StdioRun {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/**
 * An MCP stdio transport whose server runs in a process group of its own.
 * The SDK's transport waits 2 s after closing stdin and 2 s more after
 * SIGTERM, for the server process alone: a server that ignores both holds
 * the service's stop for 4 s, and its children outlive it. This one closes
 * stdin, then signals the whole group (SIGTERM, then SIGKILL) after
 * STOP_GRACE_MS each, and bounds what one message may weigh.
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | null = null;
  private exited: Promise<void> | null = null;
  private readonly lines: BoundedLines;
  private readonly stderrStream = new PassThrough();
  /** requests sent and not answered yet: an oversized answer without a readable id is theirs when there is one */
  private readonly open = new Set<string | number>();
  private readonly run: StdioRun;
  private readonly sdk: { client: ClientSdk; stdio: StdioSdk };
  private readonly onOversized: (bytes: number) => void;

  // Plain fields, not parameter properties: the file also runs as Node's type-stripped TypeScript (the stop test).
  constructor(
    run: StdioRun,
    sdk: { client: ClientSdk; stdio: StdioSdk },
    onOversized: (bytes: number) => void,
    maxMessageBytes = MAX_UPSTREAM_MESSAGE_BYTES,
  ) {
    this.run = run;
    this.sdk = sdk;
    this.onOversized = onOversized;
    this.lines = new BoundedLines(maxMessageBytes);
  }

  get stderr(): PassThrough {
    return this.stderrStream;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('GroupStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.run.command, this.run.args, {
        env: { ...this.sdk.stdio.getDefaultEnvironment(), ...this.run.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
        detached: ownGroup,
        ...(this.run.cwd ? { cwd: this.run.cwd } : {}),
      });
      this.child = child;
      this.exited = once(child, 'exit').then(
        () => undefined,
        () => undefined,
      );
      child.once('error', (e) => {
        reject(e);
        this.onerror?.(e);
      });
      child.once('spawn', () => {
        if (child.pid) track(child.pid);
        resolve();
      });
      child.once('exit', () => {
        // The leader is gone; what it left in its group goes too (they had their stdin closed with it).
        if (child.pid) {
          signalGroup(child.pid, 'SIGKILL');
          liveGroups.delete(child.pid);
        }
      });
      child.once('close', () => {
        this.child = null;
        this.onclose?.();
      });
      child.stdin?.on('error', (e) => this.onerror?.(e));
      child.stdout?.on('error', (e) => this.onerror?.(e));
      child.stdout?.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr?.pipe(this.stderrStream);
    });
  }

  private read(chunk: Buffer): void {
    for (const framed of this.lines.push(chunk)) {
      if (framed.kind === 'oversized') {
        this.oversized(framed.bytes, idAtEdges(framed.head, framed.tail));
        continue;
      }
      if (!framed.text.trim()) continue;
      let message: JSONRPCMessage;
      try {
        message = this.sdk.client.deserializeMessage(framed.text);
      } catch (e) {
        if (e instanceof SyntaxError) continue; // a stray line of text: not a message
        this.onerror?.(e as Error);
        continue;
      }
      const id = (message as { id?: string | number }).id;
      if (id !== undefined && !('method' in message)) this.open.delete(id);
      this.onmessage?.(message);
    }
  }

  /** An answer too big to take: its request is answered with an error now; the process is left running. */
  private oversized(bytes: number, id: string | number | null): void {
    this.onOversized(bytes);
    const owner = id !== null && this.open.has(id) ? id : this.open.size === 1 ? [...this.open][0]! : null;
    if (owner === null) {
      this.onerror?.(new Error(`an upstream message of ${bytes} bytes was dropped: more than an answer may be`));
      return;
    }
    this.open.delete(owner);
    this.onmessage?.({
      jsonrpc: '2.0',
      id: owner,
      error: {
        code: ANSWER_TOO_LARGE,
        message: `the answer was ${bytes} bytes, more than the ${MAX_UPSTREAM_MESSAGE_BYTES / 1024 / 1024} MiB an upstream answer may be; it was dropped`,
        data: { bytes, limit_bytes: MAX_UPSTREAM_MESSAGE_BYTES },
      },
    } as JSONRPCMessage);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new this.sdk.client.SdkError(this.sdk.client.SdkErrorCode.NotConnected, 'Not connected'));
        return;
      }
      const m = message as { id?: string | number; method?: string; params?: { requestId?: string | number } };
      if (m.id !== undefined && m.method !== undefined) this.open.add(m.id);
      // A cancelled request may never be answered: it no longer waits.
      if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined)
        this.open.delete(m.params.requestId);
      if (stdin.write(this.sdk.client.serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: stdin closed, then SIGTERM, then SIGKILL to its whole group, STOP_GRACE_MS apart. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    const exited = this.exited;
    const wait = () =>
      Promise.race([
        exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), STOP_GRACE_MS).unref()),
      ]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    // Nothing it sends from now on is read: a server that floods on its way out (notifications, output) would
    // otherwise keep the service busy for the whole grace and hold up its stop on a loaded machine.
    child.stdout?.removeAllListeners('data');
    child.stdout?.pause();
    if (child.exitCode === null && child.signalCode === null && !(await wait()) && child.pid) {
      signalGroup(child.pid, 'SIGTERM');
      if (!(await wait())) signalGroup(child.pid, 'SIGKILL');
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
    // A grandchild holding the pipes must not keep the service's event loop alive.
    child.stdout?.destroy();
    child.stdin?.destroy();
    child.stderr?.destroy();
  }
}
