import { isPublicAddress, refuseUnsafeUrl, type Resolver } from '../../core/net/address-policy';

/** A resolver answering the given addresses, recording what it was asked. Never real DNS. */
function resolvesTo(...addresses: string[]): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string): Promise<string[]> => {
    asked.push(host);
    return addresses;
  };
  return Object.assign(resolve, { asked });
}

/** For URLs whose host is an IP literal: the resolver must not be consulted. */
const mustNotResolve: Resolver = async (host) => {
  throw new Error(`unexpected DNS lookup of ${host}`);
};

describe('isPublicAddress', () => {
  it.each([
    ['93.184.215.14', true],
    ['8.8.8.8', true],
    ['2606:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['10.0.0.1', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['127.0.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:7f00:1', false], // ::ffff:127.0.0.1 in the hex form the URL parser produces
    ['::ffff:a9fe:a9fe', false], // ::ffff:169.254.169.254 in hex form
    ['not-an-ip', false],
    ['', false],
  ])('%s → %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected);
  });

  it('treats the edges of 172.16.0.0/12 correctly', () => {
    expect(isPublicAddress('172.15.255.255')).toBe(true);
    expect(isPublicAddress('172.16.0.0')).toBe(false);
    expect(isPublicAddress('172.32.0.0')).toBe(true);
  });
});

describe('refuseUnsafeUrl', () => {
  it('accepts an https URL whose host resolves to public addresses', async () => {
    const resolve = resolvesTo('93.184.215.14', '2606:4700::1111');

    const refusal = await refuseUnsafeUrl('https://hooks.example.com/vps', { allowInsecure: false, resolve });

    expect(refusal).toBeUndefined();
    expect(resolve.asked).toEqual(['hooks.example.com']);
  });

  it('refuses http', async () => {
    const refusal = await refuseUnsafeUrl('http://hooks.example.com/vps', { allowInsecure: false, resolve: resolvesTo('93.184.215.14') });

    expect(refusal).toBe('must use https');
  });

  it('accepts http when insecure URLs are allowed', async () => {
    const refusal = await refuseUnsafeUrl('http://hooks.example.com/vps', { allowInsecure: true, resolve: resolvesTo('93.184.215.14') });

    expect(refusal).toBeUndefined();
  });

  it('refuses a scheme other than http even when insecure URLs are allowed', async () => {
    const refusal = await refuseUnsafeUrl('ftp://hooks.example.com/vps', { allowInsecure: true, resolve: mustNotResolve });

    expect(refusal).toBe('must use https');
  });

  it.each(['https://user:pass@hooks.example.com/vps', 'https://user@hooks.example.com/vps', 'https://:pass@hooks.example.com/vps'])(
    'refuses credentials in the URL: %s',
    async (raw) => {
      const refusal = await refuseUnsafeUrl(raw, { allowInsecure: false, resolve: resolvesTo('93.184.215.14') });

      expect(refusal).toBe('must not contain credentials');
    },
  );

  it('refuses a hostname resolving to a private address, naming the host and the address', async () => {
    const refusal = await refuseUnsafeUrl('https://internal.example.com/', { allowInsecure: false, resolve: resolvesTo('10.1.2.3') });

    expect(refusal).toContain('must resolve to a public address');
    expect(refusal).toContain('internal.example.com');
    expect(refusal).toContain('10.1.2.3');
  });

  it('refuses a hostname resolving to one public and one private address', async () => {
    const refusal = await refuseUnsafeUrl('https://mixed.example.com/', {
      allowInsecure: false,
      resolve: resolvesTo('93.184.215.14', '169.254.169.254'),
    });

    expect(refusal).toContain('169.254.169.254');
  });

  it('refuses a hostname whose resolution fails', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };

    const refusal = await refuseUnsafeUrl('https://nowhere.example.com/', { allowInsecure: false, resolve });

    expect(refusal).toBe('host nowhere.example.com does not resolve');
  });

  it('refuses a hostname resolving to no address', async () => {
    const refusal = await refuseUnsafeUrl('https://empty.example.com/', { allowInsecure: false, resolve: resolvesTo() });

    expect(refusal).toBe('host empty.example.com does not resolve');
  });

  it('accepts http://127.0.0.1 when insecure URLs are allowed', async () => {
    const refusal = await refuseUnsafeUrl('http://127.0.0.1:9000/hook', { allowInsecure: true, resolve: mustNotResolve });

    expect(refusal).toBeUndefined();
  });

  it('accepts a name resolving to loopback, over http, when local URLs are allowed', async () => {
    expect(
      await refuseUnsafeUrl('http://localhost:3000/hook', { allowInsecure: true, resolve: resolvesTo('127.0.0.1', '::1') }),
    ).toBeUndefined();
  });

  it.each([
    ['http://10.0.0.5/hook', '10.0.0.5'],
    ['http://172.16.3.4/hook', '172.16.3.4'],
    ['http://192.168.1.10/hook', '192.168.1.10'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['http://[fd00::1]/hook', 'fd00::1'],
    ['http://[fe80::1]/hook', 'fe80::1'],
  ])('refuses the private, link-local or metadata address %s even when local URLs are allowed', async (raw, address) => {
    const refusal = await refuseUnsafeUrl(raw, { allowInsecure: true, resolve: mustNotResolve });

    expect(refusal).toContain('refused in every mode');
    expect(refusal).toContain(address);
  });

  it('accepts a name that does not resolve yet when local URLs are allowed: each connection checks its address', async () => {
    expect(await refuseUnsafeUrl('http://receiver.test/hook', { allowInsecure: true, resolve: resolvesTo() })).toBeUndefined();
  });

  it('refuses a name resolving to a private address even when local URLs are allowed', async () => {
    const refusal = await refuseUnsafeUrl('http://printer.lan/hook', { allowInsecure: true, resolve: resolvesTo('192.168.0.20') });

    expect(refusal).toContain('192.168.0.20');
  });

  it.each(['not a url', '/relative/path', ''])('refuses %j as not an absolute URL', async (raw) => {
    const refusal = await refuseUnsafeUrl(raw, { allowInsecure: false, resolve: mustNotResolve });

    expect(refusal).toBe('must be an absolute URL');
  });

  it.each([
    ['https://[::1]/', '::1'],
    ['https://127.0.0.1/', '127.0.0.1'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['https://0x7f.1/', '127.0.0.1'],
  ])('refuses the IP literal %s without a DNS lookup', async (raw, address) => {
    const refusal = await refuseUnsafeUrl(raw, { allowInsecure: false, resolve: mustNotResolve });

    expect(refusal).toContain('must resolve to a public address');
    expect(refusal).toContain(address);
  });

  it('accepts a public IP literal without a DNS lookup', async () => {
    const refusal = await refuseUnsafeUrl('https://93.184.215.14/hooks/vps', { allowInsecure: false, resolve: mustNotResolve });

    expect(refusal).toBeUndefined();
  });
});
