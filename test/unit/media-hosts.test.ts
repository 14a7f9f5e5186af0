import { mediaAddressRefusal } from '../../core/upstream/vplat/media-hosts';

describe("the platform's media download addresses the access token may go to", () => {
  const platform = { apiBase: 'https://business-api.example.com', mediaHosts: ['media.example.com', '*.cdn.example.net'] };
  const emulator = { apiBase: 'http://127.0.0.1:8090', mediaHosts: [] };

  it.each([
    ['a listed host', 'https://media.example.com/dm/abc?sig=1'],
    ['a subdomain of a listed domain', 'https://p16.cdn.example.net/x'],
    ['a deeper subdomain of a listed domain', 'https://a.b.cdn.example.net/x'],
    ['a listed host written with its root dot', 'https://media.example.com./x'],
    ['a listed host in capitals', 'https://MEDIA.Example.COM/x'],
    ["the API's own origin", 'https://business-api.example.com/download/1'],
  ])('allows %s', (_label, address) => {
    expect(mediaAddressRefusal(address, platform)).toBeUndefined();
  });

  it("allows the emulator's own origin, over http, when the platform is the emulator, and nothing else", () => {
    expect(mediaAddressRefusal('http://127.0.0.1:8090/_sandbox/cdn/message-media/t', emulator)).toBeUndefined();
    expect(mediaAddressRefusal('http://127.0.0.1:8091/_sandbox/cdn/message-media/t', emulator)).toBe('it is not https (http)');
    expect(mediaAddressRefusal('https://127.0.0.1:8090/x', emulator)).toBe("its host 127.0.0.1 is not one of the platform's");
  });

  it.each([
    ['http on a listed host', 'http://media.example.com/x', 'it is not https (http)'],
    ['another host', 'https://attacker.example/x', "its host attacker.example is not one of the platform's"],
    ['a host ending like a listed one', 'https://evilmedia.example.com/x', "its host evilmedia.example.com is not one of the platform's"],
    [
      'a listed host as a subdomain of another',
      'https://media.example.com.attacker.example/x',
      "its host media.example.com.attacker.example is not one of the platform's",
    ],
    ['the listed wildcard domain itself', 'https://cdn.example.net/x', "its host cdn.example.net is not one of the platform's"],
    ['an address with credentials', 'https://user:pw@media.example.com/x', 'it carries credentials'],
    ["the API's host over http", 'http://business-api.example.com/x', 'it is not https (http)'],
    [
      "the API's host on another port",
      'https://business-api.example.com:8443/x',
      "its host business-api.example.com is not one of the platform's",
    ],
    ['another scheme', 'file:///etc/passwd', 'it is not https (file)'],
    ['no URL at all', 'not a url', 'it is not an absolute URL'],
    ['an empty answer', '', 'it is not an absolute URL'],
  ])('refuses %s', (_label, address, reason) => {
    expect(mediaAddressRefusal(address, platform)).toBe(reason);
  });
});
