/**
 * `vps trigger` as a user runs it: a child process against the running service, with the emulator
 * behind it. The emulator makes the change and pushes the official webhook to the service's
 * platform webhook (or, for a publish outcome, the service's publish workflow follows a real
 * publish), the service records the event, and every channel sees it: the command's own answer,
 * GET /v1/events, a `vps listen` running meanwhile, and a webhook endpoint. A service the emulator
 * does not stand behind is told apart before anything is changed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventJson } from '../../sdk/api-types';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { call } from '../helpers/http';
import { cleanEnv, exitOf, spawnVps, type ChildHandle } from '../helpers/processes';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { createTenant, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

type EventObject = EventJson;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('vps trigger', () => {
  let env: WorkingStack;
  let tenant: Tenant;
  let seatId: string;
  let openId: string;
  let shopSeatId: string;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const children: ChildHandle[] = [];

  beforeAll(async () => {
    env = await startWorkingStack('cli-trigger', { stack: { allowInsecureWebhookUrls: true } });
    await subscribeToPlatformWebhooks(env.sb.upstream.vplat, `${env.stack.baseUrl}/webhooks/vplat`);
    tenant = await createTenant(env.stack);
    ({
      seatId,
      account: { openId },
    } = await bindSandboxSeat(env, tenant, 'business'));
    ({ seatId: shopSeatId } = await bindSandboxSeat(env, tenant, 'shop'));
    receiver = await startWebhookReceiver();
    const created = await call(env.stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: `${receiver.url}/hook`, eventTypes: ['*'] },
    });
    expect(created.body.code).toBe(0);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-trigger-'));
  }, 120_000);
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop()));
  });
  afterAll(async () => {
    await receiver?.close();
    await env?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function spawnWith(args: string[], extraEnv: Record<string, string>): ChildHandle {
    // An empty data folder: no address of an emulator is found there unless a test writes one.
    const handle = spawnVps(
      args,
      cleanEnv({ VPS_API_KEY: tenant.apiKey, VPS_BASE_URL: env.stack.baseUrl, VPS_DATA_DIR: dataDir, ...extraEnv }),
    );
    children.push(handle);
    return handle;
  }

  async function vps(args: string[], extraEnv: Record<string, string> = { VPS_SANDBOX_URL: env.sb.url }): Promise<Result> {
    const handle = spawnWith(args, extraEnv);
    let stdout = '';
    let stderr = '';
    handle.child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    handle.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await exitOf(handle);
    return { code, stdout, stderr };
  }

  const logged = async () =>
    (await call<{ items: EventObject[] }>(env.stack.baseUrl, 'GET', '/v1/events?limit=100', { key: tenant.apiKey })).body.data.items;
  const pushedTo = async (id: string) =>
    JSON.parse((await receiver.waitFor(1, (p) => (JSON.parse(p.body) as EventObject).id === id, 20_000))[0]!.body) as EventObject;

  /** Exit 0 and the event on stdout, which is the one the service logged and pushed. */
  async function triggered(args: string[], extraEnv?: Record<string, string>): Promise<EventObject> {
    const result = await vps(['trigger', ...args], extraEnv);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('waiting for') });
    const event = JSON.parse(result.stdout) as EventObject;
    expect((await logged()).find((e) => e.id === event.id)).toEqual(event);
    expect(await pushedTo(event.id)).toEqual(event);
    return event;
  }

  it('makes a viewer comment on the first bound video seat that the service logs, pushes and streams to vps listen', async () => {
    const listener = spawnWith(['listen'], {});
    let streamed = '';
    listener.child.stdout!.on('data', (c: Buffer) => (streamed += c.toString()));
    await listener.waitFor(/^connected to /m);

    const event = await triggered(['comment', '--text', 'Where did you film this?']);
    expect(event).toMatchObject({
      type: 'vplat.comment.created',
      event: 'comment.update',
      seat_id: seatId,
      data: { comment_action: 'insert', comment_type: 'comment', parent_comment_id: 0, text: 'Where did you film this?' },
    });
    await listener.waitFor(new RegExp(`"id":"${event.id}"`), 20_000);
    expect(JSON.parse(streamed.trim().split('\n').at(-1)!)).toEqual(event);
  });

  it("makes a reply under the post's newest comment, or under the comment named", async () => {
    const reply = await triggered(['reply', '--seat', seatId]);
    expect(reply).toMatchObject({ type: 'vplat.comment.created', seat_id: seatId, data: { comment_type: 'reply' } });
    const parent = reply.data.parent_comment_id;
    // A comment's id (19 digits: a number when exact as a double, else text that keeps every digit).
    expect(String(parent)).toMatch(/^[1-9]\d{18}$/);

    const top = await triggered(['comment']);
    const named = await triggered(['reply', '--parent-comment-id', String(top.data.comment_id), '--text', 'Thanks!']);
    expect(named.data).toMatchObject({ parent_comment_id: top.data.comment_id, video_id: top.data.video_id, text: 'Thanks!' });
  });

  it('makes a direct message from a user', async () => {
    const event = await triggered(['message', '--text', 'Is this still available?']);
    expect(event).toMatchObject({
      type: 'vplat.message.received',
      event: 'im_receive_msg',
      seat_id: seatId,
      data: { type: 'text', text: { body: 'Is this still available?' } },
    });
  });

  it('publishes through the service and prints the status change to the outcome the emulator was told: complete or failed', async () => {
    const complete = await triggered(['publish-complete', '--seat', seatId]);
    expect(complete).toMatchObject({
      type: 'vplat.publish.status_changed',
      seat_id: seatId,
      data: { status: 'publish_complete', track: 'video', kind: 'video' },
    });
    const failed = await triggered(['publish-failed', '--seat', seatId, '--reason', 'spam_risk_too_many_posts']);
    expect(failed).toMatchObject({ type: 'vplat.publish.status_changed', data: { status: 'publish_failed' } });
    expect(JSON.stringify(failed.data)).toContain('spam_risk_too_many_posts');
    // Real publishes: the records are the service's own.
    const records = (
      await call<{ items: { id: string; status: string }[] }>(env.stack.baseUrl, 'GET', '/v1/publish/records', { key: tenant.apiKey })
    ).body.data.items;
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: complete.data.record_id, status: 'publish_complete' }),
        expect.objectContaining({ id: failed.data.record_id, status: 'publish_failed' }),
      ]),
    );
  }, 60_000);

  it("finds the emulator from the address a running service wrote to the data folder's sandbox-url", async () => {
    fs.writeFileSync(path.join(dataDir, 'sandbox-url'), `${env.sb.url}\n`);
    try {
      const event = await triggered(['message'], {});
      expect(event.type).toBe('vplat.message.received');
    } finally {
      fs.rmSync(path.join(dataDir, 'sandbox-url'));
    }
  });

  describe('a service the emulator does not stand behind', () => {
    let elsewhere: TestSandbox;
    beforeAll(async () => {
      elsewhere = await startTestSandbox();
    });
    afterAll(async () => {
      await elsewhere?.close();
    });

    it('exits 5 saying so, and changes nothing, when no emulator is known or the one given does not hold the seat', async () => {
      const before = (await logged()).length;
      const unknown = await vps(['trigger', 'comment'], {});
      expect(unknown.code).toBe(5);
      expect(unknown.stderr).toContain(`no sandbox emulator is known for ${env.stack.baseUrl}`);
      expect(unknown.stderr).toContain('a production service has none');

      const other = await vps(['trigger', 'comment'], { VPS_SANDBOX_URL: elsewhere.url });
      expect(other.code).toBe(5);
      expect(other.stderr).toContain(`the service at ${env.stack.baseUrl} is not backed by the sandbox emulator at ${elsewhere.url}`);
      expect(other.stderr).toContain(openId);

      // The service's own address is no emulator either.
      const notOne = await vps(['trigger', 'message', '--sandbox-url', env.stack.baseUrl], {});
      expect(notOne.code).toBe(5);
      expect(notOne.stderr).toContain('not as the sandbox emulator does');

      expect([unknown, other, notOne].map((r) => r.stdout)).toEqual(['', '', '']);
      expect(await elsewhere.control<{ calls: unknown[] }>('GET', '/_sandbox/calls')).toEqual({ calls: [] });
      expect((await logged()).length).toBe(before);
    });

    it("exits 4 when the service does not record the event in time, saying where the emulator's push went", async () => {
      // A tenant whose seat holds an account of the other emulator, which the service never subscribed to.
      const other = await createTenant(env.stack);
      await bindSandboxSeat({ stack: env.stack, sb: elsewhere }, other, 'business');
      const run = (args: string[]) => vps(['trigger', ...args], { VPS_API_KEY: other.apiKey, VPS_SANDBOX_URL: elsewhere.url });

      const unsubscribed = await run(['comment']);
      expect(unsubscribed.code).toBe(4);
      expect(unsubscribed.stderr).toContain('the emulator has no webhook subscription for it, so nothing was pushed');

      await subscribeToPlatformWebhooks(elsewhere.upstream.vplat, 'http://127.0.0.1:9/webhooks/vplat');
      const nowhere = await run(['message', '--wait', '2']);
      expect(nowhere.code).toBe(4);
      expect(nowhere.stderr).toContain(
        'the service did not record the event within 2 s: the emulator pushed it to http://127.0.0.1:9/webhooks/vplat',
      );
      expect([unsubscribed.stdout, nowhere.stdout]).toEqual(['', '']);
    });
  });

  it('exits 2 on a usage error: an unknown event, a shop seat, a seat not among yours', async () => {
    const results = await Promise.all([
      vps(['trigger', 'like']),
      vps(['trigger', 'comment', '--seat', shopSeatId]),
      vps(['trigger', 'message', '--seat', 'seat_nope']),
      vps(['trigger', 'comment', '--reason', 'spam']),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    expect(results[3]!.stderr).toContain('--reason does not apply to comment');
    expect(results[0]!.stderr).toMatch(/expected one of comment, reply, message, publish-complete, publish-failed/);
    expect(results[1]!.stderr).toContain(`seat ${shopSeatId} is on the shop track`);
    expect(results[2]!.stderr).toContain('no seat seat_nope among your seats');
  });
});
