import fs from 'node:fs';
import net from 'node:net';
import { freePort } from '../../core/embedded/temporal-dev-server';

describe('freePort', () => {
  it('chooses ports below the ephemeral range, which outgoing connections cannot take before the server binds', async () => {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(first);
    }
    // And the port is free: a server binds it.
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(ports[0], '127.0.0.1', resolve));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
