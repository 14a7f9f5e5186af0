/**
 * docker-compose.yml against the code: Compose itself validates and resolves the file (Debian's
 * docker-compose needs no engine for `config`), and the resolved environment of each of our
 * services is compared with the variables the code reads (config/config.ts) and its roles need.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { VARIABLES, type Role } from '../../config/config';
import { missingSettings, parseRoles } from '../../cli/serve';

const REPO = path.resolve(__dirname, '..', '..');
const PLATFORMS = {
  VPLAT_API_BASE: 'https://business-api.example.com',
  VPLAT_APP_ID: 'compose-test-app',
  VPLAT_APP_SECRET: 'compose-test-app-secret',
  SHOP_API_BASE: 'https://open-api.shop.example.com',
  SHOP_APP_KEY: 'compose-test-shop-app',
  SHOP_APP_SECRET: 'compose-test-shop-secret',
};
const SECRETS = { VPS_ADMIN_TOKEN: 'compose-test-admin', VPS_ENCRYPTION_KEY: 'ab'.repeat(32), ...PLATFORMS };

interface Service {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  ports?: Array<{ published: number; target: number; host_ip?: string } | string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: Array<string | { source?: string; target: string }>;
}

function composeConfig(env: Record<string, string>) {
  return spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], {
    cwd: REPO,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  });
}

/** What a service mounts: a named volume's name or a bind mount's host path. */
function volumeSources(service: Service): string[] {
  return (service.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':')[0]! : (v.source ?? v.target)));
}

