/**
 * An attacker's read of the local service, the parts approval-attacks and
 * denial-of-service do not walk: the notification channels a token can hold
 * open (2026-07-28 `subscriptions/listen` and the 2025 GET stream), what
 * revoking a token does to them, and what an agent's strings do to the
 * approval console's preview. Each against a real service on 127.0.0.1:0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.ts';
import { MAX_STREAMS_PER_TOKEN } from '../../main/mcp/list-changed.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  svc = await startTestService();
  await svc.dispatch('users.add', { login: 'sub', role: 'subscriber' });
});
afterAll(async () => svc?.cleanup());

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** An open notification channel: its HTTP status, whether the server ended it, and how to close it. */
interface Channel {
  status: number;
  ended(): boolean;
  close(): void;
}

async function channel(res: Promise<Response>, ctrl: AbortController): Promise<Channel> {
  // a stream the server ends before its answer began is a connection it closed: ended, with no status
  const r = await res.catch(() => null);
  if (!r) return { status: 0, ended: () => true, close: () => ctrl.abort() };
  let ended = false;
  void (async () => {
    try {
      const reader = r.body!.getReader();
      for (;;) if ((await reader.read()).done) break;
    } catch {
      // aborted by us, or cut by the server
    }
    ended = true;
  })();
  return { status: r.status, ended: () => ended, close: () => ctrl.abort() };
}

/** A 2026-07-28 `subscriptions/listen` stream. */
function listen(token: string): Promise<Channel> {
  const ctrl = new AbortController();
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true, resourcesListChanged: true }, _meta: META },
  };
  return channel(
    fetch(svc.mcpUrl, {
      method: 'POST',
      signal: ctrl.signal,
      body: JSON.stringify(body),
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'subscriptions/listen',
      },
    }),
    ctrl,
  );
}

/** A 2025-era GET stream. */
function getStream(token: string): Promise<Channel> {
  const ctrl = new AbortController();
  return channel(
    fetch(svc.mcpUrl, {
      signal: ctrl.signal,
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    }),
    ctrl,
  );
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('notification channels: what one token can hold open', () => {
  it('a subscriber opening 40 subscriptions/listen streams at once holds at most the per-token bound', async () => {
    const { token } = await svc.createToken({ label: 'listener', user: 'sub' });
    const streams = await Promise.all(Array.from({ length: 40 }, () => listen(token)));
    try {
      expect(streams.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(MAX_STREAMS_PER_TOKEN);
      // each connection held open is one the service cannot give another client (it caps them at 256)
      await until('the surplus streams ended', () => streams.filter((s) => !s.ended()).length <= MAX_STREAMS_PER_TOKEN);
      expect(svc.notificationChannels()).toBeLessThanOrEqual(MAX_STREAMS_PER_TOKEN);
    } finally {
      for (const s of streams) s.close();
    }
    await until('every channel gone', () => svc.notificationChannels() === 0);
  });

  it('listen and GET streams of one token share the bound, opened in any order', async () => {
    const { token } = await svc.createToken({ label: 'mixed', user: 'sub' });
    const streams = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? listen(token) : getStream(token))));
    try {
      await until('the surplus streams ended', () => streams.filter((s) => !s.ended()).length <= MAX_STREAMS_PER_TOKEN);
      expect(svc.notificationChannels()).toBeLessThanOrEqual(MAX_STREAMS_PER_TOKEN);
    } finally {
      for (const s of streams) s.close();
    }
    await until('every channel gone', () => svc.notificationChannels() === 0);
  });

  it('revoking a token ends its streams at once, without waiting for some other change', async () => {
    const created = await svc.createToken({ label: 'soon revoked', user: 'sub' });
    const streams = [await getStream(created.token), await listen(created.token)];
    await until('both channels open', () => svc.notificationChannels() === 2);
    await svc.revokeToken(created.record.id);
    // nothing else happens: no settings change, no plugin change
    await until('both streams ended', () => streams.every((s) => s.ended()));
    expect(svc.notificationChannels()).toBe(0);
  });

  it('a user demoted while its client listens is told its tools changed', async () => {
    await svc.dispatch('users.add', { login: 'ed', role: 'editor' });
    const { token } = await svc.createToken({ label: 'editor', user: 'ed' });
    const ctrl = new AbortController();
    const res = await fetch(svc.mcpUrl, {
      signal: ctrl.signal,
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    });
    let text = '';
    void (async () => {
      try {
        const reader = res.body!.getReader();
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          text += new TextDecoder().decode(r.value);
        }
      } catch {
        // closed by the test
      }
    })();
    try {
      await until('the channel open', () => svc.notificationChannels() === 1);
      await svc.dispatch('users.setRole', { login: 'ed', role: 'subscriber' });
      // the write tools are gone from its list: without the notice its client would offer them until its next tools/list
      await until('the notice', () => text.includes('notifications/tools/list_changed'));
    } finally {
      ctrl.abort();
    }
  });
});
