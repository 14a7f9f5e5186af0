import type { ServiceImpl } from '@connectrpc/connect';
import type { HealthService } from '../../gen/vps/health/v1/health_pb';
import { runProbes, type Probe } from '../observability/readiness';

/** Core's readiness over Connect, for gateways in other processes and internal callers. */
export class HealthHandlers implements ServiceImpl<typeof HealthService> {
  constructor(private readonly probes: Probe[]) {}

  async check() {
    const report = await runProbes(this.probes);
    return { ready: report.ready, checks: report.checks.map((c) => ({ ...c, error: c.error ?? '' })) };
  }
}
