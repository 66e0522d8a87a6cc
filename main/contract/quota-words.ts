/**
 * Quota names for a person, shared by the console and the tray: "AI tokens
 * per month (this site)". The raw metric and scope stay available as details.
 */

const METRIC_NAMES: Record<string, string> = {
  ai_tokens: 'AI tokens',
  translation_characters: 'Translated characters',
  indexing_requests: 'Indexing requests',
  mcp_actions: 'MCP tool calls',
  reports: 'Reports',
  cloud_tasks: 'Cloud tasks',
};
export const metricName = (metric: string): string =>
  Object.hasOwn(METRIC_NAMES, metric) ? METRIC_NAMES[metric]! : metric;

const SCOPE_NAMES: Record<string, string> = {
  account: 'account',
  department: 'department',
  site: 'this site',
  project: 'project',
};
export const scopeName = (scope: string): string => (Object.hasOwn(SCOPE_NAMES, scope) ? SCOPE_NAMES[scope]! : scope);

export const periodName = (period: string | null): string =>
  period === 'day' ? 'per day' : period === 'month' ? 'per month' : '';

/** "AI tokens per month (account acme)"; a site's own id is left out (it is this site). */
export function quotaName(q: { metric: string; period: string | null; scope: string; subject: string | null }): string {
  const period = periodName(q.period);
  const subject = q.scope === 'site' || !q.subject ? '' : ` ${q.subject}`;
  return `${metricName(q.metric)}${period ? ` ${period}` : ''} (${scopeName(q.scope)}${subject})`;
}
