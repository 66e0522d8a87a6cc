import type { jsonSchemaValidator, JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/server';
import { Ajv as AjvDraft7, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { linearRegExp, PATTERN_BUDGET, PatternBudgetExceeded, withPatternBudget } from './linear-regexp.ts';

/**
 * The JSON Schema validator for schemas that come from outside (an upstream's
 * tool input and output schemas, what an upstream asks a client for): the MCP
 * SDK's own Ajv set-up (the same dialects, picked by `$schema` the same way,
 * the same options, formats on) with one change: `pattern` and
 * `patternProperties` run on RE2 (linear-regexp.ts), so no schema can make a
 * validation take exponential time on the event loop, and one validation's
 * pattern work is bounded. A pattern RE2 cannot run makes the schema fail to
 * compile, with the reason (the tool is then not offered: docs/upstreams.md).
 */

// ajv-formats is CommonJS: under NodeNext its default import is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;
const regExp = Object.assign(linearRegExp, { code: 'linearRegExp' });

type Engine = AjvDraft7 | Ajv2019 | Ajv2020;
const OPTIONS: Options = {
  strict: false,
  validateFormats: true,
  validateSchema: false,
  allErrors: true,
  code: { regExp },
};

function engine(make: new (o: Options) => Engine): () => Engine {
  let made: Engine | undefined;
  return () => {
    if (!made) {
      made = new make(OPTIONS);
      addFormats(made);
    }
    return made;
  };
}
const engines = {
  '2020-12': engine(Ajv2020),
  '2019-09': engine(Ajv2019),
  'draft-7': engine(AjvDraft7),
};

const DIALECTS: Record<string, keyof typeof engines> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft-07/schema': 'draft-7',
  'https://json-schema.org/draft-06/schema': 'draft-7',
};

/** The dialect a schema declares, as the SDK reads it: none is 2020-12; http or https, a trailing `#` or not. */
function dialectOf(schema: JsonSchemaType): keyof typeof engines {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared !== 'string') return '2020-12';
  const d = DIALECTS[declared.replace(/#$/, '').replace(/^http:/, 'https:')];
  if (!d)
    throw new Error(
      `JSON Schema declares an unsupported dialect ("$schema": "${declared.slice(0, 200)}"); Gatehouse validates 2020-12, 2019-09, draft-07 and draft-06`,
    );
  return d;
}

/**
 * Keywords whose value is a schema, a list of schemas, or a map of names to schemas: where a walk finds every
 * subschema Ajv compiles (an unknown keyword's value is not a schema to Ajv, `strict: false`, so not to us either).
 */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
  'prefixItems',
  'contentSchema',
]);
// draft-07's `dependencies` maps to a schema or a list of names: a list holds no pattern, so walking it is harmless
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

/**
 * Every pattern of a schema, checked as Ajv's compile would check it (RE2 can run it), without generating any
 * code: what a listing needs to know now (a tool whose schema cannot be used is not offered), at a fraction of
 * a compile's cost. Throws UnsupportedPattern.
 */
function checkPatterns(schema: unknown, depth = 0): void {
  if (typeof schema !== 'object' || schema === null || depth > 64) return;
  if (Array.isArray(schema)) {
    for (const s of schema) checkPatterns(s, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' && typeof value === 'string') linearRegExp(value);
    else if (SCHEMA_KEYWORDS.has(key)) checkPatterns(value, depth + 1);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && typeof value === 'object' && value !== null)
      for (const [name, sub] of Object.entries(value)) {
        if (key === 'patternProperties') linearRegExp(name);
        checkPatterns(sub, depth + 1);
      }
  }
}

type Validate = ReturnType<Engine['compile']>;

/**
 * Compiled validators by dialect and schema text: an upstream's thousands of tools are compiled only when one
 * is first validated (a call, a result), and once, however often they are listed again. Ajv keeps each
 * compiled schema too, so both are dropped together past a bound (compiling again is only slower).
 */
const compiled = new Map<string, Validate>();
const COMPILED_KEPT = 4096;

function compiledFor(dialect: keyof typeof engines, schema: JsonSchemaType): { ajv: Engine; validate: Validate } {
  const ajv = engines[dialect]();
  const key = `${dialect}\0${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (!validate) {
    if (compiled.size >= COMPILED_KEPT) {
      compiled.clear();
      for (const make of Object.values(engines)) make().removeSchema();
    }
    // by its $id only when compiled before: never another schema's validator for a reused id (tool-schema.ts drops $id)
    const id = (schema as { $id?: unknown }).$id;
    validate = (typeof id === 'string' && ajv.getSchema(id)) || ajv.compile(schema as object);
    compiled.set(key, validate);
  }
  return { ajv, validate };
}

export const linearSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    // What makes a schema unusable is found now; the code is generated at the first validation.
    const dialect = dialectOf(schema);
    checkPatterns(schema);
    let ready: { ajv: Engine; validate: Validate } | undefined;
    return (input: unknown) => {
      try {
        ready ??= compiledFor(dialect, schema);
        const { ajv, validate } = ready;
        if (withPatternBudget(PATTERN_BUDGET, () => validate(input) as boolean))
          return { valid: true, data: input as T, errorMessage: undefined };
        return { valid: false, data: undefined, errorMessage: ajv.errorsText(validate.errors) };
      } catch (e) {
        if (e instanceof PatternBudgetExceeded) return { valid: false, data: undefined, errorMessage: e.message };
        // a schema only the compile finds unusable (a $ref to nothing, a pattern deeper than the walk): said so
        if (ready === undefined)
          return {
            valid: false,
            data: undefined,
            errorMessage: `the schema cannot be used to check a value: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`,
          };
        throw e;
      }
    };
  },
};
