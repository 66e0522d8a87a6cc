import { useState } from 'react';
import type { UpstreamAddInput, UpstreamDetail } from '../../../main/contract/index.ts';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { AddUpstreamForm } from './add-form.tsx';
import { addInput, EMPTY_FORM, type AddForm, type FormErrors } from './add-input.ts';
import { CommandConsent } from './command-consent.tsx';
import { ToolConsent } from './tool-consent.tsx';

type Step = { at: 'form' } | { at: 'command'; input: UpstreamAddInput } | { at: 'tools'; detail: UpstreamDetail };

/**
 * Adding an upstream from the console, in the CLI's order but with the
 * person's consent asked twice: the form; what will run (or be connected to),
 * before anything is sent; then, once connected, the tools it listed, none
 * offered to a client until the person agrees (docs/upstreams.md, "Consent").
 * Secrets typed here go to the service once and live in its vault.
 */
export function AddUpstream({ onClose, onAdded }: { onClose: () => void; onAdded: (id: string) => void }) {
  const api = useApi();
  const [form, setForm] = useState<AddForm>(EMPTY_FORM);
  const [errors, setErrors] = useState<FormErrors>({});
  const [step, setStep] = useState<Step>({ at: 'form' });
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);

  const review = () => {
    setFailure(null);
    const r = addInput(form);
    if (!r.ok) return setErrors(r.errors);
    setErrors({});
    setStep({ at: 'command', input: r.input });
  };
  const run = async (input: UpstreamAddInput) => {
    setBusy(true);
    setFailure(null);
    const r = await api['upstreams.add'](input);
    setBusy(false);
    if (!r.ok) {
      // Nothing was kept: back to the form as typed, with the service's reason.
      setFailure({ message: r.message, code: r.code });
      return setStep({ at: 'form' });
    }
    // The values were sent once; the form forgets them.
    setForm((f) => ({
      ...f,
      env: f.env.map((p) => ({ ...p, value: '' })),
      headers: f.headers.map((p) => ({ ...p, value: '' })),
    }));
    setStep({ at: 'tools', detail: r.data });
  };
  const reload = async (id: string) => {
    const r = await api['upstreams.get']({ id });
    if (r.ok) setStep({ at: 'tools', detail: r.data });
  };

  return (
    <div className="add-flow">
      {failure ? <ErrorBox message={`Not added: ${failure.message}`} code={failure.code} /> : null}
      {step.at === 'form' ? (
        <AddUpstreamForm form={form} errors={errors} onChange={setForm} onSubmit={review} onCancel={onClose} />
      ) : null}
      {step.at === 'command' ? (
        <CommandConsent
          input={step.input}
          busy={busy}
          onConfirm={() => void run(step.input)}
          onBack={() => setStep({ at: 'form' })}
        />
      ) : null}
      {step.at === 'tools' ? (
        <ToolConsent
          detail={step.detail}
          onDone={() => onAdded(step.detail.id)}
          onDropped={onClose}
          onReload={() => void reload(step.detail.id)}
        />
      ) : null}
    </div>
  );
}
