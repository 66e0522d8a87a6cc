import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * A preview recipe (docs/staging.md, "What an upstream write changes"): which of an
 * upstream's read tools show a write's target now, and how their arguments come from
 * the write's. Data, so the common shapes need no code; Gatehouse ships recipes for
 * the reference servers (main/plugins/upstream/preview-recipes.ts) and a person can
 * write one per upstream tool, which takes the place of a shipped one of that name.
 *
 * - `file_write`: the read returns a file's text, the write's `content` argument is
 *   its new text: a line diff;
 * - `file_edit`: the same, the new text being the write's `edits`
 *   (`[{oldText, newText}]`) applied to the current text;
 * - `state`: the reads show what the named things are now (what a delete removes,
 *   what an append adds to), shown beside the arguments.
 */
export const RecipeShows = lazySchema(() => z.enum(['file_write', 'file_edit', 'state']));
export type RecipeShows = z.infer<typeof RecipeShows>;

const STEP = '[A-Za-z0-9_-]{1,64}(\\[\\*\\])?';
/** A path into the write's arguments: `path`, `a.b`, `deletions[*].entityName` (each item's field, as a list). */
export const ArgPath = lazySchema(() =>
  z
    .string()
    .max(200)
    .regex(
      new RegExp(`^${STEP}(\\.${STEP})*$`),
      'an argument path is names joined by dots, a list spread with [*] (e.g. path, deletions[*].entityName)',
    ),
);
/** An argument name of a read tool. */
const ArgName = lazySchema(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "a read's argument name is 1-64 of letters, digits, _ and -")
    .refine((n) => !(n in Object.prototype), {
      error: (issue) => `'${String(issue.input)}' cannot be an argument name here`,
    }),
);
export const RecipeToolName = lazySchema(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, "a tool name is the upstream's own name: 1-128 of letters, digits, _ . -"),
);

export const RecipeRead = lazySchema(() =>
  z
    .object({
      /** the upstream's own name of a tool the person classified as a read */
      tool: RecipeToolName,
      /** the read's argument -> the path (or paths, joined into one list) of the write's argument that gives it */
      args: z.record(ArgName, z.union([ArgPath, z.array(ArgPath).min(1).max(10)])).default({}),
      /** what this read shows, for the desk: `destination`, `entities` */
      label: z
        .string()
        .regex(/^[A-Za-z0-9 _-]{1,40}$/, 'a label is 1-40 of letters, digits, spaces, _ and -')
        .optional(),
    })
    .strict(),
);
export type RecipeRead = z.infer<typeof RecipeRead>;

export const PreviewRecipe = lazySchema(() =>
  z
    .object({
      /** the write tool (the upstream's own name) */
      tool: RecipeToolName,
      shows: RecipeShows,
      /** sets of reads tried in order; the first whose read tools the upstream offers is used (a server renamed read_file to read_text_file) */
      reads: z.array(z.array(RecipeRead).min(1).max(5)).min(1).max(5),
      /** file_write: the write's argument holding the new text */
      content: ArgPath.optional(),
      /** file_edit: the write's argument holding the edits */
      edits: ArgPath.optional(),
      /** file_write, file_edit: the write's argument naming the file */
      path: ArgPath.optional(),
      /**
       * file_write, file_edit: a read asked first for the file's size (its answer has a `size: N` line, or a
       * structured `size`), so a file too large to show is never read whole: an MCP message of several MB closes
       * a stdio session with the SDK's clients
       */
      stat: RecipeRead.optional(),
    })
    .strict()
    .superRefine((r, ctx) => {
      const need = (field: 'content' | 'edits' | 'path') => {
        if (!r[field])
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: `a ${r.shows} recipe names the write's ${field} argument`,
          });
      };
      const refuse = (field: 'content' | 'edits' | 'stat', what: string) => {
        if (r[field] !== undefined)
          ctx.addIssue({ code: 'custom', path: [field], message: `${field} is for ${what} recipes, not ${r.shows}` });
      };
      if (r.shows === 'file_write') {
        need('content');
        need('path');
        refuse('edits', 'file_edit');
      } else if (r.shows === 'file_edit') {
        need('edits');
        need('path');
        refuse('content', 'file_write');
      } else {
        refuse('content', 'file_write');
        refuse('edits', 'file_edit');
        refuse('stat', 'file_write and file_edit');
        if (r.path !== undefined)
          ctx.addIssue({ code: 'custom', path: ['path'], message: 'path is for file_write and file_edit recipes' });
      }
      // a file diff compares one file: its set is the one read of that file
      if (r.shows !== 'state' && r.reads.some((set) => set.length !== 1))
        ctx.addIssue({ code: 'custom', path: ['reads'], message: `a ${r.shows} recipe reads the file with one read` });
    }),
);
export type PreviewRecipe = z.infer<typeof PreviewRecipe>;

