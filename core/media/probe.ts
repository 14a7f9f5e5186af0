/**
 * What a stored video is, beyond its container: duration, picture size and codecs, read from an
 * ISO base media file's movie header (MP4, MOV, 3GP) with GPAC's MP4Box parser, and from WebM and
 * Matroska headers with Mediabunny (matroska-probe.ts). The file is read from storage in chunks, and
 * the media data, which holds nearly all of the bytes, is skipped by seeking, so a probe costs a
 * few reads whatever the size. Other containers (AVI, FLV, …) are not probed: their records carry
 * no probe, and the platform judges them.
 */
import type { Readable } from 'node:stream';
import { createFile, Log, MP4BoxBuffer, type Movie } from 'mp4box';
import { probeMatroskaFile } from './matroska-probe';
import type { VideoProbe } from './video-probe';
import type { MediaStore } from './storage';

export type { VideoProbe } from './video-probe';

/**
 * Bytes handed to the parser at most. A movie header is a few hundred KB even for an hour of
 * video; a file whose boxes are garbage would otherwise have the parser buffer all of it.
 */
export const MAX_PROBE_BYTES = 16 * 1024 * 1024;

/** The containers whose movie header MP4Box reads, and those Mediabunny reads. */
const ISO_CONTAINERS = new Set(['MP4', 'MOV', '3GP']);
const MATROSKA_CONTAINERS = new Set(['WEBM', 'MKV']);

// MP4Box writes its parse messages to the console, which would break our JSON logs, and has no
// level that silences errors: a damaged file is reported by the probe's result instead.
Log.setLogLevel(Log.error);
Object.assign(Log, { error: () => undefined });

export function isProbeable(container: string): boolean {
  return ISO_CONTAINERS.has(container) || MATROSKA_CONTAINERS.has(container);
}

/** A probe from a parsed movie; durations are in the movie's timescale. */
export function probeOf(movie: Movie): VideoProbe {
  const video = movie.videoTracks[0];
  const audio = movie.audioTracks[0];
  const fragmentSeconds =
    movie.fragment_duration && movie.fragment_duration.den > 0 ? movie.fragment_duration.num / movie.fragment_duration.den : 0;
  const movieSeconds = movie.timescale > 0 ? movie.duration / movie.timescale : 0;
  const seconds = movieSeconds || fragmentSeconds;
  return {
    durationSeconds: seconds > 0 ? Math.round(seconds * 1000) / 1000 : null,
    width: video ? video.video?.width || video.track_width || null : null,
    height: video ? video.video?.height || video.track_height || null : null,
    videoCodec: video?.codec ?? null,
    audioCodec: audio?.codec ?? null,
    fragmented: movie.isFragmented,
  };
}

/**
 * Probes a stored file. `open(start)` reads the file from a byte offset. Undefined when no movie
 * header was found in the whole file (an incomplete or damaged file).
 */
export async function probeIsoFile(
  open: (start: number) => Readable | Promise<Readable>,
  sizeBytes: number,
): Promise<VideoProbe | undefined> {
  const file = createFile(false);
  let movie: Movie | undefined;
  let failure: string | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = (module, message) => {
    failure = `${module}: ${message}`;
  };
  let position = 0;
  let fed = 0;
  // Each pass reads from `position` until the parser asks for bytes further on (it skips mdat).
  while (!movie && !failure && position < sizeBytes && fed < MAX_PROBE_BYTES) {
    const stream = await open(position);
    let offset = position;
    let jumpTo: number | undefined;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const copy = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength);
        const next = file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, offset));
        offset += chunk.byteLength;
        fed += chunk.byteLength;
        if (movie || failure || fed >= MAX_PROBE_BYTES) break;
        if (next > offset) {
          jumpTo = next;
          break;
        }
      }
    } finally {
      stream.destroy();
    }
    if (jumpTo === undefined) break;
    position = jumpTo;
  }
  if (!movie && fed < MAX_PROBE_BYTES) file.flush();
  return movie ? probeOf(movie) : undefined;
}

/**
 * The probe of a stored video, when its container has a movie header to read. A header that
 * cannot be read is not a refusal: the record keeps no probe, and the platform judges the file.
 */
export async function probeStoredVideo(
  media: MediaStore,
  key: string,
  container: string,
  sizeBytes: number,
): Promise<VideoProbe | undefined> {
  if (!isProbeable(container)) return undefined;
  try {
    if (MATROSKA_CONTAINERS.has(container)) {
      return await probeMatroskaFile((start, end) => media.open(key, { start, end }), sizeBytes, MAX_PROBE_BYTES);
    }
    return await probeIsoFile((start) => media.open(key, { start, end: Math.max(start, sizeBytes - 1) }), sizeBytes);
  } catch (err) {
    // A file crafted to break the parser is an unreadable header like any other: no probe.
    if (err instanceof Error) return undefined;
    throw err;
  }
}
