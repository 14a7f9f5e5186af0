import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, envExample, loadConfig } from '../../config/config';

const CWD = '/srv/vps';

/** Runs loadConfig and returns the ConfigError it must throw. */
function configErrorOf(source: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(source, CWD);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

describe('loadConfig defaults', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({}, CWD);

    expect(config.env.PORT).toBe(8080);
    expect(config.env.RATE_LIMIT_PER_MINUTE).toBe(60);
    expect(config.env.TEMPORAL_NAMESPACE).toBe('default');
    expect(config.env.VPS_DATA_DIR).toBe('.data');
    expect(config.dataDir).toBe(path.resolve(CWD, '.data'));
  });

  it('leaves variables without a default unset', () => {
    const config = loadConfig({}, CWD);

    expect(config.env.DATABASE_URL).toBeUndefined();
    expect(config.env.TEMPORAL_ADDRESS).toBeUndefined();
    expect(config.env.VPS_ENCRYPTION_KEY).toBeUndefined();
  });

  it('treats an empty value as unset', () => {
    const config = loadConfig({ PORT: '', LOG_LEVEL: '' }, CWD);

    expect(config.env.PORT).toBe(8080);
    expect(config.env.LOG_LEVEL).toBe('info');
  });

  it('resolves a relative VPS_DATA_DIR against cwd and keeps an absolute one', () => {
    expect(loadConfig({ VPS_DATA_DIR: 'state/db' }, CWD).dataDir).toBe(path.join(CWD, 'state/db'));
    expect(loadConfig({ VPS_DATA_DIR: '/var/lib/vps' }, CWD).dataDir).toBe('/var/lib/vps');
  });

  it('returns a frozen config and a frozen env', () => {
    const config = loadConfig({}, CWD);

    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.env)).toBe(true);
    expect(() => {
      (config.env as { PORT: number }).PORT = 1;
    }).toThrow(TypeError);
    expect(config.env.PORT).toBe(8080);
  });
});

