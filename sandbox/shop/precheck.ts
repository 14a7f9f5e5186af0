/**
 * Precheck tasks (submit 202511, result 202601) and the daily precheck quota.
 *
 * Quota: 50 accepted submissions per creator per UTC day of the emulator's clock; the 51st
 * answers 170001019, and the count starts again at midnight UTC. Only accepted submissions count:
 * a request refused for its parameters, title, file or product does not use the quota.
 *
 * Result: both checks report PROCESSING until `publishProcessingMs` of virtual time has passed
 * since submission, then their verdict. The verdict is SUCCESS unless (a) the control API queued a
 * verdict for the creator's next precheck (`POST /_sandbox/shop/:openId/next-precheck`), or (b)
 * the anchor title contains the word "violation" (violation check FAIL) or the word "blurry"
 * (good-quality check FAIL), whole words, any case.
 */
import { newItemId } from '../posts';
import { SHOP } from '../official-error';
import { CREATOR } from './errors';

export const PRECHECK_DAILY_LIMIT = 50;

export type CheckStatus = 'SUCCESS' | 'FAIL';

export interface Verdict {
  violation: CheckStatus;
  quality: CheckStatus;
}

interface Task {
  id: string;
  openId: string;
  fileId: string;
  productId: string;
  title: string;
  submittedAt: number;
  verdict: Verdict;
}

export interface OfficialPrecheckTask {
  id: string;
  violation_check_result: { status: CheckStatus | 'PROCESSING'; issues: Array<{ risk: string; suggestions: string }> };
  good_quality_check_result: { status: CheckStatus | 'PROCESSING'; issues: Array<{ code: string; suggestions: string }> };
}

/** What a failed check reports, in the shape of the platform's examples. */
const VIOLATION_ISSUE = {
  risk: 'Misleading Content',
  suggestions:
    'The video or its product anchor may mislead viewers about the product. Show the product as it is and avoid exaggerated claims.',
};
const QUALITY_ISSUE = {
  code: 'LOW_RESOLUTION',
  suggestions: 'Upload a video of 720p or higher and keep the product in focus so that viewers can see it clearly.',
};

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class Prechecks {
  private readonly tasks = new Map<string, Task>();
  private readonly daily = new Map<string, { day: string; count: number }>();
  private readonly queued = new Map<string, Verdict[]>();

  constructor(
    private readonly now: () => number,
    private readonly processingMs: () => number,
  ) {}

  usage(openId: string): { day: string; count: number; limit: number } {
    const day = utcDay(this.now());
    const entry = this.daily.get(openId);
    return { day, count: entry?.day === day ? entry.count : 0, limit: PRECHECK_DAILY_LIMIT };
  }

  /** Refuses with 170001019 when today's quota is used up; checked before the content checks. */
  checkQuota(openId: string): void {
    if (this.usage(openId).count >= PRECHECK_DAILY_LIMIT) throw CREATOR.precheckQuota(PRECHECK_DAILY_LIMIT);
  }

  queueVerdict(openId: string, verdict: Verdict): void {
    const list = this.queued.get(openId) ?? [];
    list.push(verdict);
    this.queued.set(openId, list);
  }

  submit(openId: string, input: { fileId: string; productId: string; title: string }): Task {
    this.checkQuota(openId);
    const usage = this.usage(openId);
    this.daily.set(openId, { day: usage.day, count: usage.count + 1 });
    const task: Task = {
      ...input,
      id: newItemId(this.now()),
      openId,
      submittedAt: this.now(),
      verdict: this.queued.get(openId)?.shift() ?? triggered(input.title),
    };
    this.tasks.set(task.id, task);
    return task;
  }

  /** Another creator's task is reported as not existing, as an unknown one is. */
  result(openId: string, taskId: string): OfficialPrecheckTask {
    const task = this.tasks.get(taskId);
    if (!task || task.openId !== openId) throw SHOP.invalid('task_id', 'does not exist');
    if (this.now() < task.submittedAt + this.processingMs()) {
      return {
        id: task.id,
        violation_check_result: { status: 'PROCESSING', issues: [] },
        good_quality_check_result: { status: 'PROCESSING', issues: [] },
      };
    }
    return {
      id: task.id,
      violation_check_result: { status: task.verdict.violation, issues: task.verdict.violation === 'FAIL' ? [VIOLATION_ISSUE] : [] },
      good_quality_check_result: { status: task.verdict.quality, issues: task.verdict.quality === 'FAIL' ? [QUALITY_ISSUE] : [] },
    };
  }
}

function triggered(title: string): Verdict {
  return {
    violation: /\bviolation\b/i.test(title) ? 'FAIL' : 'SUCCESS',
    quality: /\bblurry\b/i.test(title) ? 'FAIL' : 'SUCCESS',
  };
}
