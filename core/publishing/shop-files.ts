/**
 * The library record behind a shop file id, checked as a pre-check or a shop post needs it, after
 * the account (1007 comes first): the caller's and uploaded for this account's seat (1005, since a
 * file id is usable only by the account that uploaded it), not deleted or expired (2005), and
 * ready (2001 while the hand-off to the shop runs).
 */
import type { Db } from '../db/client';
import { findVideoByFileId, type VideoRow } from '../db/repositories/videos';
import { ApiError, invalidField } from '../errors';
import type { BoundSeat } from './seats';

export async function shopLibraryFile(db: Db, customerId: string, seat: BoundSeat, fileId: string, field = 'fileId'): Promise<VideoRow> {
  const video = await findVideoByFileId(db, customerId, fileId);
  if (!video)
    throw new ApiError(
      1005,
      `${field}: ${fileId} is not a file id of your shop track library (POST /v1/videos with a shop track seat issues one)`,
      { data: { field } },
    );
  if (video.seatId !== seat.id) {
    throw new ApiError(
      1005,
      `${field}: ${fileId} was uploaded for another seat; a file id can be used only by the account it was uploaded for`,
      { data: { field } },
    );
  }
  if (video.deletedAt || video.status === 'expired') {
    throw new ApiError(2005, `${field}: video ${video.id} ${video.deletedAt ? 'was deleted' : 'expired'}; upload it again`, {
      data: { field, videoId: video.id },
    });
  }
  if (video.status !== 'available') throw invalidField(field, `video ${video.id} is ${video.status}, not available yet`);
  return video;
}
