import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { startWireWorld, type WireWorld } from '../../wire/helpers/wire-world.ts';

/**
 * A licensed service for the upstream tests: upstream tools are the
 * `mcp.upstreams` feature (pro), so a real reference cloud gateway licenses
 * the real service first; upstreams are added through the admin API as the
 * CLI would, and called through the real SDK client over MCP.
 */
// import.meta.dirname, not the URL: under jsdom (the console's tests) import.meta.url is not a file URL.
export const REPO = `${join(import.meta.dirname, '..', '..', '..')}/`;
export const EVERYTHING = `${REPO}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM = `${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const TEST_UPSTREAM = `${REPO}test/fixtures/upstream/test-upstream.mjs`;

export interface UpstreamWorld {
  w: WireWorld;
  /** an administrator's MCP token */
  token: string;
  mcp(token?: string): Promise<Client>;
  /** an admin API call; throws with the answer when it is not ok */
  ok<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** `service`: more of the service's config (the console's end-to-end test serves a fresh build with `consoleDir`); `oauth`, `dataDir`: the sign-in tests'. */
export async function startUpstreamWorld(extra: { consoleDir?: string; oauth?: { callbackPorts?: number[] }; dataDir?: string } = {}): Promise<UpstreamWorld> {
  const { oauth, ...service } = extra;
  const w = await startWireWorld({ service: { upstreams: { backoff: { baseMs: 50, maxMs: 400 }, ...(oauth ? { oauth } : {}) }, ...service } });
  await w.admin('POST', 'cloud/connect', { url: w.proxy.url });
  const lic = await w.h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  const activated = await w.admin('POST', 'cloud/activate', { license_key: lic.license_key });
  if (activated.status !== 200) throw new Error(`activate: ${JSON.stringify(activated.body)}`);
  const token = (await w.svc.createToken({ label: 'upstream tests', user: 'admin' })).token;
  return {
    w,
    token,
    mcp: (t = token) => w.mcp(t),
    async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
      const r = await w.admin<T>(method, path, body);
      if (r.status !== 200 || !r.body.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data as T;
    },
    stop: () => w.stop(),
  };
}

export type ToolAnswer = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };
export const textOf = (r: unknown) => (r as ToolAnswer).content.map((c) => c.text ?? '').join('');

/** Polls `check` until it is truthy (or fails after `ms`). */
export async function until<T>(check: () => Promise<T> | T, ms = 10_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
