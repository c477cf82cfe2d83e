import { type InboxEventDraft, type Provider, toGooglePlayInboxDraftFromBody } from '@tally/billing-core';
import { sendError } from '@tally/platform';
import type { Request, Response, Router } from 'express';
import type { IngestMetrics } from '../ingest-metrics';
import { createGooglePubSubTokenVerifier, type GooglePubSubTokenSettings } from '../verify/verify-google-pubsub-token';

/** Google Play's push settings; all of them, or Google Play is off (503 not_configured). */
export interface GooglePlayPushSettings extends GooglePubSubTokenSettings {
  /** GOOGLE_PLAY_PACKAGE_NAME: the notification's `packageName` must be this. */
  packageName: string;
}

/** What the Google Play route borrows from useWebhookRoutes (webhook-routes.ts), passed in to keep one direction. */
export interface GooglePlayRouteTools {
  /** Undefined: GOOGLE_PLAY_PACKAGE_NAME, GOOGLE_PUBSUB_AUDIENCE or GOOGLE_PUBSUB_SERVICE_ACCOUNT unset; 503 not_configured. */
  settings: GooglePlayPushSettings | undefined;
  metrics: IngestMetrics;
  webhookRoute(
    provider: Provider,
    before: (req: Request, res: Response) => boolean,
    handle: (req: Request, res: Response) => Promise<void>,
  ): (req: Request, res: Response, next: (error?: unknown) => void) => void;
  readRawBody(req: Request, res: Response, provider: Provider, metrics: IngestMetrics): { text: string } | null;
  refuseFailedAuth(req: Request, res: Response, provider: Provider, reject: () => void): void;
  store(provider: Provider, req: Request, res: Response, toDraft: () => InboxEventDraft): Promise<void>;
}

/**
 * POST /webhooks/google-play: Cloud Pub/Sub's push of Google Play's real-time developer
 * notifications (docs/stores-google-play.md). Off until configured (503 not_configured, nothing
 * read). The OIDC token is verified before the body is parsed: anything but the subscription's
 * valid token is 401 and stores nothing (503 when Google's certificates cannot be fetched, so
 * Pub/Sub retries). The notification must name this app's package (400 otherwise, nothing
 * stored); then it is stored under (google_play, message.messageId) and answered 200, which
 * acknowledges it. Verify, store, enqueue, answer: the worker reads the purchase.
 */
export function useGooglePlayWebhookRoute(app: Router, kit: GooglePlayRouteTools) {
  const { settings } = kit;
  const verify = settings ? createGooglePubSubTokenVerifier(settings) : undefined;
  app.post(
    '/webhooks/google-play',
    kit.webhookRoute(
      'google_play',
      (req, res) => {
        if (settings && verify) return false;
        kit.metrics.webhookRequests.inc({ provider: 'google_play', outcome: 'unavailable' });
        req.log.error(
          'a Google Play push arrived but GOOGLE_PLAY_PACKAGE_NAME, GOOGLE_PUBSUB_AUDIENCE or GOOGLE_PUBSUB_SERVICE_ACCOUNT is unset',
        );
        sendError(res, 503, 'not_configured', 'Google Play notifications are not configured');
        return true;
      },
      async (req, res) => {
        if (!settings || !verify) return;
        const body = kit.readRawBody(req, res, 'google_play', kit.metrics);
        if (!body) return;
        const check = await verify(req.get('authorization'));
        // guard: google-pubsub-token-checked
        if (!check.ok) {
          if (check.unavailable) {
            kit.metrics.webhookRequests.inc({ provider: 'google_play', outcome: 'unavailable' });
            req.log.error(
              { provider: 'google_play', reason: check.reason },
              'Google OIDC certificates could not be fetched; Pub/Sub will retry',
            );
            return sendError(
              res,
              503,
              'verification_unavailable',
              'cannot verify the push token right now; retry later',
            );
          }
          return kit.refuseFailedAuth(req, res, 'google_play', () => {
            kit.metrics.webhookRequests.inc({ provider: 'google_play', outcome: 'unauthorized' });
            req.log.warn({ provider: 'google_play', reason: check.reason }, 'push token rejected');
            sendError(res, 401, 'unauthorized', check.reason);
          });
        }
        await kit.store('google_play', req, res, () => toGooglePlayInboxDraftFromBody(body.text, settings.packageName));
      },
    ),
  );
}
