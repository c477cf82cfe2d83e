import {
  type AppleNotificationVerifier,
  type InboxEventDraft,
  type Provider,
  toAppleInboxDraft,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import type { Request, Response } from 'express';
import type { IngestMetrics } from '../ingest-metrics';

/** What the Apple route borrows from useWebhookRoutes (webhook-routes.ts), passed in to keep one direction. */
export interface AppleRouteTools {
  /** Undefined: APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID or APPLE_APP_APPLE_ID unset; 503 not_configured. */
  verify: AppleNotificationVerifier | undefined;
  metrics: IngestMetrics;
  readRawBody(req: Request, res: Response, provider: Provider, metrics: IngestMetrics): { text: string } | null;
  refuseFailedAuth(req: Request, res: Response, provider: Provider, reject: () => void): void;
  store(provider: Provider, req: Request, res: Response, toDraft: () => InboxEventDraft): Promise<void>;
}

/** Before the body is read: a store that is not configured answers 503 and reads nothing (true: answered). */
export function appleNotConfigured(tools: AppleRouteTools) {
  return (req: Request, res: Response): boolean => {
    if (tools.verify) return false;
    tools.metrics.webhookRequests.inc({ provider: 'apple', outcome: 'unavailable' });
    req.log.error(
      'an App Store notification arrived but APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID or APPLE_APP_APPLE_ID is unset',
    );
    sendError(res, 503, 'not_configured', 'App Store notifications are not configured');
    return true;
  };
}

/**
 * `POST /webhooks/apple` (App Store Server Notifications V2, `{"signedPayload"}`): verified with
 * Apple's library before anything is stored (billing-core's verify-apple-notification.ts); a body that is no
 * notification is 400 `invalid_event`, a bad signature or chain 400 `invalid_signature`, another
 * app or environment 400 `wrong_app` (the last two count as failed authentication). A verified one
 * is stored as received under (apple, notificationUUID), whatever its environment: the worker marks
 * one of an environment PAYMENT_ENVIRONMENTS does not accept as ignored.
 */
export function appleWebhookHandle(tools: AppleRouteTools) {
  return async (req: Request, res: Response): Promise<void> => {
    const body = tools.readRawBody(req, res, 'apple', tools.metrics);
    if (!body || !tools.verify) return;
    const verified = await tools.verify(body.text);
    if (!verified.ok) {
      if (verified.code === 'invalid_event') {
        tools.metrics.webhookRequests.inc({ provider: 'apple', outcome: 'bad_request' });
        return sendError(res, 400, 'invalid_event', verified.reason);
      }
      const { code, reason } = verified;
      return tools.refuseFailedAuth(req, res, 'apple', () => {
        tools.metrics.webhookRequests.inc({ provider: 'apple', outcome: 'bad_signature' });
        req.log.warn({ provider: 'apple', reason }, 'App Store notification rejected');
        sendError(res, 400, code, reason);
      });
    }
    await tools.store('apple', req, res, () => toAppleInboxDraft(body.text, verified));
  };
}
