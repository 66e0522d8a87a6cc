import { useState } from 'react';
import {
  SandboxHost,
  SandboxPath,
  shown,
  suggestedGrants,
  type SandboxGrant,
  type UpstreamConfinement,
} from '../../../main/contract/index.ts';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';

/**
 * A stdio upstream's sandbox on the Upstreams screen: how it runs, each grant
 * with where it came from, and a person's changes to them through
 * `upstreams.grant` (audited, and the server restarts with them), as
 * `gatehouse upstreams grant ID` does (docs/upstreams.md, "Confinement").
 */

const FROM: Record<SandboxGrant['from'], string> = {
  person: 'granted by a person',
  command_line: 'from the command line',
  runner: 'for the package runner',
};
const KIND: Record<SandboxGrant['kind'], string> = { write: 'read-write', read: 'read-only', net: 'network' };

const grantKey = (g: SandboxGrant) => `${g.kind}\0${g.value}`;

/**
 * The input that stores `draft`. While every grant the command line suggests
 * is kept, the service recomputes them (`suggest`) and they keep their
 * origin; once one is removed (now or before) the service is told not to
 * suggest, and the suggestions kept become the person's own: a removed
 * suggestion must not come back.
 */
export function grantInput(
  id: string,
  command: { command: string; args: readonly string[] },
  draft: readonly SandboxGrant[],
  unconfined: boolean,
) {
  const kept = new Set(draft.map(grantKey));
  const suggest = suggestedGrants(command.command, command.args).every((g) => kept.has(grantKey(g)));
  const own = draft.filter((g) => !suggest || g.from === 'person');
  const of = (kind: SandboxGrant['kind']) => own.filter((g) => g.kind === kind).map((g) => g.value);
  return { id, unconfined, read: of('read'), write: of('write'), net: of('net'), suggest };
}

export function SandboxGrants({
  id,
  command,
  confinement: c,
  onChanged,
}: {
  id: string;
  /** its command line, whose suggestions the service adds unless told not to */
  command: { command: string; args: readonly string[] };
  confinement: UpstreamConfinement;
  onChanged: () => void;
}) {
  const api = useApi();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<SandboxGrant[]>(c.grants);
  const [unconfined, setUnconfined] = useState(c.person_unconfined);
  const [kind, setKind] = useState<SandboxGrant['kind']>('write');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const start = () => {
    setDraft(c.grants);
    setUnconfined(c.person_unconfined);
    setEditing(true);
    setError(null);
    setFailure(null);
  };
  const add = () => {
    const v = kind === 'net' ? value.trim().toLowerCase() : value.trim();
    const parsed = (kind === 'net' ? SandboxHost : SandboxPath).safeParse(v);
    if (!parsed.success) return setError(`${v || 'nothing'}: ${parsed.error.issues[0]?.message ?? 'not valid'}`);
    if (draft.some((g) => g.kind === kind && g.value === v)) return setError(`${KIND[kind]} ${v} is granted already`);
    setDraft([...draft, { kind, value: v, from: 'person' }]);
    setValue('');
    setError(null);
  };
  const save = async () => {
    setBusy(true);
    setFailure(null);
    const r = await api['upstreams.grant'](grantInput(id, command, draft, unconfined));
    setBusy(false);
    if (!r.ok) return setFailure(r);
    setEditing(false);
    onChanged();
  };

  const list = editing ? draft : c.grants;
  return (
    <>
      <dt>Sandbox</dt>
      <dd className={c.state === 'confined' ? undefined : 'warning'} aria-label="Sandbox">
        {c.state === 'confined'
          ? 'Confined'
          : c.state === 'unconfined'
            ? 'Unconfined'
            : 'Cannot be confined here (down)'}
        : {c.why}
        {c.fix ? <> To fix: {c.fix}</> : null}
      </dd>
      <dt>Grants</dt>
      <dd>
        {list.length ? (
          <ul aria-label="Grants">
            {list.map((g) => (
              <li key={grantKey(g)}>
                {KIND[g.kind]} <code>{shown(g.value)}</code> ({FROM[g.from]})
                {editing ? (
                  <>
                    {' '}
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => setDraft(draft.filter((x) => grantKey(x) !== grantKey(g)))}
                    >
                      Remove {KIND[g.kind]} {g.value}
                    </button>
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        ) : (
          <p>None: no folder of yours, no network.</p>
        )}
        {editing ? (
          <fieldset className="field" aria-label="Change the grants">
            <div className="grant-add">
              <label>
                Grant{' '}
                <select value={kind} onChange={(e) => setKind(e.target.value as SandboxGrant['kind'])} disabled={busy}>
                  <option value="write">a folder to read and write</option>
                  <option value="read">a folder to read only</option>
                  <option value="net">a host to reach</option>
                </select>
              </label>{' '}
              <input
                aria-label="Folder or host to grant"
                value={value}
                spellCheck={false}
                placeholder={kind === 'net' ? 'api.example.com or localhost:8080' : '/path or ~/path'}
                disabled={busy}
                onChange={(e) => setValue(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault();
                    add();
                  }
                }}
              />{' '}
              <button type="button" onClick={add} disabled={busy}>
                Add grant
              </button>
            </div>
            {error ? (
              <p className="field-error" role="alert">
                {error}
              </p>
            ) : null}
            <label className="checkbox">
              <input
                type="checkbox"
                checked={unconfined}
                disabled={busy}
                onChange={(e) => setUnconfined(e.target.checked)}
              />{' '}
              Run it unconfined, with all of my rights (not recommended)
            </label>
            {unconfined ? (
              <p className="warning" aria-label="Unconfined warning">
                Unconfined, {id} runs with all of your rights: it can read your keys and your files, write anywhere and
                reach any host. The warning stays on the Overview for as long as it runs so.
              </p>
            ) : null}
            <p className="help">The server restarts with the new grants; the change is recorded in the audit log.</p>
            <div className="form-buttons">
              <button type="button" className="primary" disabled={busy} onClick={() => void save()}>
                {busy ? 'Saving…' : 'Save the grants'}
              </button>
              <button type="button" disabled={busy} onClick={() => setEditing(false)}>
                Cancel
              </button>
            </div>
            {failure ? <ErrorBox message={failure.message} code={failure.code} /> : null}
          </fieldset>
        ) : (
          <button type="button" onClick={start}>
            Change the grants of {id}
          </button>
        )}
      </dd>
    </>
  );
}
