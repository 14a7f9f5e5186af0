/**
 * Probing stored videos: duration, picture size and codec from the movie header (mdat skipped),
 * and from the EBML headers of WebM and Matroska files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { MAX_PROBE_BYTES, probeIsoFile } from '../../core/media/probe';
import { probeMatroskaFile } from '../../core/media/matroska-probe';
import { mp4File } from '../helpers/mp4';
import { matroskaFile } from '../helpers/webm';

describe('probeIsoFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vps-probe-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes the file and probes it, counting the bytes read. */
  async function probe(bytes: Buffer) {
    const file = path.join(dir, `f-${Math.random()}`);
    writeFileSync(file, bytes);
    let read = 0;
    const result = await probeIsoFile((start) => {
      const stream = createReadStream(file, { start, highWaterMark: 64 * 1024 });
      stream.on('data', (chunk) => {
        read += chunk.length;
      });
      return stream;
    }, bytes.length);
    return { result, read };
  }

  it('reads duration, size and codec from a fast-start file', async () => {
    const { result } = await probe(mp4File({ durationMs: 12_500, width: 1080, height: 1920 }));
    expect(result).toEqual({
      durationSeconds: 12.5,
      width: 1080,
      height: 1920,
      videoCodec: 'avc1.64001f',
      audioCodec: null,
      fragmented: false,
    });
  });

  it('finds a movie header after 8 MB of media data without reading the media data', async () => {
    const bytes = mp4File({ durationMs: 61_000, width: 720, height: 1280, mdatBytes: 8 * 1024 * 1024, moov: 'last' });
    const { result, read } = await probe(bytes);
    expect(result).toMatchObject({ durationSeconds: 61, width: 720, height: 1280 });
    expect(read).toBeLessThan(1024 * 1024);
  });

  it('gives up on a file of garbage boxes after a bounded read', async () => {
    const garbage = Buffer.concat([mp4File({ durationMs: 1000 }).subarray(0, 32), Buffer.alloc(40 * 1024 * 1024, 7)]);
    const { result, read } = await probe(garbage);
    expect(result).toBeUndefined();
    expect(read).toBeLessThanOrEqual(MAX_PROBE_BYTES + 64 * 1024);
  });

  it('answers undefined for a file without a movie header', async () => {
    const { result } = await probe(Buffer.concat([mp4File({ durationMs: 1000 }).subarray(0, 32), Buffer.alloc(4096, 1)]));
    expect(result).toBeUndefined();
  });
});

describe('probeMatroskaFile', () => {
  /** Probes the bytes through ranged reads, as the store serves them, counting what was read. */
  async function probe(bytes: Buffer, maxBytes = MAX_PROBE_BYTES) {
    let read = 0;
    const result = await probeMatroskaFile(
      (start, end) => {
        read += end - start + 1;
        return Readable.from([bytes.subarray(start, end + 1)]);
      },
      bytes.length,
      maxBytes,
    );
    return { result, read };
  }

  it('reads duration, size and codecs from a WebM file', async () => {
    const { result } = await probe(await matroskaFile({ durationMs: 3_000, width: 720, height: 1280, audio: true }));
    expect(result).toEqual({
      durationSeconds: 3,
      width: 720,
      height: 1280,
      videoCodec: expect.stringMatching(/^vp09/),
      audioCodec: 'opus',
      fragmented: false,
    });
  });

  it('reads a Matroska file the same way, and one without sound', async () => {
    const { result } = await probe(await matroskaFile({ durationMs: 12_000, width: 1080, height: 1920, container: 'mkv' }));
    expect(result).toMatchObject({ durationSeconds: 12, width: 1080, height: 1920, audioCodec: null });
  });

  it('reads only the headers of a long file', async () => {
    const bytes = await matroskaFile({ durationMs: 120_000, width: 720, height: 1280 });
    const { result, read } = await probe(bytes);
    expect(result).toMatchObject({ durationSeconds: 120, width: 720, height: 1280 });
    expect(read).toBeLessThan(bytes.length / 2);
  });

  it('stops at its byte budget', async () => {
    const bytes = await matroskaFile({ durationMs: 3_000 });
    await expect(probe(bytes, 16)).rejects.toThrow('a probe reads at most 16 bytes');
  });

  it('fails, never hangs, on a file cut short or of garbage after the EBML header', async () => {
    const bytes = await matroskaFile({ durationMs: 3_000 });
    const cut = await probe(bytes.subarray(0, 40)).then(
      (r) => r.result,
      (err: unknown) => err,
    );
    expect(cut === undefined || cut instanceof Error).toBe(true);
    const garbage = Buffer.concat([bytes.subarray(0, 40), Buffer.alloc(64 * 1024, 7)]);
    const broken = await probe(garbage).then(
      (r) => r.result,
      (err: unknown) => err,
    );
    expect(broken === undefined || broken instanceof Error).toBe(true);
  });
});
