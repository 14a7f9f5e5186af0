/**
 * Library records to protobuf messages. The media URL is derived, never stored: it exists only
 * while a video track record is available, so a deleted or expired record cannot leak one.
 */
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { VideoProbeSchema, VideoSchema, type Video } from '../../gen/vps/video/v1/video_pb';
import type { VideoProbe } from '../media/probe';
import type { VideoRow } from '../db/repositories/videos';
import type { VideoStatus } from '../db/schema';
import { mediaUrl, type TokenSigner } from '../media/signed-tokens';
import { workflowIds } from '../../workflows/workflow-ids';
import { TRACKS } from './accounts';

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

/** The MIME type a media URL serves for each container videoFormat() recognises. */
export const VIDEO_CONTENT_TYPES: Record<string, string> = {
  MP4: 'video/mp4',
  MOV: 'video/quicktime',
  '3GP': 'video/3gpp',
  WEBM: 'video/webm',
  MKV: 'video/x-matroska',
  AVI: 'video/x-msvideo',
  FLV: 'video/x-flv',
  WMV: 'video/x-ms-wmv',
  MPEG: 'video/mpeg',
};

/** Where a record's bytes live in the media store. */
export function storageKeyOf(videoId: string): string {
  return `videos/${videoId}`;
}

/**
 * Whether the record may be served or published: a video track record past its expiry is
 * expired even while its row still says available, because its lifetime workflow has not run
 * yet (late, or never started: the workers' repair starts it). The media URL and publishing
 * judge by this, so no video is used past its expiry, whatever Temporal did.
 */
export function servingStatusOf(row: Pick<VideoRow, 'track' | 'status' | 'expiresAt'>, nowMs = Date.now()): VideoStatus {
  return row.track === 'video' && row.status === 'available' && row.expiresAt !== null && row.expiresAt.getTime() <= nowMs
    ? 'expired'
    : row.status;
}

/** Remote uploads and every shop track upload run in a workflow; a direct video track upload does not. */
export function uploadWorkflowId(row: Pick<VideoRow, 'id' | 'source' | 'track'>): string | undefined {
  return row.source === 'remote' || row.track === 'shop' ? workflowIds.videoUpload(row.id) : undefined;
}

/** The probe kept on the record (docs/decisions/video-library.md, "The probe"), if the upload made one. */
export function probeOfRow(row: Pick<VideoRow, 'details'>): VideoProbe | undefined {
  return (row.details as { probe?: VideoProbe }).probe;
}

function probeMessage(probe: VideoProbe | undefined) {
  if (!probe) return undefined;
  return create(VideoProbeSchema, {
    durationSeconds: probe.durationSeconds ?? 0,
    width: probe.width ?? 0,
    height: probe.height ?? 0,
    videoCodec: probe.videoCodec ?? '',
    audioCodec: probe.audioCodec ?? '',
  });
}

export function toVideo(row: VideoRow, urls: { signer: TokenSigner; publicUrl: string }): Video {
  // The status is the row's, which the lifetime moves to expired only once the bytes are gone;
  // the URL goes at the expiry time itself, since nothing serves it after that (servingStatusOf).
  const servable = row.track === 'video' && servingStatusOf(row) === 'available' && row.expiresAt !== null && row.storageKey !== null;
  return create(VideoSchema, {
    id: row.id,
    seatId: row.seatId,
    track: TRACKS[row.track],
    status: row.status,
    source: row.source,
    sourceUrl: row.sourceUrl ?? '',
    fileName: row.fileName ?? '',
    container: row.container ?? '',
    sizeBytes: row.sizeBytes === null ? 0n : BigInt(row.sizeBytes),
    sha256: row.sha256 ?? '',
    videoUrl: servable ? mediaUrl(urls.signer, urls.publicUrl, row.id, row.expiresAt!) : '',
    fileId: row.fileId ?? '',
    expiresAt: ts(row.expiresAt),
    failureReason: row.failureReason ?? '',
    createdAt: ts(row.createdAt),
    deletedAt: ts(row.deletedAt),
    workflowId: uploadWorkflowId(row) ?? '',
    probe: probeMessage(probeOfRow(row)),
  });
}
