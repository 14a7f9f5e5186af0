/**
 * What a probe reads from a stored video, whichever parser read it (probe.ts for ISO files,
 * matroska-probe.ts for WebM and Matroska): in a file of its own so that the two need not import
 * each other.
 */
export interface VideoProbe {
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  fragmented: boolean;
}
