import type { FormEvent, ReactNode } from 'react';
import { argLines, type AddForm, type FormErrors } from './add-input.ts';
import { statefulServer } from '../../../main/contract/index.ts';
import { PairRows } from './pair-rows.tsx';

/**
 * The first step of adding an upstream: what to run (stdio) or where to
 * connect (HTTP). Submitting only checks the input and moves on to the
 * consent step: nothing is sent to the service, nothing runs.
 */
export function AddUpstreamForm({
  form,
  errors,
  onChange,
  onSubmit,
  onCancel,
}: {
  form: AddForm;
  errors: FormErrors;
  onChange: (form: AddForm) => void;
  onSubmit: () => void;
  onCancel: () => void;
}) {
  const set = (change: Partial<AddForm>) => onChange({ ...form, ...change });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  return (
    <form className="card form add-upstream" onSubmit={submit} aria-labelledby="up-add" noValidate>
      <h2 id="up-add">Add an upstream server</h2>
      <Field
        id="up-id"
        label="Id"
        help="1-32 of a-z, 0-9 and inner hyphens, e.g. files. Clients see its tools as id__tool."
        error={errors.id}
      >
        {(p) => (
          <input
            {...p}
            value={form.id}
            maxLength={32}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set({ id: e.target.value })}
            required
          />
        )}
      </Field>
      <fieldset className="field">
        <legend>Transport</legend>
        <label className="radio">
          <input type="radio" name="up-kind" checked={form.kind === 'stdio'} onChange={() => set({ kind: 'stdio' })} />{' '}
          A local program (stdio)
        </label>{' '}
        <label className="radio">
          <input type="radio" name="up-kind" checked={form.kind === 'http'} onChange={() => set({ kind: 'http' })} /> A
          server at a URL (Streamable HTTP)
        </label>
      </fieldset>
      {form.kind === 'stdio' ? (
        <StdioFields form={form} errors={errors} set={set} />
      ) : (
        <HttpFields form={form} errors={errors} set={set} />
      )}
      <Field
        id="up-read"
        label="Read tools (optional)"
        help="The upstream's own tool names to treat as reads, separated by commas or spaces. Every other tool is a write (staged for approval) unless its read-only hint is accepted in the next step."
        error={errors.read}
      >
        {(p) => (
          <input
            {...p}
            value={form.read}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set({ read: e.target.value })}
          />
        )}
      </Field>
      <Field
        id="up-timeout"
        label="Timeout in ms (optional)"
        help="How long one call may run without progress; 60000 when empty."
        error={errors.timeoutMs}
      >
        {(p) => (
          <input
            {...p}
            value={form.timeoutMs}
            inputMode="numeric"
            onChange={(e) => set({ timeoutMs: e.target.value })}
          />
        )}
      </Field>
      <div className="form-buttons">
        <button type="submit" className="primary">
          Review before {form.kind === 'stdio' ? 'running' : 'connecting'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

type SetForm = (change: Partial<AddForm>) => void;

function StdioFields({ form, errors, set }: { form: AddForm; errors: FormErrors; set: SetForm }) {
  return (
    <>
      <Field
        id="up-command"
        label="Command"
        help="The program to run, e.g. npx or /usr/bin/node. It is run directly, not through a shell."
        error={errors.command}
      >
        {(p) => (
          <input
            {...p}
            value={form.command}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set({ command: e.target.value })}
            required
          />
        )}
      </Field>
      <Field
        id="up-args"
        label="Arguments (one per line)"
        help="Each line is one argument, exactly as typed (no quoting, no shell expansion); empty lines are ignored."
        error={errors.args}
      >
        {(p) => (
          <textarea
            {...p}
            rows={4}
            value={form.args}
            spellCheck={false}
            onChange={(e) => set({ args: e.target.value })}
          />
        )}
      </Field>
      <PairRows
        legend="Environment variables"
        what="variable"
        idBase="up-env"
        pairs={form.env}
        onChange={(env) => set({ env })}
        namePlaceholder="NAME"
        error={errors.env}
        help="The program gets only these and a minimal PATH, HOME, USER, SHELL, TERM: none of Gatehouse's own. Values go to the vault and are never shown again."
      />
      <SandboxFields form={form} errors={errors} set={set} />
      <ProcessField form={form} set={set} />
    </>
  );
}

