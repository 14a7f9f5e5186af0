/**
 * Imported first by a test file that runs a suite against the S3 store (MinIO) instead of the
 * folder: every stack the suite starts then uses it.
 */
import { useMediaStoreByDefault } from './stack';

useMediaStoreByDefault('s3');
