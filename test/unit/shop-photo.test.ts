import { aspectAllowed, checkPhoto, PHOTO_MAX_BYTES, PhotoRefused, ratioText } from '../../core/shop/photo';
import { solidPng } from '../../sandbox/solid-png';

describe('cover photo rule', () => {
  it('allows 9:16 to 16:9 inclusive, compared exactly', () => {
    expect(aspectAllowed(900, 1600)).toBe(true);
    expect(aspectAllowed(1600, 900)).toBe(true);
    expect(aspectAllowed(1, 1)).toBe(true);
    expect(aspectAllowed(900, 1601)).toBe(false);
    expect(aspectAllowed(1601, 900)).toBe(false);
    expect(aspectAllowed(9, 17)).toBe(false);
    expect(aspectAllowed(17, 9)).toBe(false);
    // A ratio a float would round onto the bound stays outside.
    expect(aspectAllowed(9_000_000, 16_000_001)).toBe(false);
  });

  it('writes a ratio in lowest terms', () => {
    expect(ratioText(1080, 1920)).toBe('9:16');
    expect(ratioText(180, 340)).toBe('9:17');
    expect(ratioText(7, 3)).toBe('7:3');
  });

  it('reads format and size from the bytes', async () => {
    expect(await checkPhoto(solidPng(90, 160))).toEqual({ format: 'PNG', width: 90, height: 160, contentType: 'image/png' });
  });

  it.each([
    [Buffer.alloc(0), /^is empty$/],
    [Buffer.concat([solidPng(90, 160), Buffer.alloc(PHOTO_MAX_BYTES)]), /^larger than the limit of 10485760 bytes/],
    [Buffer.from('GIF89a and so on'), /^is not a supported image/],
    [Buffer.from([0xff, 0xd8, 0xff, 0xd9, 0, 0, 0, 0, 0, 0]), /^is a JPEG whose width and height cannot be read/],
    [solidPng(100, 300), /^has an aspect ratio of 1:3 \(100x300\), outside the allowed 9:16 to 16:9$/],
  ])('refuses %#', async (bytes, reason) => {
    await expect(checkPhoto(bytes)).rejects.toThrow(PhotoRefused);
    await expect(checkPhoto(bytes)).rejects.toThrow(reason);
  });
});
