import { SandboxGrantsInput } from '../../../main/contract/index.ts';

/**
 * What a person grants one imported stdio server, as `clients import
 * --allow-write NAME=DIR ...` does: one folder or host per line, and
 * unconfined. What its command line suggests is added by the service and
 * shown beside the command.
 */
export interface GrantText {
  write: string;
  read: string;
  net: string;
  unconfined: boolean;
}

export const NO_GRANTS: GrantText = { write: '', read: '', net: '', unconfined: false };

const lines = (t: string) =>
  t
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** The admin API's `sandbox` for these grants (undefined when none), or the first thing the contract refuses. */
export function grantsInput(
  g: GrantText,
):
  | { ok: true; sandbox?: { unconfined?: boolean; read: string[]; write: string[]; net: string[] } }
  | { ok: false; error: string } {
  const s = {
    read: lines(g.read),
    write: lines(g.write),
    net: lines(g.net),
    ...(g.unconfined ? { unconfined: true } : {}),
  };
  if (!g.unconfined && !s.read.length && !s.write.length && !s.net.length) return { ok: true };
  const parsed = SandboxGrantsInput.safeParse(s);
  if (parsed.success) return { ok: true, sandbox: s };
  const issue = parsed.error.issues[0]!;
  const [kind, at] = issue.path;
  const value =
    typeof at === 'number' && (kind === 'read' || kind === 'write' || kind === 'net') ? `${s[kind][at]}: ` : '';
  return { ok: false, error: `${value}${issue.message}` };
}

export function ImportGrants({
  name,
  value,
  onChange,
  disabled,
  error,
}: {
  /** `SCOPE:NAME`, for the labels */
  name: string;
  value: GrantText;
  onChange: (g: GrantText) => void;
  disabled: boolean;
  error: string | null;
}) {
  const box = (key: 'write' | 'read' | 'net', label: string) => (
    <label>
      {label}
      <textarea
        aria-label={`${label} (${name})`}
        rows={2}
        spellCheck={false}
        value={value[key]}
        disabled={disabled || value.unconfined}
        onChange={(e) => onChange({ ...value, [key]: e.target.value })}
      />
    </label>
  );
  return (
    <details className="import-grants">
      <summary>Grant it more (folders, hosts)</summary>
      {box('write', 'Folders it may read and write (one per line)')}
      {box('read', 'Folders it may only read (one per line)')}
      {box('net', 'Hosts it may reach (one per line)')}
      <label className="checkbox">
        <input
          type="checkbox"
          aria-label={`Run ${name} unconfined`}
          checked={value.unconfined}
          disabled={disabled}
          onChange={(e) => onChange({ ...value, unconfined: e.target.checked })}
        />{' '}
        Run it unconfined, with all of my rights (not recommended)
      </label>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </details>
  );
}
