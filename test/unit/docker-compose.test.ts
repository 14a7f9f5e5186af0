/**
 * docker-compose.yml against the code: Compose itself validates and resolves the file (Debian's
 * docker-compose needs no engine for `config`), and the resolved environment of each of our
 * services is compared with the variables the code reads (config/config.ts) and each role needs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parse } from 'yaml';
import { REQUIRED_BY_ROLE, VARIABLES, type Role } from '../../config/config';
import { missingSettings } from '../../cli/serve';

const REPO = path.resolve(__dirname, '..', '..');
const SECRETS = { VPS_ADMIN_TOKEN: 'compose-test-admin', VPS_ENCRYPTION_KEY: 'ab'.repeat(32) };

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  ports?: Array<{ published: number; target: number }>;
  depends_on?: Record<string, { condition: string }>;
}

function composeConfig(env: Record<string, string>) {
  return spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], { cwd: REPO, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
}

describe('docker-compose.yml', () => {
  let services: Record<string, Service>;
  beforeAll(() => {
    services = (parse(execFileSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], { cwd: REPO, env: { PATH: process.env.PATH, ...SECRETS }, encoding: 'utf8' })) as { services: Record<string, Service> }).services;
  });

  /** Our services, by the role their command runs. */
  const ours = () => Object.entries(services).filter(([, s]) => s.command?.[0] === 'serve');
  const roleOf = (s: Service) => s.command![s.command!.indexOf('--role') + 1] as Role;

  it('is valid, and refuses to start without the secrets it cannot invent', () => {
    expect(composeConfig(SECRETS).status).toBe(0);
    const missing = composeConfig({ VPS_ENCRYPTION_KEY: SECRETS.VPS_ENCRYPTION_KEY });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('set VPS_ADMIN_TOKEN');
  });

  it('runs gateway, core and worker as separate containers beside Postgres, Temporal and its UI', () => {
    expect(Object.keys(services).sort()).toEqual(['core', 'gateway', 'postgres', 'temporal', 'temporal-ui', 'worker']);
    expect(ours().map(([, s]) => roleOf(s)).sort()).toEqual(['core', 'gateway', 'worker']);
  });

  it('sets only variables the code reads, and every one each role needs', () => {
    for (const [name, service] of ours()) {
      const set = Object.keys(service.environment ?? {});
      expect({ name, unknown: set.filter((v) => !(v in VARIABLES)) }).toEqual({ name, unknown: [] });
      const env = Object.fromEntries(set.map((v) => [v, service.environment![v]]));
      expect({ name, missing: missingSettings(new Set([roleOf(service)]), env as never) }).toEqual({ name, missing: [] });
      expect(REQUIRED_BY_ROLE[roleOf(service)].every((v) => set.includes(v))).toBe(true);
      // Operated deployments need the AdminService: its token is set everywhere.
      expect(service.environment?.VPS_ADMIN_TOKEN).toBe(SECRETS.VPS_ADMIN_TOKEN);
    }
  });

  it('wires the roles together on the ports the code listens on, and checks readiness there', () => {
    const env = (role: Role) => ours().find(([, s]) => roleOf(s) === role)![1].environment!;
    const gateway = services.gateway!;
    const core = services.core!;
    expect(env('gateway').CORE_URL).toBe(`http://core:${env('core').CORE_PORT}`);
    expect(env('gateway').HOST).toBe('0.0.0.0');
    expect(env('core').CORE_HOST).toBe('0.0.0.0');
    expect(gateway.ports).toEqual([expect.objectContaining({ target: Number(env('gateway').PORT) })]);
    const probes = (s: Service) => s.healthcheck!.test.join(' ');
    expect(probes(gateway)).toContain(`127.0.0.1:${env('gateway').PORT}/readyz`);
    expect(probes(core)).toContain(`127.0.0.1:${env('core').CORE_PORT}/readyz`);
    expect(probes(services.worker!)).toContain(`127.0.0.1:${env('worker').OPS_PORT}/readyz`);
    for (const [, s] of ours()) expect(s.environment!.OPS_HOST).toBe('0.0.0.0');
    expect(gateway.depends_on?.core?.condition).toBe('service_healthy');
    expect(core.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, temporal: { condition: 'service_healthy' } });
  });

  it('gives every role more time to stop than the grace it gives its in-flight work', () => {
    for (const [name, service] of ours()) {
      const grace = Number(service.environment!.SHUTDOWN_GRACE_MS ?? VARIABLES.SHUTDOWN_GRACE_MS.fallback);
      const stop = (service as { stop_grace_period?: string }).stop_grace_period;
      expect({ name, stopSeconds: Number(/^(\d+)s$/.exec(stop ?? '10s')![1]) > grace / 1000 + 5 }).toEqual({ name, stopSeconds: true });
    }
  });
});
