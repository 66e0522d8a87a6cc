import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROLE_CAPABILITIES, type Role } from '../../main/contract/users.ts';
import type { TokenRecord, TokenScope } from '../../main/contract/tokens.ts';
import { defineTool, type Plugin } from '../../main/core/calls/tool.ts';
import { capabilitiesOf } from '../../main/core/identity/users.ts';
import { policyQuery, surfaceQuery } from '../../main/core/policy/policy.ts';
import { createCedarEngine, POLICY_DIR } from '../../main/policy/cedar-engine.ts';
import type { RegisteredTool } from '../../main/core/calls/registry.ts';
import { openCore } from '../helpers/core.ts';

/**
 * The shipped default policy (policy/default.cedar) decides exactly what
 * Gatehouse decided before policies: for every tool of the real registry
 * (built-in in both approval modes, the site, an upstream's read and write),
 * every role, and generated token narrowing (read-only, tools, plugins, a
 * profile or an unknown one), disabled_tools and approval_mode, Cedar's
 * `call` equals the registry's visibility rule, and `run_without_approval`
 * is never permitted (every write was staged for a person).
 */
const cedar = createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs') as typeof CedarWasm;
const ROLES = Object.keys(ROLE_CAPABILITIES) as Role[];

const upstream: Plugin = {
  id: 'files',
  title: 'Files (upstream)',
  kind: 'upstream',
  // prompts and resources of an upstream: get_prompt and read_resource
  surface: {
    capability: 'use_upstreams',
    feature: 'mcp.upstreams',
    prompts: () => [],
    resources: () => [],
    templates: () => [],
    revision: () => ({ prompts: 0, resources: 0 }),
    ownsUri: () => true,
    ownsPrompt: () => true,
    getPrompt: async () => ({}),
    readResource: async () => ({}),
  },
  tools: () => [
    defineTool({
      name: 'files__read',
      title: 'Read',
      description: 'r',
      input: z.object({ path: z.string() }),
      capability: 'read',
      feature: 'mcp.upstreams',
      plugin: 'files',
      write: false,
      run: async () => ({ structured: {} }),
    }),
    defineTool({
      name: 'files__write',
      title: 'Write',
      description: 'w',
      input: z.object({ path: z.string() }),
      capability: 'manage_options',
      feature: 'mcp.upstreams',
      plugin: 'files',
      write: true,
      preview: async () => ({
        preview: { summary: 'w', kind: 'diff', changes: [] },
        payload: {},
        target: null,
        target_version: null,
      }),
      apply: async () => ({ structured: {} }),
    }),
  ],
};

let core: Awaited<ReturnType<typeof openCore>>;
let allTools: RegisteredTool[];
const engine = createCedarEngine({ activeText: () => null });
let schema: string;

beforeAll(async () => {
  core = await openCore();
  core.registry.add(upstream);
  await core.settings.update({ approval_mode: 'agent' });
  allTools = [...core.registry.all()];
  await core.profiles.create({
    name: 'writers',
    tools: ['pages_update', 'staged_writes_confirm'],
    upstreams: ['files'],
  });
  schema = await readFile(join(POLICY_DIR, 'gatehouse.cedarschema'), 'utf8');
});

const names = () => allTools.map((t) => t.tool.name);
const subset = <T>(all: () => T[]) => fc.subarray(all()).map((xs) => [...xs]);

