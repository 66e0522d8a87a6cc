import { useEffect, useRef, useState } from 'react';
import type { HealthReport, TokenCreated } from '../../../main/contract/index.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { Tabs } from '../../components/tabs.tsx';
import { CLIENT_TITLES, SNIPPET_CLIENTS, snippetFor } from './snippets.ts';
import type { SnippetClient } from './snippets.ts';

const TABS = SNIPPET_CLIENTS.map((key) => ({ key, title: CLIENT_TITLES[key] }));

/**
 * The one time the clear token is shown: copy it, or copy a client config that
 * launches the bridge the way the service says it starts on this machine.
 */
export function TokenCreatedPanel({
  created,
  health,
  onDone,
}: {
  created: TokenCreated;
  health: HealthReport | null;
  onDone: () => void;
}) {
  const [client, setClient] = useState<SnippetClient>('claude-desktop');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const snippet = health
    ? snippetFor(client, {
        token: created.token,
        keychainAccount: created.keychain_account,
        vault: health.vault.backend,
        launch: health.bridge,
      })
    : null;
  const inFile = health?.vault.backend === 'file';
  return (
    <section className="card created" aria-labelledby="tk-created">
      <h2 id="tk-created" ref={heading} tabIndex={-1}>
        Token “{created.record.label}” created
      </h2>
      <p className="notice">
        Copy it now: this is the only time it is shown. Gatehouse keeps only a hash, so a lost token cannot be
        recovered, only revoked and replaced.
      </p>
      <div className="with-action">
        <label htmlFor="tk-clear" className="visually-hidden">
          The new token
        </label>
        <input
          id="tk-clear"
          className="secret"
          readOnly
          value={created.token}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={created.token} label="Copy the token" />
      </div>
      {created.keychain_account ? (
        inFile ? (
          <p>
            Saved as <code>{created.keychain_account}</code> in Gatehouse’s secrets file (no OS keychain was reachable,
            so it is a plain file readable only by your user account, in <code>{health?.data_dir}</code>). The
            configurations below make <code>gatehouse-bridge</code> read it from there, so no secret sits in a client’s
            config file.
          </p>
        ) : (
          <p>
            Saved in this computer’s keychain as <code>{created.keychain_account}</code>. The configurations below make{' '}
            <code>gatehouse-bridge</code> read it from there, so no secret sits in a config file.
          </p>
        )
      ) : (
        <p>
          The configurations below pass the token to <code>gatehouse-bridge</code> in the <code>GATEHOUSE_TOKEN</code>{' '}
          environment variable. Keep such a config file private, or create the token with “save in the keychain”.
        </p>
      )}
      <h3>Connect a client</h3>
      {snippet ? (
        <Tabs id="tk-snippets" label="MCP client" tabs={TABS} selected={client} onSelect={setClient}>
          <p className="muted">Put this in {snippet.where}:</p>
          <div className="snippet">
            <pre className="code-block">{snippet.text}</pre>
            <CopyButton text={snippet.text} label={`Copy the ${CLIENT_TITLES[client]} configuration`} />
          </div>
          {snippet.containsToken ? <p className="muted">This configuration contains the token.</p> : null}
        </Tabs>
      ) : (
        <p className="muted">
          The client configurations need to know how the bridge starts on this machine, and the service status could not
          be loaded. Run <code>gatehouse-bridge config --client NAME</code> in a terminal instead.
        </p>
      )}
      <p>
        <button type="button" className="primary" onClick={onDone}>
          Done, I have copied it
        </button>
      </p>
    </section>
  );
}
