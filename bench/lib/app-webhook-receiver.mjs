// The app's webhook endpoint, played by the bench: a local HTTP server that verifies every
// delivery with the Standard Webhooks reference library (as the tests' receiver and an app do)
// and answers 204, recording per user what arrived so the run can check per-user order.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Webhook } from './workspace.mjs';

/** A fresh `whsec_` secret (24 random bytes, base64), as an app generates one. */
export function newWebhookSecret() {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export async function startAppWebhookReceiver(secret) {
  const verifier = new Webhook(secret);
  const byUser = new Map();
  const webhookIds = new Set();
  const state = { received: 0, duplicates: 0, rejected: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let message;
      try {
        message = verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers);
      } catch {
        state.rejected += 1;
        res.writeHead(400).end();
        return;
      }
      const webhookId = req.headers['webhook-id'];
      if (webhookIds.has(webhookId)) state.duplicates += 1;
      webhookIds.add(webhookId);
      state.received += 1;
      const userId = message.data.userId;
      if (!byUser.has(userId)) byUser.set(userId, []);
      byUser.get(userId).push(message.data);
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks/tally`,
    state,
    /**
     * Whether every user's wallet messages arrived in ledger order: each one's balanceBefore is
     * the balanceAfter of the one before it (the first starts from 0), the chain per-user FIFO keeps.
     */
    inPerUserOrder() {
      for (const messages of byUser.values()) {
        let balance = 0;
        for (const data of messages) {
          if (data.balanceBefore !== balance) return false;
          balance = data.balanceAfter;
        }
      }
      return true;
    },
    users: () => byUser.size,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
