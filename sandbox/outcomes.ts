/**
 * What the next publish of an account turns into, chosen by a test or demo through the control API;
 * without a choice a publish completes (or lands in the inbox when it was sent as a draft).
 */
export type PublishOutcome = { kind: 'complete' } | { kind: 'failed'; reason: string } | { kind: 'draft' };

export class OutcomeQueue {
  private readonly queued = new Map<string, PublishOutcome[]>();

  push(openId: string, outcome: PublishOutcome): void {
    const list = this.queued.get(openId) ?? [];
    list.push(outcome);
    this.queued.set(openId, list);
  }

  /** Forgets the outcomes queued for the account: its next publishes end as they would. */
  clear(openId: string): void {
    this.queued.delete(openId);
  }

  /** The chosen outcome of this account's next publish, if any. */
  next(openId: string): PublishOutcome | undefined {
    return this.queued.get(openId)?.shift();
  }
}
