/**
 * The library record a video publish names, by id or by its media URL: the caller's (1005), of the
 * video track (1005), not expired (by status or by its expiry time) or deleted (2005), and ready
 * (2001). A URL that is not one of ours is published as given, and names no record.
 */
import type { Db } from '../db/client';
import { findVideoOfCustomer, type VideoRow } from '../db/repositories/videos';
import { ApiError, invalidField } from '../errors';
import { servingStatusOf } from '../mappers/videos';
import { MEDIA_PATH_PREFIX } from '../media/signed-tokens';

export async function libraryVideoOf(
  db: Db,
  publicUrl: string,
  customerId: string,
  videoUrl: string,
  videoId: string,
): Promise<VideoRow | undefined> {
  let id = videoId;
  if (!id) {
    let url: URL;
    try {
      url = new URL(videoUrl);
    } catch {
      throw invalidField('videoUrl', 'must be an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidField('videoUrl', 'must be an http(s) URL');
    const ours = `${url.origin}${url.pathname}`.startsWith(`${publicUrl}${MEDIA_PATH_PREFIX}`);
    if (!ours) return undefined;
    id = url.pathname.slice(MEDIA_PATH_PREFIX.length);
  }
  const field = videoId ? 'videoId' : 'videoUrl';
  const video = await findVideoOfCustomer(db, customerId, id);
  if (!video) throw new ApiError(1005, `${field}: video ${id} does not exist in your library`, { data: { field } });
  if (video.track !== 'video')
    throw new ApiError(1005, `${field}: video ${id} is a shop track record; publish it with POST /v1/publish/tts and its fileId`, {
      data: { field },
    });
  // By its expiry time too, not only its status: a record whose timer has not run yet is expired all the same.
  const status = servingStatusOf(video);
  if (status === 'expired' || video.deletedAt) {
    throw new ApiError(2005, `${field}: video ${id} ${video.deletedAt ? 'was deleted' : 'expired'}; upload it again`, { data: { field } });
  }
  if (status !== 'available' || !video.expiresAt) throw invalidField(field, `video ${id} is ${video.status}, not available yet`);
  return video;
}
