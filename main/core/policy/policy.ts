import type { Settings } from '../../contract/settings.ts';
import type { PolicyCheckAnswer, PolicyVerdictView } from '../../contract/policy.ts';
import type { Plugin, Tool } from '../calls/tool.ts';
import type { ProfileSet } from '../calls/registry.ts';
import type { Capability, User } from '../../contract/users.ts';
import type { TokenRecord } from '../../contract/tokens.ts';
import { scanSecrets } from '../../lib/secret-scan.ts';
import { argValuesOf, type ArgValues } from './arg-values.ts';

/**
 * The tool-call policy as the core sees it (docs/policy.md): a port the
 * Cedar adapter (main/policy/cedar-engine.ts) implements, and the pure
 * building of one request (principal, action, resource, context, entities)
 * from a call. The core never loads the engine; it only asks.
 */
export type PolicyAction = 'call' | 'run_without_approval' | 'get_prompt' | 'read_resource';

export interface EntityJson {
  uid: { type: string; id: string };
  attrs: Record<string, unknown>;
  parents: Array<{ type: string; id: string }>;
  /** Cedar entity tags: the argument values (arg-values.ts) */
  tags?: Record<string, unknown>;
}

/** What the engine is asked. Its context may be narrowed to the attributes the policies read (main/policy/policy-reads.ts). */
export interface PolicyQuery {
  action: PolicyAction;
  principal: { type: 'User'; id: string };
  resource: { type: 'Tool' | 'Prompt' | 'Resource'; id: string };
  context: Partial<PolicyContext>;
  entities: EntityJson[];
}

/** A request as built from a call: its whole context. */
export interface CallQuery extends PolicyQuery {
  context: PolicyContext;
}

type EntityRef<T extends string> = { __entity: { type: T; id: string } };

export interface PolicyContext {
  arg_names: string[];
  secret_kinds: string[];
  /** the call's scalar argument values, as tags of an `Args` entity */
  args: EntityRef<'Args'>;
  /** its arrays of scalars, as tags of an `ArgLists` entity */
  arg_lists: EntityRef<'ArgLists'>;
  approval_mode: Settings['approval_mode'];
  time: { date: string; hour: number; minute: number; weekday: number };
}

export type PolicyVerdict = PolicyVerdictView;

export interface PolicyEngine {
  /** The active policy's decision; rejects with `policy_unavailable` when it cannot be evaluated (fail closed). */
  decide(query: PolicyQuery): Promise<PolicyVerdict>;
  /**
   * tools/list: false only when the active policy refuses `query`'s tool to its caller whatever the call's own facts
   * (its arguments, target and time, which `query` leaves empty); rejects with `policy_unavailable` like `decide`.
   */
  mayList(query: PolicyQuery): Promise<boolean>;
  /** Whether any `permit` of the active policy can apply to this action: when none can, its answer is deny without evaluating. */
  mayPermit(action: PolicyAction): Promise<boolean>;
  /** Parses and validates a policy against the schema; rejects with `invalid_value` and the validator's message. */
  check(text: string): Promise<PolicyCheckAnswer>;
  /** The shipped default policy and the schema (their files in policy/). */
  defaultText(): string;
  schemaText(): string;
}

/** Who is calling, as the policy sees it: the user, its capabilities and the token it came with. */
export interface PolicyCaller {
  user: Pick<User, 'id' | 'login' | 'role'>;
  capabilities: ReadonlySet<Capability>;
  token: TokenRecord | null;
  client: string | null;
}

export interface PolicyFacts {
  settings: Settings;
  profileOf: (name: string) => ProfileSet | undefined;
  now: number;
}

/** Tools that decide staged writes: the agent may call them only in approval_mode "agent". */
export const isDecisionTool = (tool: Tool): boolean => tool.decides_staged === true;

/** What the policy's context says of a call's arguments: their names, the kinds of secret in them and their values as the policy sees them (kept with a staged write for its confirm; older records have no values). */
export interface CallShape {
  arg_names: string[];
  secret_kinds: string[];
  arg_values?: ArgValues;
}

export function callShapeOf(args: unknown): CallShape {
  const obj = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const found = scanSecrets(obj);
  return {
    arg_names: Object.keys(obj),
    secret_kinds: [...new Set(found.map((f) => f.kind))],
    arg_values: argValuesOf(obj, found),
  };
}

const ARGS_REF: EntityRef<'Args'> = { __entity: { type: 'Args', id: 'call' } };
const ARG_LISTS_REF: EntityRef<'ArgLists'> = { __entity: { type: 'ArgLists', id: 'call' } };

/** The context's argument part and the two entities that carry the values as tags. */
function argumentsOf(shape: CallShape): {
  context: Pick<PolicyContext, 'arg_names' | 'secret_kinds' | 'args' | 'arg_lists'>;
  entities: EntityJson[];
} {
  const values = shape.arg_values ?? { args: {}, lists: {} };
  return {
    context: { arg_names: shape.arg_names, secret_kinds: shape.secret_kinds, args: ARGS_REF, arg_lists: ARG_LISTS_REF },
    entities: [
      { uid: ARGS_REF.__entity, attrs: {}, parents: [], tags: values.args },
      { uid: ARG_LISTS_REF.__entity, attrs: {}, parents: [], tags: values.lists },
    ],
  };
}

