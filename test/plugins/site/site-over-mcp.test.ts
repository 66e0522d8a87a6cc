import type { z } from 'zod';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { StagedResponse } from '../../../main/contract/staged.ts';
import type { WriteTool } from '../../../main/core/calls/tool.ts';
import { connectClient, startTestService } from '../../helpers/service.ts';
import { aiSource, TaggingProvider } from './site-fixture.ts';

/**
 * The site plugin behind the real gateway: real HTTP on 127.0.0.1, the real
 * SDK client, the real staging layer and the real site.json on disk.
 */

let svc: Awaited<ReturnType<typeof startTestService>>;
let client: Client;
const provider = new TaggingProvider();

beforeAll(async () => {
  svc = await startTestService({ ai: aiSource(provider) });
  client = await connectClient(svc.mcpUrl, (await svc.createToken({ label: 'site test' })).token);
});
afterAll(async () => {
  await client?.close();
  await svc?.cleanup();
});

const siteFile = () => readFile(join(svc.dataDir, 'site.json'), 'utf8');
/** What the console's Approve button does. */
const confirm = (id: string) => svc.dispatch('staged.confirm', { id });

describe('site tools over MCP', () => {
  it('stages pages_update, changes nothing until confirmed, then applies exactly the preview', async () => {
    const before = await siteFile();
    const res = await client.callTool({
      name: 'pages_update',
      arguments: {
        id: 2,
        seo_description:
          'Two friends, a second-hand roaster and a railway arch in Bristol: the story of Northbank Coffee Roasters and how we buy and roast.',
      },
    });
    expect(res.isError).toBeFalsy();
    const staged = res.structuredContent as StagedResponse;
    expect(staged.status).toBe('pending_approval');
    expect(staged.preview.summary).toBe("Update page 'About us' (#2): seo_description");
    expect(await siteFile()).toBe(before);

    const r = await confirm(staged.staged_id);
    expect(r.ok).toBe(true);
    const page = (await client.callTool({ name: 'pages_get', arguments: { id: 2 } })).structuredContent as {
      page: { seo_description: string; version: number };
    };
    expect(page.page).toMatchObject({ seo_description: staged.preview.changes[0]!.after, version: 2 });
    expect(await siteFile()).not.toBe(before);
  });

  it('refuses to confirm a preview made stale by a later change', async () => {
    const first = (await client.callTool({ name: 'pages_update', arguments: { id: 3, title: 'Coffee beans' } }))
      .structuredContent as StagedResponse;
    const second = (await client.callTool({ name: 'pages_update', arguments: { id: 3, excerpt: 'Roasted to order.' } }))
      .structuredContent as StagedResponse;
    expect((await confirm(second.staged_id)).ok).toBe(true);
    const r = await confirm(first.staged_id);
    expect(r).toMatchObject({ ok: false, code: 'stale_preview' });
    const page = (await client.callTool({ name: 'pages_get', arguments: { id: 3 } })).structuredContent as {
      page: { title: string };
    };
    expect(page.page.title).toBe('Our coffees');
  });

  it('reports a tool error as an MCP error result with its code', async () => {
    const res = await client.callTool({ name: 'pages_update', arguments: { id: 999, title: 'Nope' } });
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res)).toContain('not_found');
  });

  it('runs the SEO tools and serves the page index resource', async () => {
    const seo = await client.callTool({ name: 'seo_analyze_page', arguments: { slug: 'light-vs-dark-roast' } });
    expect((seo.structuredContent as { findings: { id: string }[] }).findings.map((f) => f.id)).toContain(
      'meta_description_length',
    );
    const ideas = await client.callTool({ name: 'seo_keyword_ideas', arguments: { limit: 5 } });
    expect((ideas.structuredContent as { ideas: unknown[] }).ideas).toHaveLength(5);
    const index = await client.readResource({ uri: 'gatehouse://site/pages' });
    expect(JSON.parse((index.contents[0] as { text: string }).text).total).toBeGreaterThanOrEqual(8);
  });

  it('stages a translation through the real staging layer and applies it on confirm', async () => {
    // verto.translate is a pro feature, so the free local policy refuses it over MCP...
    const refused = await client.callTool({ name: 'translate_page', arguments: { id: 6, target_language: 'de' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused)).toContain('entitlement_required');
    // ...and its description says exactly that, and what else it needs, in the order it is checked.
    const described = (await client.listTools()).tools.find((t) => t.name === 'translate_page')!.description!;
    for (const needed of [
      'verto.translate',
      'entitlement_required',
      'required_plan',
      'use_ai',
      'edit_pages',
      'provider_unavailable',
    ])
      expect(described).toContain(needed);
    expect(described.indexOf('entitlement_required')).toBeLessThan(described.indexOf('provider_unavailable'));
    // ...so stage it the way the pipeline would once entitled, with the admin's own context
    const gw = svc.core;
    const admin = gw.users.list().find((u) => u.role === 'administrator')!;
    const tool = gw.registry.get('translate_page') as WriteTool;
    const ctx = {
      user: admin,
      capabilities: new Set(['read', 'edit_pages', 'use_ai'] as const),
      token: null,
      request_id: 'req_t',
      client: 'test',
    };
    const before = await siteFile();
    const staged = await gw.staging.stage(
      tool,
      (tool.input as z.ZodObject).parse({ id: 6, target_language: 'de' }),
      ctx,
    );
    expect(staged.preview.summary).toMatch(
      /^Translate page 'Light vs dark roast: what actually changes' \(#6\) into German/,
    );
    expect(await siteFile()).toBe(before);
    expect((await confirm(staged.staged_id)).ok).toBe(true);
    const created = JSON.parse(await siteFile()).pages.find(
      (p: { language: string; translations: Record<string, number> }) => p.language === 'de' && p.translations.en === 6,
    );
    expect(created).toMatchObject({ status: 'draft', title: '[de] LIGHT vs DARK ROAST: WHAT ACTUALLY CHANGES' });
    // usage events reached the local sink: the translation's AI tokens, and the confirmed write
    const usage = gw.stats.snapshot().usage;
    expect(usage['ai.generation.completed']?.['verto.translate']).toMatchObject({
      events: expect.any(Number),
      tokens_input: expect.any(Number),
      tokens_output: expect.any(Number),
    });
    expect(usage['ai.generation.completed']!['verto.translate']!.tokens_input).toBeGreaterThan(0);
    // reported, and no second mcp_action: the write's one action was its tool call
    expect(usage['mcp.write.confirmed']?.['verto.translate']).toMatchObject({ events: 1, units: 0 });
  });
});