/** A recipe as a person sees it on an upstream: theirs or shipped, whether it is used, and if not why. */
export const RecipeView = lazySchema(() =>
  z.object({
    tool: z.string(),
    source: z.enum(['person', 'shipped']),
    recipe: PreviewRecipe,
    /** a person's recipe that takes the place of a shipped one of that tool */
    overrides_shipped: z.boolean(),
    /** why it shows no target now (a read tool not classified as a read, an argument the definition lacks); null when it applies */
    problem: z.string().nullable(),
  }),
);
export type RecipeView = z.infer<typeof RecipeView>;

/**
 * One read in a line of text, as the CLI's `--via` and the console's editor take it:
 * `TOOL`, `TOOL:ARG=PATH`, `TOOL:ARG=PATH+PATH,ARG2=PATH@LABEL` (`+` joins paths into one list).
 * Checked by RecipeRead afterwards; this only splits.
 */
export function parseReadSpec(text: string): { ok: true; read: unknown } | { ok: false; message: string } {
  const t = text.trim();
  const at = t.lastIndexOf('@');
  const [head, label] = at === -1 ? [t, undefined] : [t.slice(0, at), t.slice(at + 1)];
  const colon = head.indexOf(':');
  const tool = colon === -1 ? head : head.slice(0, colon);
  if (!tool) return { ok: false, message: `'${t.slice(0, 80)}': a read starts with its tool's name (TOOL:ARG=PATH)` };
  const args: Record<string, string | string[]> = {};
  if (colon !== -1) {
    for (const pair of head.slice(colon + 1).split(',')) {
      const eq = pair.indexOf('=');
      if (eq <= 0)
        return {
          ok: false,
          message: `'${pair.slice(0, 80)}' in '${tool}': each argument is ARG=PATH (or ARG=PATH+PATH)`,
        };
      const paths = pair.slice(eq + 1).split('+');
      args[pair.slice(0, eq)] = paths.length === 1 ? paths[0]! : paths;
    }
  }
  return { ok: true, read: { tool, args, ...(label !== undefined ? { label } : {}) } };
}

/** A read as that line of text again. */
export const readSpecText = (r: RecipeRead): string =>
  `${r.tool}${Object.keys(r.args).length ? ':' : ''}${Object.entries(r.args)
    .map(([a, p]) => `${a}=${[p].flat().join('+')}`)
    .join(',')}${r.label ? `@${r.label}` : ''}`;

/** A recipe in one line, for the audit's reason and the terminal: `write_file: file_write via read_text_file:path=path (content, path); size by get_file_info:path=path`. */
export function recipeText(r: PreviewRecipe): string {
  const fields = (['content', 'edits', 'path'] as const).filter((f) => r[f]).map((f) => `${f}=${r[f]}`);
  const via = r.reads.map((set) => set.map(readSpecText).join(' + ')).join(' or ');
  return `${r.tool}: ${r.shows} via ${via}${fields.length ? ` (${fields.join(', ')})` : ''}${r.stat ? `; size by ${readSpecText(r.stat)}` : ''}`;
}
