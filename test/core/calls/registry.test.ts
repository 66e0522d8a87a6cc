import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SETTINGS_DEFAULTS } from '../../../main/contract/settings.ts';
import { GatehouseError } from '../../../main/core/errors.ts';
import type { RegistryChange } from '../../../main/core/calls/registry.ts';
import { defineTool, type ResourceDef, type Tool } from '../../../main/core/calls/tool.ts';
import type { StandardSchema } from '../../../main/core/calls/tool-schema.ts';
import type { ProfileSet } from '../../../main/core/calls/registry.ts';
import { ctxForRole as ctxFor, echoTool, pipelineCore as openCore, runtimePlugin } from '../../helpers/core.ts';
import { Registry, viewerOf } from '../../../main/core/calls/registry.ts';
import { jsonSchemaCompiler } from '../../../main/mcp/json-schema.ts';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof GatehouseError ? e.code : `not a GatehouseError: ${String(e)}`;
  }
  return 'no error';
};

/** A tool as another MCP server declares it: plain JSON Schema, with a top-level $id. */
const remoteSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:remote:search',
  type: 'object',
  properties: { query: { type: 'string', minLength: 2 }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
  required: ['query'],
  additionalProperties: false,
} as const;

const remoteTool = (name = 'remote_search', plugin = 'runtime'): Tool =>
  defineTool({
    name,
    title: 'Remote search',
    description: 'a tool from another server',
    plugin,
    capability: 'read',
    feature: 'mcp.core',
    write: false,
    input: { ...remoteSchema },
    output: { type: 'object', properties: { hits: { type: 'array' } }, required: ['hits'] },
    run: async (input) => ({ structured: { hits: [input.query] } }),
  });

describe('registry: schemas', () => {
  it('lists a JSON Schema exactly as declared and validates with it', async () => {
    const core = await openCore();
    const tool = remoteTool();
    core.registry.add(runtimePlugin('runtime', [tool]).plugin);
    const entry = core.registry.entry('remote_search')!;
    expect(entry.input.json).toBe(tool.input);
    expect(entry.input.json).toEqual(remoteSchema);
    expect(await entry.input.validate({ query: 'coffee', limit: 3 })).toEqual({
      ok: true,
      value: { query: 'coffee', limit: 3 },
    });
    const bad = await entry.input.validate({ query: 'c', limit: 11, extra: 1 });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues.join(' ')).toMatch(/query|limit|additional/);
  });

  it('two JSON Schemas with the same $id keep their own validators', async () => {
    const core = await openCore();
    const strict = remoteTool('strict_one');
    const loose = defineTool({
      ...remoteTool('loose_one'),
      input: { $id: 'urn:remote:search', type: 'object', properties: { query: { type: 'number' } } },
    });
    core.registry.add(runtimePlugin('runtime', [strict, loose]).plugin);
    expect((await core.registry.entry('strict_one')!.input.validate({ query: 5 })).ok).toBe(false);
    expect((await core.registry.entry('loose_one')!.input.validate({ query: 5 })).ok).toBe(true);
  });

  it('turns a zod (Standard Schema) input into the JSON Schema clients see, and its output applies defaults', async () => {
    const core = await openCore();
    core.registry.add(runtimePlugin('runtime', [echoTool('echo')]).plugin);
    const entry = core.registry.entry('echo')!;
    expect(entry.input.json).toMatchObject({ type: 'object', properties: { text: { type: 'string', maxLength: 50 } } });
    expect(entry.input.json).not.toHaveProperty('$schema');
    expect(await entry.input.validate({})).toEqual({ ok: true, value: { text: 'hi' } });
    expect(await entry.input.validate({ text: 'x'.repeat(51) })).toMatchObject({
      ok: false,
      issues: [expect.stringMatching(/^text: /)],
    });
  });

  it('accepts any Standard Schema that converts to JSON Schema, and refuses one that cannot be listed', async () => {
    const core = await openCore();
    const json = { type: 'object', properties: { n: { type: 'number' } } };
    const custom: StandardSchema<unknown, { n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'hand-made',
        validate: (v) =>
          typeof (v as { n?: unknown }).n === 'number'
            ? { value: v as { n: number } }
            : { issues: [{ message: 'n must be a number', path: ['n'] }] },
        jsonSchema: { input: () => json, output: () => json },
      },
    };
    const opaque: StandardSchema = { '~standard': { version: 1, vendor: 'opaque', validate: (v) => ({ value: v }) } };
    const base = {
      title: 'T',
      description: 'd',
      plugin: 'runtime',
      capability: 'read' as const,
      feature: 'mcp.core',
      write: false as const,
      run: async () => ({ structured: {} }),
    };
    core.registry.add(runtimePlugin('runtime', [defineTool({ ...base, name: 'custom', input: custom })]).plugin);
    expect(core.registry.entry('custom')!.input.json).toEqual(json);
    expect(await core.registry.entry('custom')!.input.validate({ n: 'x' })).toEqual({
      ok: false,
      issues: ['n: n must be a number'],
    });
    expect(
      codeOf(() =>
        core.registry.add(
          runtimePlugin('other', [defineTool({ ...base, plugin: 'other', name: 'opaque', input: opaque })]).plugin,
        ),
      ),
    ).toBe('invalid_value');
    expect(
      codeOf(() =>
        core.registry.add(
          runtimePlugin('third', [
            defineTool({ ...base, plugin: 'third', name: 'not_object', input: { type: 'string' } as never }),
          ]).plugin,
        ),
      ),
    ).toBe('invalid_value');
    // A built zod schema that is not an object's is refused at registration too, not left to break a listing.
    for (const [name, input] of [
      ['zod_string', z.string()],
      ['zod_union', z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b') })])],
    ] as const)
      expect(
        codeOf(() =>
          core.registry.add(
            runtimePlugin(`p_${name}`, [defineTool({ ...base, plugin: `p_${name}`, name, input: input as never })])
              .plugin,
          ),
        ),
      ).toBe('invalid_value');
  });
});