describe('docker-compose.yml', () => {
  let services: Record<string, Service>;
  beforeAll(() => {
    services = (
      parse(
        execFileSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], {
          cwd: REPO,
          env: { PATH: process.env.PATH, ...SECRETS },
          encoding: 'utf8',
        }),
      ) as { services: Record<string, Service> }
    ).services;
  });

  /** Our services, by the roles their command runs. */
  const ours = () => Object.entries(services).filter(([, s]) => s.command?.[0] === 'serve');
  const roleSpec = (s: Service) => s.command![s.command!.indexOf('--role') + 1]!;
  const rolesOf = (s: Service): Set<Role> => parseRoles(roleSpec(s)).roles;

  it('is valid, and refuses to start without the secrets it cannot invent', () => {
    expect(composeConfig(SECRETS).status).toBe(0);
    const missing = composeConfig({ VPS_ENCRYPTION_KEY: SECRETS.VPS_ENCRYPTION_KEY });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('set VPS_ADMIN_TOKEN');
  });

  it("refuses to start without each of the platforms' settings, so no role trusts the emulator's public secret", () => {
    for (const name of Object.keys(PLATFORMS)) {
      // Compose's `:?` refuses an empty value as it refuses an unset one.
      const missing = composeConfig({ ...SECRETS, [name]: '' });
      expect({ name, refused: missing.status !== 0 }).toEqual({ name, refused: true });
      expect(missing.stderr).toContain(`set ${name}`);
    }
    for (const [name, service] of ours()) {
      for (const setting of Object.keys(PLATFORMS)) {
        expect({ name, setting, value: service.environment?.[setting] }).toEqual({
          name,
          setting,
          value: PLATFORMS[setting as keyof typeof PLATFORMS],
        });
      }
    }
  });

  it("publishes the Temporal UI on the host's loopback only, and read-only", () => {
    const ui = services['temporal-ui']!;
    expect(ui.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
    // Compose writes a port either as a string (host_ip:published:target/protocol) or as an object.
    const hostIps = (ui.ports ?? []).map((p) => (typeof p === 'string' ? (/^([\d.]+):\d+:\d+/.exec(p)?.[1] ?? '') : (p.host_ip ?? '')));
    expect(hostIps).toEqual(['127.0.0.1']);
  });

  it('runs gateway and core together as the api, and the workers apart, beside Postgres, Temporal, its UI and MinIO', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'minio', 'minio-buckets', 'postgres', 'temporal', 'temporal-ui', 'worker']);
    expect(Object.fromEntries(ours().map(([name, s]) => [name, [...rolesOf(s)].sort()]))).toEqual({
      api: ['core', 'gateway'],
      worker: ['worker'],
    });
  });

  it('sets only variables the code reads, and every one its roles need', () => {
    for (const [name, service] of ours()) {
      const set = Object.keys(service.environment ?? {});
      expect({ name, unknown: set.filter((v) => !(v in VARIABLES)) }).toEqual({ name, unknown: [] });
      const env = Object.fromEntries(set.map((v) => [v, service.environment![v]]));
      expect({ name, missing: missingSettings(rolesOf(service), env as never) }).toEqual({ name, missing: [] });
      // Operated deployments need the AdminService: its token is set everywhere.
      expect(service.environment?.VPS_ADMIN_TOKEN).toBe(SECRETS.VPS_ADMIN_TOKEN);
    }
  });

  it("has the public path call core in memory, and keeps core's Connect port inside the network", () => {
    const api = services.api!;
    const env = api.environment!;
    // Without CORE_URL a gateway beside core calls it in this process: no hop per request.
    expect(env.CORE_URL).toBeUndefined();
    expect(env.HOST).toBe('0.0.0.0');
    // Internal callers reach core's Connect server on the api's address; nothing publishes it.
    expect(env.CORE_HOST).toBe('0.0.0.0');
    expect(api.ports).toEqual([expect.objectContaining({ target: Number(env.PORT) })]);
    const targets = (s: Service) => (s.ports ?? []).map((p) => (typeof p === 'string' ? Number(/:(\d+)(\/\w+)?$/.exec(p)?.[1]) : p.target));
    for (const [, s] of Object.entries(services)) expect(targets(s)).not.toContain(Number(env.CORE_PORT));
  });

  it('checks readiness on the ports the code listens on, after what each role depends on', () => {
    const probes = (s: Service) => s.healthcheck!.test.join(' ');
    expect(probes(services.api!)).toContain(`127.0.0.1:${services.api!.environment!.PORT}/readyz`);
    expect(probes(services.worker!)).toContain(`127.0.0.1:${services.worker!.environment!.OPS_PORT}/readyz`);
    for (const [name, s] of ours()) {
      expect({ name, opsHost: s.environment!.OPS_HOST }).toEqual({ name, opsHost: '0.0.0.0' });
      expect({ name, dependsOn: s.depends_on }).toEqual({
        name,
        dependsOn: expect.objectContaining({ postgres: { condition: 'service_healthy' }, temporal: { condition: 'service_healthy' } }),
      });
    }
  });

  it('runs MinIO with a volume of its own and a health check on its liveness endpoint', () => {
    const minio = services.minio!;
    // MinIO's images left Docker Hub: the same images are pulled from quay.io, at a pinned release.
    expect(minio.image).toMatch(/^quay\.io\/minio\/minio:RELEASE\./);
    expect(volumeSources(minio)).toEqual(['minio-data']);
    expect(minio.healthcheck!.test.join(' ')).toContain('/dev/tcp/127.0.0.1/9000');
    expect(minio.healthcheck!.test.join(' ')).toContain('GET /minio/health/live ');
  });

  it('creates the media bucket once MinIO is healthy, with the credentials and bucket the roles use', () => {
    const job = services['minio-buckets']!;
    expect(job.image).toMatch(/^quay\.io\/minio\/mc:RELEASE\./);
    expect(job.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
    const script = [...(job.entrypoint ?? []), ...(job.command ?? [])].join(' ');
    expect(script).toMatch(/mc alias set (\w+) http:\/\/minio:9000 .*&& mc mb --ignore-existing "\1\//);
    const minioEnv = services.minio!.environment!;
    for (const [name, s] of ours()) {
      const env = s.environment!;
      expect({ name, store: env.MEDIA_STORE, endpoint: env.MEDIA_S3_ENDPOINT }).toEqual({
        name,
        store: 's3',
        endpoint: 'http://minio:9000',
      });
      expect({ name, bucket: env.MEDIA_S3_BUCKET, key: env.MEDIA_S3_ACCESS_KEY_ID, secret: env.MEDIA_S3_SECRET_ACCESS_KEY }).toEqual({
        name,
        bucket: job.environment!.MEDIA_S3_BUCKET,
        key: minioEnv.MINIO_ROOT_USER,
        secret: minioEnv.MINIO_ROOT_PASSWORD,
      });
      // A store a role cannot use stops its start-up: it waits for the bucket.
      expect({ name, bucket: s.depends_on?.['minio-buckets'] }).toEqual({ name, bucket: { condition: 'service_completed_successfully' } });
    }
    // The job's shell reads the bucket and credentials from its environment, the same the roles get.
    expect(job.environment).toMatchObject({
      MEDIA_S3_ACCESS_KEY_ID: minioEnv.MINIO_ROOT_USER,
      MEDIA_S3_SECRET_ACCESS_KEY: minioEnv.MINIO_ROOT_PASSWORD,
    });
    expect(script).toMatch(/--ignore-existing "\w+\/\$\$?MEDIA_S3_BUCKET"/);
  });

  it("gives Temporal the repo's dynamic configuration, which runs activities eagerly as the embedded server does", () => {
    const temporal = services.temporal!;
    // Compose prints a bind mount as `source:target[:mode]` or as an object, by its version.
    const mounted = (temporal.volumes ?? [])
      .map((v) => (typeof v === 'string' ? { source: v.split(':')[0]!, target: v.split(':')[1]! } : { source: v.source, target: v.target }))
      .find((v) => v.target.startsWith('/etc/temporal/'));
    expect(mounted?.source).toBe(path.join(REPO, 'deploy', 'temporal', 'dynamicconfig.yaml'));
    // The image resolves the path against /etc/temporal.
    expect(path.join('/etc/temporal', temporal.environment!.DYNAMIC_CONFIG_FILE_PATH!)).toBe(mounted!.target);
    const values = parse(readFileSync(mounted!.source!, 'utf8')) as Record<string, Array<{ value: unknown }>>;
    expect(values['system.enableActivityEagerExecution']).toEqual([{ value: true }]);
  });

  it('lets no two services share a volume: media live in the bucket, not in a shared folder', () => {
    const mounts = Object.entries(services).flatMap(([name, s]) => volumeSources(s).map((source) => ({ source, name })));
    const shared = mounts.filter((m) => mounts.some((o) => o.source === m.source && o.name !== m.name));
    expect(shared).toEqual([]);
    for (const [name, s] of ours()) expect({ name, volumes: s.volumes ?? [] }).toEqual({ name, volumes: [] });
  });

  it('gives every role more time to stop than the grace it gives its in-flight work', () => {
    for (const [name, service] of ours()) {
      const grace = Number(service.environment!.SHUTDOWN_GRACE_MS ?? VARIABLES.SHUTDOWN_GRACE_MS.fallback);
      const stop = (service as { stop_grace_period?: string }).stop_grace_period;
      expect({ name, stopSeconds: Number(/^(\d+)s$/.exec(stop ?? '10s')![1]) > grace / 1000 + 5 }).toEqual({ name, stopSeconds: true });
    }
  });
});
