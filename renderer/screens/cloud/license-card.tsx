import { useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { LICENSE_KEY_PATTERN } from '../../../main/contract/cloud/license.ts';
import type { CloudLicenseAnswer, CloudStatusView } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';
import { certificateWords, licenseWords } from '../../lib/cloud-words.ts';
import { useApi } from '../../lib/console-context.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { FailureBox } from './cloud-failure.tsx';
import { useAction } from './use-action.ts';

const seats = (l: CloudLicenseAnswer['license']) =>
  l.site_limit === null ? '' : ` ${l.sites_used ?? 0} of ${l.site_limit} seats in use.`;

/**
 * The license: its state and plan from the certificate, activate (the key is a
 * password field, emptied once sent, never shown again; only the gateway's
 * preview of it is) and deactivate.
 */
export function LicenseCard({ status, onChanged }: { status: CloudStatusView; onChanged: () => void }) {
  const api = useApi();
  const action = useAction();
  const key = useRef<HTMLInputElement>(null);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const license = status.certificate?.license ?? null;
  const active = license?.status === 'active';

  const activate = async (e: FormEvent) => {
    e.preventDefault();
    // the key is read from the field when sent and kept in no state, so nothing re-renders it
    const input = key.current;
    if (!input) return;
    const value = input.value.trim();
    if (!LICENSE_KEY_PATTERN.test(value)) {
      setKeyError('A license key is ghl_ followed by 32 letters, digits, - or _.');
      return;
    }
    setKeyError(null);
    input.value = '';
    await action.run(
      () => api['cloud.activate']({ license_key: value }),
      (a) =>
        `License activated: ${a.license.plan ?? 'no plan'}, key ${a.license.key_preview ?? ''}.${seats(a.license)}`,
    );
    onChanged();
  };
  const deactivate = async () => {
    setConfirming(false);
    await action.run(
      () => api['cloud.deactivate']({}),
      (a) => `License deactivated on this site: its seat is free again.${seats(a.license)}`,
    );
    onChanged();
  };

  return (
    <section className="card" aria-labelledby="cl-license">
      <h2 id="cl-license">License</h2>
      <dl className="facts">
        <dt>State</dt>
        <dd className={active ? 'state-on' : 'state-off'}>
          {/* the gateway's certificate says `invalid` for a site that holds no key: that is "none" or "deactivated", not a bad key */}
          {status.license_state === 'deactivated'
            ? 'Deactivated: the free plan applies'
            : !license || (!active && !license.key_preview)
              ? 'No license activated'
              : licenseWords(license.status)}
          {license && license.key_preview && licenseWords(license.status).toLowerCase() !== license.status ? (
            <span className="detail"> ({license.status})</span>
          ) : null}
        </dd>
        <dt>Plan</dt>
        <dd>{license?.plan ?? 'free (local policy)'}</dd>
        {license?.key_preview ? (
          <>
            <dt>Key</dt>
            <dd>
              <code>{license.key_preview}</code>
            </dd>
          </>
        ) : null}
        {license?.expires_at ? (
          <>
            <dt>Expires</dt>
            <dd>{formatDateTime(license.expires_at)}</dd>
          </>
        ) : null}
        {status.certificate &&
        status.certificate.reason === 'license_not_active' &&
        status.certificate.license.key_preview ? (
          <>
            <dt>Features</dt>
            <dd className="state-warn">{certificateWords('license_not_active')}</dd>
          </>
        ) : null}
      </dl>
      {action.failure ? (
        <FailureBox title={active ? 'Could not deactivate' : 'Could not activate'} failure={action.failure} />
      ) : null}
      {active ? (
        <div className="form-buttons">
          {confirming ? (
            <ConfirmInline
              question="Deactivate the license on this site?"
              confirmLabel="Deactivate"
              onConfirm={deactivate}
              onCancel={() => setConfirming(false)}
              busy={action.busy}
            />
          ) : (
            <button type="button" onClick={() => setConfirming(true)} disabled={action.busy}>
              Deactivate…
            </button>
          )}
          <span role="status" className="form-status">
            {action.done}
          </span>
        </div>
      ) : (
        <form className="form" onSubmit={activate} noValidate aria-label="Activate a license">
          <div className="field">
            <label htmlFor="cl-license-key">License key</label>
            <input
              id="cl-license-key"
              ref={key}
              type="password"
              autoComplete="off"
              spellCheck={false}
              aria-invalid={!!keyError}
              aria-describedby={`cl-license-help${keyError ? ' cl-license-error' : ''}`}
            />
            <p id="cl-license-help" className="help">
              It starts with ghl_. It is sent to the gateway once and kept in the OS keychain; the console never shows
              it again.
            </p>
            {keyError ? (
              <p id="cl-license-error" className="field-error">
                {keyError}
              </p>
            ) : null}
          </div>
          <div className="form-buttons">
            <button type="submit" className="primary" disabled={action.busy}>
              {action.busy ? 'Activating…' : 'Activate'}
            </button>
            <span role="status" className="form-status">
              {action.done}
            </span>
          </div>
        </form>
      )}
    </section>
  );
}
