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

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: unknown) => void;
const regExp = Object.assign(linearRegExp, { code: 'linearRegExp' });

type Engine = InstanceType<typeof Ajv2020>;
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
  '2019-09': engine(Ajv2019 as unknown as new (o: Options) => Engine),
  'draft-7': engine(AjvDraft7 as unknown as new (o: Options) => Engine),
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

export const linearSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const ajv = engines[dialectOf(schema)]();
    // by its $id only when compiled before: never another schema's validator for a reused id (tool-schema.ts drops $id)
    const id = (schema as { $id?: unknown }).$id;
    const validate = (typeof id === 'string' && ajv.getSchema(id)) || ajv.compile(schema as object);
    return (input: unknown) => {
      try {
        if (withPatternBudget(PATTERN_BUDGET, () => validate(input) as boolean))
          return { valid: true, data: input as T, errorMessage: undefined };
        return { valid: false, data: undefined, errorMessage: ajv.errorsText(validate.errors) };
      } catch (e) {
        if (e instanceof PatternBudgetExceeded) return { valid: false, data: undefined, errorMessage: e.message };
        throw e;
      }
    };
  },
};
