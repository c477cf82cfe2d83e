import { type DB, resolveUserIds } from '@tally/billing-core';
import { createTransactionBatcher } from '@tally/platform/db';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import { parseOr400, userIdSchema } from './params';

/** Whom a `/v1/users/{userId}/…` request is about. */
export interface UserScope {
  /**
   * The canonical user of the path's id (`resolveUserId`): the id itself, or the user a
   * RevenueCat link points it at. Every read, write and lock of a user route uses this id.
   */
  userId: string;
  /** The id as the path spelled it. Only echoed back (`userId` in answers); never read or written by. */
  requestedId: string;
}

/** Alias look-ups of the user routes in flight at once, and ids in one. */
const userLookups = { maxTransactions: 2, maxItems: 64 };

/**
 * The one place the product API turns the `{userId}` of a path into a user. `routers` are
 * mounted under `/users/:userId` behind a middleware that validates the id (400 otherwise),
 * resolves it once and leaves the answer for `userScopeOf` (the mount hands it to each handler as
 * `user`). Their own paths are relative (`/wallet`, `/studio/requests`), without `mergeParams`
 * Express gives them no `userId` parameter at all, and a definition cannot declare `{userId}` as
 * a parameter of its own (defineRoute), so a route cannot act on the unresolved id by accident: a
 * linked id (`$RCAnonymousID:…`, an old login) reads and spends the wallet the reads show, not an
 * empty one of its own.
 */
export function createUserRoutes(db: Kysely<DB>, routers: readonly Router[]): Router {
  // Requests arriving together are resolved together: a look-up starts at once while fewer than
  // two are in flight, and the ids that arrived meanwhile go in the next one, one statement for
  // up to 64 (bench/README.md "Where a debit's time goes"). An idle api still looks each id up at
  // once; every request reads the links as a look-up of its own would, after it arrived.
  const resolveUserId = createTransactionBatcher((ids: string[]) => resolveUserIds(db, ids), userLookups);
  const router = Router();
  router.use(
    '/users/:userId',
    async (req: Request<{ userId: string }>, res: Response, next: NextFunction) => {
      const requestedId = parseOr400(res, userIdSchema, req.params.userId);
      if (requestedId === undefined) return;
      const scope: UserScope = { userId: await resolveUserId(requestedId), requestedId };
      res.locals.userScope = scope;
      next();
    },
    ...routers,
  );
  return router;
}

/** The scope `createUserRoutes` resolved for this request; throws for a route mounted outside it. */
export function userScopeOf(res: Response): UserScope {
  const scope = res.locals.userScope as UserScope | undefined;
  if (scope === undefined)
    throw new Error('a user route was mounted outside createUserRoutes: its userId is unresolved');
  return scope;
}
