import type { PinnedTool } from './upstream-data.ts';
import { classOf, isOffered } from './pinning.ts';

/**
 * How the desk learns what an upstream write will change (docs/staging.md,
 * "What an upstream write changes"): a recipe names the upstream's read
 * tools that show the write's target now and how their arguments come from
 * the write's. Recipes are data, so the common shapes need no code:
 *
 * - `file_write`: the read returns a file's text, the write's `content`
 *   argument is its new text: a line diff;
 * - `file_edit`: the same, the new text being the write's `edits`
 *   (`[{oldText, newText}]`) applied to the current text;
 * - `state`: the reads show what the named things are now (what a delete
 *   removes, what an append adds to), shown beside the arguments.
 *
 * An argument map's value is a path into the write's arguments: `path`,
 * `entityNames`, `deletions[*].entityName` (each item's field, as a list);
 * a list of such paths is joined into one list.
 *
 * A recipe applies only to the definitions a person approved, and only when
 * they still have the shape it reads (the write's arguments and each read
 * tool's), and each read tool is one the person classified as a read: a
 * preview never calls a write tool. A changed definition waits for review,
 * and until it is approved the recipe reads the approved one; an approved
 * change that no longer fits drops the recipe (the arguments are shown).
 */
export type RecipeShows = 'file_write' | 'file_edit' | 'state';

export interface RecipeRead {
  tool: string;
  /** the read's argument -> the path (or paths) of the write's argument that gives it */
  args: Record<string, string | string[]>;
  /** what this read shows, for the desk: `destination`, `entities` */
  label?: string;
}

export interface PreviewRecipe {
  tool: string;
  shows: RecipeShows;
  /** tried in order; the first whose read tool the upstream offers is used (a server renamed read_file to read_text_file) */
  reads: RecipeRead[][];
  /** file_write: the write's argument holding the new text */
  content?: string;
  /** file_edit: the write's argument holding the edits */
  edits?: string;
  /** the write's argument naming the file (file_write, file_edit) */
  path?: string;
  /**
   * file_write, file_edit: a read asked first for the file's size (its answer has a `size: N` line, or a
   * structured `size`), so a file too large to show is never read whole: an MCP message of several MB closes
   * a stdio session with the SDK's clients
   */
  stat?: RecipeRead;
}

const file = (tool: string) => [[{ tool, args: { path: 'path' } }]];
const READ_FILE = [...file('read_text_file'), ...file('read_file')];
const STAT: RecipeRead = { tool: 'get_file_info', args: { path: 'path' } };

/** The reference servers' writes (@modelcontextprotocol/server-filesystem and server-memory). */
export const SHIPPED_RECIPES: readonly PreviewRecipe[] = [
  { tool: 'write_file', shows: 'file_write', reads: READ_FILE, content: 'content', path: 'path', stat: STAT },
  { tool: 'edit_file', shows: 'file_edit', reads: READ_FILE, edits: 'edits', path: 'path', stat: STAT },
  {
    tool: 'move_file',
    shows: 'state',
    reads: [
      [
        { tool: 'get_file_info', args: { path: 'source' }, label: 'source' },
        { tool: 'get_file_info', args: { path: 'destination' }, label: 'destination' },
      ],
    ],
  },
  { tool: 'create_directory', shows: 'state', reads: [[{ tool: 'get_file_info', args: { path: 'path' } }]] },
  ...(
    [
      ['delete_entities', 'entityNames'],
      ['delete_observations', 'deletions[*].entityName'],
      ['delete_relations', ['relations[*].from', 'relations[*].to']],
      ['add_observations', 'observations[*].entityName'],
    ] as const
  ).map(([tool, names]): PreviewRecipe => ({
    tool,
    shows: 'state',
    reads: [
      [{ tool: 'open_nodes', args: { names: typeof names === 'string' ? names : [...names] }, label: 'entities' }],
    ],
  })),
];

export interface RecipeMatch {
  recipe: PreviewRecipe;
  reads: Array<{ read: RecipeRead; pin: PinnedTool }>;
  /** the size read, when the recipe has one and the upstream offers it as a read */
  stat: { read: RecipeRead; pin: PinnedTool } | null;
}

/** The recipe for a write with the read pins it will call, or null when none fits the approved definitions. */
export function recipeFor(
  write: PinnedTool,
  pins: readonly PinnedTool[],
  recipes: readonly PreviewRecipe[] = SHIPPED_RECIPES,
): RecipeMatch | null {
  const recipe = recipes.find((r) => r.tool === write.name);
  const def = write.approved?.definition;
  if (!recipe || !def) return null;
  const writeProps = propertiesOf(def.inputSchema);
  const used = [recipe.content, recipe.edits, recipe.path].filter((x): x is string => !!x);
  const usable = (read: RecipeRead): { read: RecipeRead; pin: PinnedTool } | null => {
    const pin = pins.find((p) => p.name === read.tool);
    if (!pin || !isOffered(pin) || classOf(pin) !== 'read') return null;
    const readProps = propertiesOf(pin.approved!.definition.inputSchema);
    const sources = Object.values(read.args).flat();
    if (!Object.keys(read.args).every((a) => readProps.has(a))) return null;
    if (![...sources, ...used].every((s) => writeProps.has(rootOf(s)))) return null;
    return { read, pin };
  };
  for (const set of recipe.reads) {
    const reads = set.map(usable);
    if (reads.every((r) => r !== null))
      return { recipe, reads: reads as RecipeMatch['reads'], stat: recipe.stat ? usable(recipe.stat) : null };
  }
  return null;
}

const rootOf = (path: string) => path.split(/[.[]/)[0]!;

function propertiesOf(schema: unknown): Set<string> {
  const props = (schema as { properties?: unknown } | undefined)?.properties;
  return new Set(props && typeof props === 'object' ? Object.keys(props) : []);
}

/** The value at `path` in the write's arguments: `a`, `a.b`, `a[*].b` (a list of each item's b); undefined when absent. */
export function valueAt(args: Record<string, unknown>, path: string | string[]): unknown {
  if (Array.isArray(path)) {
    const parts = path.map((p) => valueAt(args, p));
    if (parts.some((p) => p === undefined)) return undefined;
    return [...new Set(parts.flatMap((p) => (Array.isArray(p) ? p : [p])))];
  }
  let values: unknown[] = [args];
  let spread = false;
  for (const step of path.split('.')) {
    const each = step.endsWith('[*]');
    const key = each ? step.slice(0, -3) : step;
    const next: unknown[] = [];
    for (const v of values) {
      if (!v || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
      const x = (v as Record<string, unknown>)[key];
      if (each) {
        if (!Array.isArray(x)) return undefined;
        next.push(...x);
        spread = true;
      } else next.push(x);
    }
    values = next;
  }
  return spread ? values : values[0];
}
