// The same suite as videos.test.ts, with every stack's media in the suite's MinIO instead of a folder.
import '../helpers/use-s3-media';
import './videos.test';
