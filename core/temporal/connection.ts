import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import type { Env } from '../../config/config';

export type TemporalSettings = Pick<
  Env,
  'TEMPORAL_NAMESPACE' | 'TEMPORAL_TLS' | 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH' | 'TEMPORAL_API_KEY'
> & {
  address: string;
};

/** Connection options shared by the client (core) and the worker. */
export function temporalTls(settings: TemporalSettings) {
  if (settings.TEMPORAL_TLS_CERT_PATH && settings.TEMPORAL_TLS_KEY_PATH) {
    return {
      clientCertPair: { crt: fs.readFileSync(settings.TEMPORAL_TLS_CERT_PATH), key: fs.readFileSync(settings.TEMPORAL_TLS_KEY_PATH) },
    };
  }
  return settings.TEMPORAL_TLS || settings.TEMPORAL_API_KEY ? true : undefined;
}

export async function connectTemporalClient(settings: TemporalSettings): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({
    address: settings.address,
    tls: temporalTls(settings),
    ...(settings.TEMPORAL_API_KEY ? { apiKey: settings.TEMPORAL_API_KEY } : {}),
  });
  return { client: new Client({ connection, namespace: settings.TEMPORAL_NAMESPACE }), close: () => connection.close() };
}
