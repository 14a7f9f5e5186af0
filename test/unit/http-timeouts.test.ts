import { loadConfig } from '../../config/config';
import {
  checkIntervalMs,
  DEFAULT_HTTP_TIMEOUTS,
  durationText,
  httpTimeoutsFromConfig,
  serverTimeoutOptions,
  timeoutAnswer,
} from '../../core/net/http-timeouts';

describe('HTTP timeouts', () => {
  it('reads the four limits from the configuration, with the documented defaults', () => {
    expect(httpTimeoutsFromConfig(loadConfig({}).env)).toEqual(DEFAULT_HTTP_TIMEOUTS);
    expect(DEFAULT_HTTP_TIMEOUTS).toEqual({ headersMs: 20_000, keepAliveMs: 72_000, bodyIdleMs: 30_000, requestMs: 60_000 });
    const env = loadConfig({
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '2000',
      HTTP_BODY_IDLE_TIMEOUT_MS: '3000',
      HTTP_REQUEST_TIMEOUT_MS: '4000',
    }).env;
    expect(httpTimeoutsFromConfig(env)).toEqual({ headersMs: 1000, keepAliveMs: 2000, bodyIdleMs: 3000, requestMs: 4000 });
    expect(() => loadConfig({ HTTP_BODY_IDLE_TIMEOUT_MS: '0' })).toThrow(/HTTP_BODY_IDLE_TIMEOUT_MS: must be a positive integer/);
  });

  it("turns Node's whole-request deadline off and checks a tenth of the shortest limit often, at most once a second", () => {
    expect(serverTimeoutOptions(DEFAULT_HTTP_TIMEOUTS)).toEqual({
      keepAliveTimeout: 72_000,
      requestTimeout: 0,
      connectionTimeout: 0,
      http: { headersTimeout: 20_000, connectionsCheckingInterval: 1_000 },
    });
    expect(checkIntervalMs({ ...DEFAULT_HTTP_TIMEOUTS, bodyIdleMs: 1_000 })).toBe(100);
    expect(checkIntervalMs({ headersMs: 50, keepAliveMs: 50, bodyIdleMs: 50, requestMs: 50 })).toBe(20);
  });

  it('answers 408 with the envelope and closes the connection; a HEAD gets the headers only', () => {
    const answer = timeoutAnswer('request: no byte of the body arrived for 30 s; the connection is closed');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head!.split('\r\n')).toEqual([
      'HTTP/1.1 408 Request Timeout',
      'Connection: close',
      'Content-Type: application/json',
      'x-content-type-options: nosniff',
      `Content-Length: ${Buffer.byteLength(body!)}`,
    ]);
    expect(JSON.parse(body!)).toEqual({
      code: 2001,
      message: 'request: no byte of the body arrived for 30 s; the connection is closed',
      data: {},
    });
    expect(timeoutAnswer('x', { head: true }).endsWith('\r\n\r\n')).toBe(true);
  });

  it('writes durations in seconds when they are whole', () => {
    expect([durationText(30_000), durationText(1_500)]).toEqual(['30 s', '1500 ms']);
  });
});
