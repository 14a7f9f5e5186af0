/**
 * Faults a test injects through the control API. Each fault applies to the next `count` official
 * calls that match it (by platform, path prefix and account), then disappears.
 */
import { randomUUID } from 'node:crypto';
import type { Platform } from './official-error';

export const FAULT_KINDS = ['server_error', 'hang', 'rate_limit', 'invalid_token', 'expired_token', 'permission_denied'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  id: string;
  kind: FaultKind;
  remaining: number;
  platform?: Platform;
  pathPrefix?: string;
  /** For `hang`: how long the call waits before it is processed after all, as a slow platform does. */
  hangMs: number;
}

export class FaultPlan {
  private faults: Fault[] = [];

  add(input: Omit<Fault, 'id' | 'remaining' | 'hangMs'> & { count?: number; hangMs?: number }): Fault {
    const fault: Fault = { id: randomUUID(), kind: input.kind, remaining: input.count ?? 1, hangMs: input.hangMs ?? 60_000 };
    if (input.platform) fault.platform = input.platform;
    if (input.pathPrefix) fault.pathPrefix = input.pathPrefix;
    this.faults.push(fault);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  clear(): void {
    this.faults = [];
  }

  /** The first fault matching this call, counted as used. */
  take(platform: Platform, path: string): Fault | undefined {
    const fault = this.faults.find((f) => (!f.platform || f.platform === platform) && (!f.pathPrefix || path.startsWith(f.pathPrefix)));
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return { ...fault };
  }
}
