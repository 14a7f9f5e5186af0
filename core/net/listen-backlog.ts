/**
 * The accept queue our HTTP servers ask for (the kernel caps it at net.core.somaxconn). Node's
 * default is 511. When a busy process turns its event loop slowly, a burst of new connections (a
 * gateway opening more to core as calls pile up, the platform's retried webhooks) overflows it,
 * and the kernel drops the connection attempts beyond it, each retried only after TCP's back-off
 * of 1, 3, 7 s and more. In a kill-worker drill on 2 cores we saw core's and both gateways' queues
 * full at 511 and the kernel counting over 30,000 overflows; with 4096 it counted none.
 */
export const LISTEN_BACKLOG = 4096;
