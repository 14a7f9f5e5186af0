import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { call } from '../helpers/http';
import { cleanEnv, REPO_ROOT } from '../helpers/processes';
import { startStack, uniqueAccount, type Stack } from '../helpers/stack';

const exec = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, any>;
}

describe('vps admin: a script can set up and manage a customer', () => {
  let stack: Stack;
  let vps: (...args: string[]) => Promise<Result>;
  beforeAll(async () => {
    stack = await startStack();
    const env = cleanEnv({ VPS_CORE_URL: stack.coreUrl, VPS_ADMIN_TOKEN: stack.adminToken });
    vps = async (...args) => {
      try {
        const { stdout, stderr } = await exec(process.execPath, [path.join(REPO_ROOT, 'bin', 'vps'), 'admin', ...args], {
          env,
          cwd: REPO_ROOT,
        });
        return { code: 0, stdout, stderr, json: JSON.parse(stdout) };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(e.stderr.trim().split('\n').pop() ?? '{}');
        } catch {
          json = {}; // usage errors print commander's text, not JSON
        }
        return { code: e.code, stdout: e.stdout, stderr: e.stderr, json };
      }
    };
  });
  afterAll(() => stack.close());

  it('creates a customer, user, key and bound seat; expires the plan; disables the user', async () => {
    const customer = (await vps('customers', 'create', '--name', 'Acme', '--seat-quota', '2')).json;
    expect(customer).toMatchObject({ customer: { name: 'Acme', seatQuota: 2 } });
    const customerId = customer.customer.id as string;
    const user = (await vps('users', 'create', '--customer', customerId, '--email', `ops-${customerId}@acme.test`)).json.user;
    const key = (await vps('keys', 'create', '--user', user.id, '--name', 'ci')).json;
    expect(key.plaintext).toMatch(/^vps_/);

    const seat = (await vps('seats', 'create', '--customer', customerId, '--track', 'video', '--name', 'main')).json.seat;
    const account = uniqueAccount('biz');
    const bound = (await vps('seats', 'bind', seat.id, '--account-id', account, '--access-token', 'tok', '--username', 'acme')).json.seat;
    expect(bound).toMatchObject({ capabilityAccountId: account, bound: true, authorizationStatus: 'AUTHORIZATION_STATUS_ACTIVE' });

    const seats = await call<{ items: { capabilityAccountId: string }[] }>(stack.baseUrl, 'GET', '/v1/seats', { key: key.plaintext });
    expect(seats.body.data.items.map((s) => s.capabilityAccountId)).toEqual([account]);

    const listed = await vps('keys', 'list', '--customer', customerId);
    expect(listed.stdout).not.toContain(key.plaintext);
    expect(listed.json.apiKeys[0]).toMatchObject({ prefix: key.plaintext.slice(0, 12) });

    await vps('customers', 'update', customerId, '--plan-expires-at', '2020-01-01T00:00:00Z');
    const write = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: key.plaintext,
      json: { url: 'https://93.184.215.14/h', eventTypes: ['*'] },
    });
    expect(write.body.code).toBe(1003);

    await vps('users', 'disable', user.id);
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: key.plaintext })).body.code).toBe(1002);
  }, 120_000);

  it('exits 1 with the API code on stderr when the service refuses', async () => {
    const res = await vps('seats', 'unbind', 'seat_unknown');
    expect(res.code).toBe(1);
    expect(res.json).toMatchObject({ code: 1005 });
  }, 30_000);

  it('exits 2 on a usage error and 3 when core cannot be reached', async () => {
    expect((await vps('seats', 'create', '--customer', 'cus_x', '--track', 'radio')).code).toBe(2);
    const port = await freePort();
    const down = await vps('--core-url', `http://127.0.0.1:${port}`, 'customers', 'list');
    expect(down.code).toBe(3);
    expect(down.json).toMatchObject({ error: 'network' });
  }, 30_000);
});
