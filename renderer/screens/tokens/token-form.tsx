import { useState } from 'react';
import type { FormEvent } from 'react';
import { DEFAULT_TOKEN_USER, TokenCreateInput } from '../../../main/contract/index.ts';
import type { TokenCreated, User } from '../../../main/contract/index.ts';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { suggestAccount } from './snippets.ts';

type FieldErrors = Partial<Record<'label' | 'user' | 'keychain_account', string>>;

export function TokenForm({ users, onCreated }: { users: User[]; onCreated: (created: TokenCreated) => void }) {
  const api = useApi();
  const [label, setLabel] = useState('');
  // Least privilege by default: the service's token user (made on first use), as `gatehouse tokens create` does.
  const hasDefault = users.some((u) => u.login === DEFAULT_TOKEN_USER.login);
  const [user, setUser] = useState(hasDefault ? DEFAULT_TOKEN_USER.login : '');
  const [readOnly, setReadOnly] = useState(false);
  const [keychain, setKeychain] = useState(false);
  const [account, setAccount] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFailure(null);
    const parsed = TokenCreateInput.safeParse({
      label,
      ...(user ? { user } : {}),
      ...(readOnly ? { scope: { read_only: true } } : {}),
      ...(keychain ? { keychain_account: account.trim() || suggestAccount(label) } : {}),
    });
    if (!parsed.success) {
      const next: FieldErrors = {};
      for (const issue of parsed.error.issues) {
        const key = issue.path[0];
        if (key === 'label' || key === 'user' || key === 'keychain_account') next[key] ??= issue.message;
      }
      setErrors(next);
      return;
    }
    setErrors({});
    setBusy(true);
    const result = await api['tokens.create'](parsed.data);
    setBusy(false);
    if (!result.ok) {
      setFailure(`${result.message} (${result.code})`);
      return;
    }
    setLabel('');
    setAccount('');
    onCreated(result.data);
  };

  const selectedUser = users.find((u) => u.login === user);
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="tk-new" noValidate>
      <h2 id="tk-new">New token</h2>
      <div className="field">
        <label htmlFor="tk-label">Label</label>
        <input
          id="tk-label"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          aria-invalid={!!errors.label}
          aria-describedby="tk-label-help tk-label-error"
          maxLength={100}
          required
        />
        <p id="tk-label-help" className="help">
          Name the client and machine, e.g. “Claude Desktop on laptop”. One token per client.
        </p>
        {errors.label ? (
          <p id="tk-label-error" className="field-error">
            {errors.label}
          </p>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor="tk-user">Acts as user</label>
        <select id="tk-user" value={user} onChange={(e) => setUser(e.target.value)} aria-describedby="tk-user-help">
          {hasDefault ? null : (
            <option value="">
              {DEFAULT_TOKEN_USER.display_name} ({DEFAULT_TOKEN_USER.login}, {DEFAULT_TOKEN_USER.role}; made on first
              use)
            </option>
          )}
          {users.map((u) => (
            <option key={u.id} value={u.login}>
              {u.display_name} ({u.login}, {u.role})
            </option>
          ))}
        </select>
        <p id="tk-user-help" className="help">
          The token can do what this user may do, nothing more.
          {selectedUser?.role === 'administrator'
            ? ' Pick a less powerful user when the client only needs to read or edit.'
            : ''}
        </p>
      </div>
      <div className="field check">
        <input
          id="tk-ro"
          type="checkbox"
          checked={readOnly}
          onChange={(e) => setReadOnly(e.target.checked)}
          aria-describedby="tk-ro-help"
        />
        <label htmlFor="tk-ro">Read only</label>
        <p id="tk-ro-help" className="help">
          The client sees read tools only and cannot stage writes.
        </p>
      </div>
      <div className="field check">
        <input
          id="tk-kc"
          type="checkbox"
          checked={keychain}
          onChange={(e) => setKeychain(e.target.checked)}
          aria-describedby="tk-kc-help"
        />
        <label htmlFor="tk-kc">Save it for gatehouse-bridge</label>
        <p id="tk-kc-help" className="help">
          In the OS keychain, or where there is none in Gatehouse’s secrets file. Client configs then name the entry
          instead of holding the token.
        </p>
      </div>
      {keychain ? (
        <div className="field">
          <label htmlFor="tk-account">Account name</label>
          <input
            id="tk-account"
            value={account}
            placeholder={suggestAccount(label)}
            onChange={(e) => setAccount(e.target.value)}
            aria-invalid={!!errors.keychain_account}
            aria-describedby="tk-account-error"
            maxLength={200}
          />
          {errors.keychain_account ? (
            <p id="tk-account-error" className="field-error">
              {errors.keychain_account}
            </p>
          ) : null}
        </div>
      ) : null}
      {failure ? <ErrorBox message={`Could not create the token: ${failure}`} /> : null}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create token'}
      </button>
    </form>
  );
}
