import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startService, type RunningService, type ServiceConfig } from '../../main/service.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import type { Clock, TimerHandle, Timers } from '../../main/lib/clock.ts';

/** A clock tests can move. */
export class TestClock implements Clock {
  constructor(public t = Date.now()) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

interface ManualTimer extends TimerHandle {
  at: number;
  fn: () => void;
}

/** Timers that fire only when a test moves their time on (`advance`), in the order they fall due. */
export class ManualTimers implements Timers {
  private now = 0;
  private readonly pending = new Set<ManualTimer>();
  set(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { at: this.now + ms, fn };
    this.pending.add(timer);
    return timer;
  }
  clear(timer: TimerHandle | undefined): void {
    this.pending.delete(timer as ManualTimer);
  }
  /** Moves time on by `ms`, firing each timer due by then; answers how many fired. */
  advance(ms: number): number {
    const end = this.now + ms;
    let fired = 0;
    for (;;) {
      const next = [...this.pending].filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.pending.delete(next);
      this.now = next.at;
      next.fn();
      fired++;
    }
    this.now = end;
    return fired;
  }
}

/** A real service on 127.0.0.1:0 in a temp data dir, with the file vault (the keychain has its own tests). */
export async function startTestService(
  extra: Partial<ServiceConfig> = {},
): Promise<RunningService & { cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
  const svc = await startService({ dataDir, port: 0, vault: 'file', enable: true, log: silentLogger, ...extra });
  return Object.assign(svc, {
    async cleanup() {
      await svc.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  });
}

export type Era = 'legacy' | 'modern';

/** The real SDK client over Streamable HTTP, speaking the 2025 handshake or 2026-07-28. */
export async function connectClient(mcpUrl: string, token: string, era: Era = 'legacy'): Promise<Client> {
  const client = new Client(
    { name: 'gatehouse-test', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export async function rawPost(
  url: string,
  body: string | object,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