/** What the OS sandbox lets the program reach beyond its runtime, its package and its own HOME (docs/upstreams.md, "Confinement"). */
function SandboxFields({ form, errors, set }: { form: AddForm; errors: FormErrors; set: SetForm }) {
  const lines = (key: 'allowWrite' | 'allowRead' | 'allowNet', id: string, label: string, help: string) => (
    <Field id={id} label={label} help={help} error={undefined}>
      {(p) => (
        <textarea
          {...p}
          rows={2}
          value={form[key]}
          spellCheck={false}
          disabled={form.unconfined}
          onChange={(e) => set({ [key]: e.target.value })}
        />
      )}
    </Field>
  );
  return (
    <fieldset className="field">
      <legend>Sandbox</legend>
      <p className="help">
        It runs confined: it sees its runtime, its package, its own HOME and temp folder, and only what you grant here.
        server-filesystem&apos;s folders are suggested from its arguments (shown in the next step).
      </p>
      {lines(
        'allowWrite',
        'up-allow-write',
        'Folders it may read and write (one per line)',
        'An absolute path or ~/...',
      )}
      {lines('allowRead', 'up-allow-read', 'Folders it may only read (one per line)', 'An absolute path or ~/...')}
      {lines(
        'allowNet',
        'up-allow-net',
        'Hosts it may reach (one per line)',
        'HOST (ports 80 and 443), HOST:PORT or *.domain; a local service as localhost:PORT. None: no network at all.',
      )}
      <label className="checkbox">
        <input type="checkbox" checked={form.unconfined} onChange={(e) => set({ unconfined: e.target.checked })} /> Run
        it unconfined, with all of my rights (not recommended)
      </label>
      {errors.sandbox ? <p className="field-error">{errors.sandbox}</p> : null}
    </fieldset>
  );
}

/** One process shared by every agent, or one each; suggested for servers known to keep state per agent. */
function ProcessField({ form, set }: { form: AddForm; set: SetForm }) {
  const suggestion = statefulServer(form.command.trim(), argLines(form.args));
  return (
    <fieldset className="field">
      <legend>Processes</legend>
      <label className="checkbox">
        <input type="checkbox" checked={form.perClient} onChange={(e) => set({ perClient: e.target.checked })} /> One
        process per client (each token gets its own, with its own state and HOME)
      </label>
      <p className="help">
        {suggestion && !form.perClient
          ? `Suggested: ${suggestion.replace(/; give it .*$/, '')}.`
          : 'Off: one process serves every agent. On: at most 8 run at once, each stopped after 15 minutes without a call (gatehouse upstreams process changes both).'}
      </p>
    </fieldset>
  );
}

function HttpFields({ form, errors, set }: { form: AddForm; errors: FormErrors; set: SetForm }) {
  return (
    <>
      <Field
        id="up-url"
        label="URL"
        help="The server's MCP endpoint, http:// or https://. No credentials in the URL: use a header or a token from the vault."
        error={errors.url}
      >
        {(p) => (
          <input
            {...p}
            type="url"
            value={form.url}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set({ url: e.target.value })}
            required
          />
        )}
      </Field>
      <PairRows
        legend="Headers"
        what="header"
        idBase="up-headers"
        pairs={form.headers}
        onChange={(headers) => set({ headers })}
        namePlaceholder="Header-Name"
        error={errors.headers}
        help="Sent with every request to this server. Values go to the vault and are never shown again."
      />
      <Field
        id="up-token"
        label="Bearer token from the vault (optional)"
        help="The vault account of a token saved earlier (gatehouse tokens create --keychain NAME on the other side); sent as Authorization: Bearer."
        error={errors.tokenKeychain}
      >
        {(p) => (
          <input
            {...p}
            value={form.tokenKeychain}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set({ tokenKeychain: e.target.value })}
          />
        )}
      </Field>
    </>
  );
}

/** A labelled control with its help and error, wired for screen readers. */
function Field({
  id,
  label,
  help,
  error,
  children,
}: {
  id: string;
  label: string;
  help: string;
  error: string | undefined;
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby': string }) => ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': !!error, 'aria-describedby': `${id}-help${error ? ` ${id}-error` : ''}` })}
      <p id={`${id}-help`} className="help">
        {help}
      </p>
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
