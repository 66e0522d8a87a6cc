import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { startWireWorld, type WireWorld } from '../../wire/helpers/wire-world.ts';
import type { PlaceOf } from '../../../main/contract/client-locations.ts';
import type { Detection } from '../../../main/plugins/upstream/sandbox/detect.ts';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import type { Clock, Timers } from '../../../main/lib/clock.ts';

/**
 * A service for the upstream tests: upstream tools are the `mcp.upstreams`
 * feature, in the free plan; by default a real reference cloud
 * gateway still licenses the real service with `pro` (so the tests see the
 * certificate's path), `license: 'free'` with a free license, `license: null`
 * not connected at all (the local free policy). Upstreams are added through
 * the admin API as the CLI would, and called through the real SDK client over MCP.
 */
// import.meta.dirname, not the URL: under jsdom (the console's tests) import.meta.url is not a file URL.
export const REPO = `${join(import.meta.dirname, '..', '..', '..')}/`;
export const EVERYTHING = `${REPO}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM = `${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const TEST_UPSTREAM = `${REPO}test/fixtures/upstream/test-upstream.mjs`;
export const HOSTILE_UPSTREAM = `${REPO}test/fixtures/upstream/hostile-upstream.mjs`;

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
export async function startUpstreamWorld(
  extra: {
    consoleDir?: string;
    oauth?: { callbackPorts?: number[]; refreshTimers?: Timers };
    dataDir?: string;
    license?: 'pro' | 'free' | null;
    clientsPlace?: PlaceOf;
    sandboxHome?: string;
    /** a machine that answers this when asked whether it can confine */
    sandboxDetect?: () => Promise<Detection>;
    /** how long each read of a write's preview may take (the desk's hang and flood tests shorten it) */
    previewReadMs?: number;
    /** the clock and timers that stop idle per-client processes (moved by hand instead of waited for) */
    processTime?: { clock: Clock; timers: Timers };
  } = {},
): Promise<UpstreamWorld> {
  const { oauth, license = 'pro', sandboxHome, sandboxDetect, previewReadMs, processTime, ...service } = extra;
  const w = await startWireWorld({
    service: {
      upstreams: {
        backoff: { baseMs: 50, maxMs: 400 },
        ...(previewReadMs ? { previewReadMs } : {}),
        ...(processTime ? { processTime } : {}),
        ...(oauth ? { oauth } : {}),
        // the sandbox tests' own HOME (with a planted key), kept from the servers like a person's
        ...(sandboxHome || sandboxDetect
          ? {
              sandbox: {
                ...(sandboxHome ? { home: sandboxHome } : {}),
                ...(sandboxDetect ? { detect: sandboxDetect } : {}),
              },
            }
          : {}),
      },
      ...service,
    },
  });
  if (license) {
    await w.admin('POST', 'cloud/connect', { url: w.proxy.url });
    const lic = await w.h.op<{ license_key: string }>('licenses.create', { plan: license });
    const activated = await w.admin('POST', 'cloud/activate', { license_key: lic.license_key });
    if (activated.status !== 200) throw new Error(`activate: ${JSON.stringify(activated.body)}`);
  }
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

export type ToolAnswer = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};
export const textOf = (r: unknown) => (r as ToolAnswer).content.map((c) => c.text ?? '').join('');

/**
 * A review body approving as a person does in the console or the CLI: each named tool or prompt (the upstream's
 * own name) bound to the hash `GET upstreams/ID` shows now, what waits or, for a hidden one, what was approved;
 * `'all'`: every one that waits. The admin API refuses unbound approvals.
 */
export async function consentTo(
  u: UpstreamWorld,
  id: string,
  what: { tools?: string[] | 'all'; prompts?: string[] | 'all' },
): Promise<{
  consent: Array<{ tool: string; hash: string }>;
  prompt_consent: Array<{ prompt: string; hash: string }>;
}> {
  const d = await u.ok<UpstreamDetail>('GET', `upstreams/${id}`);
  const pick = <P extends { pending: { hash: string } | null; hash: string | null; removed: boolean }>(
    pins: P[],
    own: (p: P) => string,
    names: string[] | 'all' | undefined,
  ) =>
    names === 'all'
      ? pins.filter((p) => p.pending && !p.removed)
      : (names ?? []).map((n) => {
          const p = pins.find((x) => own(x) === n);
          if (!p) throw new Error(`upstream ${id} has no ${n} to approve`);
          return p;
        });
  return {
    consent: pick(d.tool_list, (t) => t.tool, what.tools).map((t) => ({
      tool: t.tool,
      hash: (t.pending?.hash ?? t.hash)!,
    })),
    prompt_consent: pick(d.prompt_list, (p) => p.prompt, what.prompts).map((p) => ({
      prompt: p.prompt,
      hash: (p.pending?.hash ?? p.hash)!,
    })),
  };
}

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

/** A licensed world with the stdio test upstream (TEST_UPSTREAM) added as `id`, its journal and control files in a fresh temporary folder. */
export interface FixtureWorld {
  u: UpstreamWorld;
  /** the SDK client of the administrator's token */
  client: Client;
  dir: string;
  /** the file the fixture's writes append to (empty at start) */
  journal: string;
  /** the file that changes the fixture's `lookup` definition at run time (`{}` at start) */
  control: string;
  /** the admin API body adding the fixture as `id`; `control` also passes CONTROL_FILE */
  stdio(id: string, extra?: Record<string, unknown>, opts?: { control?: boolean }): Record<string, unknown>;
  stop(): Promise<void>;
}

/** `prefix`: the temporary folder's; `id`, `extra`, `control`: the first upstream added (see `stdio`). */
export async function startFixtureWorld(opts: {
  prefix: string;
  id: string;
  extra?: Record<string, unknown>;
  control?: boolean;
}): Promise<FixtureWorld> {
  const dir = await mkdtemp(join(tmpdir(), opts.prefix));
  const journal = join(dir, 'journal.txt');
  const control = join(dir, 'control.json');
  await writeFile(journal, '');
  await writeFile(control, '{}');
  const stdio: FixtureWorld['stdio'] = (id, extra = {}, o = {}) => ({
    id,
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [TEST_UPSTREAM],
      env: [{ name: 'JOURNAL', value: journal }, ...(o.control ? [{ name: 'CONTROL_FILE', value: control }] : [])],
      // Confined by default (docs/upstreams.md, "Confinement"): the fixture's folder is granted, as a person would.
      sandbox: { write: [dir] },
    },
    ...extra,
  });
  const u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', stdio(opts.id, opts.extra, { control: opts.control }));
  const client = await u.mcp();
  return {
    u,
    client,
    dir,
    journal,
    control,
    stdio,
    async stop() {
      await client.close();
      await u.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
