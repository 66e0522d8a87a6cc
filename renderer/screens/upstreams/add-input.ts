import { UpstreamAddInput } from '../../../main/contract/index.ts';

/** One NAME=VALUE environment variable or `Name: value` header as typed in the form. */
export interface Pair {
  name: string;
  value: string;
}

/** The Add upstream form as typed: text, before it becomes the admin API's input. */
export interface AddForm {
  id: string;
  kind: 'stdio' | 'http';
  command: string;
  /** one argument per line, exactly as the process gets it (no shell) */
  args: string;
  env: Pair[];
  url: string;
  headers: Pair[];
  /** a vault account holding the bearer token */
  tokenKeychain: string;
  /** tool names (the upstream's own) to mark read, separated by commas, spaces or lines */
  read: string;
  timeoutMs: string;
  /** sandbox grants (docs/upstreams.md, "Confinement"): one folder or host per line */
  allowWrite: string;
  allowRead: string;
  allowNet: string;
  /** run it without the OS sandbox (a warning stays visible) */
  unconfined: boolean;
  /** one process per client token instead of one for all (docs/upstreams.md, "One process per client") */
  perClient: boolean;
}

export const EMPTY_FORM: AddForm = {
  id: '',
  kind: 'stdio',
  command: '',
  args: '',
  env: [],
  url: '',
  headers: [],
  tokenKeychain: '',
  read: '',
  timeoutMs: '',
  allowWrite: '',
  allowRead: '',
  allowNet: '',
  unconfined: false,
  perClient: false,
};

/** The form's fields an error can be shown beside. */
export type FormField =
  'id' | 'command' | 'args' | 'env' | 'url' | 'headers' | 'tokenKeychain' | 'read' | 'timeoutMs' | 'sandbox';
export type FormErrors = Partial<Record<FormField, string>>;

const FIELD_OF: Record<string, FormField> = {
  id: 'id',
  command: 'command',
  args: 'args',
  env: 'env',
  url: 'url',
  headers: 'headers',
  token_keychain: 'tokenKeychain',
  read: 'read',
  timeout_ms: 'timeoutMs',
  sandbox: 'sandbox',
};

/** The sandbox part of a stdio input, only when the person granted something (else the service's defaults). */
function sandboxOfForm(form: AddForm): { sandbox?: Record<string, unknown> } {
  const [write, read, net] = [form.allowWrite, form.allowRead, form.allowNet].map((t) =>
    argLines(t)
      .map((l) => l.trim())
      .filter(Boolean),
  );
  if (!form.unconfined && !write!.length && !read!.length && !net!.length) return {};
  return { sandbox: { write, read, net, ...(form.unconfined ? { unconfined: true } : {}) } };
}

/** Lines of the arguments box; empty lines are dropped (an empty argument cannot be typed here). */
export const argLines = (text: string): string[] => text.split(/\r?\n/).filter((l) => l !== '');
const words = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
/** Rows left entirely empty are not meant. */
const filled = (pairs: Pair[]) =>
  pairs.filter((p) => p.name.trim() !== '' || p.value !== '').map((p) => ({ name: p.name.trim(), value: p.value }));

/**
 * The admin API's input for the console's two-step add (`approve_listed:
 * false`: the listed tools wait for the person's consent), checked with the
 * contract's own schema so the form names the field that is wrong before
 * anything is sent or spawned.
 */
export function addInput(form: AddForm): { ok: true; input: UpstreamAddInput } | { ok: false; errors: FormErrors } {
  const transport =
    form.kind === 'stdio'
      ? {
          kind: 'stdio',
          command: form.command.trim(),
          args: argLines(form.args),
          env: filled(form.env),
          ...sandboxOfForm(form),
        }
      : {
          kind: 'http',
          url: form.url.trim(),
          headers: filled(form.headers),
          ...(form.tokenKeychain.trim() ? { token_keychain: form.tokenKeychain.trim() } : {}),
        };
  const timeout = form.timeoutMs.trim();
  const raw = {
    id: form.id.trim(),
    transport,
    read: words(form.read),
    ...(timeout ? { timeout_ms: /^\d+$/.test(timeout) ? Number(timeout) : NaN } : {}),
    ...(form.kind === 'stdio' && form.perClient ? { process: { mode: 'per-client' } } : {}),
    approve_listed: false,
  };
  const parsed = UpstreamAddInput.safeParse(raw);
  if (parsed.success) return { ok: true, input: raw as UpstreamAddInput };
  const errors: FormErrors = {};
  for (const issue of parsed.error.issues) {
    // transport.<field>... or <field>...; a discriminated union's own issue names the transport's first field
    const path = issue.path.map(String);
    const key = path[0] === 'transport' ? (path[1] ?? (form.kind === 'stdio' ? 'command' : 'url')) : path[0];
    const field = key ? FIELD_OF[key] : undefined;
    if (field)
      errors[field] ??=
        path.length > 2 && typeof issue.path[2] === 'number'
          ? `${field === 'args' ? 'argument' : 'row'} ${Number(issue.path[2]) + 1}: ${issue.message}`
          : issue.message;
  }
  return {
    ok: false,
    errors: Object.keys(errors).length ? errors : { id: parsed.error.issues[0]?.message ?? 'invalid' },
  };
}