describe('registry: names', () => {
  it('refuses a duplicate tool name at registration, and keeps nothing of the refused plugin', async () => {
    const core = await openCore();
    core.registry.add(runtimePlugin('first', [echoTool('shared', 'first')]).plugin);
    let error: unknown;
    try {
      core.registry.add(runtimePlugin('second', [echoTool('own', 'second'), echoTool('shared', 'second')]).plugin);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GatehouseError);
    expect((error as GatehouseError).code).toBe('conflict');
    expect((error as GatehouseError).message).toMatch(/'shared'.*already registered by plugin 'first'/);
    expect(core.registry.get('shared')?.plugin).toBe('first');
    expect(core.registry.has('own')).toBe(false);
    expect(core.registry.listPlugins().map((p) => p.id)).toEqual(['first']);
  });

  it('refuses a plugin listing one name twice, a plugin id twice, names outside the MCP rule and object member names', async () => {
    const core = await openCore();
    expect(
      codeOf(() => core.registry.add(runtimePlugin('twice', [echoTool('a', 'twice'), echoTool('a', 'twice')]).plugin)),
    ).toBe('conflict');
    core.registry.add(runtimePlugin('once').plugin);
    expect(codeOf(() => core.registry.add(runtimePlugin('once').plugin))).toBe('conflict');
    for (const name of [
      '',
      'has space',
      'x'.repeat(129),
      'ünïcode',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
    ]) {
      expect(
        codeOf(() => core.registry.add(runtimePlugin(`p${name.length}x`, [echoTool(name, `p${name.length}x`)]).plugin)),
        JSON.stringify(name),
      ).toBe('invalid_value');
    }
    expect(codeOf(() => core.registry.add(runtimePlugin('mismatch', [echoTool('mine', 'someone-else')]).plugin))).toBe(
      'invalid_value',
    );
  });
});

