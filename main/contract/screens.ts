/**
 * The console's screens, in navigation order: the console's tabs and routes
 * (`#approvals`), and the desktop shell's "open the console on ..." (tray,
 * notifications) name them from this one list.
 */
export const CONSOLE_SCREENS = [
  { key: 'overview', title: 'Overview' },
  { key: 'approvals', title: 'Approvals' },
  { key: 'tokens', title: 'Tokens' },
  { key: 'upstreams', title: 'Upstreams' },
  { key: 'clients', title: 'Clients' },
  { key: 'policy', title: 'Policy' },
  { key: 'activity', title: 'Activity' },
  { key: 'usage', title: 'Usage' },
  { key: 'cloud', title: 'Cloud' },
  { key: 'settings', title: 'Settings' },
] as const;

export type ConsoleScreen = (typeof CONSOLE_SCREENS)[number]['key'];
