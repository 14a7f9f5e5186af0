/**
 * How a publish is taken in, on either track: the record stored (a shop post takes its file id in
 * the same transaction, under the library record's lock, so of two posts of one file id the
 * second finds the first), its workflow started, and a short wait for the official handle, so
 * that the answer carries the id to poll with, as the spec's response promises.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from '../db/client';
import type { Logger } from '../logger';
import * as records from '../db/repositories/publish-records';
import type { PublishRecordRow } from '../db/repositories/publish-records';
import { holdFileForPublish, lockVideo, releaseFileFromPublish } from '../db/repositories/videos';
import type { PublishChannel, PublishKind, SeatTrack } from '../db/schema';
import type { EventRecorder } from '../events/recorder';
import { newId } from '../ids';
import { workflowIds } from '../../workflows/workflow-ids';
import type { PublishInput, PublishTimings } from '../../workflows/shared';
import { applyChange } from './records';
import type { BoundSeat } from './seats';
import { isTerminal } from './status';
import { startPublish } from '../temporal/client';

export interface IntakeSettings extends PublishTimings {
  /** How long a publish request waits for the official share id before answering without it. */
  submitWaitMs: number;
}

export interface NewPublish {
  seat: BoundSeat;
  customerId: string;
  track: SeatTrack;
  kind: PublishKind;
  channel: PublishChannel;
  /** The library record published; a shop post's file id is taken with it. */
  videoId: string | null;
  /** The official request, without credentials. */
  request: Record<string, unknown>;
  draft: boolean;
}

export class PublishIntake {
  constructor(
    private readonly deps: {
      db: Db;
      events: EventRecorder;
      temporalClient: () => Promise<Client>;
      taskQueue: string;
      settings: IntakeSettings;
      logger: Logger;
    },
  ) {}

  /** The stored and started record, or the id of the record that already holds the file id. */
  async accept(input: NewPublish): Promise<{ record: PublishRecordRow } | { earlier: string }> {
    const id = newId('pub');
    const row = {
      id,
      customerId: input.customerId,
      seatId: input.seat.id,
      track: input.track,
      kind: input.kind,
      channel: input.channel,
      accountId: input.seat.accountId,
      videoId: input.videoId,
      request: input.request,
      draft: input.draft,
      status: 'submitted' as const,
      workflowId: workflowIds.publish(id),
    };
    const stored = await this.deps.db.transaction(async (tx) => {
      if (input.track === 'shop' && input.videoId) {
        const video = await lockVideo(tx, input.videoId);
        if (video?.publishRecordId) return { earlier: video.publishRecordId };
        await holdFileForPublish(tx, input.videoId, id);
      }
      return { record: await records.insertPublishRecord(tx, row) };
    });
    if ('earlier' in stored) return stored;
    try {
      await this.ensureWorkflow(stored.record);
    } catch (err) {
      // Without its workflow the record would wait forever: it ends now, and a shop file id is freed.
      await applyChange(this.deps, stored.record, {
        status: 'service_error',
        reason: 'the publish could not be scheduled; publish again',
        reasonCategory: 'retryable',
      });
      if (input.track === 'shop' && input.videoId) await releaseFileFromPublish(this.deps.db, input.videoId, id);
      throw err;
    }
    return { record: await this.awaitSubmit(stored.record) };
  }

  /**
   * Starts the record's workflow unless it runs or ran: a repeat of a request whose first try died
   * between storing the record and starting the workflow finishes the job.
   */
  async ensureWorkflow(record: PublishRecordRow): Promise<void> {
    const { submitWaitMs: _notForTheWorkflow, ...timings } = this.deps.settings;
    const workflowInput: PublishInput = { recordId: record.id, track: record.track, ...timings };
    try {
      await startPublish(await this.deps.temporalClient(), this.deps.taskQueue, record, workflowInput);
    } catch (err) {
      // It ran to its end already: the record says how.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /**
   * Waits a little for the submit, so that most answers carry the share id. Only a courtesy: the
   * record is stored and its workflow started, so the publish is accepted whatever happens here. A
   * read that fails (the database restarting) ends the wait with the record as it was, rather than
   * failing a request whose work is under way: a caller told it failed would publish again.
   */
  private async awaitSubmit(row: PublishRecordRow): Promise<PublishRecordRow> {
    const deadline = Date.now() + this.deps.settings.submitWaitMs;
    let current = row;
    for (let pause = 25; !current.shareId && !isTerminal(current.status) && Date.now() < deadline; pause = Math.min(pause * 2, 100)) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      try {
        current = (await records.findPublishRecord(this.deps.db, row.id)) ?? current;
      } catch (err) {
        this.deps.logger.warn(
          { err, recordId: row.id },
          'could not read the publish record while waiting for its submit; answering with it as stored',
        );
        break;
      }
    }
    return current;
  }
}
