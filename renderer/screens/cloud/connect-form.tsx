import { useState } from 'react';
import type { FormEvent } from 'react';
import { CloudConnectInput } from '../../../main/contract/index.ts';
import type { CloudConnectAnswer } from '../../../main/contract/index.ts';
import { useApi } from '../../lib/console-context.tsx';
import { FailureBox } from './cloud-failure.tsx';
import { useAction } from './use-action.ts';

type Field = 'url' | 'environment' | 'public_key' | 'name';

/** Link this Gatehouse to a cloud gateway: its address, the environment, and the key to pin (or fetch it and compare). */
export function ConnectForm({ onConnected }: { onConnected: (answer: CloudConnectAnswer) => void }) {
  const [url, setUrl] = useState('');
  const [environment, setEnvironment] = useState<'production' | 'staging'>('production');
  const [publicKey, setPublicKey] = useState('');
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const action = useAction();
  const api = useApi();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const input = {
      url,
      environment,
      ...(publicKey.trim() ? { public_key: publicKey } : {}),
      ...(name.trim() ? { name } : {}),
    };
    const checked = CloudConnectInput.safeParse(input);
    if (!checked.success) {
      const found: Partial<Record<Field, string>> = {};
      for (const issue of checked.error.issues)
        found[issue.path[0] as Field] ??= issue.code === 'too_small' ? 'required' : issue.message;
      setErrors(found);
      return;
    }
    setErrors({});
    const answer = await action.run(
      () => api['cloud.connect'](checked.data),
      (a) => `Connected as site ${a.site_id}.`,
    );
    if (answer) onConnected(answer);
  };

  const error = (field: Field) =>
    errors[field] ? (
      <p id={`cl-${field}-error`} className="field-error">
        {errors[field]}
      </p>
    ) : null;
  const described = (field: Field) => `cl-${field}-help${errors[field] ? ` cl-${field}-error` : ''}`;

  return (
    <form className="card form" onSubmit={submit} noValidate aria-labelledby="cl-connect-title">
      <h2 id="cl-connect-title">Connect to a cloud gateway</h2>
      <p className="muted">
        Not connected. License, entitlements and quotas come from the local free policy until this Gatehouse is linked
        to a cloud gateway. Everything local keeps working either way.
      </p>
      <div className="field">
        <label htmlFor="cl-url">Gateway address</label>
        <input
          id="cl-url"
          type="url"
          inputMode="url"
          autoComplete="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-invalid={!!errors.url}
          aria-describedby={described('url')}
          placeholder="https://gateway.example.com"
        />
        <p id="cl-url-help" className="help">
          The gateway’s base address, with or without /gateway/v1. https, or http to this computer only.
        </p>
        {error('url')}
      </div>
      <div className="field">
        <label htmlFor="cl-env">Environment</label>
        <select
          id="cl-env"
          value={environment}
          onChange={(e) => setEnvironment(e.target.value as 'production' | 'staging')}
          aria-describedby={described('environment')}
        >
          <option value="production">Production</option>
          <option value="staging">Staging</option>
        </select>
        <p id="cl-environment-help" className="help">
          Staging is for trying a gateway out; its licenses and usage are kept apart.
        </p>
        {error('environment')}
      </div>
      <div className="field">
        <label htmlFor="cl-key">Gateway public key (optional)</label>
        <textarea
          id="cl-key"
          rows={3}
          spellCheck={false}
          value={publicKey}
          onChange={(e) => setPublicKey(e.target.value)}
          aria-invalid={!!errors.public_key}
          aria-describedby={described('public_key')}
          placeholder="kid:x, the bare x, or the JWK as JSON"
        />
        <p id="cl-public_key-help" className="help">
          The key the gateway’s operator gave you. Left empty, Gatehouse fetches the gateway’s key and pins it: then
          compare the fingerprint shown after connecting with the one the operator gives you.
        </p>
        {error('public_key')}
      </div>
      <div className="field">
        <label htmlFor="cl-name">Site name (optional)</label>
        <input
          id="cl-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-invalid={!!errors.name}
          aria-describedby={described('name')}
        />
        <p id="cl-name-help" className="help">
          How this Gatehouse is listed at the gateway.
        </p>
        {error('name')}
      </div>
      {action.failure ? <FailureBox title="Could not connect" failure={action.failure} /> : null}
      <div className="form-buttons">
        <button type="submit" className="primary" disabled={action.busy}>
          {action.busy ? 'Connecting…' : 'Connect'}
        </button>
        <span role="status" className="form-status">
          {action.done}
        </span>
      </div>
    </form>
  );
}
