import { fromJsonSchema } from '@modelcontextprotocol/server';
import type { JsonSchemaCompiler, StandardSchema } from '../core/calls/tool-schema.ts';

/**
 * JSON Schema validation for tools that declare one (remote MCP servers'
 * tools): the MCP SDK's own `fromJsonSchema`, backed by the Ajv it bundles
 * (2020-12 by default, draft-07 and 2019-09 by `$schema`, formats on). One
 * well-kept validator, the same one the SDK's client uses, and no second copy.
 */
export const jsonSchemaCompiler: JsonSchemaCompiler = (schema) =>
  fromJsonSchema(schema as Parameters<typeof fromJsonSchema>[0]) as unknown as StandardSchema;
