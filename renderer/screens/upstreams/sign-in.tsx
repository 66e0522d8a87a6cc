import { useState } from 'react';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';

const STATE_TEXT: Record<OAuthStatus['state'], string> = {
  signed_in: 'Signed in',
  signed_out: 'Not signed in',
  sign_in_required: 'Sign in again',
  signing_in: 'Waiting for the browser',
};

/** Only http(s) links are offered: the URL comes from a remote server's metadata (the service checked it too). */
const safeLink = (url: string | null) => (url && /^https?:\/\//i.test(url) ? url : null);

/**
 * An OAuth upstream's sign-in on the Upstreams screen (docs/oauth.md): its
 * state, scopes and expiry, Sign in (the service starts the sign-in; the
 * authorization URL opens in a new tab and stays shown as a link for any
 * browser on this machine) and Sign out (which says so when the authorization
 * server could not revoke the tokens). Never a token: the service keeps them.
 */
export function SignIn({ id, status, onChanged }: { id: string; status: OAuthStatus; onChanged: () => void }) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const act = async (action: 'upstreams.login' | 'upstreams.logout') => {
    setBusy(true);
    setFailure(null);
    setWarning(null);
    const r = await api[action]({ id });
    setBusy(false);
    if (!r.ok) return setFailure(r.message);
    // Signed out here even when the authorization server could not be told: said, never a failure.
    setWarning(r.data.revocation?.warning ?? null);
    const link = action === 'upstreams.login' ? safeLink(r.data.authorization_url) : null;
    if (link) window.open(link, '_blank', 'noopener,noreferrer');
    onChanged();
  };
  const link = safeLink(status.authorization_url);
  // A person signed out (docs/oauth.md): said as such, not as a sign-in that never happened.
  const signedOut = status.state === 'signed_out' && status.reason === 'signed out';
  return (
    <section aria-label={`Sign-in of ${id}`} className="upstream-sign-in">
      {failure ? <ErrorBox message={failure} /> : null}
      {warning ? (
        <p role="status" className="warning">
          Signed out, but {warning}
        </p>
      ) : null}
      <dl>
        <dt>Sign-in</dt>
        <dd>
          {signedOut ? 'Signed out' : STATE_TEXT[status.state]}
          {status.reason && !signedOut ? ` (${status.reason})` : ''}
        </dd>
        <dt>Scopes</dt>
        <dd>{status.scopes || '—'}</dd>
        <dt>Expires</dt>
        <dd>
          {status.expires_at ? new Date(status.expires_at).toLocaleString() : '—'}
          {status.refreshable ? ' (renewed by itself)' : ''}
        </dd>
        {status.issuer ? (
          <>
            <dt>Authorization server</dt>
            <dd>
              <code>{status.issuer}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {link ? (
        <p>
          Finish the sign-in in a browser on this machine:{' '}
          <a href={link} target="_blank" rel="noopener noreferrer">
            open the sign-in page
          </a>
        </p>
      ) : null}
      <button type="button" disabled={busy} onClick={() => void act('upstreams.login')}>
        {status.state === 'signed_in' ? 'Sign in again' : 'Sign in'}
      </button>{' '}
      <button
        type="button"
        disabled={busy || status.state === 'signed_out'}
        onClick={() => void act('upstreams.logout')}
      >
        Sign out
      </button>
    </section>
  );
}
