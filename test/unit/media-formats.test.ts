import { IMAGE_CONTENT_TYPES, imageInfo, VIDEO_FORMATS, videoFormat } from '../../core/media/formats';
import { jpeg, png } from '../helpers/images';
import { bmpHeader, concat, filler, heicHeader, jpegHeader, pngHeader, VIDEO_SAMPLES, webpHeader } from '../helpers/media-samples';
import { mp4File } from '../helpers/mp4';

describe('video containers, judged by their bytes', () => {
  it.each(Object.entries(VIDEO_SAMPLES))('recognises %s', async (format, bytes) => {
    expect(await videoFormat(bytes)).toBe(format);
  });

  it('names every format the platforms take, once', () => {
    expect([...VIDEO_FORMATS].sort()).toEqual(Object.keys(VIDEO_SAMPLES).sort());
  });

  it('takes a whole MP4 and an MPEG transport stream', async () => {
    expect(await videoFormat(mp4File({ durationMs: 1000 }))).toBe('MP4');
    const packet = concat([0x47], filler(187));
    expect(await videoFormat(concat(packet, packet))).toBe('MPEG');
  });

  it.each([
    ['nothing', Buffer.alloc(0)],
    ['text', Buffer.from('just some text, not a video at all')],
    ['a PNG', png(4, 4)],
    ['a HEIC still, an ISO file that is an image', heicHeader(100, 100)],
    ['an audio-only ISO file', concat(Buffer.from([0, 0, 0, 20]), 'ftypM4A ', Buffer.alloc(4), 'M4A ', filler(100))],
    ['a cut signature', VIDEO_SAMPLES.MP4!.subarray(0, 6)],
  ])('refuses %s', async (_what, bytes) => {
    expect(await videoFormat(bytes)).toBeUndefined();
  });
});

describe('images, judged by their bytes', () => {
  it.each([
    ['PNG', pngHeader(1080, 1920)],
    ['PNG', png(3, 5)],
    ['JPEG', jpegHeader(1920, 1080)],
    ['JPEG', jpeg(640, 480)],
    ['WEBP', webpHeader(1000, 999)],
    ['BMP', bmpHeader(900, 1600)],
    ['HEIC', heicHeader(1200, 1600)],
  ])('reads a %s and its size', async (format, bytes) => {
    const info = await imageInfo(bytes);
    expect(info?.format).toBe(format);
    expect(info?.size?.width).toBeGreaterThan(0);
  });

  it('reads the size from the header', async () => {
    expect(await imageInfo(pngHeader(1080, 1920))).toEqual({ format: 'PNG', size: { width: 1080, height: 1920 } });
    expect(await imageInfo(jpegHeader(1920, 1080))).toEqual({ format: 'JPEG', size: { width: 1920, height: 1080 } });
    expect(await imageInfo(webpHeader(1000, 999))).toEqual({ format: 'WEBP', size: { width: 1000, height: 999 } });
    expect(await imageInfo(bmpHeader(900, 1600))).toEqual({ format: 'BMP', size: { width: 900, height: 1600 } });
    expect(await imageInfo(heicHeader(1200, 1600))).toEqual({ format: 'HEIC', size: { width: 1200, height: 1600 } });
  });

  it('knows the format of an image whose size cannot be read', async () => {
    // A JPEG that ends before any frame header, and a PNG cut inside its IHDR.
    expect(await imageInfo(Buffer.from([0xff, 0xd8, 0xff, 0xd9, 0, 0, 0, 0, 0, 0, 0, 0]))).toEqual({ format: 'JPEG' });
    expect(await imageInfo(pngHeader(10, 10).subarray(0, 20))).toEqual({ format: 'PNG' });
    expect(await imageInfo(pngHeader(0, 10))).toEqual({ format: 'PNG' });
  });

  it.each([
    ['nothing', Buffer.alloc(0)],
    ['a GIF', Buffer.from('GIF89a and so on')],
    ['an MP4', VIDEO_SAMPLES.MP4!],
    ['text', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
  ])('refuses %s', async (_what, bytes) => {
    expect(await imageInfo(bytes)).toBeUndefined();
  });

  it('has a content type for every format', () => {
    expect(Object.keys(IMAGE_CONTENT_TYPES).sort()).toEqual(['BMP', 'HEIC', 'JPEG', 'PNG', 'WEBP']);
  });
});

describe('hostile bytes', () => {
  // A fixed sequence, so that a failure can be replayed.
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const samples = [
    ...Object.values(VIDEO_SAMPLES),
    pngHeader(9, 16),
    jpegHeader(9, 16),
    webpHeader(9, 16),
    bmpHeader(9, 16),
    heicHeader(9, 16),
  ];

  it('are judged, never thrown on: every sample cut at every length and with bytes flipped', async () => {
    for (const sample of samples) {
      for (let length = 0; length <= sample.length; length += 3) {
        const cut = sample.subarray(0, length);
        // A rejection fails the test.
        await videoFormat(cut);
        await imageInfo(cut);
      }
      for (let round = 0; round < 50; round++) {
        const mutated = Buffer.from(sample);
        for (let flips = 0; flips < 4; flips++) mutated[Math.floor(random() * mutated.length)] = Math.floor(random() * 256);
        await videoFormat(mutated);
        await imageInfo(mutated);
      }
    }
  });
});
