import { sendError } from '@tally/platform';
import type { Request, Response } from 'express';

export const tooManyFailedAttemptsMessage = 'too many requests failed authentication; retry later';

/**
 * The answer of a request refused by the failed-attempt limiter (429; express-rate-limit has set
 * Retry-After). A browser (one that prefers HTML, as it does for a page) gets a page it can show,
 * saying when to try again; every other client the JSON error, `too_many_failed_attempts`.
 */
export function answerTooManyFailedAttempts(req: Request, res: Response): void {
  if (req.accepts(['application/json', 'text/html']) !== 'text/html') {
    sendError(res, 429, 'too_many_failed_attempts', tooManyFailedAttemptsMessage);
    return;
  }
  // A number or a fixed phrase: nothing from the request reaches the page.
  const retryAfter = Number(res.get('Retry-After'));
  const wait = Number.isInteger(retryAfter) && retryAfter > 0 ? `${retryAfter} seconds` : 'a minute';
  res
    .status(429)
    .type('html')
    .set('Cache-Control', 'no-store')
    .set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
    .send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Too many wrong keys · Tally</title>
</head>
<body>
<main>
<h1>Too many wrong keys</h1>
<p>This address sent a wrong key too many times, so Tally refuses its requests for now (<code>too_many_failed_attempts</code>).</p>
<p>Try again in ${wait}: reload this page. The console and the queue dashboard take any user name and an admin key (<code>ADMIN_API_KEYS</code>) as the password.</p>
</main>
</body>
</html>
`);
}
