import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ConsoleConfig, Session } from './types';

export interface AppContext {
  session: Session;
  config: ConsoleConfig;
}

export const App = createContext<AppContext | null>(null);

/** Pages render only while signed in, so they may take the session as given. */
export function useApp(): AppContext {
  const app = useContext(App);
  if (!app) throw new Error('useApp outside the signed-in shell');
  return app;
}
