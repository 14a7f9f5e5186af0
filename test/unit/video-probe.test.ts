/** Probing stored videos: duration, picture size and codec from the movie header, mdat skipped. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import { MAX_PROBE_BYTES, probeIsoFile } from '../../core/media/probe';
import { mp4File } from '../helpers/mp4';

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