describe('registry: plugins at run time', () => {
  it('starts each plugin with a host, and stops them with their signal aborted', async () => {
    const core = await openCore();
    const rt = runtimePlugin();
    core.registry.add(rt.plugin);
    await core.registry.start();
    expect(rt.calls).toEqual(['start']);
    expect(rt.signal?.aborted).toBe(false);
    await core.registry.stop();
    expect(rt.calls).toEqual(['start', 'stop']);
    expect(rt.signal?.aborted).toBe(true);
  });

  it('reports a plugin whose start fails as down, and starts the others', async () => {
    const core = await openCore();
    const bad = runtimePlugin('broken');
    bad.plugin.start = async () => {
      throw new Error('upstream unreachable');
    };
    const good = runtimePlugin('fine');
    core.registry.add(bad.plugin);
    core.registry.add(good.plugin);
    const errors: string[] = [];
    await core.registry.start((id) => errors.push(id));
    expect(errors).toEqual(['broken']);
    expect(good.calls).toEqual(['start']);
    expect(core.registry.plugins().find((p) => p.id === 'broken')).toMatchObject({
      status: 'down',
      detail: 'failed to start: upstream unreachable',
    });
  });

  it('adds, changes and removes tools while running: one change event each, the index kept in step', async () => {
    const core = await openCore();
    const rt = runtimePlugin('runtime', [echoTool('first')]);
    core.registry.add(rt.plugin);
    await core.registry.start();
    const changes: RegistryChange[] = [];
    core.registry.onChange((c) => changes.push(c));
    const before = core.registry.all();
    expect(core.registry.all()).toBe(before); // no rebuild per call

    rt.host.putTool(echoTool('second'));
    expect(core.registry.get('second')?.name).toBe('second');
    expect(core.registry.all()).not.toBe(before);
    const revision = core.registry.entry('first')!.revision;
    rt.host.putTool(echoTool('first', 'runtime', { description: 'changed' }));
    expect(core.registry.get('first')?.description).toBe('changed');
    expect(core.registry.entry('first')!.revision).toBeGreaterThan(revision);
    expect(rt.host.removeTool('second')).toBe(true);
    expect(rt.host.removeTool('second')).toBe(false);
    expect(core.registry.has('second')).toBe(false);
    rt.host.setTools([echoTool('third'), echoTool('fourth')]);

    expect(changes.map(({ added, changed, removed }) => ({ added, changed, removed }))).toEqual([
      { added: ['second'], changed: [], removed: [] },
      { added: [], changed: ['first'], removed: [] },
      { added: [], changed: [], removed: ['second'] },
      { added: ['third', 'fourth'], changed: [], removed: ['first'] },
    ]);
    expect(core.registry.all().map((e) => e.tool.name)).toEqual(['third', 'fourth']);
    expect(core.registry.plugins()[0]!.tools).toBe(2);
  });

  it('refuses a running plugin a name another plugin owns, and changes nothing', async () => {
    const core = await openCore();
    core.registry.add(runtimePlugin('site', [echoTool('pages_get', 'site')]).plugin);
    const rt = runtimePlugin();
    core.registry.add(rt.plugin);
    await core.registry.start();
    const changes: RegistryChange[] = [];
    core.registry.onChange((c) => changes.push(c));
    expect(codeOf(() => rt.host.putTool(echoTool('pages_get')))).toBe('conflict');
    expect(codeOf(() => rt.host.setTools([echoTool('mine'), echoTool('pages_get')]))).toBe('conflict');
    expect(core.registry.get('pages_get')?.plugin).toBe('site');
    expect(core.registry.has('mine')).toBe(false);
    expect(changes).toEqual([]);
  });
});