describe('loadConfig validation', () => {
  it.each([
    ['PORT', 'abc', 'must be a port number from 0 to 65535'],
    ['PORT', '70000', 'must be a port number from 0 to 65535'],
    ['RATE_LIMIT_PER_MINUTE', '0', 'must be a positive integer'],
    ['DATABASE_URL', 'mysql://x', 'must use postgres: or postgresql:'],
    ['TEMPORAL_ADDRESS', 'nohostport', 'must be host:port'],
    ['VPS_ADMIN_TOKEN', 'too-short', 'must be at least 24 characters'],
    ['VPS_ENCRYPTION_KEY', 'abcd', 'must be 32 bytes, as 64 hex digits or base64'],
    ['LOG_LEVEL', 'loud', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    ['TEMPORAL_TLS', 'maybe', 'must be true or false'],
  ])('refuses %s=%s, naming the variable and the reason', (name, value, reason) => {
    const err = configErrorOf({ [name]: value });

    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(new RegExp(`^${name}: `));
    expect(err.problems[0]).toContain(reason);
    expect(err.message).toContain(err.problems[0]);
  });

  it('reports every problem at once', () => {
    const err = configErrorOf({
      PORT: '70000',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_URL: 'mysql://x',
      TEMPORAL_ADDRESS: 'nohostport',
      VPS_ADMIN_TOKEN: 'too-short',
      VPS_ENCRYPTION_KEY: 'abcd',
      LOG_LEVEL: 'loud',
      TEMPORAL_TLS: 'maybe',
    });

    const named = err.problems.map((p) => p.split(':')[0]).sort();
    expect(named).toEqual(
      [
        'DATABASE_URL',
        'LOG_LEVEL',
        'PORT',
        'RATE_LIMIT_PER_MINUTE',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_TLS',
        'VPS_ADMIN_TOKEN',
        'VPS_ENCRYPTION_KEY',
      ].sort(),
    );
  });

  it('echoes a non-secret bad value so the operator can see it', () => {
    const err = configErrorOf({ LOG_LEVEL: 'loud' });

    expect(err.problems[0]).toContain('"loud"');
  });

  it('does not echo secret values in the problems or the message', () => {
    const token = 'short-admin-secret';
    const key = 'f00dfeedcafe0123456789'; // wrong length
    const err = configErrorOf({ VPS_ADMIN_TOKEN: token, VPS_ENCRYPTION_KEY: key });

    expect(err.problems).toHaveLength(2);
    for (const text of [...err.problems, err.message]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(key);
    }
  });

  it('does not echo the password of a rejected DATABASE_URL', () => {
    const password = 'hunter2-db-password';
    const err = configErrorOf({ DATABASE_URL: `mysql://vps:${password}@db.internal/vps` });

    expect(err.problems[0]).toMatch(/^DATABASE_URL: /);
    expect(err.message).not.toContain(password);
  });

  it('requires TEMPORAL_TLS_KEY_PATH when TEMPORAL_TLS_CERT_PATH is set', () => {
    const err = configErrorOf({ TEMPORAL_TLS_CERT_PATH: '/etc/vps/temporal.crt' });

    expect(err.problems).toEqual(['TEMPORAL_TLS_KEY_PATH: required with TEMPORAL_TLS_CERT_PATH']);
  });
});

describe('VPS_ENCRYPTION_KEY', () => {
  it('accepts 64 hex digits and yields the 32 bytes', () => {
    const bytes = randomBytes(32);

    const key = loadConfig({ VPS_ENCRYPTION_KEY: bytes.toString('hex') }, CWD).env.VPS_ENCRYPTION_KEY;

    expect(Buffer.isBuffer(key)).toBe(true);
    expect(key).toHaveLength(32);
    expect(key?.equals(bytes)).toBe(true);
  });

  it('accepts base64 of 32 bytes and yields the 32 bytes', () => {
    const bytes = randomBytes(32);

    const key = loadConfig({ VPS_ENCRYPTION_KEY: bytes.toString('base64') }, CWD).env.VPS_ENCRYPTION_KEY;

    expect(Buffer.isBuffer(key)).toBe(true);
    expect(key).toHaveLength(32);
    expect(key?.equals(bytes)).toBe(true);
  });

  it.each([
    ['62 hex digits', randomBytes(31).toString('hex')],
    ['base64 of 16 bytes', randomBytes(16).toString('base64')],
    ['base64 of 33 bytes', randomBytes(33).toString('base64')],
  ])('refuses %s', (_label, value) => {
    const err = configErrorOf({ VPS_ENCRYPTION_KEY: value });

    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(/^VPS_ENCRYPTION_KEY: must be 32 bytes/);
  });
});

describe('VPS_ENCRYPTION_KEYS_ACCEPTED', () => {
  const current = randomBytes(32).toString('hex');

  it('accepts a comma-separated list of keys, hex or base64, spaces and a trailing comma ignored', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];

    const env = loadConfig(
      { VPS_ENCRYPTION_KEY: current, VPS_ENCRYPTION_KEYS_ACCEPTED: ` ${a.toString('hex')} , ${b.toString('base64')},` },
      CWD,
    ).env;

    expect(env.VPS_ENCRYPTION_KEYS_ACCEPTED?.map((k) => k.toString('hex'))).toEqual([a.toString('hex'), b.toString('hex')]);
  });

  it('names the key of the list that is not one, without showing any', () => {
    const good = randomBytes(32).toString('hex');

    const err = configErrorOf({ VPS_ENCRYPTION_KEY: current, VPS_ENCRYPTION_KEYS_ACCEPTED: `${good},abcd` });

    expect(err.problems).toEqual([
      'VPS_ENCRYPTION_KEYS_ACCEPTED: key 2 must be 32 bytes, as 64 hex digits or base64; give the keys as a comma-separated list (got "…")',
    ]);
    expect(err.message).not.toContain(good);
  });

  it('needs VPS_ENCRYPTION_KEY, the key that seals', () => {
    const err = configErrorOf({ VPS_ENCRYPTION_KEYS_ACCEPTED: randomBytes(32).toString('hex') });

    expect(err.problems).toEqual(['VPS_ENCRYPTION_KEYS_ACCEPTED: needs VPS_ENCRYPTION_KEY, the key that seals']);
  });
});

