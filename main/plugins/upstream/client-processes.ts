import { createHash } from 'node:crypto';
import type { CallContext } from '../../core/calls/tool.ts';
import { GatehouseError } from '../../core/errors.ts';
import type { Clock, TimerHandle, Timers } from '../../lib/clock.ts';
import type { UpstreamConnection } from './connection.ts';

export interface ProcessBounds {
  /** at most this many run at once */
  max: number;
  /** one without a call for this long is stopped */
  idleMs: number;
}

export interface ClientProcessesDeps {
  /** the upstream's id (in refusals) */
  id: string;
  bounds: ProcessBounds;
  /** a fresh connection (its own process, confined with its own HOME) for the client named `key` */
  make(key: string): UpstreamConnection;
  clock: Clock;
  timers: Timers;
  /** how many run changed (the console reloads) */
  changed(): void;
}

interface Running {
  connection: UpstreamConnection;
  /** its first connect, shared by the calls that arrive while it starts */
  ready: Promise<unknown>;
  /** calls in flight: a process is never stopped under one */
  busy: number;
  lastUsed: number;
  idle: TimerHandle | undefined;
}

/**
 * Which client a call belongs to: its token, or for a write a person confirms, the token that staged it
 * (applied in the process that showed the agent its state). A caller without a token (the console) is one
 * client of its own. A token id is already a safe folder name; anything else is hashed into one.
 */
export function clientKeyOf(ctx: Pick<CallContext, 'token' | 'staged_by_token'>): string {
  const raw = ctx.token?.id ?? ctx.staged_by_token ?? 'person';
  return /^[A-Za-z0-9_-]{1,64}$/.test(raw) ? raw : `h_${createHash('sha256').update(raw).digest('hex').slice(0, 24)}`;
}

/**
 * The processes of one upstream that runs one per client token (docs/upstreams.md, "One process per
 * client"): started at a client's first call, at most `max` at once (the next client is refused,
 * retryably, rather than another's process stopped under it), each stopped once idle for `idleMs`, and
 * when its token is revoked. The clock and timers are injected: tests move time instead of waiting.
 */
export class ClientProcesses {
  private readonly running = new Map<string, Running>();
  private stopped = false;

  constructor(private readonly deps: ClientProcessesDeps) {}

  /** how many run now */
  get size(): number {
    return this.running.size;
  }

  /** Whether the client named `key` has a process now. */
  has(key: string): boolean {
    return this.running.has(key);
  }

  /** Runs `fn` on this client's own process, started first when it has none (or refused past the bound). */
  async use<T>(
    ctx: Pick<CallContext, 'token' | 'staged_by_token'>,
    fn: (c: UpstreamConnection) => Promise<T>,
  ): Promise<T> {
    if (this.stopped)
      throw new GatehouseError(
        'upstream_unavailable',
        `upstream '${this.deps.id}' is stopped; nothing was sent to it`,
        {
          upstream: this.deps.id,
        },
      );
    const key = clientKeyOf(ctx);
    const r = this.running.get(key) ?? this.start(key);
    r.busy++;
    this.touch(r);
    try {
      await r.ready;
      return await fn(r.connection);
    } finally {
      r.busy--;
      this.touch(r);
    }
  }

  private start(key: string): Running {
    const { max, idleMs } = this.deps.bounds;
    if (this.running.size >= max)
      throw new GatehouseError(
        'rate_limited',
        `upstream '${this.deps.id}' runs one process per client and ${max} run now, its bound: try again once one has been idle for ${Math.round(idleMs / 1000)} s and is stopped, or raise the bound (gatehouse upstreams process ${this.deps.id} --per-client --max-processes N)`,
        { upstream: this.deps.id, max_processes: max, retry_after_s: Math.ceil(this.nextFreeInMs() / 1000) },
      );
    const connection = this.deps.make(key);
    const r: Running = {
      connection,
      ready: Promise.resolve(),
      busy: 0,
      lastUsed: this.deps.clock.now(),
      idle: undefined,
    };
    r.ready = connection.connect().catch(async (e: unknown) => {
      // A start that failed holds no place: the client's next call tries afresh.
      if (this.running.get(key) === r) this.running.delete(key);
      this.deps.changed();
      await connection.stop().catch(() => undefined);
      throw e;
    });
    this.running.set(key, r);
    this.deps.changed();
    return r;
  }

  /** The soonest an idle process would be stopped (for a refusal's retry_after_s): the bound of idle time when all are busy. */
  private nextFreeInMs(): number {
    const now = this.deps.clock.now();
    const idle = [...this.running.values()]
      .filter((r) => r.busy === 0)
      .map((r) => r.lastUsed + this.deps.bounds.idleMs - now);
    return Math.max(1000, idle.length ? Math.min(...idle) : this.deps.bounds.idleMs);
  }

  private touch(r: Running): void {
    r.lastUsed = this.deps.clock.now();
    this.deps.timers.clear(r.idle);
    r.idle = undefined;
    if (r.busy > 0) return;
    r.idle = this.deps.timers.set(() => void this.sweep(), this.deps.bounds.idleMs);
    r.idle.unref?.();
  }

  /** Stops every process idle for its time; what is due is decided by the clock, not by which timer fired. */
  async sweep(): Promise<void> {
    const now = this.deps.clock.now();
    const due = [...this.running].filter(([, r]) => r.busy === 0 && now - r.lastUsed >= this.deps.bounds.idleMs);
    await Promise.all(due.map(([key]) => this.stopFor(key)));
  }

  /** Stops the client's process (its token was revoked, or it was idle); its next call, if any, starts a fresh one. */
  async stopFor(key: string): Promise<void> {
    const r = this.running.get(key);
    if (!r) return;
    this.running.delete(key);
    this.deps.timers.clear(r.idle);
    this.deps.changed();
    await r.connection.stop().catch(() => undefined);
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.keys()].map((k) => this.stopFor(k)));
  }
}
