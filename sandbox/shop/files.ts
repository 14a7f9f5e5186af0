/**
 * Uploaded shop media: video files (their id is the `file_id` a post consumes) and cover photos
 * (their `photo_uri`). A file id belongs to the creator who uploaded it and is single use: the
 * accepted post consumes it, and any later precheck or post with it answers 170001040. A precheck
 * reads the file without consuming it, as the partner docs describe the precheck as a dry run of
 * the post (the flow is precheck → post with the same file id). A refused post leaves it unused.
 */
import { randomBytes } from 'node:crypto';
import { newItemId } from '../posts';
import { CREATOR } from './errors';
import type { ImageFormat, VideoFormat } from '../../core/media/formats';

export interface VideoFile {
  id: string;
  openId: string;
  md5: string;
  size: number;
  format: VideoFormat;
  /** Set when a post consumed the file. */
  consumedBy?: string;
}

export interface PhotoFile {
  uri: string;
  openId: string;
  format: ImageFormat;
  width: number;
  height: number;
}

export class ShopFiles {
  private readonly videos = new Map<string, VideoFile>();
  private readonly photos = new Map<string, PhotoFile>();

  constructor(private readonly now: () => number) {}

  addVideo(input: Omit<VideoFile, 'id' | 'consumedBy'>): VideoFile {
    const file: VideoFile = { ...input, id: newItemId(this.now()) };
    this.videos.set(file.id, file);
    return file;
  }

  /** The creator's unused video file, or 170001040. */
  usableVideo(openId: string, fileId: string): VideoFile {
    const file = this.videos.get(fileId);
    if (!file || file.openId !== openId || file.consumedBy) throw CREATOR.invalidFileId();
    return file;
  }

  consume(file: VideoFile, videoId: string): void {
    file.consumedBy = videoId;
  }

  addPhoto(input: Omit<PhotoFile, 'uri'>): PhotoFile {
    // Shaped like the platform's object-storage URIs: a bucket, then an object key.
    const photo: PhotoFile = { ...input, uri: `tos-useast5-i-photomode-sbx/${randomBytes(16).toString('hex')}` };
    this.photos.set(photo.uri, photo);
    return photo;
  }

  ownPhoto(openId: string, uri: string): PhotoFile | undefined {
    const photo = this.photos.get(uri);
    return photo && photo.openId === openId ? photo : undefined;
  }
}
