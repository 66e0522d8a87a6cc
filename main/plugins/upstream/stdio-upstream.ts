import type { Transport } from '@modelcontextprotocol/client';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { loadedClientSdk, stdioSdk, type ClientSdk } from './client-sdk.ts';
import type { StdioLaunch } from './sandbox/confinement.ts';
import type { LineRing } from '../../lib/line-ring.ts';
import type { Logger } from '../../lib/logger.ts';
import type { StoredTransport } from './upstream-data.ts';
import { GroupStdioTransport } from './stdio-transport.ts';
import { warnOversize, type TransportSpec, type UpstreamTransport } from './upstream-transport.ts';

type Stdio = Extract<StoredTransport, { kind: 'stdio' }>;

/**
 * A stdio upstream: a long-lived process spawned with only its configured environment, through the sandbox when
 * it has one (sandbox/confinement.ts), its stderr kept in the connection's ring and quoted when a start fails.
 */
export class StdioUpstream implements UpstreamTransport {
  readonly closesOnLoss = false;
  /** the running live start's helpers (its proxy), ended with the process */
  private launch: StdioLaunch | null = null;

  constructor(
    private readonly spec: TransportSpec,
    private readonly t: Stdio,
    /** the connection's kept stderr lines */
    private readonly stderr: LineRing,
    private readonly log: Logger,
  ) {}

  clientOptions(): Record<string, never> {
    return {};
  }

  connectOptions(): Record<string, never> {
    return {};
  }

  connected(): void {}

  async openLive(sdk: ClientSdk, attempt: LineRing): Promise<Transport> {
    await this.endLive();
    const launch = await this.start();
    this.launch = launch;
    return this.spawn(sdk, launch, (text) => {
      this.stderr.write(text);
      attempt.write(text);
      const note = launch?.annotate(text);
      if (note) this.stderr.write(`${note}\n`);
    });
  }

  async openProbe(sdk: ClientSdk): Promise<{ transport: Transport; close(): Promise<void> }> {
    const launch = await this.start();
    return { transport: await this.spawn(sdk, launch, null), close: async () => void (await launch?.close()) };
  }

  async endLive(): Promise<void> {
    const l = this.launch;
    this.launch = null;
    await l?.close();
  }

  annotate(text: string): string | null {
    return this.launch?.annotate(text) ?? null;
  }

  ended(scrub: (text: string) => string): string {
    const last = this.stderr.snapshot().at(-1);
    return `the process exited${last ? ` (last stderr line: ${scrub(last).slice(0, 300)})` : ''}`;
  }

  /**
   * Why a connect failed, in the process's own words: a spawn error is named (`spawn foo ENOENT` is "command not
   * found: foo"), a process that ended before answering says so instead of the SDK's bare "Connection closed", and
   * what it wrote to stderr meanwhile is quoted.
   */
  async startFailure(e: unknown, transport: Transport, attempt: LineRing): Promise<string> {
    const raw = e instanceof Error ? e.message : String(e);
    const { command } = this.t;
    const code = (e as NodeJS.ErrnoException | null)?.code;
    const spawnFailed = typeof code === 'string' && /^spawn /.test(raw);
    let text = raw;
    if (spawnFailed && code === 'ENOENT') text = `command not found: ${command} (${raw})`;
    else if (spawnFailed && code === 'EACCES') text = `command not executable: ${command} (${raw})`;
    else if (isConnectionClosed(e)) {
      await stderrEnded(transport);
      text = `the process exited before it answered (${raw})`;
    }
    const lines = attempt.snapshot().filter((l) => l.trim());
    return lines.length ? `${text}; its stderr: ${lines.slice(-5).join(' | ')}` : text;
  }

  /** Through the sandbox (or refused, when it cannot start: never unconfined unless a person chose so). */
  private start(): Promise<StdioLaunch | null> {
    const t = this.t;
    return this.spec.launcher ? this.spec.launcher.launch(t.command, t.args, this.env()) : Promise.resolve(null);
  }

  /** Only the configured variables, over the SDK's minimal set (HOME, LOGNAME, PATH, SHELL, TERM, USER): nothing of Gatehouse's own. */
  private env(): Record<string, string> {
    return Object.fromEntries(this.spec.secrets.env.map((v) => [v.name, v.value]));
  }

  private async spawn(
    sdk: ClientSdk,
    launch: StdioLaunch | null,
    onStderr: ((text: string) => void) | null,
  ): Promise<Transport> {
    const t = this.t;
    const run = launch ?? { command: t.command, args: t.args, env: this.env() };
    const transport = new GroupStdioTransport(
      { command: run.command, args: run.args, env: run.env, ...(launch?.cwd ? { cwd: launch.cwd } : {}) },
      { client: sdk, stdio: await stdioSdk() },
      warnOversize(this.log, this.spec.id),
    );
    transport.stderr.on('data', (chunk: Buffer) => onStderr?.(chunk.toString('utf8')));
    return transport;
  }
}

function isConnectionClosed(e: unknown): boolean {
  const sdk = loadedClientSdk();
  return !!sdk && e instanceof sdk.SdkError && e.code === sdk.SdkErrorCode.ConnectionClosed;
}

/** The process is gone: its stderr ends once the last of it is read (bounded, should it linger in a child of its own). */
async function stderrEnded(transport: Transport): Promise<void> {
  const stderr = (transport as GroupStdioTransport).stderr as Readable | null;
  if (stderr && !stderr.readableEnded && !stderr.destroyed)
    await Promise.race([once(stderr, 'end'), once(stderr, 'close'), delay(1000, undefined, { ref: false })]).catch(
      () => undefined,
    );
}
