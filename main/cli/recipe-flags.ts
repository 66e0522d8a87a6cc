import { parseReadSpec, recipeText, type RecipeView } from '../contract/preview-recipes.ts';
import { safe, UsageError } from './output.ts';

/** The flags of `upstreams recipe ID TOOL` (docs/staging.md, "Recipes of your own"). */
export const recipeFlags = {
  shows: { type: 'string' },
  via: { type: 'string', multiple: true },
  stat: { type: 'string' },
  content: { type: 'string' },
  edits: { type: 'string' },
  path: { type: 'string' },
  remove: { type: 'boolean' },
} as const;

const readOf = (flag: string, text: string) => {
  const r = parseReadSpec(text);
  if (!r.ok) throw new UsageError(`${flag} ${r.message}`);
  return r.read;
};

/** The recipe the flags describe (the service checks it against the contract and the pinned definitions). */
export function recipeInput(tool: string, values: Record<string, unknown>): Record<string, unknown> {
  const via = (values.via as string[] | undefined) ?? [];
  if (!values.shows || !via.length)
    throw new UsageError(
      'upstreams recipe ID TOOL needs --shows file_write|file_edit|state and at least one --via READ_TOOL:ARG=PATH (or --remove)',
    );
  const field = (k: 'content' | 'edits' | 'path') => (typeof values[k] === 'string' ? { [k]: values[k] } : {});
  return {
    tool,
    shows: values.shows,
    reads: [via.map((v) => readOf('--via', v))],
    ...field('content'),
    ...field('edits'),
    ...field('path'),
    ...(typeof values.stat === 'string' ? { stat: readOf('--stat', values.stat) } : {}),
  };
}

/** One line per recipe: whose it is, what it reads, and why it does not apply when it does not. */
export const recipeLines = (views: RecipeView[], id: string): string =>
  views.length
    ? views
        .map((v) =>
          [
            safe`${v.tool}  ${v.source === 'person' ? `yours${v.overrides_shipped ? ' (in place of the shipped one)' : ''}` : 'shipped'}  ${v.problem ? 'not used' : 'in use'}`,
            safe`  ${recipeText(v.recipe)}`,
            ...(v.problem ? [safe`  not used: ${v.problem}`] : []),
          ].join('\n'),
        )
        .join('\n')
    : safe`Upstream ${id} has no preview recipes: its writes show their arguments (add one: gatehouse upstreams recipe ${id} TOOL --shows ... --via ...).`;
