import type { CallQuery } from '../../main/core/policy/policy.ts';

/** One call's policy request, as the core builds it, for the engine's own tests: an editor calling `tool` (a read). */
export const toolQuery = (tool = 'pages_list'): CallQuery => ({
  action: 'call',
  principal: { type: 'User', id: 'u' },
  resource: { type: 'Tool', id: tool },
  context: {
    arg_names: [],
    secret_kinds: [],
    args: { __entity: { type: 'Args', id: 'call' } },
    arg_lists: { __entity: { type: 'ArgLists', id: 'call' } },
    approval_mode: 'admin',
    time: { date: '2026-11-26', hour: 9, minute: 0, weekday: 4 },
  },
  entities: [
    {
      uid: { type: 'User', id: 'u' },
      attrs: {
        login: 'a',
        role: 'editor',
        capabilities: ['read'],
        token: { id: 't', label: 'l', client: '', read_only: false },
      },
      parents: [],
    },
    {
      uid: { type: 'Tool', id: tool },
      attrs: {
        name: tool,
        plugin: 'site',
        plugin_kind: 'site',
        class: 'read',
        capability: 'read',
        feature: 'f',
        target: '',
        disabled: false,
        decides_staged: false,
      },
      parents: [],
    },
    { uid: { type: 'Args', id: 'call' }, attrs: {}, parents: [], tags: {} },
    { uid: { type: 'ArgLists', id: 'call' }, attrs: {}, parents: [], tags: {} },
  ],
});
