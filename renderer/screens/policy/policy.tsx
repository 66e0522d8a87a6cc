import { useState } from 'react';
import type { PolicyExplainAnswer, PolicyView, TokenView, ToolInfo } from '../../../main/contract/index.ts';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useLoad } from '../../lib/use-load.ts';

/**
 * The tool-call policy (docs/policy.md): the Cedar text in force, editable
 * (a policy that does not validate is refused with the validator's message
 * and the one in force stays), and a test form: a token, a tool and its
 * arguments -> what the call would do, and the policies that decide it.
 */
export function PolicyScreen() {
  const api = useApi();
  const policy = useLoad(() => api['policy.get']({}), [api]);
  return (
    <div className="policy">
      <LoadState state={policy.state} what="the policy" onRetry={policy.reload}>
        {(p: PolicyView) => <PolicyEditor key={`${p.source}:${p.updated ?? ''}`} policy={p} onSaved={policy.reload} />}
      </LoadState>
      <ExplainForm />
    </div>
  );
}

function PolicyEditor({ policy, onSaved }: { policy: PolicyView; onSaved: () => void }) {
  const api = useApi();
  const [text, setText] = useState(policy.text);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (action: 'policy.check' | 'policy.set') => {
    setBusy(true);
    setMessage(null);
    const r = await api[action]({ text });
    setBusy(false);
    if (!r.ok) return setMessage({ ok: false, text: r.message });
    setMessage({
      ok: true,
      text: action === 'policy.set' ? 'Saved: it applies to the next call.' : `Valid: ${r.data.policies.join(', ')}`,
    });
    if (action === 'policy.set') onSaved();
  };
  return (
    <section aria-labelledby="policy-text">
      <h2 id="policy-text">Policy in force</h2>
      <p>
        {policy.source === 'default'
          ? 'The shipped default policy (the rules before policies).'
          : `Set ${policy.updated}.`}{' '}
        Policies: {policy.policies.join(', ') || '—'}
      </p>
      {policy.problem ? <ErrorBox message={policy.problem} /> : null}
      <label htmlFor="policy-editor">Cedar policy</label>
      <textarea
        id="policy-editor"
        className="policy-text"
        rows={18}
        spellCheck={false}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => void act('policy.check')}>
          Check
        </button>
        <button type="button" disabled={busy || text === policy.text} onClick={() => void act('policy.set')}>
          Save
        </button>
      </div>
      {message ? message.ok ? <p role="status">{message.text}</p> : <ErrorBox message={message.text} /> : null}
    </section>
  );
}

function ExplainForm() {
  const api = useApi();
  const tokens = useLoad(() => api['tokens.list']({}), [api]);
  const tools = useLoad(() => api['tools.list']({}), [api]);
  const [token, setToken] = useState('');
  const [tool, setTool] = useState('');
  const [args, setArgs] = useState('{}');
  const [answer, setAnswer] = useState<PolicyExplainAnswer | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const tokenRows: TokenView[] = tokens.state.status === 'ready' ? tokens.state.data : [];
  const toolRows: ToolInfo[] = tools.state.status === 'ready' ? tools.state.data : [];
  const run = async () => {
    setFailure(null);
    setAnswer(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return setFailure('The arguments are not JSON: write an object, e.g. {"id": 12}.');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      return setFailure('The arguments must be a JSON object, e.g. {"id": 12}.');
    const r = await api['policy.explain']({ token_id: token, tool, args: parsed as Record<string, unknown> });
    if (r.ok) setAnswer(r.data);
    else setFailure(r.message);
  };
  return (
    <section aria-labelledby="policy-test">
      <h2 id="policy-test">Test a call</h2>
      <form onSubmit={(e) => (e.preventDefault(), void run())}>
        <label htmlFor="policy-token">Token</label>
        <select id="policy-token" value={token} onChange={(e) => setToken(e.target.value)}>
          <option value="">Choose a token</option>
          {tokenRows.map((t) => (
            <option key={t.id} value={t.id}>{`${t.label} (${t.id})`}</option>
          ))}
        </select>
        <label htmlFor="policy-tool">Tool</label>
        <select id="policy-tool" value={tool} onChange={(e) => setTool(e.target.value)}>
          <option value="">Choose a tool</option>
          {toolRows.map((t) => (
            <option key={t.name} value={t.name}>
              {t.name}
            </option>
          ))}
        </select>
        <label htmlFor="policy-args">Arguments (JSON)</label>
        <textarea id="policy-args" rows={3} spellCheck={false} value={args} onChange={(e) => setArgs(e.target.value)} />
        <button type="submit" disabled={!token || !tool}>
          Explain
        </button>
      </form>
      {failure ? <ErrorBox message={failure} /> : null}
      {answer ? (
        <div role="status" className="policy-answer">
          <p>
            <strong>{answer.outcome.replace(/_/g, ' ')}</strong>: {answer.summary}
          </p>
          <ul>
            {answer.call ? (
              <li>
                call: {answer.call.decision} ({answer.call.policies.join(', ') || 'no policy'})
              </li>
            ) : null}
            {answer.run_without_approval ? (
              <li>
                run without approval: {answer.run_without_approval.decision} (
                {answer.run_without_approval.policies.join(', ') || 'no policy permits it'})
              </li>
            ) : null}
            {argumentValues(answer) ? <li>argument values the policy reads: {argumentValues(answer)}</li> : null}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

/** `name = "value"` for each argument value the policy saw (docs/policy.md, "Argument values"); secrets arrive as their kind. */
function argumentValues(answer: PolicyExplainAnswer): string {
  const args = (answer.context.args ?? {}) as Record<string, string>;
  const lists = (answer.context.arg_lists ?? {}) as Record<string, string[]>;
  return [
    ...Object.entries(args).map(([k, v]) => `${k} = ${JSON.stringify(v)}`),
    ...Object.entries(lists).map(([k, v]) => `${k} = [${v.map((x) => JSON.stringify(x)).join(', ')}]`),
  ].join(', ');
}
