import { useEffect, useRef, useState } from 'react';
import type { TokenCreated } from '../../../main/contract/index.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { Tabs } from '../../components/tabs.tsx';
import { CLIENT_TITLES, SNIPPET_CLIENTS, snippetFor } from './snippets.ts';
import type { SnippetClient } from './snippets.ts';

const TABS = SNIPPET_CLIENTS.map((key) => ({ key, title: CLIENT_TITLES[key] }));

/** The one time the clear token is shown: copy it, or copy a client config that launches the bridge. */
export function TokenCreatedPanel({ created, onDone }: { created: TokenCreated; onDone: () => void }) {
  const [client, setClient] = useState<SnippetClient>('claude-desktop');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const snippet = snippetFor(client, { token: created.token, keychainAccount: created.keychain_account });
  return (
    <section className="card created" aria-labelledby="tk-created">
      <h2 id="tk-created" ref={heading} tabIndex={-1}>
        Token “{created.record.label}” created
      </h2>
      <p className="notice">
        Copy it now: this is the only time it is shown. Gatehouse keeps only a hash, so a lost token cannot be recovered,
        only revoked and replaced.
      </p>
      <div className="with-action">
        <label htmlFor="tk-clear" className="visually-hidden">
          The new token
        </label>
        <input id="tk-clear" className="secret" readOnly value={created.token} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={created.token} label="Copy the token" />
      </div>
      {created.keychain_account ? (
        <p>
          Saved in this computer’s keychain as <code>{created.keychain_account}</code>. The configurations below make{' '}
          <code>gatehouse-bridge</code> read it from there, so no secret sits in a config file.
        </p>
      ) : (
        <p>
          The configurations below pass the token to <code>gatehouse-bridge</code> in the <code>GATEHOUSE_TOKEN</code>{' '}
          environment variable. Keep such a config file private, or create the token with “save in the keychain”.
        </p>
      )}
      <h3>Connect a client</h3>
      <Tabs id="tk-snippets" label="MCP client" tabs={TABS} selected={client} onSelect={setClient}>
        <p className="muted">Put this in {snippet.where}:</p>
        <div className="snippet">
          <pre className="code-block">{snippet.text}</pre>
          <CopyButton text={snippet.text} label={`Copy the ${CLIENT_TITLES[client]} configuration`} />
        </div>
        {snippet.containsToken ? <p className="muted">This configuration contains the token.</p> : null}
      </Tabs>
      <p>
        <button type="button" className="primary" onClick={onDone}>
          Done, I have copied it
        </button>
      </p>
    </section>
  );
}
