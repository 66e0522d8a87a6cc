import { isUnbuiltSchema } from '../../contract/lazy-schema.ts';

/**
 * Tool input and output schemas: any Standard Schema (standardschema.dev;
 * zod v4, ArkType and Valibot implement it) or a plain JSON Schema object,
 * such as the one a remote MCP server declares for its tool. Each is turned
 * once into what the registry needs: the JSON Schema that tools/list shows and
 * a validate function the pipeline awaits (compileSchema says when).
 */

/** The parts of Standard Schema v1 and Standard JSON Schema v1 that we use. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: {
        target: string;
        libraryOptions?: Record<string, unknown>;
      }) => Record<string, unknown>;
      readonly output: (options: {
        target: string;
        libraryOptions?: Record<string, unknown>;
      }) => Record<string, unknown>;
    };
  };
}
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/**
 * What a tool receives once its input is valid: the schema's output type; for a JSON Schema, a plain object.
 * Either way a record (MCP tool arguments are an object), so any tool's is a Record<string, unknown>: a tool of
 * a particular schema is a Tool without a cast.
 */
export type InferOutput<S> = [S] extends [StandardSchema<unknown, infer O extends Record<string, unknown>>]
  ? O
  : Record<string, unknown>;

/** A JSON Schema for an object (MCP requires `type: "object"` for tool schemas). */
export type JsonObjectSchema = { type: 'object'; [key: string]: unknown };

export type ToolSchema = StandardSchema | JsonObjectSchema;

/**
 * Turns a JSON Schema into a Standard Schema that validates with it. Injected
 * (the composition root passes the MCP SDK's Ajv-backed `fromJsonSchema`), so
 * the core stays free of a validator engine.
 */
export type JsonSchemaCompiler = (schema: Record<string, unknown>) => StandardSchema;

export type Validation = { ok: true; value: unknown } | { ok: false; issues: string[] };

/** A schema ready for use: what tools/list shows, and how values are checked. */
export interface CompiledSchema {
  readonly json: JsonObjectSchema;
  validate(value: unknown): Promise<Validation>;
}

export const isStandardSchema = (s: unknown): s is StandardSchema =>
  (typeof s === 'object' || typeof s === 'function') &&
  s !== null &&
  typeof (s as Partial<StandardSchema>)['~standard']?.validate === 'function';

const JSON_TARGET = { target: 'draft-2020-12', libraryOptions: { unrepresentable: 'any' } };

/**
 * The JSON Schema a caller sees, and the validator behind it. A plain JSON
 * Schema is listed exactly as given (it is compiled from a copy without a
 * top-level `$id`, so one schema's id can never make the validator engine
 * hand back another schema's compiled validator). A schema is checked and
 * converted at registration, so a plugin's bad schema is refused there, never
 * in a listing; except a zod schema not built yet (main/contract/lazy-schema.ts),
 * which is built, checked and converted at its first listing or call: the
 * built-in tools' are (some 30 ms of each CLI command without a service, which
 * lists and calls nothing), and test/plugins/builtin-schemas.test.ts converts
 * every one of them.
 */
export function compileSchema(
  schema: ToolSchema,
  io: 'input' | 'output',
  compileJson: JsonSchemaCompiler,
): CompiledSchema {
  if (!isUnbuiltSchema(schema)) return compileNow(schema, io, compileJson);
  let made: CompiledSchema | undefined;
  const now = () => (made ??= compileNow(schema, io, compileJson));
  return {
    get json() {
      return now().json;
    },
    validate: (value) => now().validate(value),
  };
}

function compileNow(schema: ToolSchema, io: 'input' | 'output', compileJson: JsonSchemaCompiler): CompiledSchema {
  if (isStandardSchema(schema)) {
    const convert = schema['~standard'].jsonSchema?.[io];
    if (!convert)
      throw new TypeError(
        `a Standard Schema without JSON Schema conversion (vendor '${schema['~standard'].vendor}') cannot be listed: pass a JSON Schema, or a schema library that implements Standard JSON Schema`,
      );
    const { $schema: _dialect, ...json } = convert(JSON_TARGET);
    if (json.type !== 'object') throw new TypeError(`the ${io} schema must describe an object (type: "object")`);
    return { json: json as JsonObjectSchema, validate: validator(schema, io) };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || schema.type !== 'object') {
    throw new TypeError(`the ${io} schema must be a JSON Schema object with type: "object", or a Standard Schema`);
  }
  const { $id: _id, ...copy } = schema;
  return { json: schema, validate: validator(compileJson(copy), io) };
}

function validator(schema: StandardSchema, io: 'input' | 'output'): (value: unknown) => Promise<Validation> {
  const validate = schema['~standard'].validate;
  const whole = io === 'input' ? '(arguments)' : '(result)';
  return async (value) => {
    const r = await validate(value);
    if (!r.issues) return { ok: true, value: r.value };
    return { ok: false, issues: r.issues.map((i) => `${pathText(i.path) || whole}: ${i.message}`) };
  };
}

function pathText(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string {
  if (!path) return '';
  return path.map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
}
