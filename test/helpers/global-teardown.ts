import postgres from 'postgres';

export default async function globalTeardown(): Promise<void> {
  const resources = globalThis.__vpsTestResources;
  if (!resources) return;
  await resources.devServer?.stop();
  await resources.s3?.stop();
  if (process.env.KEEP_TEST_DATABASE) return;
  const admin = postgres(resources.adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists ${resources.database} with (force)`);
  } finally {
    await admin.end();
  }
}
