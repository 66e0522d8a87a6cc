import { createContext, useContext } from 'react';
import type { Api } from '../../main/contract/index.ts';
import type { ConsoleEnv } from '../api/index.ts';

const ConsoleContext = createContext<ConsoleEnv | null>(null);
export const ConsoleProvider = ConsoleContext.Provider;

export function useConsole(): ConsoleEnv {
  const env = useContext(ConsoleContext);
  if (!env) throw new Error('useConsole outside <ConsoleProvider>');
  return env;
}

export const useApi = (): Api => useConsole().api;
