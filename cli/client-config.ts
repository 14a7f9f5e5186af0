/**
 * Configuration of the `vps` client commands, read once: flags win over environment variables,
 * which win over the embedded mode's files under the data folder (so `vps admin …` works right
 * after `npm start` with nothing set).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface AdminClientConfig {
  coreUrl: string;
  adminToken: string | undefined;
}

export function adminClientConfig(
  flags: { coreUrl?: string; adminToken?: string },
  env: NodeJS.ProcessEnv = process.env,
): AdminClientConfig {
  const dataDir = path.resolve(env.VPS_DATA_DIR || '.data');
  let fileToken: string | undefined;
  try {
    fileToken = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  } catch {
    fileToken = undefined; // no embedded instance here: the token must come from a flag or the environment
  }
  return {
    coreUrl: (flags.coreUrl ?? env.VPS_CORE_URL ?? env.CORE_URL ?? `http://127.0.0.1:${env.CORE_PORT || 8081}`).replace(/\/+$/, ''),
    adminToken: flags.adminToken ?? env.VPS_ADMIN_TOKEN ?? fileToken,
  };
}
