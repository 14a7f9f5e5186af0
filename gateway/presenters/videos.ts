/** Library records to the flat camelCase JSON of the HTTP API; absent values are null. */
import type { Video } from '../../gen/vps/video/v1/video_pb';
import { isoOrNull, trackName } from './shared';
import type { VideoJson } from '../schemas/videos';

const orNull = (s: string) => (s === '' ? null : s);

export function videoJson(video: Video): VideoJson {
  return {
    id: video.id,
    seatId: video.seatId,
    track: trackName(video.track),
    status: video.status as VideoJson['status'],
    source: video.source as VideoJson['source'],
    sourceUrl: orNull(video.sourceUrl),
    fileName: orNull(video.fileName),
    container: orNull(video.container),
    // A stored file always has a digest; without one there is no size to report.
    sizeBytes: video.sha256 ? Number(video.sizeBytes) : null,
    sha256: orNull(video.sha256),
    videoUrl: orNull(video.videoUrl),
    fileId: orNull(video.fileId),
    expiresAt: isoOrNull(video.expiresAt),
    failureReason: orNull(video.failureReason),
    createdAt: isoOrNull(video.createdAt) ?? new Date(0).toISOString(),
    deletedAt: isoOrNull(video.deletedAt),
    workflowId: orNull(video.workflowId),
    probe: video.probe
      ? {
          durationSeconds: video.probe.durationSeconds || null,
          width: video.probe.width || null,
          height: video.probe.height || null,
          videoCodec: orNull(video.probe.videoCodec),
          audioCodec: orNull(video.probe.audioCodec),
        }
      : null,
  };
}

/** The upload response: the record, the path that follows it, and while it is unfinished, how to. */
export function uploadedVideoJson(video: Video) {
  const record = videoJson(video);
  const statusPath = `/v1/videos/${video.id}`;
  const result = record.track === 'video' ? 'videoUrl' : 'fileId';
  const next =
    record.status === 'processing'
      ? `the upload is still running: GET ${statusPath} every 5 to 10 seconds until status is available (with ${result}) or failed (with failureReason), or subscribe to vplat.video.available and vplat.video.failed, which announce it`
      : null;
  return { ...record, statusPath, next };
}
