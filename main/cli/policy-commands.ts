import { readFile } from 'node:fs/promises';
import type { PolicyExplainAnswer, PolicyVerdictView } from '../contract/policy.ts';
import { POLICY_MAX_CHARS } from '../contract/policy-limits.ts';
import { safe, unwrap, UsageError } from './output.ts';
import { out, parse, withConnection } from './args.ts';

const verdictLine = (name: string, v: PolicyVerdictView | null) =>
  v
    ? safe`  ${name}: ${v.decision}${v.policies.length ? ` (${v.policies.join(', ')})` : v.decision === 'deny' ? ' (no policy permits it)' : ''}${v.errors.length ? ` [errors in: ${v.errors.join(', ')}]` : ''}`
    : safe`  ${name}: not evaluated`;

/** The argument values as the policy read them (docs/policy.md, "Argument values"): secrets are already their kind. */
function argsLine(e: PolicyExplainAnswer): string[] {
  const args = (e.context.args ?? {}) as Record<string, string>;
  const lists = (e.context.arg_lists ?? {}) as Record<string, string[]>;
  const parts = [
    ...Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`),
    ...Object.entries(lists).map(([k, v]) => `${k}=[${v.map((x) => JSON.stringify(x)).join(', ')}]`),
  ];
  return parts.length ? [safe`  argument values the policy reads: ${parts.join(', ')}`] : [];
}

const explained = (e: PolicyExplainAnswer) =>
  [
    safe`${e.outcome}: ${e.summary}`,
    verdictLine('call', e.call),
    ...(e.run_without_approval ? [verdictLine('run_without_approval', e.run_without_approval)] : []),
    ...argsLine(e),
  ].join('\n');

/** A policy file's text ("-" reads stdin), bounded like the service's limit. */
async function policyFile(path: string | undefined, sub: string): Promise<string> {
  if (!path) throw new UsageError(`policy ${sub} needs a FILE (a .cedar policy; - reads stdin)`);
  let text: string;
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read ${path}: ${e.code ?? e.message}`);
    });
  }
  if (text.length > POLICY_MAX_CHARS)
    throw new UsageError(`${path} is larger than a policy may be (${POLICY_MAX_CHARS} characters)`);
  return text;
}

function argsOf(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    throw new UsageError(`--args is not JSON: ${(e as Error).message}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new UsageError('--args must be a JSON object, e.g. \'{"id": 12}\'');
  return v as Record<string, unknown>;
}

/** `gatehouse policy show | check FILE | set FILE | explain --token ID --tool NAME [--args JSON]` */
export async function policy(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {
    token: { type: 'string' },
    tool: { type: 'string' },
    args: { type: 'string' },
  });
  const json = !!values.json;
  const text = sub === 'check' || sub === 'set' ? await policyFile(positionals[0], sub) : '';
  if (sub === 'explain' && (!values.token || !values.tool))
    throw new UsageError('policy explain needs --token ID and --tool NAME (and optionally --args JSON)');
  const callArgs = sub === 'explain' ? argsOf(values.args as string | undefined) : undefined;
  await withConnection(values, async (c) => {
    if (sub === 'show') {
      const p = unwrap(await c.dispatch('policy.get', {}));
      // stdout is the policy alone, so `policy show > my.cedar; policy set my.cedar` round-trips; the note goes to stderr
      if (!json)
        process.stderr.write(
          safe`${p.source === 'default' ? 'the shipped default policy' : `set ${p.updated}`}; policies: ${p.policies.join(', ')}` +
            '\n',
        );
      return out(json, p, () => p.text.trimEnd());
    }
    if (sub === 'check') {
      const r = unwrap(await c.dispatch('policy.check', { text }));
      return out(
        json,
        r,
        () =>
          safe`valid: ${r.policies.length} ${r.policies.length === 1 ? 'policy' : 'policies'} (${r.policies.join(', ')})`,
      );
    }
    if (sub === 'set') {
      const p = unwrap(await c.dispatch('policy.set', { text }));
      return out(
        json,
        p,
        () =>
          safe`Policy set (${p.policies.length} ${p.policies.length === 1 ? 'policy' : 'policies'}: ${p.policies.join(', ')}); it applies to the next call.`,
      );
    }
    if (sub === 'explain') {
      const e = unwrap(
        await c.dispatch('policy.explain', {
          token_id: values.token as string,
          tool: values.tool as string,
          ...(callArgs ? { args: callArgs } : {}),
        }),
      );
      return out(json, e, () => explained(e));
    }
    throw new UsageError(`unknown policy command '${sub ?? ''}': use show, check, set or explain`);
  });
}
