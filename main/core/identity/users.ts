import {
  ROLE_CAPABILITIES,
  DEFAULT_TOKEN_USER,
  type Capability,
  type Role,
  type User,
  Login,
} from '../../contract/users.ts';
import type { DocumentStore } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { OptionsData } from '../ports/options-data.ts';
import { GatehouseError } from '../errors.ts';
import { shortId } from '../../lib/ids.ts';

/** One set per role, made once: it is asked for on every request. */
const CAPABILITIES = new Map<Role, ReadonlySet<Capability>>(
  Object.entries(ROLE_CAPABILITIES).map(([role, caps]) => [role as Role, new Set(caps)]),
);
export const capabilitiesOf = (role: Role): ReadonlySet<Capability> => CAPABILITIES.get(role) ?? new Set();

export class Users {
  private readonly roleListeners = new Set<(user: User) => void>();

  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly clock: Clock,
  ) {}

  list(): User[] {
    return this.store.read().users;
  }

  byId(id: string): User | undefined {
    return this.store.read().users.find((u) => u.id === id);
  }

  byLogin(login: string): User | undefined {
    return this.store.read().users.find((u) => u.login === login);
  }

  require(login: string): User {
    const user = this.byLogin(login);
    if (!user) throw new GatehouseError('not_found', `no user with login '${login}' (see: gatehouse users list)`);
    return user;
  }

  /** First run: an `admin` administrator. */
  async ensureAdmin(): Promise<User> {
    return this.store.update((d) => {
      const existing = d.users.find((u) => u.role === 'administrator');
      if (existing) return existing;
      const admin: User = {
        id: shortId('usr'),
        login: 'admin',
        display_name: 'Administrator',
        role: 'administrator',
        created: new Date(this.clock.now()).toISOString(),
      };
      d.users.push(admin);
      return admin;
    });
  }

  /** DEFAULT_TOKEN_USER, created the first time (in one store update, so two creates at once make one user). */
  async defaultTokenUser(): Promise<User> {
    return this.store.update((d) => {
      const existing = d.users.find((u) => u.login === DEFAULT_TOKEN_USER.login);
      if (existing) return { ...existing };
      const user: User = {
        id: shortId('usr'),
        ...DEFAULT_TOKEN_USER,
        created: new Date(this.clock.now()).toISOString(),
      };
      d.users.push(user);
      return { ...user };
    });
  }

  async add(login: string, role: Role, displayName?: string): Promise<User> {
    const parsed = Login.safeParse(login);
    if (!parsed.success)
      throw new GatehouseError('invalid_value', `invalid login '${login}': ${parsed.error.issues[0]?.message}`);
    return this.store.update((d) => {
      if (d.users.some((u) => u.login === login))
        throw new GatehouseError('conflict', `a user with login '${login}' already exists`);
      const user: User = {
        id: shortId('usr'),
        login,
        display_name: displayName ?? login,
        role,
        created: new Date(this.clock.now()).toISOString(),
      };
      d.users.push(user);
      return user;
    });
  }

  /** Called after a user's role changed: what that user's tokens may see changed with it. Returns the unsubscribe. */
  onRoleChange(listener: (user: User) => void): () => void {
    this.roleListeners.add(listener);
    return () => this.roleListeners.delete(listener);
  }

  async setRole(login: string, role: Role): Promise<User> {
    const user = await this.store.update((d) => {
      const user = d.users.find((u) => u.login === login);
      if (!user) throw new GatehouseError('not_found', `no user with login '${login}'`);
      if (
        user.role === 'administrator' &&
        role !== 'administrator' &&
        d.users.filter((u) => u.role === 'administrator').length === 1
      ) {
        throw new GatehouseError(
          'conflict',
          `'${login}' is the last administrator; make another user administrator first`,
        );
      }
      user.role = role;
      return { ...user };
    });
    for (const l of this.roleListeners) l(user);
    return user;
  }
}
