import type { PreviewRecipe, RecipeRead, RecipeView } from '../../contract/preview-recipes.ts';
import type { PinnedTool } from './upstream-data.ts';
import { classOf, isOffered } from './pinning.ts';

export type { PreviewRecipe, RecipeRead, RecipeShows } from '../../contract/preview-recipes.ts';

/**
 * How the desk learns what an upstream write will change (docs/staging.md,
 * "What an upstream write changes"): a recipe (main/contract/preview-recipes.ts)
 * names the upstream's read tools that show the write's target now and how
 * their arguments come from the write's. The reference servers' recipes ship
 * here; a person's own recipe for a tool (kept with its upstream) takes the
 * place of a shipped one of that name.
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
 * A person's recipe is checked the same way when it is saved (recipeProblems),
 * and again at every preview, like a shipped one.
 */
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

/** The recipes in force for an upstream: the person's first, so theirs takes the place of a shipped one of that tool. */
export const recipesOf = (own: readonly PreviewRecipe[]): readonly PreviewRecipe[] => [...own, ...SHIPPED_RECIPES];

/** The recipe for a write with the read pins it will call, or null when none fits the approved definitions. */
export function recipeFor(
  write: PinnedTool,
  pins: readonly PinnedTool[],
  recipes: readonly PreviewRecipe[] = SHIPPED_RECIPES,
): RecipeMatch | null {
  const recipe = recipes.find((r) => r.tool === write.name);
  if (!recipe || writeProblem(recipe, write) !== null) return null;
  const writeProps = propertiesOf(write.approved!.definition.inputSchema);
  const usable = (read: RecipeRead) =>
    readProblem(read, write.name, writeProps, pins) === null
      ? { read, pin: pins.find((p) => p.name === read.tool)! }
      : null;
  for (const set of recipe.reads) {
    const reads = set.map(usable);
    if (reads.every((r) => r !== null))
      return { recipe, reads: reads as RecipeMatch['reads'], stat: recipe.stat ? usable(recipe.stat) : null };
  }
  return null;
}

/**
 * Everything that keeps a person's recipe from fitting this upstream now, in words (empty: it fits): the write
 * tool must be one of its approved writes, every read one it offers and the person classified as a read, every
 * argument named one its definition has. Stricter than recipeFor: each set of reads must fit, not only one.
 */
export function recipeProblems(recipe: PreviewRecipe, pins: readonly PinnedTool[]): string[] {
  const write = pins.find((p) => p.name === recipe.tool);
  if (!write) return [`the upstream has no tool '${recipe.tool}'`];
  const bad = writeProblem(recipe, write);
  if (bad) return [bad];
  const writeProps = propertiesOf(write.approved!.definition.inputSchema);
  const reads = [...recipe.reads.flat(), ...(recipe.stat ? [recipe.stat] : [])];
  return [...new Set(reads.map((r) => readProblem(r, write.name, writeProps, pins)).filter((p) => p !== null))];
}

/** The recipes a person sees on an upstream: theirs, and the shipped ones of tools it has that theirs do not replace. */
export function recipeViews(own: readonly PreviewRecipe[], pins: readonly PinnedTool[]): RecipeView[] {
  const shipped = SHIPPED_RECIPES.filter((r) => pins.some((p) => p.name === r.tool));
  const view = (recipe: PreviewRecipe, source: RecipeView['source']): RecipeView => {
    const write = pins.find((p) => p.name === recipe.tool);
    const fits = write ? recipeFor(write, pins, [recipe]) !== null : false;
    return {
      tool: recipe.tool,
      source,
      recipe,
      overrides_shipped: source === 'person' && SHIPPED_RECIPES.some((r) => r.tool === recipe.tool),
      problem: fits ? null : (recipeProblems(recipe, pins)[0] ?? 'none of its sets of reads fits the upstream now'),
    };
  };
  return [
    ...own.map((r) => view(r, 'person')),
    ...shipped.filter((r) => !own.some((o) => o.tool === r.tool)).map((r) => view(r, 'shipped')),
  ];
}

const inputsText = (props: Set<string>) => (props.size ? `its inputs: ${[...props].join(', ')}` : 'it takes no input');

/** Why the write tool cannot be previewed by this recipe, or null. */
function writeProblem(recipe: PreviewRecipe, write: PinnedTool): string | null {
  const def = write.approved?.definition;
  if (!def) return `'${write.name}' has no approved definition yet: review it first`;
  if (classOf(write) === 'read') return `'${write.name}' is classified as a read: only writes are staged and previewed`;
  const props = propertiesOf(def.inputSchema);
  for (const field of ['content', 'edits', 'path'] as const) {
    const path = recipe[field];
    if (path && !props.has(rootOf(path)))
      return `'${write.name}' has no input '${rootOf(path)}' for the recipe's ${field} (${inputsText(props)})`;
  }
  return null;
}

/** Why this read cannot be called for the write, or null: it must be offered, a read, and take the arguments named. */
function readProblem(read: RecipeRead, writeName: string, writeProps: Set<string>, pins: readonly PinnedTool[]) {
  const pin = pins.find((p) => p.name === read.tool);
  if (!pin) return `the upstream has no tool '${read.tool}' to read with`;
  if (!isOffered(pin)) return `'${read.tool}' is not offered now (approve it, or offer it again)`;
  if (classOf(pin) !== 'read')
    return `'${read.tool}' is not classified as a read, and a preview calls only reads (mark it as a read first: gatehouse upstreams review ID --read ${read.tool})`;
  const readProps = propertiesOf(pin.approved!.definition.inputSchema);
  for (const [arg, paths] of Object.entries(read.args)) {
    if (!readProps.has(arg)) return `'${read.tool}' has no input '${arg}' (${inputsText(readProps)})`;
    for (const path of [paths].flat())
      if (!writeProps.has(rootOf(path)))
        return `'${writeName}' has no input '${rootOf(path)}' to give ${read.tool}'s ${arg} (${inputsText(writeProps)})`;
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
