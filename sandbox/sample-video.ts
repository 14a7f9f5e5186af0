/**
 * A video the emulator serves itself, for publishes that need some media URL and not a particular
 * clip (`vps trigger publish-complete`). The emulator judges media by their first bytes only, so
 * an MP4 `ftyp` box and an empty `mdat` are all it takes; nothing ever plays it.
 */
import type { FastifyInstance } from 'fastify';

export const SAMPLE_VIDEO_PATH = '/_sandbox/cdn/sample-video.mp4';

function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

const SAMPLE_VIDEO = Buffer.concat([
  box('ftyp', Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41')])),
  box('mdat', Buffer.alloc(0)),
]);

export function registerSampleVideo(app: FastifyInstance): void {
  app.get(SAMPLE_VIDEO_PATH, async (_request, reply) => reply.type('video/mp4').send(SAMPLE_VIDEO));
}
