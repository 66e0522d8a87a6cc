import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { z } from 'zod';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROLE_CAPABILITIES, type Role, type User } from '../../../main/contract/users.ts';
import type { AiProvider, AiProviderSource } from '../../../main/core/ports/ports.ts';
import type { Clock } from '../../../main/lib/clock.ts';
import type { CallContext, ReadTool, WriteTool } from '../../../main/core/calls/tool.ts';
import { createSitePlugin, type SitePlugin } from '../../../main/plugins/site/index.ts';
import { SiteData, emptySiteData } from '../../../main/plugins/site/site-data.ts';
import { JsonFileStore } from '../../../main/store/json-file-store.ts';
import type { UsageFacts } from '../../../main/core/calls/usage.ts';
import { silentLogger } from '../../../main/lib/logger.ts';

export const ADMIN_ID = 'usr_admin';
export const T0 = Date.parse('2026-03-02T09:00:00.000Z');

export class TestClock implements Clock {
  constructor(public t = T0) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export function ctxFor(role: Role, id = role === 'administrator' ? ADMIN_ID : `usr_${role}`): CallContext {
  const user: User = {
    id,
    login: role === 'administrator' ? 'admin' : role,
    display_name: role,
    role,
    created: new Date(T0).toISOString(),
  };
  return {
    user,
    capabilities: new Set(ROLE_CAPABILITIES[role]),
    token: null,
    request_id: `req_${role}`,
    client: 'test',
  };
}

export const HOW_TO = 'connect a license in the console (Cloud) to route AI through the Gatehouse cloud gateway';

/**
 * The AI boundary's only stand-in (no paid provider can run here): it
 * "translates" by tagging the text with the target language, deterministically,
 * and records every request so tests can check what the plugin asked for.
 */
export class TaggingProvider implements AiProvider {
  readonly id = 'test-double';
  readonly calls: { system?: string; prompt: string; max_tokens?: number }[] = [];
  fail: Error | null = null;
  generate(req: { system?: string; prompt: string; max_tokens?: number }) {
    this.calls.push(req);
    if (this.fail) return Promise.reject(this.fail);
    const lang = /into .+? \(([a-zA-Z-]+)\)/.exec(req.system ?? '')?.[1] ?? '??';
    // headings, lists and links keep their Markdown; only the words change
    const text = req.prompt
      .split(/(\]\([^)]*\))/)
      .map((part, i) => (i % 2 ? part : part.replace(/[A-Za-z][A-Za-z']{3,}/g, (w) => w.toUpperCase())))
      .join('');
    return Promise.resolve({
      text: `${text.includes('\n') ? '' : `[${lang}] `}${text}`,
      model: 'upper-1',
      tokens_input: req.prompt.length,
      tokens_output: text.length,
    });
  }
}

export function aiSource(provider: AiProvider | null): AiProviderSource {
  return { current: () => provider, howToConfigure: HOW_TO };
}

export interface SiteFixture {
  dir: string;
  file: string;
  store: JsonFileStore<SiteData>;
  clock: TestClock;
  plugin: SitePlugin;
  provider: TaggingProvider;
  /** usage the plugin reported (the translation's AI token counts) */
  usage: UsageFacts[];
  /** flip to null to simulate "no provider configured" */
  setProvider(p: AiProvider | null): void;
  /** the site's tools declare zod schemas; tests use them as such */
  read(name: string): ReadTool<z.ZodObject>;
  write(name: string): WriteTool<z.ZodObject>;
  /** the store's document and the file's bytes, to prove a preview changed nothing */
  snapshot(): Promise<{ data: string; file: string }>;
  cleanup(): Promise<void>;
}

export async function openSite(opts: { seed?: boolean; data?: SiteData } = {}): Promise<SiteFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-site-'));
  const file = join(dir, 'site.json');
  const store = await JsonFileStore.open({
    file,
    schema: SiteData,
    defaults: () => opts.data ?? emptySiteData(),
    log: silentLogger,
  });
  const clock = new TestClock();
  const provider = new TaggingProvider();
  let current: AiProvider | null = provider;
  const usage: UsageFacts[] = [];
  const plugin = createSitePlugin({
    store,
    clock,
    ai: { current: () => current, howToConfigure: HOW_TO },
    usage: { record: (f) => usage.push(f) },
    adminUserId: ADMIN_ID,
  });
  if (opts.seed !== false) await plugin.seedIfEmpty();
  const byName = (name: string) => {
    const t = plugin.tools().find((x) => x.name === name);
    if (!t) throw new Error(`no tool ${name}`);
    return t;
  };
  return {
    dir,
    file,
    store,
    clock,
    plugin,
    provider,
    usage,
    setProvider: (p) => {
      current = p;
    },
    read: (name) => byName(name) as unknown as ReadTool<z.ZodObject>,
    write: (name) => byName(name) as unknown as WriteTool<z.ZodObject>,
    snapshot: async () => ({ data: JSON.stringify(store.read()), file: await readFile(file, 'utf8') }),
    cleanup: async () => {
      await store.flush();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Run a write tool's input through its schema first, as the gateway does. */
export async function plan(site: SiteFixture, name: string, input: Record<string, unknown>, ctx: CallContext) {
  const tool = site.write(name);
  return tool.preview(tool.input.parse(input), ctx);
}

export async function run(
  site: SiteFixture,
  name: string,
  input: Record<string, unknown>,
  ctx: CallContext = ctxFor('administrator'),
) {
  const tool = site.read(name);
  const out = await tool.run(tool.input.parse(input), ctx);
  if (tool.output) (tool.output as z.ZodObject).parse(out.structured); // what MCP clients are promised
  return out.structured as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A page object with sensible defaults, for crafted SEO cases. */
export const pageOf = (over: Partial<SiteData['pages'][number]>): SiteData['pages'][number] => ({
  id: 1,
  slug: 'page',
  title: 'Page',
  content: '',
  excerpt: '',
  status: 'publish',
  seo_title: '',
  seo_description: '',
  focus_keyword: '',
  language: 'en',
  translations: {},
  author_id: ADMIN_ID,
  created: new Date(T0).toISOString(),
  modified: new Date(T0).toISOString(),
  version: 1,
  ...over,
});

export const pageById = (site: SiteFixture, id: number) => site.store.read().pages.find((p) => p.id === id);
