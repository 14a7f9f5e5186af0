/** The media store a process's configuration names: the one place that reads the MEDIA_ settings. */
import path from 'node:path';
import type { Config } from '../../config/config';
import { FolderMediaStore } from './folder-store';
import { S3MediaStore } from './s3-store';
import type { MediaStore } from './storage';

export function mediaStoreFromConfig(config: Config): MediaStore {
  const env = config.env;
  if (env.MEDIA_STORE === 'folder')
    return new FolderMediaStore(path.resolve(env.VPS_MEDIA_DIR ?? path.join(config.dataDir, 'media')), undefined, {
      direct: env.MEDIA_FOLDER_WRITES === 'direct',
    });
  return new S3MediaStore({
    bucket: env.MEDIA_S3_BUCKET!,
    endpoint: env.MEDIA_S3_ENDPOINT,
    region: env.MEDIA_S3_REGION,
    credentials: env.MEDIA_S3_ACCESS_KEY_ID
      ? { accessKeyId: env.MEDIA_S3_ACCESS_KEY_ID, secretAccessKey: env.MEDIA_S3_SECRET_ACCESS_KEY! }
      : undefined,
    forcePathStyle: env.MEDIA_S3_FORCE_PATH_STYLE ?? Boolean(env.MEDIA_S3_ENDPOINT),
    keyPrefix: env.MEDIA_S3_PREFIX,
    partSizeBytes: env.MEDIA_S3_PART_SIZE_BYTES,
    partsInFlight: env.MEDIA_S3_PARTS_IN_FLIGHT,
    requestTimeoutMs: env.MEDIA_S3_TIMEOUT_MS,
  });
}
