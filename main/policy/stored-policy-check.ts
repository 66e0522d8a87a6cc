import type { PolicyEngine } from '../core/policy/policy.ts';

/**
 * Whether the stored policy can be used. One that does not parse or validate
 * (edited by hand, or written for a newer schema) makes every call answer
 * `policy_unavailable`, which is right, but must not be silent: the service
 * checks it once ready (a warning in its log) and the health report and the
 * console's Policy screen say so until a valid one is set. The check loads
 * the Cedar engine only when a person's policy is stored; the shipped
 * default is checked by the tests.
 */
export interface StoredPolicyCheck {
  /** what is wrong with the stored policy, as last checked; null when it is fine (or none is stored) */
  problem(): string | null;
  /** checks the stored text now (again when it changed since the last check) */
  check(): Promise<string | null>;
}

export function storedPolicyCheck(
  engine: Pick<PolicyEngine, 'check'>,
  storedText: () => string | null,
  /** told when a check's answer differs from the last one (the health report changed) */
  changed: () => void = () => {},
): StoredPolicyCheck {
  let checked: { text: string | null; problem: string | null } = { text: null, problem: null };
  const check = async (): Promise<string | null> => {
    const text = storedText();
    if (text === checked.text) return checked.problem;
    const problem =
      text === null
        ? null
        : await engine.check(text).then(
            () => null,
            (e: Error) =>
              `The stored policy cannot be used (${e.message.slice(0, 300)}): every tool call is refused (policy_unavailable) until a valid one is set, in the console's Policy screen or with: gatehouse policy set FILE.`,
          );
    if (problem !== checked.problem) queueMicrotask(changed);
    checked = { text, problem };
    return problem;
  };
  return {
    // A policy set since the last check was validated by `policy set`; one edited by hand is checked again here.
    problem: () => {
      if (storedText() === checked.text) return checked.problem;
      void check();
      return null;
    },
    check,
  };
}
