/**
 * Configuration of the `vps` client commands, read once: flags win over environment variables,
 * which win over the embedded mode's files under the data folder (so `vps admin …` works right
 * after `npm start` with nothing set, from any folder of the checkout: see data-dir.ts).
 */
import { findDataDir, readDataFile } from './data-dir';

export interface AdminClientConfig {
  coreUrl: string;
  adminToken: string | undefined;
}

export function adminClientConfig(
  flags: { coreUrl?: string; adminToken?: string },
  env: NodeJS.ProcessEnv = process.env,
): AdminClientConfig {
  const fileToken = readDataFile(findDataDir(env), 'admin-token');
  return {
    coreUrl: (flags.coreUrl ?? env.VPS_CORE_URL ?? env.CORE_URL ?? `http://127.0.0.1:${env.CORE_PORT || 8081}`).replace(/\/+$/, ''),
    adminToken: flags.adminToken ?? env.VPS_ADMIN_TOKEN ?? fileToken,
  };
}
