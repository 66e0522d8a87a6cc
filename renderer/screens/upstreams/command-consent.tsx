import { useEffect, useRef } from 'react';
import { sandboxOf, shown, type SandboxGrant, type UpstreamAddInput } from '../../../main/contract/index.ts';

const FROM: Record<SandboxGrant['from'], string> = {
  person: '',
  command_line: ' (from the command line)',
  runner: ' (for the package runner)',
};

/** The sandbox beside the command: what the service will store, the suggestions included (the same function); also the import's consent. */
export function SandboxConsent({
  t,
}: {
  t: Pick<Extract<UpstreamAddInput['transport'], { kind: 'stdio' }>, 'command' | 'args' | 'sandbox'>;
}) {
  const s = sandboxOf(t.command, t.args ?? [], t.sandbox);
  if (s.unconfined)
    return (
      <>
        <dt>Sandbox</dt>
        <dd className="warning" aria-label="Sandbox">
          Unconfined: it runs with all of your rights (files, network, your keys).
        </dd>
      </>
    );
  const files = s.grants.filter((g) => g.kind !== 'net');
  const net = s.grants.filter((g) => g.kind === 'net');
  return (
    <>
      <dt>Sandbox</dt>
      <dd aria-label="Sandbox">
        Confined: its runtime, its package and its own HOME and temp;
        {files.length ? (
          <ul aria-label="Folders granted">
            {files.map((g) => (
              <li key={`${g.kind}${g.value}`}>
                {g.kind === 'write' ? 'read-write' : 'read-only'} <code>{shown(g.value)}</code>
                {FROM[g.from]}
              </li>
            ))}
          </ul>
        ) : (
          ' no folder of yours.'
        )}
      </dd>
      <dt>Network</dt>
      <dd aria-label="Network">
        {net.length ? (
          <ul aria-label="Hosts granted">
            {net.map((g) => (
              <li key={g.value}>
                <code>{shown(g.value)}</code>
                {FROM[g.from]}
              </li>
            ))}
          </ul>
        ) : (
          'none'
        )}
      </dd>
    </>
  );
}

/**
 * The consent step before anything runs: the exact program, each argument
 * as the process gets it (quoted, control characters made visible), the
 * names of the environment variables (never their values); for an HTTP
 * server the URL, the header names and the vault account. Nothing has been
 * sent to the service yet; only "Run" does that.
 */
export function CommandConsent({
  input,
  busy,
  onConfirm,
  onBack,
}: {
  input: UpstreamAddInput;
  busy: boolean;
  onConfirm: () => void;
  onBack: () => void;
}) {
  const t = input.transport;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="card consent" aria-labelledby="up-consent">
      <h2 id="up-consent" ref={heading} tabIndex={-1}>
        {t.kind === 'stdio' ? `Run this program for “${input.id}”?` : `Connect to this server for “${input.id}”?`}
      </h2>
      {t.kind === 'stdio' ? (
        <dl className="upstream-how">
          <dt>Program</dt>
          <dd>
            <code aria-label="Program">{shown(t.command)}</code>
          </dd>
          <dt>Arguments ({t.args?.length ?? 0})</dt>
          <dd>
            {t.args?.length ? (
              <ol className="consent-args" aria-label="Arguments">
                {t.args.map((a, i) => (
                  <li key={i}>
                    <code>{shown(JSON.stringify(a))}</code>
                  </li>
                ))}
              </ol>
            ) : (
              'none'
            )}
          </dd>
          <dt>Environment variables (names only)</dt>
          <dd aria-label="Environment variable names">
            {t.env?.length ? t.env.map((e) => e.name).join(', ') : 'none'}
          </dd>
          <SandboxConsent t={t} />
        </dl>
      ) : (
        <dl className="upstream-how">
          <dt>URL</dt>
          <dd>
            <code>{shown(t.url)}</code>
          </dd>
          <dt>Headers (names only)</dt>
          <dd>{t.headers?.length ? t.headers.map((h) => h.name).join(', ') : 'none'}</dd>
          <dt>Bearer token</dt>
          <dd>
            {t.token_keychain ? (
              <>
                from the vault account <code>{t.token_keychain}</code>
              </>
            ) : (
              'none'
            )}
          </dd>
        </dl>
      )}
      <p className="help">
        {t.kind === 'stdio'
          ? 'It runs with the environment above and a minimal PATH, HOME, USER, SHELL and TERM, inside the sandbox shown (unless unconfined); it starts again after a crash. '
          : 'Gatehouse never forwards a client’s own token to it. '}
        Next, Gatehouse lists its tools; none is offered to any client until you agree to them.
      </p>
      <div className="form-buttons">
        <button type="button" className="primary" disabled={busy} onClick={onConfirm}>
          {busy ? 'Connecting…' : t.kind === 'stdio' ? 'Run it and list its tools' : 'Connect and list its tools'}
        </button>
        <button type="button" disabled={busy} onClick={onBack}>
          Back to the form
        </button>
      </div>
    </section>
  );
}