describe('the default policy equals the rules before policies', () => {
  it('covers the whole tool set: built-in (both modes), site, upstream reads and writes', () => {
    expect(names()).toEqual(
      expect.arrayContaining([
        'staged_writes_confirm',
        'staged_writes_discard',
        'pages_list',
        'pages_update',
        'pages_delete',
        'files__read',
        'files__write',
      ]),
    );
    expect(allTools.some((t) => t.tool.write)).toBe(true);
  });

  it('call: Cedar decides as the registry; run_without_approval: never', async () => {
    const scopeArb = fc.record({
      read_only: fc.boolean(),
      tools: fc.option(subset(names), { nil: undefined }),
      plugins: fc.option(
        subset(() => ['gatehouse', 'site', 'files']),
        { nil: undefined },
      ),
      profile: fc.option(fc.constantFrom('writers', 'gone'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        scopeArb,
        subset(names),
        fc.constantFrom('admin' as const, 'agent' as const),
        async (raw, disabled, mode) => {
          const scope: TokenScope = {
            read_only: raw.read_only,
            ...(raw.tools ? { tools: raw.tools } : {}),
            ...(raw.plugins ? { plugins: raw.plugins } : {}),
            ...(raw.profile ? { profile: raw.profile } : {}),
          };
          await core.settings.update({ approval_mode: mode, disabled_tools: disabled });
          const settings = core.settings.get();
          const registered = new Set(core.registry.all().map((t) => t.tool.name));
          for (const role of ROLES) {
            const capabilities = capabilitiesOf(role);
            const token = { id: 'tok_eq', label: 'eq', scope } as TokenRecord;
            for (const entry of allTools) {
              const today =
                registered.has(entry.tool.name) &&
                core.registry.isVisible(entry.tool, { capabilities, scope }, settings);
              const facts = { settings, profileOf: (n: string) => core.profiles.get(n), now: Date.now() };
              const caller = { user: { id: `usr_${role}`, login: role, role }, capabilities, token, client: 'eq' };
              const q = policyQuery('call', caller, entry.tool, entry.pluginKind, { args: {}, target: null }, facts);
              const call = await engine.decide(q);
              expect(
                call.decision === 'allow',
                `${role} ${entry.tool.name} ${mode} ${JSON.stringify(scope)} disabled=${disabled.join(',')}`,
              ).toBe(today);
              if (entry.tool.write)
                expect((await engine.decide({ ...q, action: 'run_without_approval' })).decision).toBe('deny');
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 60_000);

  it('get_prompt and read_resource: Cedar decides as the registry shows surfaces', async () => {
    const scopeArb = fc.record({
      read_only: fc.boolean(),
      tools: fc.option(subset(names), { nil: undefined }),
      plugins: fc.option(
        subset(() => ['gatehouse', 'site', 'files']),
        { nil: undefined },
      ),
      profile: fc.option(fc.constantFrom('writers', 'gone'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(scopeArb, fc.constantFrom('admin' as const, 'agent' as const), async (raw, mode) => {
        const scope: TokenScope = {
          read_only: raw.read_only,
          ...(raw.tools ? { tools: raw.tools } : {}),
          ...(raw.plugins ? { plugins: raw.plugins } : {}),
          ...(raw.profile ? { profile: raw.profile } : {}),
        };
        await core.settings.update({ approval_mode: mode, disabled_tools: [] });
        const facts = {
          settings: core.settings.get(),
          profileOf: (n: string) => core.profiles.get(n),
          now: Date.now(),
        };
        for (const role of ROLES) {
          const capabilities = capabilitiesOf(role);
          const token = { id: 'tok_eq', label: 'eq', scope } as TokenRecord;
          const shown = core.registry.surfaces({ capabilities, scope }).some((s) => s.plugin === 'files');
          const caller = { user: { id: `usr_${role}`, login: role, role }, capabilities, token, client: 'eq' };
          const surface = {
            plugin: 'files',
            pluginKind: 'upstream' as const,
            capability: 'use_upstreams',
            feature: 'f',
          };
          const asks = [
            surfaceQuery({ action: 'get_prompt', name: 'files__review' }, caller, surface, { topic: 'x' }, facts),
            surfaceQuery(
              { action: 'read_resource', uri: 'gatehouse-upstream://files/a.txt' },
              caller,
              surface,
              {},
              facts,
            ),
          ];
          for (const q of asks)
            expect((await engine.decide(q)).decision === 'allow', `${role} ${q.action} ${JSON.stringify(scope)}`).toBe(
              shown,
            );
        }
      }),
      { numRuns: 20 },
    );
  }, 60_000);

  it('every request the core builds is well-typed under the schema (entities and context)', async () => {
    const caller = {
      user: { id: 'usr_1', login: 'ed', role: 'editor' as Role },
      capabilities: capabilitiesOf('editor'),
      token: {
        id: 'tok_1',
        label: 'l',
        scope: { read_only: true, tools: ['pages_list'], plugins: ['site'], profile: 'writers' },
      } as TokenRecord,
      client: 'c',
    };
    for (const entry of allTools) {
      const q = policyQuery(
        'call',
        caller,
        entry.tool,
        entry.pluginKind,
        { args: { api_key: 'AKIAIOSFODNN7EXAMPLE', n: 1 }, target: 'page:1' },
        { settings: core.settings.get(), profileOf: (n) => core.profiles.get(n), now: Date.now() },
      );
      expect(cedar.checkParseEntities({ entities: q.entities as never, schema })).toEqual({ type: 'success' });
      expect(
        cedar.checkParseContext({ context: q.context as never, schema, action: { type: 'Action', id: 'call' } }),
      ).toEqual({ type: 'success' });
      expect(q.context.secret_kinds.length).toBeGreaterThan(0);
    }
    const facts = { settings: core.settings.get(), profileOf: (n: string) => core.profiles.get(n), now: Date.now() };
    const surface = { plugin: 'files', pluginKind: 'upstream' as const, capability: 'use_upstreams', feature: 'f' };
    for (const q of [
      surfaceQuery(
        { action: 'get_prompt', name: 'files__p' },
        caller,
        surface,
        { api_key: 'AKIAIOSFODNN7EXAMPLE' },
        facts,
      ),
      surfaceQuery({ action: 'read_resource', uri: 'gatehouse-upstream://files/x' }, caller, surface, {}, facts),
    ]) {
      expect(cedar.checkParseEntities({ entities: q.entities as never, schema })).toEqual({ type: 'success' });
      expect(
        cedar.checkParseContext({ context: q.context as never, schema, action: { type: 'Action', id: q.action } }),
      ).toEqual({ type: 'success' });
    }
  });
});