/** `call.args` is the call's arguments, or their shape already taken (a staged write's confirm). */
export function policyQuery(
  action: PolicyAction,
  caller: PolicyCaller,
  tool: Tool,
  pluginKind: Plugin['kind'],
  call: { args: unknown; target: string | null; shape?: CallShape },
  facts: PolicyFacts,
): CallQuery {
  // A staged write's shape from before argument values were kept: its payload is the call's arguments.
  const shape = call.shape?.arg_values ? call.shape : { ...callShapeOf(call.args), ...call.shape };
  const argv = argumentsOf(shape);
  const user = userEntity(caller, facts);
  const resource: EntityJson = {
    uid: { type: 'Tool', id: tool.name },
    attrs: {
      name: tool.name,
      plugin: tool.plugin,
      plugin_kind: pluginKind,
      class: tool.write ? 'write' : 'read',
      capability: tool.capability,
      feature: tool.feature,
      target: call.target ?? '',
      disabled: facts.settings.disabled_tools.includes(tool.name),
      decides_staged: isDecisionTool(tool),
    },
    parents: [],
  };
  const context: PolicyContext = {
    ...argv.context,
    approval_mode: facts.settings.approval_mode,
    time: timeOf(facts.now),
  };
  return {
    action,
    principal: { type: 'User', id: caller.user.id },
    resource: { type: 'Tool', id: tool.name },
    context,
    entities: [user, resource, ...argv.entities],
  };
}

/** A request's context as people read it (`policy explain`): the argument values in place of the entities that carry them. */
export function contextForPeople(q: PolicyQuery): Record<string, unknown> {
  const tagsOf = (type: string) => q.entities.find((e) => e.uid.type === type && e.uid.id === 'call')?.tags ?? {};
  return { ...q.context, args: tagsOf('Args'), arg_lists: tagsOf('ArgLists') };
}

/** What the policy knows of a plugin surface (an upstream's prompts and resources). */
export interface SurfaceFacts {
  plugin: string;
  pluginKind: Plugin['kind'];
  capability: string;
  feature: string;
}

/**
 * prompts/get (`get_prompt`, the prompt's arguments in the context) or resources/read (`read_resource`):
 * the resource entity has a Tool's attributes, so the rules written for every action read the same here.
 */
export function surfaceQuery(
  what: { action: 'get_prompt'; name: string } | { action: 'read_resource'; uri: string },
  caller: PolicyCaller,
  surface: SurfaceFacts,
  args: Record<string, unknown>,
  facts: PolicyFacts,
): CallQuery {
  const argv = argumentsOf(callShapeOf(args));
  const name = what.action === 'get_prompt' ? what.name : what.uri;
  const type = what.action === 'get_prompt' ? 'Prompt' : 'Resource';
  const resource: EntityJson = {
    uid: { type, id: name },
    attrs: {
      name,
      ...(what.action === 'read_resource' ? { uri: what.uri } : {}),
      plugin: surface.plugin,
      plugin_kind: surface.pluginKind,
      class: 'read',
      capability: surface.capability,
      feature: surface.feature,
      target: name,
      disabled: false,
      decides_staged: false,
    },
    parents: [],
  };
  return {
    action: what.action,
    principal: { type: 'User', id: caller.user.id },
    resource: { type, id: name },
    context: {
      ...argv.context,
      approval_mode: facts.settings.approval_mode,
      time: timeOf(facts.now),
    },
    entities: [userEntity(caller, facts), resource, ...argv.entities],
  };
}

function userEntity(caller: PolicyCaller, facts: PolicyFacts): EntityJson {
  return {
    uid: { type: 'User', id: caller.user.id },
    attrs: {
      login: caller.user.login,
      role: caller.user.role,
      capabilities: [...caller.capabilities],
      token: tokenInfo(caller, facts),
    },
    parents: [],
  };
}

function tokenInfo(caller: PolicyCaller, facts: PolicyFacts): Record<string, unknown> {
  const t = caller.token;
  const scope = t?.scope;
  const out: Record<string, unknown> = {
    id: t?.id ?? '',
    label: t?.label ?? '',
    client: caller.client ?? '',
    read_only: scope?.read_only ?? false,
  };
  if (scope?.tools) out.tools = [...scope.tools];
  if (scope?.plugins) out.plugins = [...scope.plugins];
  if (scope?.profile !== undefined) {
    // An unknown profile leaves the token nothing, as the registry does.
    const p = facts.profileOf(scope.profile);
    out.profile = { name: scope.profile, tools: [...(p?.tools ?? [])], upstreams: [...(p?.upstreams ?? [])] };
  }
  return out;
}

/** UTC, to the minute: a policy on hours or weekdays needs no more, and the same minute's decisions can be reused. */
function timeOf(now: number): PolicyContext['time'] {
  const d = new Date(now);
  return {
    date: d.toISOString().slice(0, 10),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    weekday: d.getUTCDay(),
  };
}

/** The text an agent and the audit read when a policy refuses: which policies, never the policy text. */
export function refusalMessage(toolName: string, action: PolicyAction, verdict: PolicyVerdict): string {
  const what =
    action === 'call'
      ? `calling ${toolName}`
      : action === 'get_prompt'
        ? `getting prompt ${toolName}`
        : action === 'read_resource'
          ? `reading ${toolName}`
          : `running ${toolName} without a person's approval`;
  return verdict.policies.length
    ? `${what} is forbidden by policy ${verdict.policies.map((p) => `'${p}'`).join(', ')}`
    : `no policy permits ${what}`;
}
