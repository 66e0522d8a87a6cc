import { z } from 'zod';
import { Server, ProtocolError } from '@modelcontextprotocol/server';
import type { Settings } from '../contract/settings.ts';
import { JSONRPC_CODES } from '../contract/errors.ts';
import type { CallContext, Tool } from '../core/tool.ts';
import { viewerOf, type Registry } from '../core/registry.ts';
import type { Pipeline } from '../core/pipeline.ts';
import { GatehouseError, toErrorShape } from '../core/errors.ts';
import { VERSION } from '../version.ts';
import { IDENTITY_URI, MANUAL_URI, operatingManual } from './manual.ts';

export interface ServerDeps {
  registry: Registry;
  pipeline: Pipeline;
  settings: () => Settings;
  siteIdentity: () => Record<string, unknown>;
}

/** JSON Schemas are derived from the zod input once per tool object. */
type ObjectSchema = { type: 'object'; [k: string]: unknown };
const schemaCache = new WeakMap<object, ObjectSchema>();
function jsonSchema(schema: z.ZodType): ObjectSchema {
  let s = schemaCache.get(schema);
  if (!s) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    s = { ...rest, type: 'object' };
    schemaCache.set(schema, s);
  }
  return s;
}

function toMcpTool(t: Tool) {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: jsonSchema(t.input),
    ...(t.output ? { outputSchema: jsonSchema(t.output) } : {}),
    annotations: { title: t.title, readOnlyHint: !t.write, ...t.annotations },
    _meta: { 'gatehouse/plugin': t.plugin, 'gatehouse/capability': t.capability, 'gatehouse/feature': t.feature, 'gatehouse/write': t.write },
  };
}

const toolError = (code: string, message: string, extra: Record<string, unknown> = {}) => ({
  content: [{ type: 'text' as const, text: `${code}: ${message}` }],
  structuredContent: { error: { code, message, ...extra } },
  isError: true,
});

/**
 * One low-level SDK server per request, bound to the caller. The low-level
 * Server (not McpServer) is used because Gatehouse owns validation, gating,
 * staging and audit in its own pipeline, and tools/list is per caller.
 */
export function buildServer(ctx: CallContext, deps: ServerDeps): Server {
  const settings = deps.settings();
  const server = new Server(
    { name: 'gatehouse', title: 'Gatehouse', version: VERSION },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, logging: {} }, instructions: operatingManual(settings.approval_mode) },
  );
  const viewer = viewerOf(ctx);

  server.setRequestHandler('tools/list', async () => ({ tools: deps.registry.visible(viewer, deps.settings()).map(toMcpTool) }));

  server.setRequestHandler('tools/call', async (request, extra) => {
    const call = { ...ctx, ...(extra.mcpReq.signal ? { signal: extra.mcpReq.signal } : {}) } as CallContext;
    try {
      const outcome = await deps.pipeline.call(request.params.name, request.params.arguments ?? {}, call);
      if (outcome.kind === 'refused') return toolError(outcome.code, outcome.message, outcome.details);
      const { structured, text } = outcome.output;
      return { content: [{ type: 'text' as const, text: text ?? JSON.stringify(structured, null, 2) }], structuredContent: structured };
    } catch (e) {
      if (e instanceof GatehouseError && e.code === 'unknown_tool') {
        throw new ProtocolError(JSONRPC_CODES.unknown_tool, e.message, { code: 'unknown_tool', request_id: ctx.request_id });
      }
      const shape = toErrorShape(e);
      return toolError(shape.code, shape.message, shape.details ?? {});
    }
  });

  server.setRequestHandler('resources/list', async () => ({
    resources: [
      { uri: MANUAL_URI, name: 'manual', title: 'Gatehouse operating manual', mimeType: 'text/markdown', description: 'How to work through this gateway: read it first.' },
      { uri: IDENTITY_URI, name: 'site-identity', title: 'Site identity', mimeType: 'application/json', description: 'The site: name, URL, languages, conventions.' },
      ...deps.registry.resources(viewer).map(({ uri, name, title, description, mimeType }) => ({ uri, name, mimeType, ...(title ? { title } : {}), ...(description ? { description } : {}) })),
    ],
  }));

  server.setRequestHandler('resources/read', async (request) => {
    const uri = request.params.uri;
    if (uri === MANUAL_URI) return { contents: [{ uri, mimeType: 'text/markdown', text: operatingManual(deps.settings().approval_mode) }] };
    if (uri === IDENTITY_URI) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(deps.siteIdentity(), null, 2) }] };
    const def = deps.registry.resources(viewer).find((r) => r.uri === uri);
    if (!def) throw new ProtocolError(-32602, `resource not found: ${uri}`, { uri });
    return { contents: [{ uri, mimeType: def.mimeType, text: await def.read(ctx) }] };
  });

  return server;
}
