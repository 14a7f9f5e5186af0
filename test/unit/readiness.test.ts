import { mergeReports, probe, runProbes } from '../../core/observability/readiness';

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
});