describe('registry: visibility', () => {
  const settings = SETTINGS_DEFAULTS;
  const write = defineTool({
    name: 'writer',
    title: 'Writer',
    description: 'd',
    plugin: 'runtime',
    capability: 'edit_pages',
    feature: 'mcp.core',
    write: true,
    input: z.object({}),
    preview: async () => ({
      preview: { summary: 's', kind: 'arguments', changes: [] },
      payload: {},
      target: null,
      target_version: null,
    }),
    apply: async () => ({ structured: {} }),
  });

  it('hides by capability, disabled_tools and token narrowing; a hidden tool resolves like an unknown one', async () => {
    const core = await openCore();
    core.registry.add(runtimePlugin('runtime', [echoTool('reader'), write]).plugin);
    const names = (role: Parameters<typeof ctxFor>[0], scope: Parameters<typeof ctxFor>[1] = null, s = settings) =>
      core.registry.visible(viewerOf(ctxFor(role, scope)), s).map((e) => e.tool.name);
    expect(names('administrator')).toEqual(['reader', 'writer']);
    expect(names('subscriber')).toEqual(['reader']);
    expect(names('administrator', { read_only: true })).toEqual(['reader']);
    expect(names('administrator', { tools: ['writer'] })).toEqual(['writer']);
    expect(names('administrator', { plugins: ['site'] })).toEqual([]);
    expect(names('administrator', null, { ...settings, disabled_tools: ['reader'] })).toEqual(['writer']);
    expect(codeOf(() => core.registry.resolve('writer', viewerOf(ctxFor('subscriber')), settings))).toBe(
      'unknown_tool',
    );
    expect(codeOf(() => core.registry.resolve('nope', viewerOf(ctxFor('administrator')), settings))).toBe(
      'unknown_tool',
    );
  });

  it('shows a resource exactly when its tool is visible; public ones survive narrowing, others do not', async () => {
    const core = await openCore();
    const res = (uri: string, over: Partial<ResourceDef> = {}): ResourceDef => ({
      uri,
      name: uri,
      mimeType: 'text/plain',
      capability: 'read',
      read: async () => uri,
      ...over,
    });
    const plugin = runtimePlugin('runtime', [echoTool('reader')]).plugin;
    plugin.resources = () => [
      res('test://tied', { tool: 'reader' }),
      res('test://docs', { public: true }),
      res('test://data'),
      res('test://admin', { capability: 'manage_options' }),
    ];
    core.registry.add(plugin);
    const uris = (role: Parameters<typeof ctxFor>[0], scope: Parameters<typeof ctxFor>[1] = null, s = settings) =>
      core.registry.resources(viewerOf(ctxFor(role, scope)), s).map((r) => r.uri);
    expect(uris('administrator')).toEqual(['test://tied', 'test://docs', 'test://data', 'test://admin']);
    expect(uris('subscriber')).toEqual(['test://tied', 'test://docs', 'test://data']);
    expect(uris('administrator', null, { ...settings, disabled_tools: ['reader'] })).toEqual([
      'test://docs',
      'test://data',
      'test://admin',
    ]);
    expect(uris('administrator', { tools: ['other'] })).toEqual(['test://docs']);
    expect(uris('administrator', { plugins: ['site'] })).toEqual(['test://docs']);
    expect(core.registry.resources(viewerOf(ctxFor('administrator')), settings)[0]!.plugin).toBe('runtime');
  });

  it('a profile narrows to its named tools and upstreams, within the role and the scope; a missing profile leaves nothing', async () => {
    const core = await openCore();
    core.registry.add(runtimePlugin('runtime', [echoTool('reader'), write]).plugin);
    core.registry.add(runtimePlugin('second', [echoTool('second_reader', 'second')]).plugin);
    const profiles: Record<string, ProfileSet> = {
      one: { tools: ['writer'], upstreams: [] },
      whole: { tools: ['second_reader'], upstreams: ['runtime'] },
    };
    core.registry.useProfiles((name) => (Object.hasOwn(profiles, name) ? profiles[name] : undefined));
    const names = (role: Parameters<typeof ctxFor>[0], scope: Parameters<typeof ctxFor>[1]) =>
      core.registry
        .visible(viewerOf(ctxFor(role, scope)), settings)
        .map((e) => e.tool.name)
        .sort();
    expect(names('administrator', { profile: 'one' })).toEqual(['writer']);
    expect(names('administrator', { profile: 'whole' })).toEqual(['reader', 'second_reader', 'writer']);
    expect(names('subscriber', { profile: 'whole' })).toEqual(['reader', 'second_reader']);
    expect(names('administrator', { profile: 'whole', read_only: true })).toEqual(['reader', 'second_reader']);
    expect(names('administrator', { profile: 'whole', plugins: ['second'] })).toEqual(['second_reader']);
    expect(names('administrator', { profile: 'gone' })).toEqual([]);
    expect(names('administrator', { profile: '__proto__' })).toEqual([]);
    const res = (uri: string): ResourceDef => ({
      uri,
      name: uri,
      mimeType: 'text/plain',
      capability: 'read',
      read: async () => uri,
    });
    const plugin = runtimePlugin('other').plugin;
    plugin.resources = () => [res('test://other-data'), { ...res('test://other-docs'), public: true }];
    core.registry.add(plugin);
    profiles['with-other'] = { tools: [], upstreams: ['other'] };
    const uris = (profile: string) =>
      core.registry.resources(viewerOf(ctxFor('administrator', { profile })), settings).map((r) => r.uri);
    expect(uris('with-other')).toEqual(['test://other-data', 'test://other-docs']);
    expect(uris('one')).toEqual(['test://other-docs']);
  });

  it('refuses a resource URI another plugin owns', async () => {
    const core = await openCore();
    const mk = (id: string) => {
      const p = runtimePlugin(id).plugin;
      p.resources = () => [
        { uri: 'test://same', name: 'x', mimeType: 'text/plain', capability: 'read', read: async () => '' },
      ];
      return p;
    };
    core.registry.add(mk('one'));
    expect(codeOf(() => core.registry.add(mk('two')))).toBe('conflict');
  });
});

