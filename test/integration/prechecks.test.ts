/**
 * Shop pre-checks end to end: POST /v1/publish/tts/precheck through core, a pre-check workflow on
 * the Temporal dev server and a real worker, to the emulator, which judges the anchor text; GET
 * reads the record the workflow keeps. The daily quota (ours, and the shop's own), the order of
 * checks, wrong id kinds, bad input, and a transient shop failure on submit.
 */
import { submitPrecheck } from '../../core/upstream/shop/content';
import { shopState } from '../../sandbox/shop/state';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import type { TestSandbox } from '../helpers/sandbox';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';

interface PrecheckJson {
  taskId: string;
  officialTaskId: string | null;
  status: string;
  violation: string | null;
  quality: string | null;
  issues: Array<{ dimension: string; [k: string]: unknown }>;
  reason: string | null;
  seatId: string;
  accountId: string;
  fileId: string;
  videoId: string;
  productId: string;
  productTitle: string;
  workflowId: string;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

const DAILY_QUOTA = 3;
const PRECHECK_TASK_PATH = '/affiliate_creator/202511/videos/precheck_task';

describe('shop pre-checks', () => {
  let env: WorkingStack;
  let stack: Stack;
  let sb: TestSandbox;
  let tenant: Tenant;

  beforeAll(async () => {
    env = await startWorkingStack('prechecks', {
      stack: { shop: { precheck: { dailyQuota: DAILY_QUOTA, pollIntervalMs: 100, pollAttempts: 50 } } },
    });
    ({ stack, sb } = env);
    tenant = await createTenant(stack, { seatQuota: 20 });
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  const api = <T = PrecheckJson>(method: string, path: string, json?: unknown, t: Tenant = tenant) =>
    call<T>(stack.baseUrl, method, path, { key: t.apiKey, json });
  const submit = (body: object, t: Tenant = tenant) => api('POST', '/v1/publish/tts/precheck', body, t);
  const read = (taskId: string, t: Tenant = tenant) => api('GET', `/v1/publish/tts/precheck/${encodeURIComponent(taskId)}`, undefined, t);
  const ended = (taskId: string) =>
    eventually(
      () => read(taskId),
      (r) => ['passed', 'failed', 'service_error'].includes(r.body.data.status),
      20_000,
      100,
    );

  /** A fresh shop account bound to a seat of the tenant, a file uploaded for it, and a product it may link. */
  async function shopAccount(
    t: Tenant = tenant,
  ): Promise<{ account: SandboxAccount; seatId: string; fileId: string; videoId: string; productId: string }> {
    const { account, seatId } = await bindSandboxSeat(env, t, 'shop');
    const { fileId, videoId } = await uploadFile(seatId, t);
    const productId = shopState(sb.sandbox.context)
      .catalog.products(account.openId)
      .find((p) => p.addedStatus !== 'REJECTED')!.id;
    return { account, seatId, fileId, videoId, productId };
  }

  async function uploadFile(seatId: string, t: Tenant = tenant) {
    const res = await uploadMultipart<{ id: string; fileId: string | null; status: string }>(stack.baseUrl, t.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'product.mp4', bytes: mp4Bytes(16 * 1024) } },
    ]);
    expect(res.body.data).toMatchObject({ status: 'available', fileId: expect.any(String) });
    return { fileId: res.body.data.fileId!, videoId: res.body.data.id };
  }

  const body = (a: { account: SandboxAccount; fileId: string; productId: string }, productTitle = 'Summer sale') => ({
    accountId: a.account.openId,
    fileId: a.fileId,
    productId: a.productId,
    productTitle,
  });

  describe('the result', () => {
    it('answers the record at once, then passes when both dimensions pass', async () => {
      const a = await shopAccount();
      const res = await submit(body(a, 'Summer linen shirt'));
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(0);
      const taskId = res.body.data.taskId;
      expect(taskId).toMatch(/^pre_[0-9a-z]{26}$/);
      expect(res.body.data).toEqual({
        taskId,
        officialTaskId: null,
        status: 'submitted',
        violation: null,
        quality: null,
        issues: [],
        reason: null,
        seatId: a.seatId,
        accountId: a.account.openId,
        fileId: a.fileId,
        videoId: a.videoId,
        productId: a.productId,
        productTitle: 'Summer linen shirt',
        workflowId: `precheck-${taskId}`,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        completedAt: null,
      });

      const done = await ended(taskId);
      expect(done.body.data).toMatchObject({
        status: 'passed',
        violation: 'passed',
        quality: 'passed',
        issues: [],
        reason: null,
        officialTaskId: expect.stringMatching(/^\d+$/),
        completedAt: expect.any(String),
      });
      // The pre-check did not consume the file id: the shop still takes it for a post.
      expect(shopState(sb.sandbox.context).files.usableVideo(a.account.openId, a.fileId)).toBeDefined();
    });

    it('fails on the violation dimension with the shop’s issue', async () => {
      const a = await shopAccount();
      const res = await submit(body(a, 'Spring violation deal'));
      const done = await ended(res.body.data.taskId);
      expect(done.body.data).toMatchObject({
        status: 'failed',
        violation: 'failed',
        quality: 'passed',
        reason: expect.stringMatching(/violation check failed/),
      });
      expect(done.body.data.issues).toEqual([{ dimension: 'violation', risk: expect.any(String), suggestions: expect.any(String) }]);
    });

    it('fails on the quality dimension with the shop’s issue', async () => {
      const a = await shopAccount();
      const res = await submit(body(a, 'A blurry product shot'));
      const done = await ended(res.body.data.taskId);
      expect(done.body.data).toMatchObject({
        status: 'failed',
        violation: 'passed',
        quality: 'failed',
        reason: expect.stringMatching(/quality check failed/),
      });
      expect(done.body.data.issues).toEqual([{ dimension: 'quality', code: 'LOW_RESOLUTION', suggestions: expect.any(String) }]);
    });

    it('takes a verdict queued on the emulator for both dimensions', async () => {
      const a = await shopAccount();
      await sb.control('POST', `/_sandbox/shop/${a.account.openId}/next-precheck`, { violation: 'FAIL', quality: 'FAIL' });
      const done = await ended((await submit(body(a))).body.data.taskId);
      expect(done.body.data).toMatchObject({
        status: 'failed',
        violation: 'failed',
        quality: 'failed',
        reason: expect.stringMatching(/violation and quality checks failed/),
      });
      expect(done.body.data.issues.map((i) => i.dimension)).toEqual(['violation', 'quality']);
    });

    it('still passes after a transient shop failure on submit', async () => {
      const a = await shopAccount();
      await sb.control('POST', '/_sandbox/faults', { kind: 'server_error', count: 1, platform: 'shop', pathPrefix: PRECHECK_TASK_PATH });
      const res = await submit(body(a));
      expect(res.body.code).toBe(0);
      const done = await ended(res.body.data.taskId);
      expect(done.body.data).toMatchObject({ status: 'passed', violation: 'passed', quality: 'passed' });
      const faults = await sb.control<{ faults: unknown[] }>('GET', '/_sandbox/faults');
      expect(faults.faults).toEqual([]);
    });
  });

  describe('the daily quota', () => {
    /** Seconds to the next UTC midnight, as the test computes them. */
    const secondsToMidnight = () => {
      const now = Date.now();
      return Math.ceil((Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000 - now) / 1000);
    };

    it(`accepts ${DAILY_QUOTA} pre-checks a day per account, then answers 429/2002 with Retry-After until UTC midnight`, async () => {
      const a = await shopAccount();
      for (let i = 0; i < DAILY_QUOTA; i++) expect((await submit(body(a))).body.code).toBe(0);
      const expected = secondsToMidnight();
      const refused = await submit(body(a));
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe(2002);
      expect(Math.abs(Number(refused.headers.get('retry-after')) - expected)).toBeLessThanOrEqual(1);
      const resetsAt = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000).toISOString();
      expect(refused.body.message).toContain(`resets at ${resetsAt}`);
      expect(refused.body.data).toMatchObject({ field: 'accountId', dailyQuota: DAILY_QUOTA, used: DAILY_QUOTA, resetsAt });
      // Another account of the same customer has its own quota.
      const b = await shopAccount();
      expect((await submit(body(b))).body.code).toBe(0);
    });

    it('gives the last slot to exactly one of two concurrent requests', async () => {
      const a = await shopAccount();
      for (let i = 0; i < DAILY_QUOTA - 1; i++) expect((await submit(body(a))).body.code).toBe(0);
      const both = await Promise.all([submit(body(a)), submit(body(a))]);
      expect(both.map((r) => r.body.code).sort()).toEqual([0, 2002]);
    });

    it('does not count requests refused before the shop (bad anchor text)', async () => {
      const a = await shopAccount();
      for (let i = 0; i < 2; i++) expect((await submit(body(a, 'Buy now!'))).body.code).toBe(2001);
      for (let i = 0; i < DAILY_QUOTA; i++) expect((await submit(body(a))).body.code).toBe(0);
    });

    it('ends service_error on the shop’s own quota (170001019), which does not count against ours', async () => {
      const a = await shopAccount();
      // The emulator's real quota (50 a day), used up directly with the account's own token.
      const precheckBody = { video_info: { file_id: a.fileId }, product_link_info: { product_id: a.productId, title: 'Direct' } };
      for (let i = 0; i < 50; i++) await submitPrecheck(sb.upstream.shop, a.account.tokens.access_token, precheckBody);

      // More than our own quota of 3, one after the other: each is refused by the shop, none by us.
      for (let i = 0; i < DAILY_QUOTA + 1; i++) {
        const res = await submit(body(a));
        expect(res.body.code).toBe(0);
        const done = await ended(res.body.data.taskId);
        expect(done.body.data).toMatchObject({ status: 'service_error', officialTaskId: null, violation: null, quality: null });
        expect(done.body.data.reason).toMatch(/daily pre-check quota .* used up \(official code 170001019\)/);
      }
    });
  });

