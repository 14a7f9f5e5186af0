/**
 * Configuration: every environment variable the service reads is declared once in VARIABLES,
 * parsed at start into a frozen Config and passed down. Nothing else reads process.env.
 * `.env.example` is checked against this table by a unit test.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_TASK_QUEUE } from '../workflows/shared';

export type Role = 'gateway' | 'core' | 'worker' | 'sandbox';
export const ROLES: readonly Role[] = ['gateway', 'core', 'worker', 'sandbox'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string) => T;

interface Variable<T> {
  doc: string;
  parse: Parser<T>;
  /** Used when the variable is unset or empty; absent means "not set". */
  fallback?: T;
  /** Example value written in .env.example (commented out when there is no fallback). */
  example: string;
}

type Defaulted<T> = Variable<T> & { fallback: T };

// The overloads keep, in the type, whether a variable has a default, so Env marks it optional or not.
function variable<T>(v: Variable<T> & { fallback: T }): Defaulted<T>;
function variable<T>(v: Omit<Variable<T>, 'fallback'>): Variable<T>;
function variable<T>(v: Variable<T>): Variable<T> {
  return v;
}

const str: Parser<string> = (raw) => raw;
const port: Parser<number> = (raw) => {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65535) throw new Error('must be a port number from 0 to 65535');
  return n;
};
const positiveInt: Parser<number> = (raw) => {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1) throw new Error('must be a positive integer');
  return n;
};
const positiveNumber: Parser<number> = (raw) => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error('must be a positive number');
  return n;
};
const msList: Parser<number[]> = (raw) => {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) throw new Error('must be a comma-separated list of milliseconds');
  return parts.map(Number);
};
const bool: Parser<boolean> = (raw) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error('must be true or false');
};
const url =
  (protocols: string[]): Parser<string> =>
  (raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error('must be an absolute URL');
    }
    if (!protocols.includes(u.protocol)) throw new Error(`must use ${protocols.join(' or ')}`);
    return raw.replace(/\/+$/, '');
  };
const hostPort: Parser<string> = (raw) => {
  if (!/^[A-Za-z0-9.\-_[\]:]+:\d+$/.test(raw)) throw new Error('must be host:port');
  return raw;
};
const secret =
  (minLength: number): Parser<string> =>
  (raw) => {
    if (raw.length < minLength) throw new Error(`must be at least ${minLength} characters`);
    return raw;
  };
const encryptionKey: Parser<Buffer> = (raw) => {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('must be 32 bytes, as 64 hex digits or base64');
  return key;
};
const encryptionKeyList: Parser<Buffer[]> = (raw) =>
  raw
    .split(',')
    .map((part) => part.trim())
    // A trailing comma, left from removing a key, is no key.
    .filter((part) => part !== '')
    .map((part, i) => {
      try {
        return encryptionKey(part);
      } catch (err) {
        throw new Error(`key ${i + 1} ${(err as Error).message}; give the keys as a comma-separated list`);
      }
    });
/** Host names, each exact or `*.` and a domain for its subdomains (the domain itself excluded). */
const hostPatterns: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '')
    .map((part, i) => {
      if (!/^(\*\.)?([a-z0-9-]+\.)+[a-z0-9-]+$/.test(part)) {
        throw new Error(
          `entry ${i + 1} (${JSON.stringify(part)}) must be a host name such as media.example.com, or *.example.com for its subdomains`,
        );
      }
      return part;
    });
const oneOf =
  <T extends string>(values: readonly T[]): Parser<T> =>
  (raw) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw as T;
  };
const keyPrefix: Parser<string> = (raw) => {
  if (!/^([A-Za-z0-9_.-]+\/)+$/.test(raw) || raw.includes('..')) throw new Error('must be folder names ending in /, such as prod/');
  return raw;
};
const partSize: Parser<number> = (raw) => {
  const n = positiveInt(raw);
  if (n < 5 * 1024 * 1024) throw new Error('must be at least 5242880 (5 MiB), the smallest part S3 accepts');
  return n;
};
const addressList: Parser<string[]> = (raw) => {
  const parts = raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const part of parts) {
    const [address = '', prefix, ...rest] = part.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || !prefixOk || rest.length > 0)
      throw new Error(`must be IP addresses or CIDR ranges, comma-separated (${JSON.stringify(part)} is neither)`);
  }
  return parts;
};
const logLevel: Parser<string> = (raw) => {
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(raw)) {
    throw new Error('must be one of fatal, error, warn, info, debug, trace, silent');
  }
  return raw;
};

