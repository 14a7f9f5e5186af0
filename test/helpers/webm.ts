/**
 * Well-formed WebM and Matroska files for tests, muxed by Mediabunny from made-up encoded packets
 * (no encoder runs): a VP9 video track of the size asked, one frame every 1/30 s for the duration
 * asked, and optionally an Opus audio track.
 */
import {
  BufferTarget,
  EncodedAudioPacketSource,
  EncodedPacket,
  EncodedVideoPacketSource,
  MkvOutputFormat,
  Output,
  WebMOutputFormat,
} from 'mediabunny';

export interface MatroskaOptions {
  durationMs: number;
  width?: number;
  height?: number;
  audio?: boolean;
  container?: 'webm' | 'mkv';
}

export async function matroskaFile(o: MatroskaOptions): Promise<Buffer> {
  const output = new Output({
    format: o.container === 'mkv' ? new MkvOutputFormat() : new WebMOutputFormat(),
    target: new BufferTarget(),
  });
  const video = new EncodedVideoPacketSource('vp9');
  output.addVideoTrack(video);
  const audio = o.audio ? new EncodedAudioPacketSource('opus') : undefined;
  if (audio) output.addAudioTrack(audio);
  await output.start();
  const frames = Math.max(1, Math.round((o.durationMs / 1000) * 30));
  for (let i = 0; i < frames; i++) {
    const packet = new EncodedPacket(new Uint8Array(64).fill(i & 0xff), i === 0 ? 'key' : 'delta', i / 30, 1 / 30);
    await video.add(
      packet,
      i === 0 ? { decoderConfig: { codec: 'vp09.00.10.08', codedWidth: o.width ?? 1080, codedHeight: o.height ?? 1920 } } : undefined,
    );
    if (audio && i % 3 === 0) {
      const sound = new EncodedPacket(new Uint8Array(32).fill(1), 'key', i / 30, 0.1);
      await audio.add(sound, i === 0 ? { decoderConfig: { codec: 'opus', numberOfChannels: 2, sampleRate: 48_000 } } : undefined);
    }
  }
  await output.finalize();
  return Buffer.from(output.target.buffer!);
}
