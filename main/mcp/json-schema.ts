import { fromJsonSchema } from '@modelcontextprotocol/server';
import type { JsonSchemaCompiler, StandardSchema } from '../core/calls/tool-schema.ts';
import { linearSchemaValidator } from '../lib/json-schema-validator.ts';
import { sdkAs } from './sdk-shapes.ts';

/**
 * JSON Schema validation for tools that declare one (remote MCP servers'
 * tools): the MCP SDK's own `fromJsonSchema` over Ajv set up as the SDK sets
 * it up (2020-12 by default, draft-07 and 2019-09 by `$schema`, formats on),
 * with `pattern` on RE2 (main/lib/json-schema-validator.ts): linear time,
 * whatever the schema says. The upstream connections' SDK client validates with the same.
 */
export const jsonSchemaCompiler: JsonSchemaCompiler = (schema) =>
  sdkAs<StandardSchema>(fromJsonSchema(schema as Parameters<typeof fromJsonSchema>[0], linearSchemaValidator));
