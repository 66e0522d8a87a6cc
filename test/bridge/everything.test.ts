import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgedClient, bridgedClient } from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';
import { type Everything, everything } from './helpers/everything.ts';

// The SDK client over stdio -> gatehouse-bridge -> Streamable HTTP -> the
// reference server-everything, with every feature the server exercises.

let server: Everything;
let bridged: BridgedClient;
const samplingPrompts: string[] = [];
let rootsAsked = 0;

beforeAll(async () => {
  await ensureBundle();
  server = await everything();
  bridged = await bridgedClient(['--url', server.url], {
    clientOptions: { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
    setup: (c) => {
      c.setRequestHandler('sampling/createMessage', async (req) => {
        const last = req.params.messages.at(-1)?.content;
        samplingPrompts.push(last && 'text' in last ? String(last.text) : '');
        return {
          model: 'test-model',
          role: 'assistant',
          content: { type: 'text', text: 'sampled by the test client' },
        };
      });
      c.setRequestHandler('elicitation/create', async () => ({
        action: 'accept',
        content: { name: 'Ada Lovelace', check: true },
      }));
      c.setRequestHandler('roots/list', async () => {
        rootsAsked++;
        return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
      });
    },
  });
});

afterAll(async () => {
  await bridged?.close();
  await server?.stop();
});

const text = (r: { content?: unknown }) =>
  (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');

describe('gatehouse-bridge against server-everything', () => {
  it('initializes with the server behind it', () => {
    expect(bridged.client.getServerVersion()?.name).toBe('mcp-servers/everything');
    expect(bridged.client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('lists and calls tools', async () => {
    const { tools } = await bridged.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'echo',
        'get-sum',
        'trigger-sampling-request',
        'trigger-elicitation-request',
        'get-roots-list',
      ]),
    );
    expect(text(await bridged.client.callTool({ name: 'echo', arguments: { message: 'through the bridge ✓' } }))).toBe(
      'Echo: through the bridge ✓',
    );
    expect(text(await bridged.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }))).toContain('42');
  });

  it('lists and reads resources and templates', async () => {
    const { resources } = await bridged.client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const first = resources[0]!;
    const read = await bridged.client.readResource({ uri: first.uri });
    expect(read.contents[0]?.uri).toBe(first.uri);
    const { resourceTemplates } = await bridged.client.listResourceTemplates();
    expect(resourceTemplates.length).toBeGreaterThan(0);
  });

  it('lists and gets prompts with arguments', async () => {
    const { prompts } = await bridged.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
    const got = await bridged.client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon', state: 'PT' } });
    expect(JSON.stringify(got.messages)).toContain('Lisbon');
  });

  it('passes progress notifications through while a tool runs', async () => {
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await bridged.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      { onprogress: (p) => progress.push({ progress: p.progress, total: p.total }) },
    );
    expect(text(result)).toContain('Long running operation completed');
    // The last one races the result inside the SDK client (typescript-sdk#2580: a notification is
    // handled a microtask after a response read in the same chunk); the bridge spaces them out,
    // which wins the race unless the client process is very busy.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([1, 2, 3].slice(0, progress.length).map((n) => ({ progress: n, total: 3 })));
  });

  it('carries a sampling request from the server to the client and the answer back', async () => {
    const result = await bridged.client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'say hi', maxTokens: 10 },
    });
    expect(samplingPrompts.at(-1)).toContain('say hi');
    expect(text(result)).toContain('sampled by the test client');
  });

  it('carries an elicitation round trip', async () => {
    const result = await bridged.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(text(result)).toContain('Name: Ada Lovelace');
    expect(text(result)).toContain('Agreed to terms: true');
  });

  it('delivers server-initiated requests on the GET stream (roots/list after initialize)', async () => {
    // The server asks for roots on its own ~350 ms after initialization, on the standalone SSE stream.
    await expect.poll(() => rootsAsked, { timeout: 5000 }).toBeGreaterThan(0);
    const result = await bridged.client.callTool({ name: 'get-roots-list', arguments: {} });
    expect(text(result)).toContain('file:///work/project');
  });

  it('answers ping and keeps stdout for protocol only', async () => {
    await expect(bridged.client.ping()).resolves.toBeDefined();
    // Anything non-protocol on stdout would have broken the client's parser by now; stderr holds no errors.
    expect(bridged.stderr()).not.toMatch(/error/i);
  });
});