describe('VPLAT_MEDIA_HOSTS', () => {
  it('takes host names and *.domain patterns, comma-separated, in lower case', () => {
    const env = loadConfig({ VPLAT_MEDIA_HOSTS: ' Media.Example.com, *.cdn.example.net ,' }, CWD).env;

    expect(env.VPLAT_MEDIA_HOSTS).toEqual(['media.example.com', '*.cdn.example.net']);
  });

  it.each([
    ['a URL', 'https://media.example.com'],
    ['a host with a port', 'media.example.com:443'],
    ['a bare wildcard', '*'],
    ['a wildcard over a top-level domain', '*.com'],
    ['a single label', 'localhost'],
  ])('refuses %s, naming the entry', (_label, value) => {
    const err = configErrorOf({ VPLAT_MEDIA_HOSTS: `media.example.com,${value}` });

    expect(err.problems).toEqual([
      expect.stringMatching(/^VPLAT_MEDIA_HOSTS: entry 2 \(.+\) must be a host name such as media\.example\.com/),
    ]);
  });
});

describe('.env.example', () => {
  it('is exactly what envExample() generates from the variable table', () => {
    const committed = readFileSync(path.join(__dirname, '../../.env.example'), 'utf8');

    expect(committed).toBe(envExample());
  });
});

describe('the caps on event streams and the sign-in throttle', () => {
  it('default to 5 streams a key, 20 a customer, 30 s leases, and the documented sign-in buckets', () => {
    const { env } = loadConfig({}, CWD);
    expect([env.SSE_MAX_STREAMS_PER_KEY, env.SSE_MAX_STREAMS_PER_CUSTOMER, env.SSE_STREAM_LEASE_MS]).toEqual([5, 20, 30_000]);
    expect([env.CONSOLE_SIGN_IN_ADDRESS_FAILURES, env.CONSOLE_SIGN_IN_ADDRESS_REFILL_MS]).toEqual([10, 60_000]);
    expect([env.CONSOLE_SIGN_IN_ACCOUNT_FAILURES, env.CONSOLE_SIGN_IN_ACCOUNT_REFILL_MS]).toEqual([10, 15_000]);
    expect(env.CONSOLE_SIGN_IN_MAX_HASHES).toBe(2);
    expect(env.VPS_TRUSTED_PROXIES).toEqual([]);
  });

  it('reads trusted proxies as addresses and CIDR ranges', () => {
    const { env } = loadConfig({ VPS_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.7,fd00::/8 ,::1' }, CWD);
    expect(env.VPS_TRUSTED_PROXIES).toEqual(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '::1']);
  });

  it.each(['loadbalancer.internal', '10.0.0.0/33', '10.0.0.0/8/1', 'fd00::/129', '*'])(
    'refuses %p as a trusted proxy, naming it',
    (value) => {
      const err = configErrorOf({ VPS_TRUSTED_PROXIES: value });
      expect(err.problems).toEqual([expect.stringMatching(/^VPS_TRUSTED_PROXIES: must be IP addresses or CIDR ranges/)]);
    },
  );

  it('refuses a cap of zero streams', () => {
    expect(configErrorOf({ SSE_MAX_STREAMS_PER_KEY: '0' }).problems).toEqual([
      expect.stringMatching(/^SSE_MAX_STREAMS_PER_KEY: must be a positive integer/),
    ]);
  });
});
