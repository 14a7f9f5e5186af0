import { mergeReports, probe, runProbes, sharedReadiness, type ReadinessReport } from '../../core/observability/readiness';

describe('readiness', () => {
  it('is ready when every gating dependency answers, whatever the others do', async () => {
    const report = await runProbes([
      probe('postgres', true, async () => 1),
      probe('temporal', false, async () => Promise.reject(new Error('connection refused'))),
    ]);
    expect(report.ready).toBe(true);
    expect(report.checks).toEqual([
      expect.objectContaining({ name: 'postgres', ok: true, gatesReadiness: true }),
      expect.objectContaining({ name: 'temporal', ok: false, gatesReadiness: false, error: 'connection refused' }),
    ]);
  });

  it('counts a probe slower than its timeout as down', async () => {
    const report = await runProbes([probe('postgres', true, () => new Promise(() => undefined), 20)]);
    expect(report).toEqual({
      ready: false,
      checks: [expect.objectContaining({ name: 'postgres', ok: false, error: 'no answer within 20 ms' })],
    });
  });

  it('merges the roles of one process: ready only if each is, each dependency listed once and failed if any probe of it failed', () => {
    const check = (name: string, ok: boolean, gatesReadiness = true) => ({ name, ok, gatesReadiness, latencyMs: 1 });
    const merged = mergeReports([
      { ready: true, checks: [check('postgres', true), check('temporal', true, false)] },
      { ready: false, checks: [check('worker', true), check('postgres', false)] },
    ]);
    expect(merged.ready).toBe(false);
    expect(merged.checks.map((c) => [c.name, c.ok])).toEqual([
      ['postgres', false],
      ['temporal', true],
      ['worker', true],
    ]);
  });

  describe('shared between callers', () => {
    const ready: ReadinessReport = { ready: true, checks: [] };
    const down: ReadinessReport = { ready: false, checks: [{ name: 'core', ok: false, gatesReadiness: true, latencyMs: 1 }] };

    /** A check that answers when the test says, counting its runs; and a clock the test moves. */
    function harness(ttlMs: number) {
      let clock = 0;
      const pending: Array<{ resolve(r: ReadinessReport): void; reject(e: Error): void }> = [];
      const check = jest.fn(() => new Promise<ReadinessReport>((resolve, reject) => pending.push({ resolve, reject })));
      const shared = sharedReadiness(check, ttlMs, () => clock);
      return { shared, check, pending, tick: (ms: number) => (clock += ms) };
    }

    it('runs one check for every caller that comes while it runs', async () => {
      const h = harness(1_000);
      const answers = Promise.all([h.shared(), h.shared(), h.shared()]);
      expect(h.check).toHaveBeenCalledTimes(1);
      h.pending[0]!.resolve(ready);
      expect(await answers).toEqual([ready, ready, ready]);
    });

    it('keeps the report for the time given from the end of its check, then checks again', async () => {
      const h = harness(1_000);
      const first = h.shared();
      h.tick(300); // the check takes 300
      h.pending[0]!.resolve(down);
      expect(await first).toBe(down);
      h.tick(999);
      expect(await h.shared()).toBe(down);
      expect(h.check).toHaveBeenCalledTimes(1);
      h.tick(1);
      const second = h.shared();
      expect(h.check).toHaveBeenCalledTimes(2);
      h.pending[1]!.resolve(ready);
      expect(await second).toBe(ready);
    });

    it('keeps no failure of the check itself: the next caller checks again', async () => {
      const h = harness(1_000);
      const failed = h.shared();
      h.pending[0]!.reject(new Error('boom'));
      await expect(failed).rejects.toThrow('boom');
      const next = h.shared();
      expect(h.check).toHaveBeenCalledTimes(2);
      h.pending[1]!.resolve(ready);
      expect(await next).toBe(ready);
    });
  });
});
