/**
 * Stand-ins for the platform's CDN: product images and music covers as SVG placeholders, music
 * as silent WAV of the track's length, so that the links the emulator hands out open in a browser
 * (the console shows them) without bundling media.
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context';
import { stableNumber } from '../posts';
import { LIBRARY } from './music';

const PREFIX = '/_sandbox/shop/assets';

/** Placeholder image sizes per kind, matching the sizes the official responses declare. */
const IMAGE_SIZES = new Map<string, number>([
  ['products', 600],
  ['covers', 200],
  ['avatars', 100],
]);

export function assetUrl(ctx: SandboxContext, kind: 'products' | 'covers' | 'avatars' | 'music', file: string): string {
  return `${ctx.baseUrl()}${PREFIX}/${kind}/${file}`;
}

function placeholderSvg(id: string, size: number): string {
  const hue = stableNumber(id, 360);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}">` +
    `<rect width="100%" height="100%" fill="hsl(${hue},55%,60%)"/>` +
    `<text x="50%" y="50%" font-family="sans-serif" font-size="${Math.round(size / 16)}" text-anchor="middle" fill="#fff">${id}</text></svg>`
  );
}

/** 8 kHz, 8-bit mono PCM: a second costs 8 KB, and 128 is silence. */
function silentWav(seconds: number): Buffer {
  const rate = 8000;
  const samples = rate * seconds;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate, 28); // bytes per second
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples, 40);
  return Buffer.concat([header, Buffer.alloc(samples, 128)]);
}

export function registerShopAssets(app: FastifyInstance): void {
  app.get(`${PREFIX}/:kind/:file`, async (request, reply) => {
    const { kind, file } = request.params as { kind: string; file: string };
    const match = /^(\d+)\.(svg|wav)$/.exec(file);
    if (!match) return reply.code(404).send({ error: 'no such asset' });
    const [, id, ext] = match as unknown as [string, string, string];
    const size = IMAGE_SIZES.get(kind);
    if (size !== undefined && ext === 'svg') return reply.type('image/svg+xml').send(placeholderSvg(id, size));
    const track = kind === 'music' && ext === 'wav' ? LIBRARY.find((t) => t.id === id) : undefined;
    if (!track) return reply.code(404).send({ error: 'no such asset' });
    return reply.type('audio/wav').send(silentWav(track.durationSeconds));
  });
}