  describe('order of checks', () => {
    it('checks the account first (1007), then the file (1005, 2005), then the anchor text (2001)', async () => {
      const a = await shopAccount();
      // Unbound account and unknown file id: the account is reported.
      const unbound = await submit({ accountId: 'nobody-here', fileId: 'no-such-file', productId: a.productId, productTitle: 'Buy now!' });
      expect([unbound.status, unbound.body.code]).toEqual([409, 1007]);
      expect(unbound.body.message).toMatch(/^accountId: /);

      // A file id of another customer: 1005, naming fileId.
      const other = await createTenant(stack);
      const foreign = await shopAccount(other);
      const notOurs = await submit({ ...body(a), fileId: foreign.fileId, productTitle: 'Buy now!' });
      expect([notOurs.status, notOurs.body.code]).toEqual([404, 1005]);
      expect(notOurs.body.message).toMatch(/^fileId: /);

      // A file of another seat of the same customer: 1005 too.
      const sibling = await shopAccount();
      const otherSeat = await submit({ ...body(a), fileId: sibling.fileId });
      expect([otherSeat.status, otherSeat.body.code]).toEqual([404, 1005]);
      expect(otherSeat.body.message).toMatch(/another seat/);

      // A deleted video's file id: 2005, before the anchor text is judged.
      const deleted = await uploadFile(a.seatId);
      expect((await api('DELETE', `/v1/videos/${deleted.videoId}`)).body.code).toBe(0);
      const gone = await submit({ ...body(a), fileId: deleted.fileId, productTitle: 'Buy now!' });
      expect([gone.status, gone.body.code]).toEqual([422, 2005]);

      // Then the anchor text.
      for (const [title, why] of [
        ['Buy now!', /punctuation/],
        ['x'.repeat(31), /at most 30 characters \(got 31\)/],
        ['Deal \u{1F525}', /emoji/],
        ['   ', /is required/],
      ] as const) {
        const bad = await submit(body(a, title));
        expect([bad.status, bad.body.code]).toEqual([422, 2001]);
        expect(bad.body.message).toMatch(/^productTitle: /);
        expect(bad.body.message).toMatch(why);
      }
    });
  });

