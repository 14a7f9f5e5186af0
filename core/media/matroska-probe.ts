/**
 * The probe of a WebM or Matroska file, read with Mediabunny: duration, picture size and codecs
 * from the EBML headers, the way probe.ts reads ISO files with MP4Box. Mediabunny asks for byte
 * ranges, which come from the store, within a budget of bytes: a file whose tracks are not found
 * within it has no probe, and one whose duration only a scan of every cluster could give keeps its
 * size and codecs without a duration.
 */
import type { Readable } from 'node:stream';
import { CustomSource, Input, MATROSKA, WEBM } from 'mediabunny';
import type { VideoProbe } from './video-probe';

/** Thrown into Mediabunny's read when the budget is spent: ends the probe, not an error of the file's. */
class ProbeBudgetSpent extends Error {}

async function readRange(
  open: (start: number, end: number) => Readable | Promise<Readable>,
  start: number,
  end: number,
): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  const stream = await open(start, end - 1);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}

/**
 * Probes a stored WebM or Matroska file. `open(start, end)` reads an inclusive byte range.
 * Undefined when the file has no video track that can be read.
 */
export async function probeMatroskaFile(
  open: (start: number, end: number) => Readable | Promise<Readable>,
  sizeBytes: number,
  maxBytes: number,
): Promise<VideoProbe | undefined> {
  let read = 0;
  const input = new Input({
    formats: [WEBM, MATROSKA],
    source: new CustomSource({
      getSize: () => sizeBytes,
      read: (start, end) => {
        read += end - start;
        if (read > maxBytes) throw new ProbeBudgetSpent(`a probe reads at most ${maxBytes} bytes`);
        return readRange(open, start, end);
      },
    }),
  });
  try {
    const video = await input.getPrimaryVideoTrack();
    if (!video) return undefined;
    const audio = await input.getPrimaryAudioTrack().catch(() => null);
    const probe: VideoProbe = {
      durationSeconds: null,
      width: video.displayWidth || null,
      height: video.displayHeight || null,
      videoCodec: (await video.getCodecParameterString().catch(() => null)) ?? video.codec,
      audioCodec: audio ? ((await audio.getCodecParameterString().catch(() => null)) ?? audio.codec) : null,
      fragmented: false,
    };
    try {
      const seconds = (await input.getDurationFromMetadata()) ?? (await input.computeDuration(undefined, { skipLiveWait: true }));
      if (seconds > 0) probe.durationSeconds = Math.round(seconds * 1000) / 1000;
    } catch (err) {
      // Only a spent budget leaves the duration out; anything else is the file's own fault, and
      // the caller treats it as an unreadable header.
      if (!(err instanceof ProbeBudgetSpent)) throw err;
    }
    return probe;
  } finally {
    input.dispose();
  }
}
