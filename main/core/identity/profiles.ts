import type { Profile, ProfileCreateInput, ProfileView } from '../../contract/profiles.ts';
import { NAMESPACE_SEPARATOR } from '../../contract/upstreams.ts';
import type { Clock } from '../../lib/clock.ts';
import type { DocumentStore } from '../ports/ports.ts';
import type { OptionsData } from '../ports/options-data.ts';
import type { Registry } from '../calls/registry.ts';
import { TOOL_NAME } from '../calls/registry.ts';
import { GatehouseError } from '../errors.ts';

/**
 * Named tool sets kept in options.json. A profile only ever narrows a token:
 * the registry intersects it with the user's capabilities and the token's
 * own scope. A profile bound to tokens cannot be removed (docs/decisions.md).
 */
export class Profiles {
  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly clock: Clock,
    private readonly registry: Registry,
  ) {}

  get(name: string): Profile | undefined {
    return this.store.read().profiles.find((p) => p.name === name);
  }

  list(): ProfileView[] {
    const { profiles, tokens } = this.store.read();
    return profiles.map((p) => ({
      ...p,
      tokens: tokens.filter((t) => t.scope.profile === p.name).map((t) => ({ id: t.id, label: t.label })),
    }));
  }

  show(name: string): ProfileView {
    const view = this.list().find((p) => p.name === name);
    if (!view) throw this.unknown(name);
    return view;
  }

  async create(input: ProfileCreateInput): Promise<ProfileView> {
    const tools = [...new Set(input.tools ?? [])];
    const upstreams = [...new Set(input.upstreams ?? [])];
    const plugins = new Set(this.registry.listPlugins().map((p) => p.id));
    for (const u of upstreams)
      if (!plugins.has(u))
        throw new GatehouseError(
          'invalid_value',
          `--upstreams names an unknown upstream '${u.slice(0, 64)}' (known: ${[...plugins].join(', ')})`,
        );
    for (const t of tools) {
      // An upstream's tool may be quarantined or its server not connected (the CLI on the data dir): its namespace is enough.
      const owner = t.includes(NAMESPACE_SEPARATOR) ? t.slice(0, t.indexOf(NAMESPACE_SEPARATOR)) : null;
      if (!TOOL_NAME.test(t) || !(this.registry.has(t) || (owner !== null && plugins.has(owner)))) {
        throw new GatehouseError(
          'invalid_value',
          `--tools names an unknown tool '${t.slice(0, 128)}' (see: gatehouse upstreams tools ID, or the tools list in the console)`,
        );
      }
    }
    const profile: Profile = { name: input.name, tools, upstreams, created: new Date(this.clock.now()).toISOString() };
    await this.store.update((d) => {
      if (d.profiles.some((p) => p.name === input.name))
        throw new GatehouseError(
          'conflict',
          `a profile '${input.name}' exists already (remove it first: gatehouse profiles remove ${input.name})`,
        );
      d.profiles.push(profile);
    });
    return { ...profile, tokens: [] };
  }

  /** Refused while tokens use it: the person revokes them (or keeps the profile); a token is never silently widened or emptied. */
  async remove(name: string): Promise<{ name: string }> {
    await this.store.update((d) => {
      const i = d.profiles.findIndex((p) => p.name === name);
      if (i < 0) throw this.unknown(name);
      const users = d.tokens.filter((t) => t.scope.profile === name);
      if (users.length) {
        throw new GatehouseError(
          'conflict',
          `profile '${name}' is used by ${users.length} token(s): ${users.map((t) => `${t.id} (${t.label})`).join(', ')}; revoke them first (gatehouse tokens revoke ID)`,
        );
      }
      d.profiles.splice(i, 1);
    });
    return { name };
  }

  private unknown(name: string): GatehouseError {
    return new GatehouseError('not_found', `no profile '${name.slice(0, 64)}' (see: gatehouse profiles list)`);
  }
}