export const VARIABLES = {
  HOST: variable({ doc: 'Address the gateway listens on', parse: str, fallback: '127.0.0.1', example: '0.0.0.0' }),
  PORT: variable({ doc: 'Gateway HTTP port (0 picks a free one)', parse: port, fallback: 8080, example: '8080' }),
  VPS_PUBLIC_URL: variable({
    doc: 'Public origin of the gateway, used in printed and signed URLs (default http://localhost:PORT)',
    parse: url(['http:', 'https:']),
    example: 'https://api.example.com',
  }),
  VPS_TRUSTED_PROXIES: variable({
    doc: "Reverse proxies (IP addresses or CIDR ranges, comma-separated) whose X-Forwarded-For the gateway believes for the client's address; unset, the connection's own address is the client's",
    parse: addressList,
    fallback: [],
    example: '10.0.0.0/8',
  }),
  HTTP_HEADERS_TIMEOUT_MS: variable({
    doc: "Time a client has to send a request's headers, on every HTTP port (gateway, core, ops); a slower one is answered 408 and its connection closed",
    parse: positiveInt,
    fallback: 20_000,
    example: '20000',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: variable({
    doc: "How long an idle kept-alive connection waits for its next request before it is closed; keep it above a load balancer's own idle timeout (often 60 s)",
    parse: positiveInt,
    fallback: 72_000,
    example: '72000',
  }),
  HTTP_BODY_IDLE_TIMEOUT_MS: variable({
    doc: 'Longest pause while a request body arrives, uploads included: a body that stops for longer is answered 408 and its connection closed; an upload that keeps sending is never cut',
    parse: positiveInt,
    fallback: 30_000,
    example: '30000',
  }),
  HTTP_REQUEST_TIMEOUT_MS: variable({
    doc: 'Time the body of a request other than an upload has to arrive whole, once its headers are in; a slower one is answered 408 and its connection closed',
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  READYZ_CACHE_MS: variable({
    doc: "How long /readyz on the gateway's public port reuses its last probe of core (calls during a probe share it); the ops port and core's own port probe on every call",
    parse: positiveInt,
    fallback: 1_000,
    example: '1000',
  }),
  CORE_HOST: variable({ doc: 'Address the core Connect server listens on', parse: str, fallback: '127.0.0.1', example: '0.0.0.0' }),
  CORE_PORT: variable({ doc: 'Core Connect server port (0 picks a free one)', parse: port, fallback: 8081, example: '8081' }),
  OPS_HOST: variable({
    doc: 'Address of the ops server (/healthz, /readyz, /metrics of every role in the process); keep it off the public network',
    parse: str,
    fallback: '127.0.0.1',
    example: '0.0.0.0',
  }),
  OPS_PORT: variable({ doc: 'Port of the ops server (0 picks a free one)', parse: port, fallback: 9464, example: '9464' }),
  CORE_URL: variable({
    doc: 'Where a gateway reaches core over Connect; unset in --role all, which calls core in memory',
    parse: url(['http:', 'https:']),
    example: 'http://core:8081',
  }),
  DATABASE_URL: variable({
    doc: 'Postgres connection string; unset in --role all runs embedded PGlite under VPS_DATA_DIR',
    parse: url(['postgres:', 'postgresql:']),
    example: 'postgres://vps@127.0.0.1:5432/vps',
  }),
  DATABASE_PREPARED_STATEMENTS: variable({
    doc: 'Prepare statements on each connection; set false only behind a pooler in transaction mode',
    parse: bool,
    fallback: true,
    example: 'true',
  }),
  DATABASE_POOL_SIZE: variable({ doc: 'Postgres connections per process', parse: positiveInt, fallback: 10, example: '10' }),
  VPS_DATA_DIR: variable({
    doc: 'Folder for embedded state (PGlite, Temporal SQLite, media, dev key)',
    parse: str,
    fallback: '.data',
    example: '.data',
  }),
  TEMPORAL_ADDRESS: variable({
    doc: 'Temporal frontend host:port; unset in --role all starts a dev server as a child process',
    parse: hostPort,
    example: 'temporal:7233',
  }),
  TEMPORAL_NAMESPACE: variable({ doc: 'Temporal namespace', parse: str, fallback: 'default', example: 'default' }),
  TEMPORAL_TASK_QUEUE: variable({
    doc: 'Task queue of the workers',
    parse: str,
    fallback: DEFAULT_TASK_QUEUE,
    example: DEFAULT_TASK_QUEUE,
  }),
  TEMPORAL_TLS: variable({ doc: 'Connect to Temporal over TLS', parse: bool, fallback: false, example: 'false' }),
  TEMPORAL_TLS_CERT_PATH: variable({
    doc: 'Client certificate for mutual TLS with Temporal',
    parse: str,
    example: '/etc/vps/temporal.crt',
  }),
  TEMPORAL_TLS_KEY_PATH: variable({ doc: 'Client key for mutual TLS with Temporal', parse: str, example: '/etc/vps/temporal.key' }),
  TEMPORAL_API_KEY: variable({ doc: 'API key for a hosted Temporal namespace', parse: str, example: '' }),
  TEMPORAL_CLI_PATH: variable({
    doc: 'Temporal CLI used for the embedded dev server (default: found or built by scripts/temporal-cli.sh)',
    parse: str,
    example: '/usr/local/bin/temporal',
  }),
  TEMPORAL_DEV_PORT: variable({ doc: 'Frontend port of the embedded Temporal dev server', parse: port, fallback: 7233, example: '7233' }),
  TEMPORAL_DEV_UI_PORT: variable({ doc: 'UI port of the embedded Temporal dev server', parse: port, fallback: 8233, example: '8233' }),
  TEMPORAL_UI_URL: variable({
    doc: 'Temporal UI origin, for links to workflows',
    parse: url(['http:', 'https:']),
    example: 'http://localhost:8233',
  }),
  VPS_ADMIN_TOKEN: variable({
    doc: 'Token of the AdminService (at least 24 characters); generated into VPS_DATA_DIR in --role all when unset',
    parse: secret(24),
    example: 'change-me-to-a-long-random-string',
  }),
  VPS_ENCRYPTION_KEY: variable({
    doc: 'AES-256-GCM key that seals secrets at rest (upstream credentials, webhook signing keys) and signs media URLs: 64 hex digits or base64 of 32 bytes; generated into VPS_DATA_DIR in --role all when unset',
    parse: encryptionKey,
    example: '',
  }),
  VPS_ENCRYPTION_KEYS_ACCEPTED: variable({
    doc: 'During a key rotation (docs/operating.md): other keys, comma-separated, that open sealed values and verify signed URLs but never seal: the next key before the switch, the previous one after it',
    parse: encryptionKeyList,
    example: '',
  }),
  VPS_RESEAL_INTERVAL_MS: variable({
    doc: 'How often core seals again, under VPS_ENCRYPTION_KEY, the stored secrets sealed under another key or kept plain (also at its start)',
    parse: positiveInt,
    fallback: 3_600_000,
    example: '3600000',
  }),
  RATE_LIMIT_PER_MINUTE: variable({
    doc: 'Requests per minute per API key (token bucket, burst of the same size)',
    parse: positiveInt,
    fallback: 60,
    example: '60',
  }),
  CONSOLE_SESSION_TTL_MS: variable({
    doc: 'A console session unused this long ends (it is extended on use)',
    parse: positiveInt,
    fallback: 43_200_000,
    example: '43200000',
  }),
  CONSOLE_SESSION_MAX_AGE_MS: variable({
    doc: 'However active, a console session ends this long after sign-in',
    parse: positiveInt,
    fallback: 604_800_000,
    example: '604800000',
  }),
  CONSOLE_SIGN_IN_ADDRESS_FAILURES: variable({
    doc: 'Failed console sign-ins one client address (an IPv6 /64) may make in a burst, across every instance; then one more per CONSOLE_SIGN_IN_ADDRESS_REFILL_MS. A right password clears them',
    parse: positiveInt,
    fallback: 10,
    example: '10',
  }),
  CONSOLE_SIGN_IN_ADDRESS_REFILL_MS: variable({
    doc: "How often an address that spent its burst of failed sign-ins gets one more try (the address's Retry-After at most)",
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  CONSOLE_SIGN_IN_ACCOUNT_FAILURES: variable({
    doc: 'Failed sign-ins to one account (e-mail) in a burst from addresses it was never signed in to from, across every instance',
    parse: positiveInt,
    fallback: 10,
    example: '10',
  }),
  CONSOLE_SIGN_IN_ACCOUNT_REFILL_MS: variable({
    doc: "How often an account that met its burst gets one more try from a new address (the account's Retry-After at most)",
    parse: positiveInt,
    fallback: 15_000,
    example: '15000',
  }),
  CONSOLE_SIGN_IN_MAX_HASHES: variable({
    doc: 'Console password checks one core process runs at once; a sign-in beyond them is refused at once with 2002 and Retry-After: 1',
    parse: positiveInt,
    fallback: 2,
    example: '2',
  }),
  VPS_ALLOW_INSECURE_WEBHOOK_URLS: variable({
    doc: 'Accept http and loopback webhook URLs (local development and tests); private, link-local and metadata addresses stay refused. Unset: on in the embedded mode (--role all without DATABASE_URL), off otherwise',
    parse: bool,
    example: 'false',
  }),
  VPS_ALLOW_INSECURE_SOURCE_URLS: variable({
    doc: 'Accept http and loopback sourceUrl addresses for remote uploads (local development and tests); private, link-local and metadata addresses stay refused. Unset: on in the embedded mode, off otherwise',
    parse: bool,
    example: 'false',
  }),
  VPLAT_API_BASE: variable({
    doc: "Origin of the short-video platform's Business API (paths /open_api/v1.3/… are appended); required by core and the worker, except in the embedded mode (npm start), where unset means the sandbox emulator",
    parse: url(['http:', 'https:']),
    example: 'https://business-api.example.com',
  }),
  VPLAT_APP_ID: variable({ doc: 'App id (client key) at the short-video platform; required with VPLAT_API_BASE', parse: str, example: '' }),
  VPLAT_APP_SECRET: variable({
    doc: 'App secret at the short-video platform; also verifies its webhooks; required with VPLAT_API_BASE',
    parse: str,
    example: '',
  }),
  VPLAT_MEDIA_HOSTS: variable({
    doc: "Hosts of the short-video platform's message media download addresses, comma-separated (*.example.com for subdomains): the account's access token is sent to an https address on one of these, or on VPLAT_API_BASE's own origin, and to no other",
    parse: hostPatterns,
    example: 'media.example.com,*.cdn.example.com',
  }),
  SHOP_API_BASE: variable({
    doc: "Origin of the shop platform's Open API (creator endpoints); required by core and the worker, except in the embedded mode (npm start), where unset means the sandbox emulator",
    parse: url(['http:', 'https:']),
    example: 'https://open-api.shop.example.com',
  }),
  SHOP_AUTH_BASE: variable({
    doc: "Origin of the shop platform's token service; unset: SHOP_API_BASE",
    parse: url(['http:', 'https:']),
    example: 'https://auth.shop.example.com',
  }),
  SHOP_APP_KEY: variable({ doc: 'App key at the shop platform; required with SHOP_API_BASE', parse: str, example: '' }),
  SHOP_APP_SECRET: variable({
    doc: 'App secret at the shop platform, used to sign requests; required with SHOP_API_BASE',
    parse: str,
    example: '',
  }),
  UPSTREAM_CONNECT_TIMEOUT_MS: variable({
    doc: 'Time allowed to connect to an official API',
    parse: positiveInt,
    fallback: 5_000,
    example: '5000',
  }),
  UPSTREAM_TIMEOUT_MS: variable({
    doc: 'Time allowed for a whole official API call before it counts as a timeout (3002)',
    parse: positiveInt,
    fallback: 30_000,
    example: '30000',
  }),
  DELIVERY_RETRY_SCHEDULE_MS: variable({
    doc: 'Pauses between webhook delivery attempts (about 3 days in all); the delivery fails after the last',
    parse: msList,
    fallback: [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000],
    example: '30000,120000,600000,1800000,3600000,10800000,21600000,43200000,86400000,86400000',
  }),
  DELIVERY_ATTEMPT_TIMEOUT_MS: variable({
    doc: 'Time a webhook receiver has to answer one delivery attempt',
    parse: positiveInt,
    fallback: 10_000,
    example: '10000',
  }),
  DELIVERY_DRAIN_LINGER_MS: variable({
    doc: "An endpoint queue's drain waits this long for new rows before it ends (a steady trickle then needs no wake-ups)",
    parse: positiveInt,
    fallback: 2_000,
    example: '2000',
  }),
  DELIVERY_DRAIN_MAX_MS: variable({
    doc: 'A drain of an endpoint queue runs at most this long; its workflow then starts the next and updates its figures',
    parse: positiveInt,
    fallback: 15_000,
    example: '15000',
  }),
  DELIVERY_WAKE_COALESCE_MS: variable({
    doc: "A worker signals an endpoint queue's workflow at most once in this window",
    parse: positiveInt,
    fallback: 1_000,
    example: '1000',
  }),
  DELIVERY_SWEEP_INTERVAL_MS: variable({
    doc: 'How often each worker looks for queued deliveries whose wake-up was missed',
    parse: positiveInt,
    fallback: 10_000,
    example: '10000',
  }),
  DELIVERY_SWEEP_GRACE_MS: variable({
    doc: 'A delivery due this long and not being sent counts as missed by the sweep',
    parse: positiveInt,
    fallback: 5_000,
    example: '5000',
  }),
  WEBHOOK_SECRET_GRACE_MS: variable({
    doc: "After a secret rotation, how long pushes also carry the old secret's signature",
    parse: positiveInt,
    fallback: 86_400_000,
    example: '86400000',
  }),
  WEBHOOK_DISABLE_AFTER_MS: variable({
    doc: 'An endpoint whose every attempt has failed for this long is disabled',
    parse: positiveInt,
    fallback: 432_000_000,
    example: '432000000',
  }),
  WEBHOOK_MAX_IN_FLIGHT: variable({
    doc: 'Delivery attempts in flight to one endpoint at most, across all workers',
    parse: positiveInt,
    fallback: 10,
    example: '10',
  }),
  MEDIA_STORE: variable({
    doc: 'Where media live: folder (VPS_MEDIA_DIR, one machine only) or s3 (the MEDIA_S3_ settings; needed whenever roles run on more than one machine)',
    parse: oneOf(['folder', 's3'] as const),
    fallback: 'folder',
    example: 'folder',
  }),
  VPS_MEDIA_DIR: variable({
    doc: 'Folder of stored media with MEDIA_STORE=folder (default VPS_DATA_DIR/media)',
    parse: str,
    example: '/var/lib/vps/media',
  }),
  MEDIA_FOLDER_WRITES: variable({
    doc: 'How MEDIA_STORE=folder writes: direct (around the page cache, where the file system takes it; otherwise through it) or page-cache',
    parse: oneOf(['direct', 'page-cache'] as const),
    fallback: 'direct',
    example: 'direct',
  }),
  MEDIA_S3_BUCKET: variable({ doc: 'Bucket of the media with MEDIA_STORE=s3; it must exist', parse: str, example: 'vps-media' }),
  MEDIA_S3_ENDPOINT: variable({
    doc: 'Endpoint of an S3-compatible store (MinIO and the like); unset means AWS S3 in MEDIA_S3_REGION',
    parse: url(['http:', 'https:']),
    example: 'http://minio:9000',
  }),
  MEDIA_S3_REGION: variable({ doc: 'Region of the bucket', parse: str, fallback: 'us-east-1', example: 'us-east-1' }),
  MEDIA_S3_ACCESS_KEY_ID: variable({
    doc: 'Access key of the store; unset uses the SDK default chain (environment, profile, instance role)',
    parse: str,
    example: 'vps',
  }),
  MEDIA_S3_SECRET_ACCESS_KEY: variable({
    doc: 'Secret key of the store, with MEDIA_S3_ACCESS_KEY_ID',
    parse: str,
    example: 'change-me-too',
  }),
  MEDIA_S3_FORCE_PATH_STYLE: variable({
    doc: 'Bucket in the path, not the host name (default: true when MEDIA_S3_ENDPOINT is set)',
    parse: bool,
    example: 'true',
  }),
  MEDIA_S3_PREFIX: variable({
    doc: 'Prefix of every object key, so one bucket can hold several deployments (e.g. prod/)',
    parse: keyPrefix,
    fallback: '',
    example: 'prod/',
  }),
  MEDIA_S3_PART_SIZE_BYTES: variable({
    doc: 'Multipart upload part size (at least 5 MiB, the S3 minimum); memory per upload is about this times MEDIA_S3_PARTS_IN_FLIGHT',
    parse: partSize,
    fallback: 8 * 1024 * 1024,
    example: '8388608',
  }),
  MEDIA_S3_PARTS_IN_FLIGHT: variable({ doc: 'Parts of one upload sent at once', parse: positiveInt, fallback: 4, example: '4' }),
  MEDIA_S3_TIMEOUT_MS: variable({
    doc: 'Connection and per-request timeout of store calls; past it the store counts as unavailable',
    parse: positiveInt,
    fallback: 30_000,
    example: '30000',
  }),
  MEDIA_S3_ORPHAN_AGE_MS: variable({
    doc: 'Workers abort multipart uploads (MEDIA_STORE=s3) and remove staged uploads (either store) older than this, left by a process killed mid-upload; longer than any upload takes',
    parse: positiveInt,
    fallback: 86_400_000,
    example: '86400000',
  }),
  MEDIA_S3_SWEEP_INTERVAL_MS: variable({
    doc: 'How often each worker looks for such uploads',
    parse: positiveInt,
    fallback: 3_600_000,
    example: '3600000',
  }),
  VIDEO_MAX_BYTES: variable({
    doc: 'Largest video accepted by POST /v1/videos, in bytes (the shop track also keeps its own 100 MB limit)',
    parse: positiveInt,
    fallback: 1_073_741_824,
    example: '1073741824',
  }),
  UPLOAD_DRAIN_BYTES: variable({
    doc: 'A refused multipart upload whose body is at most this long is read to its end before the answer, so every client reads the answer; a longer one is answered at once and read on for up to 30 s while the client still sends',
    parse: positiveInt,
    fallback: 16_777_216,
    example: '16777216',
  }),
  VIDEO_URL_TTL_MS: variable({
    doc: 'Validity of a video track videoUrl; the record expires with it (the spec: 7 days)',
    parse: positiveInt,
    fallback: 604_800_000,
    example: '604800000',
  }),
  VIDEO_EXPIRY_REPAIR_INTERVAL_MS: variable({
    doc: "How often the workers' expiry repair starts the expiry timer of video track records that have none (Temporal was down at upload, say); such a record gets its timer within this plus VIDEO_EXPIRY_REPAIR_GRACE_MS, and reads refuse it past its expiry time meanwhile",
    parse: positiveInt,
    fallback: 300_000,
    example: '300000',
  }),
  VIDEO_EXPIRY_REPAIR_GRACE_MS: variable({
    doc: 'A video track record available this long without a confirmed expiry timer, or this long past its expiry, is taken up by the expiry repair (younger ones may still have their timer start under way)',
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  REMOTE_UPLOAD_TIMEOUT_MS: variable({
    doc: 'Time allowed to fetch one sourceUrl',
    parse: positiveInt,
    fallback: 1_800_000,
    example: '1800000',
  }),
  VIDEO_FETCH_HEARTBEAT_TIMEOUT_MS: variable({
    doc: 'How long a sourceUrl fetch may go without reporting progress before Temporal retries it on another worker, which resumes from the last reported offset (with a Range request when the source allows)',
    parse: positiveInt,
    fallback: 30_000,
    example: '30000',
  }),
  VIDEO_FETCH_WAIT_MS: variable({
    doc: 'How long POST /v1/videos with a sourceUrl waits for the upload to finish (the fetch and, on the shop track, the hand-off) so it can answer videoUrl or fileId; past it the answer is status processing with where to poll',
    parse: positiveInt,
    fallback: 10_000,
    example: '10000',
  }),
  UPLOAD_WAIT_MS: variable({
    doc: 'How long a multipart POST /v1/videos to a shop track seat waits for the hand-off to the shop (for the fileId) before answering with status processing',
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  PUBLISH_POLL_INTERVAL_MS: variable({
    doc: 'Pause between official status polls of a publish (the spec: 5 to 10 s)',
    parse: positiveInt,
    fallback: 5_000,
    example: '5000',
  }),
  PUBLISH_POLL_ATTEMPTS: variable({
    doc: 'Polls at that pace before slowing down (the spec: about 30)',
    parse: positiveInt,
    fallback: 30,
    example: '30',
  }),
  PUBLISH_SLOW_POLL_SCHEDULE_MS: variable({
    doc: 'Pauses between the slower polls that follow; after the last, a publish with no final status is marked unconfirmed (its status stays the last known)',
    parse: msList,
    fallback: [60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000],
    example: '60000,120000,300000,600000,1800000,3600000,7200000,14400000,28800000',
  }),
  PUBLISH_SUBMIT_WAIT_MS: variable({
    doc: 'How long a publish request waits for the official share id before answering status submitted without it',
    parse: positiveInt,
    fallback: 10_000,
    example: '10000',
  }),
  PUBLISH_SUBMIT_RETRY_MS: variable({
    doc: 'First pause before a submit refused by a transient official failure is retried (doubling, 5 tries), then service_error',
    parse: positiveInt,
    fallback: 2_000,
    example: '2000',
  }),
  PUBLISH_POST_ID_WAIT_MS: variable({
    doc: 'After publish_complete, how long to keep polling for the post id the platform reports late',
    parse: positiveInt,
    fallback: 900_000,
    example: '900000',
  }),
  PRODUCT_CACHE_TTL_MS: variable({
    doc: 'How long a product query answer is reused per seat and query (the spec: 60 s)',
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  PRECHECK_DAILY_QUOTA: variable({
    doc: 'Shop pre-checks per account per UTC day (the spec: 50)',
    parse: positiveInt,
    fallback: 50,
    example: '50',
  }),
  PRECHECK_POLL_INTERVAL_MS: variable({
    doc: 'Pause between polls of a pre-check result',
    parse: positiveInt,
    fallback: 5_000,
    example: '5000',
  }),
  PRECHECK_POLL_ATTEMPTS: variable({
    doc: 'Polls of a pre-check result before it ends as service_error',
    parse: positiveInt,
    fallback: 60,
    example: '60',
  }),
  SSE_HEARTBEAT_MS: variable({
    doc: 'Interval of heartbeat comments on open event streams',
    parse: positiveInt,
    fallback: 15_000,
    example: '15000',
  }),
  SSE_MAX_STREAMS_PER_KEY: variable({
    doc: 'Open event streams (GET /v1/events/stream) one API key or console session may hold at once, across every instance; one more is refused with 2002',
    parse: positiveInt,
    fallback: 5,
    example: '5',
  }),
  SSE_MAX_STREAMS_PER_CUSTOMER: variable({
    doc: 'Open event streams all keys and console sessions of one customer may hold at once, across every instance',
    parse: positiveInt,
    fallback: 20,
    example: '20',
  }),
  SSE_STREAM_LEASE_MS: variable({
    doc: "How long an open stream's slot outlives its last renewal (renewed every third of it): the longest a crashed process keeps its streams' slots taken",
    parse: positiveInt,
    fallback: 30_000,
    example: '30000',
  }),
  TOKEN_REFRESH_MARGIN_S: variable({
    doc: "Refresh a seat's upstream access token this many seconds before it expires",
    parse: positiveInt,
    fallback: 3_600,
    example: '3600',
  }),
  TOKEN_REFRESH_MIN_INTERVAL_MS: variable({
    doc: 'Shortest pause between two refresh checks of one seat',
    parse: positiveInt,
    fallback: 60_000,
    example: '60000',
  }),
  TOKEN_REFRESH_RETRY_AFTER_REFUSAL_MS: variable({
    doc: "Pause before a seat's token refresh is tried again after the platform refused it for a reason a retry may outlive (scope, quota, a bad request)",
    parse: positiveInt,
    fallback: 900_000,
    example: '900000',
  }),
  SANDBOX_HOST: variable({ doc: 'Address the sandbox emulator listens on', parse: str, fallback: '127.0.0.1', example: '127.0.0.1' }),
  SANDBOX_PORT: variable({ doc: 'Port of the sandbox emulator (0 picks a free one)', parse: port, fallback: 8090, example: '8090' }),
  SANDBOX_CLOCK_SPEED: variable({
    doc: "Speed of the emulator's clock (2 runs publish processing and token lifetimes twice as fast)",
    parse: positiveNumber,
    fallback: 1,
    example: '1',
  }),
  SANDBOX_PUBLISH_PROCESSING_MS: variable({
    doc: 'Emulator: time a publish spends processing after its media was downloaded',
    parse: positiveInt,
    fallback: 15_000,
    example: '15000',
  }),
  SANDBOX_POST_ID_DELAY_MS: variable({
    doc: 'Emulator: time after completion until the post id appears (about 3 minutes officially)',
    parse: positiveInt,
    fallback: 180_000,
    example: '180000',
  }),
  SANDBOX_ACCESS_TOKEN_TTL_S: variable({
    doc: 'Emulator: access token lifetime in seconds, both platforms (unset: 86400 Business API, 604800 shop)',
    parse: positiveInt,
    example: '86400',
  }),
  SANDBOX_WEBHOOK_RETRY_MS: variable({
    doc: 'Emulator: pauses between webhook push attempts',
    parse: msList,
    fallback: [1_000, 5_000, 30_000, 120_000, 600_000],
    example: '1000,5000,30000,120000,600000',
  }),
  SHUTDOWN_GRACE_MS: variable({
    doc: 'How long in-flight work may finish on shutdown',
    parse: positiveInt,
    fallback: 10_000,
    example: '10000',
  }),
  LOG_LEVEL: variable({ doc: 'fatal, error, warn, info, debug, trace or silent', parse: logLevel, fallback: 'info', example: 'info' }),
} as const;

/** Each platform's origin and the app credentials that go with it. */
const PLATFORM_CREDENTIALS = [
  ['VPLAT_API_BASE', ['VPLAT_APP_ID', 'VPLAT_APP_SECRET']],
  ['SHOP_API_BASE', ['SHOP_APP_KEY', 'SHOP_APP_SECRET']],
] as const;

/**
 * Where the official platforms are and the app's credentials there. Core verifies the platform's
 * webhooks with VPLAT_APP_SECRET and both core and the worker call the platforms, so a process
 * running either needs all of them, unless the emulator runs in that same process and stands in
 * for the platforms (REQUIRED_BY_ROLE, and cli/serve.ts's missingSettings).
 */
export const PLATFORM_SETTINGS = PLATFORM_CREDENTIALS.flatMap(([base, credentials]) => [base, ...credentials]);

/**
 * What each role needs configured when it runs on its own: `--role all` embeds Postgres, Temporal
 * and the secrets instead. VPS_ADMIN_TOKEN is optional for core (the AdminService then refuses
 * every call) but needed by any deployment that is operated, so docker-compose.yml sets it.
 */
export const REQUIRED_BY_ROLE: Readonly<Record<Role, ReadonlyArray<keyof typeof VARIABLES>>> = {
  core: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'VPS_ENCRYPTION_KEY', ...PLATFORM_SETTINGS],
  worker: ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'VPS_ENCRYPTION_KEY', ...PLATFORM_SETTINGS],
  gateway: ['CORE_URL'],
  sandbox: [],
};

type Vars = typeof VARIABLES;
type ValueOf<K extends keyof Vars> = Vars[K] extends Variable<infer T> ? T : never;
type HasFallback<K extends keyof Vars> = Vars[K] extends Defaulted<unknown> ? K : never;

export type Env = {
  readonly [K in keyof Vars as HasFallback<K>]: ValueOf<K>;
} & {
  readonly [K in keyof Vars as K extends HasFallback<K> ? never : K]?: ValueOf<K>;
};

export interface Config {
  readonly env: Env;
  /** Absolute path of VPS_DATA_DIR. */
  readonly dataDir: string;
}

/** A rejected value as it may appear in a message: secrets hidden, URL credentials removed. */
function displayValue(name: string, raw: string): string {
  if (/KEY|TOKEN|SECRET|PASSWORD/.test(name)) return '…';
  return raw.replace(/\/\/[^/@\s]*@/, '//***@');
}

/** Parses and validates every variable at once, so a bad deployment reports all its problems. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const env: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      if (spec.fallback !== undefined) env[name] = spec.fallback;
      continue;
    }
    try {
      env[name] = spec.parse(raw.trim());
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message} (got ${JSON.stringify(displayValue(name, raw))})`);
    }
  }
  // A real platform needs real app credentials; only the emulator has defaults of its own.
  for (const [base, credentials] of PLATFORM_CREDENTIALS) {
    if (!env[base]) continue;
    for (const name of credentials) if (!env[name]) problems.push(`${name}: required with ${base}`);
  }
  // Keys to accept beside a generated one would be a rotation from a key never written down.
  if (env.VPS_ENCRYPTION_KEYS_ACCEPTED && !env.VPS_ENCRYPTION_KEY)
    problems.push('VPS_ENCRYPTION_KEYS_ACCEPTED: needs VPS_ENCRYPTION_KEY, the key that seals');
  if (env.TEMPORAL_TLS_CERT_PATH && !env.TEMPORAL_TLS_KEY_PATH)
    problems.push('TEMPORAL_TLS_KEY_PATH: required with TEMPORAL_TLS_CERT_PATH');
  if (env.MEDIA_STORE === 's3' && !env.MEDIA_S3_BUCKET) problems.push('MEDIA_S3_BUCKET: required with MEDIA_STORE=s3');
  if (Boolean(env.MEDIA_S3_ACCESS_KEY_ID) !== Boolean(env.MEDIA_S3_SECRET_ACCESS_KEY)) {
    problems.push('MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY: set both or neither');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const typed = Object.freeze(env) as Env;
  return Object.freeze({ env: typed, dataDir: path.resolve(cwd, typed.VPS_DATA_DIR) });
}

/** The text of .env.example, generated from VARIABLES. */
export function envExample(): string {
  const lines = ['# Every variable the service reads. Unset ones take the default shown; see README "Configuration".'];
  for (const [name, spec] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    lines.push('', `# ${spec.doc}`);
    lines.push(spec.fallback === undefined ? `# ${name}=${spec.example}` : `${name}=${String(spec.fallback)}`);
  }
  return `${lines.join('\n')}\n`;
}