describe('registry: an upstream tool checked, registered and offered again', () => {
  const deepFreeze = <T>(v: T): T => {
    if (v && typeof v === 'object' && !Object.isFrozen(v)) {
      Object.freeze(v);
      for (const x of Object.values(v)) deepFreeze(x);
    }
    return v;
  };

  it('compiles a stored (frozen) definition once, however many Tools are made over it', async () => {
    const compiled: unknown[] = [];
    const registry = new Registry((schema) => (compiled.push(schema), jsonSchemaCompiler(schema)));
    const stored = deepFreeze({ input: { ...remoteSchema }, output: { type: 'object' as const, properties: {} } });
    const over = () => ({ ...remoteTool(), input: stored.input, output: stored.output }) as Tool;
    expect(registry.toolProblem('runtime', over())).toBeNull();
    expect(compiled).toHaveLength(2); // input and output
    const runtime = runtimePlugin('runtime', [over()]);
    registry.add(runtime.plugin);
    await registry.start();
    // A listing that changed nothing: the plugin offers a new Tool over the same definition.
    runtime.host.setTools([over()]);
    expect(compiled).toHaveLength(2);
    expect(await registry.entry('remote_search')!.input.validate({ query: 'coffee' })).toEqual({
      ok: true,
      value: { query: 'coffee' },
    });
    // Per registry: another one compiles its own.
    new Registry((schema) => (compiled.push(schema), jsonSchemaCompiler(schema))).add(
      runtimePlugin('runtime', [over()]).plugin,
    );
    expect(compiled).toHaveLength(4);
  });

  it('compiles a definition that can still change every time', () => {
    let compiles = 0;
    const registry = new Registry((schema) => (compiles++, jsonSchemaCompiler(schema)));
    const tool = remoteTool();
    expect(registry.toolProblem('runtime', tool)).toBeNull();
    registry.add(runtimePlugin('runtime', [tool]).plugin);
    expect(compiles).toBe(4);
  });
});

describe('registry: a tool that names an unknown capability', () => {
  it('is refused at registration, naming it', () => {
    const registry = new Registry(jsonSchemaCompiler);
    const tool: Tool = Object.assign(remoteTool(), { capability: 'fly' as Tool['capability'] });
    expect(registry.toolProblem('runtime', tool)).toMatch(/unknown capability 'fly'/);
    expect(codeOf(() => registry.add(runtimePlugin('runtime', [tool]).plugin))).toBe('invalid_value');
  });
});