  describe('reading a pre-check', () => {
    it('refuses other kinds of ids with 1005 naming the kind, and another customer’s pre-check', async () => {
      const a = await shopAccount();
      const mine = (await submit(body(a))).body.data;
      const done = await ended(mine.taskId);
      for (const [id, kind] of [
        ['pub_01jc0000000000000000000000', /publish record id/],
        [a.videoId, /video library record id/],
        [done.body.data.officialTaskId!, /shop's own task id/],
        ['pre_00000000000000000000000000', /does not exist/],
      ] as const) {
        const res = await read(id);
        expect([res.status, res.body.code]).toEqual([404, 1005]);
        expect(res.body.message).toMatch(kind);
      }
      const other = await createTenant(stack);
      const theirs = await read(mine.taskId, other);
      expect([theirs.status, theirs.body.code]).toEqual([404, 1005]);
    });
  });

  describe('bad input', () => {
    it.each([
      ['a missing field', { accountId: 'a', fileId: 'f', productId: 'p' }, /productTitle/],
      ['an empty field', { accountId: '', fileId: 'f', productId: 'p', productTitle: 't' }, /accountId/],
      ['a blank field', { accountId: 'a', fileId: ' ', productId: 'p', productTitle: 't' }, /fileId/],
      ['a number for a string', { accountId: 'a', fileId: 'f', productId: 123, productTitle: 't' }, /productId/],
      ['an unknown field', { accountId: 'a', fileId: 'f', productId: 'p', productTitle: 't', extra: true }, /extra/],
      ['a NUL character', { accountId: 'a', fileId: 'f\u0000', productId: 'p', productTitle: 't' }, /fileId/],
      ['an array body', [], /./],
    ])('refuses %s with 2001 naming the field', async (_, json, field) => {
      const res = await submit(json);
      expect([res.status, res.body.code]).toEqual([422, 2001]);
      expect(res.body.message).toMatch(field);
    });

    it('refuses malformed JSON and odd task ids without a 5000', async () => {
      const broken = await call(stack.baseUrl, 'POST', '/v1/publish/tts/precheck', {
        key: tenant.apiKey,
        body: '{"accountId":',
        headers: { 'content-type': 'application/json' },
      });
      expect(broken.body.code).toBe(2001);
      for (const id of ['x'.repeat(65), 'pre_%00', '%E2%82%AC', 'pre_x%2Fy']) {
        const res = await call(stack.baseUrl, 'GET', `/v1/publish/tts/precheck/${id}`, { key: tenant.apiKey });
        expect([2001, 1005]).toContain(res.body.code);
      }
      const unauthenticated = await call(stack.baseUrl, 'POST', '/v1/publish/tts/precheck', { json: {} });
      expect(unauthenticated.body.code).toBe(1001);
    });
  });
});
