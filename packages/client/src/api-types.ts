// Generated from the api's OpenAPI document by packages/client/scripts/generate.cjs (openapi-typescript).
// Do not edit: `node packages/client/scripts/generate.cjs` after `tsc -b`; npm test fails on drift.
export interface paths {
    "/v1/users/{userId}/wallet": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's balance and its lots */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the wallet (balance 0 and no lots for a user never seen) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            balance: number;
                            /** @description the sum of active holds */
                            held: number;
                            /** @description balance - held: what debits, studio requests and new holds can use */
                            available: number;
                            /** @description tokens owed: what take-backs and priced captures could not take; the next paid credit settles it (docs/debt.md) */
                            debt: number;
                            lots: {
                                id: number;
                                /** @enum {string} */
                                category: "purchased" | "subscription" | "promotional";
                                source: string;
                                amount: number;
                                remaining: number;
                                /** @description what active holds reserve of this lot (docs/holds.md) */
                                held: number;
                                /** Format: date-time */
                                expiresAt: string | null;
                                /** Format: date-time */
                                createdAt: string;
                            }[];
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's ledger, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: number;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description a page of entries */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            entries: {
                                reference: string;
                                amount: number;
                                balanceBefore: number;
                                balanceAfter: number;
                                reason: string;
                                /** Format: date-time */
                                createdAt: string;
                                /** @description what a debit drew from each lot, or what a give-back returned */
                                draws?: {
                                    lotId: number;
                                    amount: number;
                                }[];
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description a bad limit or cursor */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/subscription": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's subscription (RevenueCat or Stripe, the one that decides) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the subscription */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            planId: string | null;
                            /** @enum {string} */
                            status: "active" | "inactive";
                            expiresAt: string | null;
                            store: string | null;
                            autoRenew: boolean;
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the user has no subscription */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/subscription/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Re-read the subscription from RevenueCat now */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description what the re-read changed, and the subscription after it */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @enum {string} */
                            result: "changed" | "already_synchronized" | "no_subscription" | "stale_read";
                            subscription: {
                                planId: string | null;
                                /** @enum {string} */
                                status: "active" | "inactive";
                                expiresAt: string | null;
                                store: string | null;
                                autoRenew: boolean;
                            } | null;
                        };
                    };
                };
                /** @description a body with fields (the sync takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an id RevenueCat never sent */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unknown_user";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description RevenueCat unreachable or refusing */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "revenuecat_unavailable" | "revenuecat_rejected";
                                message: string;
                            };
                        };
                    };
                };
                /** @description not configured, or RevenueCat asked to slow down (Retry-After) */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        /** @description seconds to wait before retrying */
                        "Retry-After"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "revenuecat_rate_limited" | "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/studio/requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's studio requests, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description a page of requests */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            requests: {
                                id: string;
                                userId: string;
                                /** @enum {string} */
                                kind: "image_edit" | "music";
                                durationSeconds: number | null;
                                full: boolean;
                                /** @enum {string} */
                                status: "received" | "processing" | "completed" | "failed";
                                tokensCharged: number;
                                freeTier: boolean;
                                priceTokens: number;
                                /** @description the UTC day (YYYY-MM-DD) whose free allowance the request used or skipped */
                                usageDay: string;
                                input?: unknown;
                                result?: unknown;
                                error: {
                                    code: string;
                                    message: string | null;
                                } | null;
                                refunded: boolean;
                                attempts: number;
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: date-time */
                                updatedAt: string;
                                /** Format: date-time */
                                completedAt: string | null;
                                /** Format: date-time */
                                failedAt: string | null;
                                /** Format: date-time */
                                refundedAt: string | null;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description a bad limit or cursor */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        /** Start a generation, paid with tokens or the free allowance */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        kind: "image_edit" | "music";
                        durationSeconds?: number;
                        full?: boolean;
                        input: unknown;
                    };
                };
            };
            responses: {
                /** @description accepted: the request is queued and paid for */
                202: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            /** @enum {string} */
                            status: "received" | "processing" | "completed" | "failed";
                            tokensCharged: number;
                            freeTier: boolean;
                        };
                    };
                };
                /** @description a body the catalog does not price */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the wallet holds less than the price; nothing was written; or spend_limit_reached: spent + held + this spend would pass the daily or monthly limit (nothing spent) */
                402: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "insufficient_balance";
                                message: string;
                            };
                            balance: number;
                            /** @description what the request could spend: balance less active holds and expired lots */
                            available: number;
                            price: number;
                        } | {
                            error: {
                                /** @enum {string} */
                                code: "spend_limit_reached";
                                message: string;
                            };
                            /**
                             * @description daily: the UTC day; monthly: the calendar month (UTC)
                             * @enum {string}
                             */
                            period: "daily" | "monthly";
                            limit: number;
                            /** @description tokens spent in the period (debits, usage, captures, studio) */
                            spent: number;
                            /** @description what active holds reserve: it counts until they end */
                            held: number;
                            requested: number;
                            /** @description when the period ends and its count starts again (ISO 8601, UTC) */
                            resetsAt: string;
                        };
                    };
                };
                /** @description a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/studio/requests/{requestId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One studio request */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                    requestId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the request */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            userId: string;
                            /** @enum {string} */
                            kind: "image_edit" | "music";
                            durationSeconds: number | null;
                            full: boolean;
                            /** @enum {string} */
                            status: "received" | "processing" | "completed" | "failed";
                            tokensCharged: number;
                            freeTier: boolean;
                            priceTokens: number;
                            /** @description the UTC day (YYYY-MM-DD) whose free allowance the request used or skipped */
                            usageDay: string;
                            input?: unknown;
                            result?: unknown;
                            error: {
                                code: string;
                                message: string | null;
                            } | null;
                            refunded: boolean;
                            attempts: number;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            updatedAt: string;
                            /** Format: date-time */
                            completedAt: string | null;
                            /** Format: date-time */
                            failedAt: string | null;
                            /** Format: date-time */
                            refundedAt: string | null;
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such request for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/topups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a top-up: a pending row and a Stripe PaymentIntent */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        packId: string;
                    };
                };
            };
            responses: {
                /** @description started; pay with the client secret, then confirm */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            reference: string;
                            /** @description the PaymentIntent's client secret, for Stripe.js in the browser */
                            clientSecret: string;
                            /** @enum {string} */
                            status: "pending";
                        };
                    };
                };
                /** @description a bad body or a pack the catalog does not have */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_pack" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Stripe is unavailable */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "stripe_unavailable" | "stripe_request_failed";
                                message: string;
                            };
                        };
                    };
                };
                /** @description top-ups are not configured, or Stripe asked to retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        /** @description seconds to wait before retrying */
                        "Retry-After"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "retry_later" | "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/topups/{reference}/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Credit a top-up once its PaymentIntent succeeded */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                    reference: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description paid and credited (once) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            reference: string;
                            /** @enum {string} */
                            status: "paid";
                            /** @description false when an earlier confirm or the webhook credited it */
                            credited: boolean;
                            balance: number;
                        };
                    };
                };
                /** @description a reference that is not tu_…, or a body with fields (a confirm takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such top-up for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "topup_not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the PaymentIntent has not succeeded (yet); retry after paying; or a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "topup_not_paid";
                                message: string;
                            };
                            paymentStatus: string;
                        } | {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Stripe is unavailable */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "stripe_unavailable" | "stripe_request_failed";
                                message: string;
                            };
                        };
                    };
                };
                /** @description top-ups are not configured, or Stripe asked to retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        /** @description seconds to wait before retrying */
                        "Retry-After"?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "retry_later" | "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Grant promotional tokens under a reference of the app (docs/lots.md "Grants") */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        amount: number;
                        reason?: string;
                        /** Format: date-time */
                        expiresAt?: string | null;
                        /** @description settle the wallet's debt first from this grant, as a paid credit does (default false: docs/debt.md) */
                        settlesDebt?: boolean;
                        reference: string;
                    };
                };
            };
            responses: {
                /** @description the same grant was made before: nothing granted now, its first answer */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ledgerReference: string;
                            lotId: number;
                            amount: number;
                            /** Format: date-time */
                            expiresAt: string | null;
                            /** @description the balance right after the grant and what it settled (the same on every retry) */
                            balance: number;
                            /** @description what of the grant settled the wallet's debt (0 without settlesDebt) */
                            debtSettled: number;
                        };
                    };
                };
                /** @description granted: one promotional lot */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ledgerReference: string;
                            lotId: number;
                            amount: number;
                            /** Format: date-time */
                            expiresAt: string | null;
                            /** @description the balance right after the grant and what it settled (the same on every retry) */
                            balance: number;
                            /** @description what of the grant settled the wallet's debt (0 without settlesDebt) */
                            debtSettled: number;
                        };
                    };
                };
                /** @description a bad body or user id */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the reference granted another amount, expiry or user */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "reference_conflict" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/debits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Debit tokens under a reference of the app (docs/holds.md "Debits") */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        amount: number;
                        reference: string;
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description the same reference and amount debited before: its answer, nothing more debited */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description debit:{reference} */
                            ledgerReference: string;
                            amount: number;
                            /** @description the balance right after the debit (the same on every retry) */
                            balance: number;
                            /** @description balance less active holds: right after a new debit, now on a retry */
                            available: number;
                            /** @description what the debit drew from each lot, in the draw order */
                            draws: {
                                lotId: number;
                                amount: number;
                            }[];
                        };
                    };
                };
                /** @description debited */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description debit:{reference} */
                            ledgerReference: string;
                            amount: number;
                            /** @description the balance right after the debit (the same on every retry) */
                            balance: number;
                            /** @description balance less active holds: right after a new debit, now on a retry */
                            available: number;
                            /** @description what the debit drew from each lot, in the draw order */
                            draws: {
                                lotId: number;
                                amount: number;
                            }[];
                        };
                    };
                };
                /** @description a bad body */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description available is short (its figure in the answer); or spend_limit_reached: spent + held + this spend would pass the daily or monthly limit (nothing spent) */
                402: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "insufficient_balance";
                                message: string;
                            };
                            available: number;
                        } | {
                            error: {
                                /** @enum {string} */
                                code: "spend_limit_reached";
                                message: string;
                            };
                            /**
                             * @description daily: the UTC day; monthly: the calendar month (UTC)
                             * @enum {string}
                             */
                            period: "daily" | "monthly";
                            limit: number;
                            /** @description tokens spent in the period (debits, usage, captures, studio) */
                            spent: number;
                            /** @description what active holds reserve: it counts until they end */
                            held: number;
                            requested: number;
                            /** @description when the period ends and its count starts again (ISO 8601, UTC) */
                            resetsAt: string;
                        };
                    };
                };
                /** @description the reference debited another amount */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "reference_conflict" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/holds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's holds, newest first (status=held: the active ones) */
        get: {
            parameters: {
                query?: {
                    status?: "held" | "captured" | "released" | "expired";
                    limit?: number;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the holds */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            holds: {
                                id: string;
                                reference: string;
                                amount: number;
                                reason: string;
                                /**
                                 * @description expired: held past expiresAt (the database clock); it counts for nothing
                                 * @enum {string}
                                 */
                                status: "held" | "captured" | "released" | "expired";
                                /** Format: date-time */
                                expiresAt: string;
                                captured: number | null;
                                released: number | null;
                                /** @description hold:{id}:capture once captured */
                                ledgerReference: string | null;
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: date-time */
                                settledAt: string | null;
                            }[];
                        };
                    };
                };
                /** @description a bad status or limit */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        /** Reserve tokens for work whose cost is known at the end (docs/holds.md) */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description tokens to reserve (or feature: a hold by estimate) */
                        amount?: number;
                        /** @description a catalog feature: the hold reserves the estimate's cost (docs/features.md) */
                        feature?: string;
                        variant?: string;
                        /** @description the estimate of the feature's one meter */
                        quantity?: number;
                        /** @description the estimate per meter */
                        quantities?: {
                            [key: string]: number;
                        };
                        reference: string;
                        expiresInSeconds?: number;
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description the same reference held before: that hold */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            reference: string;
                            amount: number;
                            /** @enum {string} */
                            status: "held" | "captured" | "released" | "expired";
                            /** Format: date-time */
                            expiresAt: string;
                            available: number;
                        };
                    };
                };
                /** @description held */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            reference: string;
                            amount: number;
                            /** @enum {string} */
                            status: "held" | "captured" | "released" | "expired";
                            /** Format: date-time */
                            expiresAt: string;
                            available: number;
                        };
                    };
                };
                /** @description a bad body, or an unknown feature, variant or meter (the known ones named) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_feature" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description available is short (its figure in the answer); or spend_limit_reached: spent + held + this spend would pass the daily or monthly limit (nothing spent) */
                402: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "insufficient_balance";
                                message: string;
                            };
                            available: number;
                        } | {
                            error: {
                                /** @enum {string} */
                                code: "spend_limit_reached";
                                message: string;
                            };
                            /**
                             * @description daily: the UTC day; monthly: the calendar month (UTC)
                             * @enum {string}
                             */
                            period: "daily" | "monthly";
                            limit: number;
                            /** @description tokens spent in the period (debits, usage, captures, studio) */
                            spent: number;
                            /** @description what active holds reserve: it counts until they end */
                            held: number;
                            requested: number;
                            /** @description when the period ends and its count starts again (ISO 8601, UTC) */
                            resetsAt: string;
                        };
                    };
                };
                /** @description the reference holds another amount or estimate */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "reference_conflict" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/holds/{holdId}/capture": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Capture a hold: one debit of at most the held amount, the rest freed */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                    holdId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description an amount hold: at most the held amount (default all) */
                        amount?: number;
                        /** @description a hold by estimate: the actual quantity of its feature's one meter */
                        quantity?: number;
                        /** @description a hold by estimate: the actual quantity per meter */
                        quantities?: {
                            [key: string]: number;
                        };
                    };
                };
            };
            responses: {
                /** @description captured (or captured before: the first answer again) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            /** @enum {string} */
                            status: "captured";
                            captured: number;
                            released: number;
                            ledgerReference: string;
                            balance: number;
                            available: number;
                            /** @description a hold by estimate: the actual cost at the hold's prices */
                            cost?: number;
                            /** @description a hold by estimate: the actual quantities */
                            quantities?: {
                                [key: string]: number;
                            };
                            /** @description a hold by estimate: the cost past the hold, taken from what was available */
                            excess?: number;
                            /** @description a hold by estimate: what of the excess could not be taken (owed) */
                            debt?: number;
                        };
                    };
                };
                /** @description a malformed hold id or body, more than the hold, or an unknown meter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_feature" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such hold for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the hold was released, captured or has expired */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "hold_not_active" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/holds/{holdId}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Release a hold: its tokens are available again, no ledger row */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                    holdId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description released (or released before: the first answer again) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            /** @enum {string} */
                            status: "released";
                            available: number;
                        };
                    };
                };
                /** @description a malformed hold id, or a body with fields (a release takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such hold for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the hold was released, captured or has expired */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "hold_not_active" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/holds/{holdId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One hold */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                    holdId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the hold */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            reference: string;
                            amount: number;
                            reason: string;
                            /**
                             * @description expired: held past expiresAt (the database clock); it counts for nothing
                             * @enum {string}
                             */
                            status: "held" | "captured" | "released" | "expired";
                            /** Format: date-time */
                            expiresAt: string;
                            captured: number | null;
                            released: number | null;
                            /** @description hold:{id}:capture once captured */
                            ledgerReference: string | null;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            settledAt: string | null;
                        };
                    };
                };
                /** @description a malformed hold id */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such hold for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether a spend of amount, the next studio request of studioKind, or the next usage of a feature would go through now */
        get: {
            parameters: {
                query?: {
                    /** @description tokens a debit or hold would need (or studioKind, or feature) */
                    amount?: number;
                    /** @description the next studio request of this kind (or amount, or feature) */
                    studioKind?: "image_edit" | "music_clip" | "music_full";
                    /** @description the next usage of this catalog feature (docs/features.md); meters as quantities[meter]=n */
                    feature?: string;
                    /** @description feature only: its variant */
                    variant?: string;
                    /** @description feature only: the quantity of its one meter */
                    quantity?: number | null;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the check (free allowance included for a studio kind or a feature) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            allowed: boolean;
                            /** @description what the spend would debit (a studio request: its cost, 0 on the free tier) */
                            amount: number;
                            balance: number;
                            held: number;
                            available: number;
                            /** @description studioKind: the price of the next request of that kind; feature: what its next usage would charge */
                            cost?: number;
                            /** @description studioKind and feature: whether the free allowance covers it */
                            freeTier?: boolean;
                            /** @description the spend limit the spend would pass (allowed is false), as its 402 spend_limit_reached says */
                            spendLimit?: {
                                /** @enum {string} */
                                period: "daily" | "monthly";
                                limit: number;
                                spent: number;
                                held: number;
                                requested: number;
                                resetsAt: string;
                            };
                        };
                    };
                };
                /** @description not exactly one of amount, studioKind and feature, a bad value, or an unknown feature */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_feature";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's uses per UTC day and feature (docs/features.md "Reports") */
        get: {
            parameters: {
                query: {
                    from: string;
                    to: string;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the days with uses */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            days: {
                                /** @description the UTC day */
                                date: string;
                                feature: string;
                                variant: string | null;
                                /** @description uses that succeeded (usages, captured holds by estimate, studio requests that did not fail) */
                                uses: number;
                                freeUses: number;
                                /** @description each meter's quantities summed */
                                quantities: {
                                    [key: string]: number;
                                };
                                /** @description tokens charged */
                                tokens: number;
                                /** @description the admin report: distinct users */
                                users?: number;
                            }[];
                        };
                    };
                };
                /** @description a bad date, from after to, or more than 366 days */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        /** Record a use of a catalog feature, priced by the catalog (docs/features.md) */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description a feature of the catalog */
                        feature: string;
                        /** @description the variant, for a feature priced by variant */
                        variant?: string;
                        /** @description the feature's one meter (default 1 for a feature counted in uses) */
                        quantity?: number;
                        /** @description a quantity per meter */
                        quantities?: {
                            [key: string]: number;
                        };
                        reference: string;
                    };
                };
            };
            responses: {
                /** @description the same reference and usage recorded before: its answer, nothing more charged */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description usage:{reference} */
                            ledgerReference: string;
                            feature: string;
                            variant: string | null;
                            quantities: {
                                [key: string]: number;
                            };
                            /** @description tokens charged: 0 inside the free allowance */
                            cost: number;
                            freeTier: boolean;
                            /** @description the catalog's version the use was priced at */
                            priceVersion: string;
                            /** @description the balance right after the use (the same on every retry) */
                            balance: number;
                            available: number;
                            /** @description what the debit drew from each lot, in the order drawn */
                            draws: {
                                lotId: number;
                                amount: number;
                            }[];
                        };
                    };
                };
                /** @description recorded and charged */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description usage:{reference} */
                            ledgerReference: string;
                            feature: string;
                            variant: string | null;
                            quantities: {
                                [key: string]: number;
                            };
                            /** @description tokens charged: 0 inside the free allowance */
                            cost: number;
                            freeTier: boolean;
                            /** @description the catalog's version the use was priced at */
                            priceVersion: string;
                            /** @description the balance right after the use (the same on every retry) */
                            balance: number;
                            available: number;
                            /** @description what the debit drew from each lot, in the order drawn */
                            draws: {
                                lotId: number;
                                amount: number;
                            }[];
                        };
                    };
                };
                /** @description a bad body, or an unknown feature, variant or meter (the known ones named) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_feature" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description available is short of the cost (both in the answer); or spend_limit_reached: spent + held + this spend would pass the daily or monthly limit (nothing spent) */
                402: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "insufficient_balance";
                                message: string;
                            };
                            cost: number;
                            available: number;
                        } | {
                            error: {
                                /** @enum {string} */
                                code: "spend_limit_reached";
                                message: string;
                            };
                            /**
                             * @description daily: the UTC day; monthly: the calendar month (UTC)
                             * @enum {string}
                             */
                            period: "daily" | "monthly";
                            limit: number;
                            /** @description tokens spent in the period (debits, usage, captures, studio) */
                            spent: number;
                            /** @description what active holds reserve: it counts until they end */
                            held: number;
                            requested: number;
                            /** @description when the period ends and its count starts again (ISO 8601, UTC) */
                            resetsAt: string;
                        };
                    };
                };
                /** @description the reference recorded another usage */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "reference_conflict" | "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The spend limits in force, what was spent this UTC day and month, and when each resets */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the limits */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description what active holds reserve: it counts in both periods until they end */
                            held: number;
                            /** @description the current UTC day */
                            daily: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                            /** @description the current calendar month (UTC) */
                            monthly: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        /** Set the user's own daily and monthly spend limits (null: the default; absent: unchanged) */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description tokens per UTC day; null: the default (SPEND_LIMIT_DAILY); absent: unchanged */
                        daily?: number | null;
                        /** @description tokens per calendar month (UTC); null: the default (SPEND_LIMIT_MONTHLY); absent: unchanged */
                        monthly?: number | null;
                    };
                };
            };
            responses: {
                /** @description the limits as they are now */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description what active holds reserve: it counts in both periods until they end */
                            held: number;
                            /** @description the current UTC day */
                            daily: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                            /** @description the current calendar month (UTC) */
                            monthly: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                        };
                    };
                };
                /** @description a limit that is not a whole number of tokens, 0 or more, or null; an unknown field */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/payment-methods/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create (or reuse) the user's Stripe Customer and a SetupIntent for off-session charges */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description confirm the SetupIntent with Stripe.js; setup_intent.succeeded saves the card */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description the SetupIntent's client secret: confirm it with Stripe.js */
                            clientSecret: string;
                            /** @description the user's Stripe Customer */
                            customerId: string;
                            setupIntentId: string;
                        };
                    };
                };
                /** @description a body that is not JSON, or bad input */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Stripe is unavailable or refused the request */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "stripe_unavailable" | "stripe_request_failed";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Stripe is not configured, or asked to retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "retry_later" | "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/auto-topup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The auto top-up settings, the saved card, this month’s count and the attempt in flight */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the auto top-up (enabled false when never set) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            enabled: boolean;
                            packId: string | null;
                            threshold: number | null;
                            monthlyLimit: number | null;
                            /**
                             * @description why Tally turned it off: three failures in a row, or support; the app enabling it again turns it on
                             * @enum {string|null}
                             */
                            disabledReason: "failures" | "operator" | null;
                            failuresInARow: number;
                            /** @description the card setup_intent.succeeded saved; nothing is charged without one */
                            paymentMethod: {
                                id: string;
                                customerId: string;
                                savedAt: string;
                            } | null;
                            /** @description top-ups this calendar month that count against monthlyLimit */
                            thisMonth: number;
                            inFlight: {
                                id: string;
                                /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                reference: string;
                                packId: string;
                                /** @enum {string} */
                                status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                /** @description what the triggering spend left available */
                                availableAfter: number;
                                threshold: number;
                                paymentIntentId: string | null;
                                /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                failureCode: string | null;
                                /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                requiresAction: boolean;
                                tries: number;
                                createdAt: string;
                                finishedAt: string | null;
                            } | null;
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        /** Set auto top-up: the pack, the threshold, the monthly limit and whether it is on */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description the token pack each auto top-up buys (a catalog pack with a Stripe price) */
                        packId: string;
                        /** @description a spend that leaves `available` below this triggers a top-up */
                        threshold: number;
                        /** @description top-ups per calendar month (UTC), 1 to 100 */
                        monthlyLimit: number;
                        /** @description true turns it on (and clears the failures in a row); false turns it off */
                        enabled: boolean;
                    };
                };
            };
            responses: {
                /** @description the auto top-up as it is now */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            enabled: boolean;
                            packId: string | null;
                            threshold: number | null;
                            monthlyLimit: number | null;
                            /**
                             * @description why Tally turned it off: three failures in a row, or support; the app enabling it again turns it on
                             * @enum {string|null}
                             */
                            disabledReason: "failures" | "operator" | null;
                            failuresInARow: number;
                            /** @description the card setup_intent.succeeded saved; nothing is charged without one */
                            paymentMethod: {
                                id: string;
                                customerId: string;
                                savedAt: string;
                            } | null;
                            /** @description top-ups this calendar month that count against monthlyLimit */
                            thisMonth: number;
                            inFlight: {
                                id: string;
                                /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                reference: string;
                                packId: string;
                                /** @enum {string} */
                                status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                /** @description what the triggering spend left available */
                                availableAfter: number;
                                threshold: number;
                                paymentIntentId: string | null;
                                /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                failureCode: string | null;
                                /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                requiresAction: boolean;
                                tries: number;
                                createdAt: string;
                                finishedAt: string | null;
                            } | null;
                        };
                    };
                };
                /** @description a bad body, or a pack the catalog does not sell through Stripe */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "unknown_pack" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no catalog is configured */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        post?: never;
        /** Turn auto top-up off and forget its settings (the saved card stays) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the auto top-up as it is now (enabled false) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            enabled: boolean;
                            packId: string | null;
                            threshold: number | null;
                            monthlyLimit: number | null;
                            /**
                             * @description why Tally turned it off: three failures in a row, or support; the app enabling it again turns it on
                             * @enum {string|null}
                             */
                            disabledReason: "failures" | "operator" | null;
                            failuresInARow: number;
                            /** @description the card setup_intent.succeeded saved; nothing is charged without one */
                            paymentMethod: {
                                id: string;
                                customerId: string;
                                savedAt: string;
                            } | null;
                            /** @description top-ups this calendar month that count against monthlyLimit */
                            thisMonth: number;
                            inFlight: {
                                id: string;
                                /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                reference: string;
                                packId: string;
                                /** @enum {string} */
                                status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                /** @description what the triggering spend left available */
                                availableAfter: number;
                                threshold: number;
                                paymentIntentId: string | null;
                                /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                failureCode: string | null;
                                /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                requiresAction: boolean;
                                tries: number;
                                createdAt: string;
                                finishedAt: string | null;
                            } | null;
                        };
                    };
                };
                /** @description a body that is not JSON, or bad input */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/auto-topup/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user's auto top-up attempts, newest first */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the attempts */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description newest first, at most 20 */
                            attempts: {
                                id: string;
                                /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                reference: string;
                                packId: string;
                                /** @enum {string} */
                                status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                /** @description what the triggering spend left available */
                                availableAfter: number;
                                threshold: number;
                                paymentIntentId: string | null;
                                /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                failureCode: string | null;
                                /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                requiresAction: boolean;
                                tries: number;
                                createdAt: string;
                                finishedAt: string | null;
                            }[];
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/store-accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The ids the app passes to StoreKit (appAccountToken) and Play Billing (obfuscatedAccountId) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the ids (made on the first read, never changed) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description pass it to StoreKit as the purchase's appAccountToken: Apple's notifications name the user by it */
                            appleAppAccountToken: string;
                            /** @description pass it to Play Billing (setObfuscatedAccountId): Google's purchases name the user by it */
                            googleObfuscatedAccountId: string;
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/store-consent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Record the user's consent to send Apple consumption data for their refund requests */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description 1 to 255 visible ASCII characters: a retry with the same key gets the first answer (docs/idempotency.md) */
                    "Idempotency-Key"?: string;
                };
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description whether the user agreed, in the app, that Tally sends Apple consumption data */
                        consented: boolean;
                    };
                };
            };
            responses: {
                /** @description recorded (the latest answer stands) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            consented: boolean;
                            updatedAt: string | null;
                        };
                    };
                };
                /** @description a bad body */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length" | "invalid_idempotency_key";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid app key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a request with this Idempotency-Key is still running; retry later */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_in_use";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this Idempotency-Key was used with another method, path or body */
                422: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "idempotency_key_reused";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        /** @description present when this is the answer kept under the Idempotency-Key, replayed */
                        "Idempotent-Replayed"?: "true";
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Operators' actions, newest first, from every surface */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: number;
                    targetKind?: string;
                    targetId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description a page of audit rows */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            actions: {
                                id: number;
                                action: string;
                                /** @enum {string} */
                                surface: "api" | "console" | "dashboard" | "cli";
                                target: {
                                    kind: string;
                                    id: string;
                                } | null;
                                method: string | null;
                                path: string | null;
                                request?: unknown;
                                keyFingerprint: string | null;
                                actor: string | null;
                                statusCode: number | null;
                                outcome: string;
                                answer?: unknown;
                                /** Format: date-time */
                                createdAt: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description a bad filter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Inbox events, newest first */
        get: {
            parameters: {
                query?: {
                    provider?: "stripe" | "revenuecat" | "apple" | "google_play";
                    type?: string;
                    status?: "received" | "processing" | "processed" | "failed" | "ignored";
                    outcome?: string;
                    userId?: string;
                    limit?: number;
                    cursor?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description a page of events */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            events: {
                                id: number;
                                /** @enum {string} */
                                provider: "stripe" | "revenuecat" | "apple" | "google_play";
                                providerEventId: string;
                                type: string;
                                livemode: boolean | null;
                                /** @enum {string|null} */
                                environment: "production" | "sandbox" | null;
                                userId: string | null;
                                providerCustomerId: string | null;
                                providerSubscriptionId: string | null;
                                providerPaymentIntentId: string | null;
                                providerInvoiceId: string | null;
                                /** @enum {string} */
                                status: "received" | "processing" | "processed" | "failed" | "ignored";
                                attempts: number;
                                lastError: string | null;
                                outcome: {
                                    code: string;
                                    detail: string | null;
                                } | null;
                                /** Format: date-time */
                                nextAttemptAt: string | null;
                                /** Format: date-time */
                                waitingSince: string | null;
                                deferrals: number;
                                replays: number;
                                /** Format: date-time */
                                replayedAt: string | null;
                                /** Format: date-time */
                                receivedAt: string;
                                /** Format: date-time */
                                processedAt: string | null;
                                /** Format: date-time */
                                updatedAt: string;
                                /** @enum {string} */
                                source: "webhook" | "backfill";
                                /** Format: date-time */
                                rawBodyPrunedAt: string | null;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description a bad filter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events/requeue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Requeue parked (failed) events matching a filter */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        provider?: "stripe" | "revenuecat" | "apple" | "google_play";
                        type?: string;
                        userId?: string;
                        outcome?: string;
                        /** @default 1000 */
                        limit?: number;
                    };
                };
            };
            responses: {
                /** @description what was requeued */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            requeued: number;
                            ids: number[];
                            enqueued: number;
                            alreadyQueued: number;
                            /** @description ids the queue could not take now: the relay hands them over */
                            deferred: number;
                        };
                    };
                };
                /** @description a bad filter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replay finished events matching a filter through the current handler */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        provider?: "stripe" | "revenuecat" | "apple" | "google_play";
                        type?: string;
                        userId?: string;
                        outcome?: string;
                        /** @default 1000 */
                        limit?: number;
                        /** @enum {string} */
                        status?: "processed" | "ignored";
                    };
                };
            };
            responses: {
                /** @description what was replayed */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            replayed: number;
                            ids: number[];
                            enqueued: number;
                            alreadyQueued: number;
                            /** @description ids the queue could not take now: the relay hands them over */
                            deferred: number;
                        };
                    };
                };
                /** @description a bad filter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One inbox event with its raw body */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the event */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: number;
                            /** @enum {string} */
                            provider: "stripe" | "revenuecat" | "apple" | "google_play";
                            providerEventId: string;
                            type: string;
                            livemode: boolean | null;
                            /** @enum {string|null} */
                            environment: "production" | "sandbox" | null;
                            userId: string | null;
                            providerCustomerId: string | null;
                            providerSubscriptionId: string | null;
                            providerPaymentIntentId: string | null;
                            providerInvoiceId: string | null;
                            /** @enum {string} */
                            status: "received" | "processing" | "processed" | "failed" | "ignored";
                            attempts: number;
                            lastError: string | null;
                            outcome: {
                                code: string;
                                detail: string | null;
                            } | null;
                            /** Format: date-time */
                            nextAttemptAt: string | null;
                            /** Format: date-time */
                            waitingSince: string | null;
                            deferrals: number;
                            replays: number;
                            /** Format: date-time */
                            replayedAt: string | null;
                            /** Format: date-time */
                            receivedAt: string;
                            /** Format: date-time */
                            processedAt: string | null;
                            /** Format: date-time */
                            updatedAt: string;
                            /** @enum {string} */
                            source: "webhook" | "backfill";
                            /** Format: date-time */
                            rawBodyPrunedAt: string | null;
                            /** @description null once retention pruned it */
                            rawBody: string | null;
                        };
                    };
                };
                /** @description an id that is not a positive whole number */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such event */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events/{id}/requeue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Requeue one parked event */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description requeued */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            requeued: number;
                            ids: number[];
                            enqueued: number;
                            alreadyQueued: number;
                            /** @description ids the queue could not take now: the relay hands them over */
                            deferred: number;
                        };
                    };
                };
                /** @description an id that is not a positive whole number, or a body with fields (this takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such event */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the event is not parked */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_parked";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/events/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replay one finished event */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description replayed */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            replayed: number;
                            ids: number[];
                            enqueued: number;
                            alreadyQueued: number;
                            /** @description ids the queue could not take now: the relay hands them over */
                            deferred: number;
                        };
                    };
                };
                /** @description an id that is not a positive whole number, or a body with fields (this takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such event */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the event is not finished, or lost its raw body to retention */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_finished";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/ledger/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Check the ledger's money invariants (read-only) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the verification (`ok: false` with what differs) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ok: boolean;
                            walletsChecked: number;
                            entriesChecked: number;
                            discrepancies: {
                                userId: string;
                                /** @enum {string} */
                                problem: "balance_differs_from_sum" | "broken_chain" | "lot_remaining_out_of_bounds" | "lots_differ_from_balance" | "draws_differ_from_amount" | "debt_differs_from_sources" | "debt_settlements_differ_from_entries";
                                detail: string;
                            }[];
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Everything support needs about one user, in one call */
        get: {
            parameters: {
                query?: {
                    eventLimit?: number;
                    ledgerLimit?: number;
                    studioLimit?: number;
                    historyLimit?: number;
                    holdLimit?: number;
                };
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the support view (an empty one for a user never seen) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            canonicalUserId: string;
                            wallet: {
                                balance: number;
                                held: number;
                                available: number;
                                lots: {
                                    [key: string]: unknown;
                                }[];
                                /** @description tokens owed (docs/debt.md) */
                                debt: number;
                                /** @description what made the debt and what settled it, oldest first */
                                debts: {
                                    [key: string]: unknown;
                                }[];
                            } & {
                                [key: string]: unknown;
                            };
                            holds: {
                                activeTotal: number;
                                items: {
                                    [key: string]: unknown;
                                }[];
                            } & {
                                [key: string]: unknown;
                            };
                            events: {
                                items: {
                                    [key: string]: unknown;
                                }[];
                                total: number;
                                truncated: boolean;
                            } & {
                                [key: string]: unknown;
                            };
                            ledger: {
                                entries: {
                                    [key: string]: unknown;
                                }[];
                                total: number;
                                truncated: boolean;
                            } & {
                                [key: string]: unknown;
                            };
                            subscription: {
                                [key: string]: unknown;
                            } | null;
                            payments: {
                                [key: string]: unknown;
                            }[];
                            refunds: {
                                [key: string]: unknown;
                            }[];
                            disputes: {
                                [key: string]: unknown;
                            }[];
                            topups: {
                                [key: string]: unknown;
                            }[];
                            installments: {
                                [key: string]: unknown;
                            }[];
                            studioRequests: {
                                items: {
                                    [key: string]: unknown;
                                }[];
                            } & {
                                [key: string]: unknown;
                            };
                            linkedIds: {
                                [key: string]: unknown;
                            }[];
                        };
                    };
                };
                /** @description a bad user id or limit */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Support's grant of promotional tokens (a reference is generated when none is given) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        amount: number;
                        reason?: string;
                        /** Format: date-time */
                        expiresAt?: string | null;
                        /** @description settle the wallet's debt first from this grant, as a paid credit does (default false: docs/debt.md) */
                        settlesDebt?: boolean;
                        reference?: string;
                        note?: string;
                    };
                };
            };
            responses: {
                /** @description the same grant was made before: nothing granted now, its first answer */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ledgerReference: string;
                            lotId: number;
                            amount: number;
                            /** Format: date-time */
                            expiresAt: string | null;
                            /** @description the balance right after the grant and what it settled (the same on every retry) */
                            balance: number;
                            /** @description what of the grant settled the wallet's debt (0 without settlesDebt) */
                            debtSettled: number;
                        };
                    };
                };
                /** @description granted: one promotional lot */
                201: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ledgerReference: string;
                            lotId: number;
                            amount: number;
                            /** Format: date-time */
                            expiresAt: string | null;
                            /** @description the balance right after the grant and what it settled (the same on every retry) */
                            balance: number;
                            /** @description what of the grant settled the wallet's debt (0 without settlesDebt) */
                            debtSettled: number;
                        };
                    };
                };
                /** @description a bad body or user id */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the reference granted another amount, expiry or user */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "reference_conflict";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/lots/{lotId}/void": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Take back what is left of one lot */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                    lotId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description voided (or voided before: the first void, `alreadyVoided: true`) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            lotId: number;
                            ledgerReference: string;
                            /** @description tokens taken back (0 when the lot had none left) */
                            taken: number;
                            balance: number;
                            alreadyVoided: boolean;
                        };
                    };
                };
                /** @description a bad user or lot id, or a body with fields (a void takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such lot for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/debt/forgive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Forgive a user's debt (all of it, or an amount), audited */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description tokens to forgive (default all of the debt); more than the debt forgives the debt */
                        amount?: number;
                        /** @description why: kept in the audit row */
                        note: string;
                    };
                };
            };
            responses: {
                /** @description forgiven (0 when the user owed nothing) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description tokens forgiven now (0 when there was no debt) */
                            forgiven: number;
                            /** @description the debt left */
                            debt: number;
                        };
                    };
                };
                /** @description a bad user id or body (the note is required) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/holds/{holdId}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Support's release of a hold (audited), answering as the app's release does */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                    holdId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description released (or released before: the first answer again) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            /** @enum {string} */
                            status: "released";
                            available: number;
                        };
                    };
                };
                /** @description a malformed hold id, or a body with fields (a release takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such hold for this user */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the hold was released, captured or has expired */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "hold_not_active";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's spend limits, what they spent this UTC day and month, and when each resets */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the limits */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description what active holds reserve: it counts in both periods until they end */
                            held: number;
                            /** @description the current UTC day */
                            daily: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                            /** @description the current calendar month (UTC) */
                            monthly: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        /** Support sets a user's own spend limits (audited; null: the default; absent: unchanged) */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description tokens per UTC day; null: the default (SPEND_LIMIT_DAILY); absent: unchanged */
                        daily?: number | null;
                        /** @description tokens per calendar month (UTC); null: the default (SPEND_LIMIT_MONTHLY); absent: unchanged */
                        monthly?: number | null;
                    };
                };
            };
            responses: {
                /** @description the limits as they are now */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description what active holds reserve: it counts in both periods until they end */
                            held: number;
                            /** @description the current UTC day */
                            daily: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                            /** @description the current calendar month (UTC) */
                            monthly: {
                                /** @description the limit in force; null: none */
                                limit: number | null;
                                /**
                                 * @description user: the user's own; default: SPEND_LIMIT_*; none
                                 * @enum {string}
                                 */
                                source: "user" | "default" | "none";
                                /** @description tokens spent in the current period (debits, usage, captures, studio) */
                                spent: number;
                                /** @description when the current period ends (ISO 8601, UTC) */
                                resetsAt: string;
                            };
                        };
                    };
                };
                /** @description a limit that is not a whole number of tokens, 0 or more, or null; an unknown field */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/auto-topup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's auto top-up settings, saved card and latest attempts */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the auto top-up and its attempts */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            autoTopup: {
                                userId: string;
                                enabled: boolean;
                                packId: string | null;
                                threshold: number | null;
                                monthlyLimit: number | null;
                                /**
                                 * @description why Tally turned it off: three failures in a row, or support; the app enabling it again turns it on
                                 * @enum {string|null}
                                 */
                                disabledReason: "failures" | "operator" | null;
                                failuresInARow: number;
                                /** @description the card setup_intent.succeeded saved; nothing is charged without one */
                                paymentMethod: {
                                    id: string;
                                    customerId: string;
                                    savedAt: string;
                                } | null;
                                /** @description top-ups this calendar month that count against monthlyLimit */
                                thisMonth: number;
                                inFlight: {
                                    id: string;
                                    /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                    reference: string;
                                    packId: string;
                                    /** @enum {string} */
                                    status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                    /** @description what the triggering spend left available */
                                    availableAfter: number;
                                    threshold: number;
                                    paymentIntentId: string | null;
                                    /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                    failureCode: string | null;
                                    /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                    requiresAction: boolean;
                                    tries: number;
                                    createdAt: string;
                                    finishedAt: string | null;
                                } | null;
                            };
                            /** @description newest first, at most 20 */
                            attempts: {
                                id: string;
                                /** @description `autotopup:{id}`: the top-up's reference and Stripe's idempotency key */
                                reference: string;
                                packId: string;
                                /** @enum {string} */
                                status: "pending" | "processing" | "succeeded" | "failed" | "canceled";
                                /** @description what the triggering spend left available */
                                availableAfter: number;
                                threshold: number;
                                paymentIntentId: string | null;
                                /** @description why it failed or was canceled (a decline code, authentication_required, …) */
                                failureCode: string | null;
                                /** @description the bank wants the customer on session (see wallet.auto_topup_failed) */
                                requiresAction: boolean;
                                tries: number;
                                createdAt: string;
                                finishedAt: string | null;
                            }[];
                        };
                    };
                };
                /** @description a bad request (the URL holds a NUL, a bad parameter) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/users/{userId}/auto-topup/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Turn a user's auto top-up off (audited); the app enabling it again turns it back on */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    userId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description why: kept in the audit row */
                        note: string;
                    };
                };
            };
            responses: {
                /** @description turned off (disabled false: it was off already) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            userId: string;
                            /** @description false when it was already off */
                            disabled: boolean;
                        };
                    };
                };
                /** @description a bad user id or body (the note is required) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/reconcile/stripe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Compare Stripe's Events API with the inbox and backfill what is missing */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @default 3 */
                        windowDays?: number;
                        /** @default false */
                        dryRun?: boolean;
                    };
                };
            };
            responses: {
                /** @description the report (`ok: false` when anything was found) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ok: boolean;
                            dryRun: boolean;
                            windowDays: number;
                            /** Format: date-time */
                            windowStart: string;
                            stripeEvents: number;
                            truncated: boolean;
                            missingEvents: {
                                eventId: string;
                                type: string;
                                /** Format: date-time */
                                createdAt: string | null;
                                /** @enum {string} */
                                result: "ingested" | "duplicate" | "would_ingest" | "failed";
                                inboxEventId: number | null;
                            }[];
                            eventsWithoutRows: {
                                inboxEventId: number;
                                eventId: string;
                                type: string;
                                outcomeCode: string | null;
                                missing: string[];
                            }[];
                            ledgerRowsWithoutEvent: {
                                ledgerEntryId: number;
                                reference: string;
                                userId: string;
                                amount: number;
                                /** Format: date-time */
                                createdAt: string;
                            }[];
                        };
                    };
                };
                /** @description a bad body */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Stripe unreachable, rate limiting or refusing the list */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "stripe_unavailable" | "stripe_request_failed" | "retry_later";
                                message: string;
                            };
                        };
                    };
                };
                /** @description STRIPE_SECRET_KEY is not set */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/reconcile/apple": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Compare Apple's notification history with the inbox and record what is missing */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @default 3 */
                        windowDays?: number;
                        /** @default false */
                        dryRun?: boolean;
                    };
                };
            };
            responses: {
                /** @description the report (`ok: false` when a notification was missing or failed verification) */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ok: boolean;
                            dryRun: boolean;
                            windowDays: number;
                            /** Format: date-time */
                            windowStart: string;
                            environments: ("production" | "sandbox")[];
                            truncated: boolean;
                            seen: number;
                            alreadyStored: number;
                            recorded: number;
                            refused: number;
                            missingNotifications: {
                                notificationUUID: string;
                                type: string;
                                /** @enum {string} */
                                environment: "production" | "sandbox";
                                /** Format: date-time */
                                signedDate: string | null;
                                /** @enum {string} */
                                result: "ingested" | "duplicate" | "would_ingest" | "failed";
                                inboxEventId: number | null;
                            }[];
                            refusedNotifications: {
                                /** @enum {string} */
                                listedBy: "production" | "sandbox";
                                /** @enum {string} */
                                code: "invalid_event" | "invalid_signature" | "wrong_app";
                                reason: string;
                            }[];
                        };
                    };
                };
                /** @description a bad body */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description Apple unreachable, rate limiting or refusing the request */
                502: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "apple_unavailable" | "apple_rejected" | "retry_later";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the App Store Server API or the notification check (APPLE_*) is not set */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_configured" | "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/app-webhooks/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Outbound app webhook messages, newest first */
        get: {
            parameters: {
                query?: {
                    userId?: string;
                    type?: "wallet.credited" | "wallet.debited" | "wallet.balance_low" | "subscription.updated" | "studio.request.completed" | "studio.request.failed" | "wallet.credits_expiring" | "wallet.credits_expired" | "wallet.debt_changed" | "wallet.auto_topup_failed" | "wallet.auto_topup_disabled";
                    status?: "pending" | "delivered" | "failed";
                    limit?: number;
                    cursor?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description a page of messages */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            messages: {
                                /** @description the webhook-id: msg_ and 32 hex digits */
                                id: string;
                                /** @enum {string} */
                                type: "wallet.credited" | "wallet.debited" | "wallet.balance_low" | "subscription.updated" | "studio.request.completed" | "studio.request.failed" | "wallet.credits_expiring" | "wallet.credits_expired" | "wallet.debt_changed" | "wallet.auto_topup_failed" | "wallet.auto_topup_disabled";
                                userId: string;
                                /** @enum {string} */
                                status: "pending" | "delivered" | "failed";
                                attempts: number;
                                lastStatusCode: number | null;
                                lastError: string | null;
                                /** Format: date-time */
                                nextAttemptAt: string | null;
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: date-time */
                                deliveredAt: string | null;
                            }[];
                            nextCursor: string | null;
                            /**
                             * @description not_configured: APP_WEBHOOK_URL is not set, so pending messages wait for it rather than for a retry
                             * @enum {string}
                             */
                            delivery: "on" | "not_configured";
                        };
                    };
                };
                /** @description a bad filter */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/app-webhooks/messages/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One message, with the body as sent */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the message */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description the webhook-id: msg_ and 32 hex digits */
                            id: string;
                            /** @enum {string} */
                            type: "wallet.credited" | "wallet.debited" | "wallet.balance_low" | "subscription.updated" | "studio.request.completed" | "studio.request.failed" | "wallet.credits_expiring" | "wallet.credits_expired" | "wallet.debt_changed" | "wallet.auto_topup_failed" | "wallet.auto_topup_disabled";
                            userId: string;
                            /** @enum {string} */
                            status: "pending" | "delivered" | "failed";
                            attempts: number;
                            lastStatusCode: number | null;
                            lastError: string | null;
                            /** Format: date-time */
                            nextAttemptAt: string | null;
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: date-time */
                            deliveredAt: string | null;
                            /** @description the body as sent, byte for byte (what the signature covers) */
                            body: string;
                            /**
                             * @description not_configured: APP_WEBHOOK_URL is not set, so pending messages wait for it rather than for a retry
                             * @enum {string}
                             */
                            delivery: "on" | "not_configured";
                        };
                    };
                };
                /** @description an id that is not msg_ and 32 hex digits */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such message */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/app-webhooks/messages/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a delivered or failed message again */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description redelivering */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {number} */
                            redelivered: 1;
                            message: {
                                /** @description the webhook-id: msg_ and 32 hex digits */
                                id: string;
                                /** @enum {string} */
                                type: "wallet.credited" | "wallet.debited" | "wallet.balance_low" | "subscription.updated" | "studio.request.completed" | "studio.request.failed" | "wallet.credits_expiring" | "wallet.credits_expired" | "wallet.debt_changed" | "wallet.auto_topup_failed" | "wallet.auto_topup_disabled";
                                userId: string;
                                /** @enum {string} */
                                status: "pending" | "delivered" | "failed";
                                attempts: number;
                                lastStatusCode: number | null;
                                lastError: string | null;
                                /** Format: date-time */
                                nextAttemptAt: string | null;
                                /** Format: date-time */
                                createdAt: string;
                                /** Format: date-time */
                                deliveredAt: string | null;
                            };
                            enqueued: number;
                            alreadyQueued: number;
                            deferred: number;
                        };
                    };
                };
                /** @description an id that is not msg_ and 32 hex digits, or a body with fields (this takes none) */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request" | "malformed_json" | "unsupported_encoding" | "request_aborted" | "invalid_content_length";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no such message */
                404: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_found";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the message is still pending */
                409: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "not_finished";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body over 100 kB */
                413: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "payload_too_large";
                                message: string;
                            };
                        };
                    };
                };
                /** @description a body sent with a Content-Type other than application/json */
                415: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unsupported_media_type";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable" | "audit_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Uses per UTC day and feature across users, with the distinct users of each */
        get: {
            parameters: {
                query: {
                    from: string;
                    to: string;
                    feature?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description the days with uses */
                200: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            days: {
                                /** @description the UTC day */
                                date: string;
                                feature: string;
                                variant: string | null;
                                /** @description uses that succeeded (usages, captured holds by estimate, studio requests that did not fail) */
                                uses: number;
                                freeUses: number;
                                /** @description each meter's quantities summed */
                                quantities: {
                                    [key: string]: number;
                                };
                                /** @description tokens charged */
                                tokens: number;
                                /** @description the admin report: distinct users */
                                users?: number;
                            }[];
                        };
                    };
                };
                /** @description a bad date, from after to, or more than 366 days */
                400: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "invalid_request";
                                message: string;
                            };
                        };
                    };
                };
                /** @description no valid admin key as a bearer token */
                401: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "unauthorized";
                                message: string;
                            };
                        };
                    };
                };
                /** @description this client failed authentication too often (API_FAILED_AUTH_*); retry later */
                429: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "too_many_failed_attempts";
                                message: string;
                            };
                        };
                    };
                };
                /** @description an unexpected failure (logged with the Request-Id) */
                500: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "internal_error";
                                message: string;
                            };
                        };
                    };
                };
                /** @description the database cannot be reached right now; retry later */
                503: {
                    headers: {
                        /** @description this request's id: the caller's X-Request-Id (1 to 128 visible characters) or one made (req_…) */
                        "Request-Id": string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: {
                                /** @enum {string} */
                                code: "database_unavailable";
                                message: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "wallet.credited": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.credited: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.credited";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            reference: string;
                            amount: number;
                            balanceBefore: number;
                            balanceAfter: number;
                            reason: string;
                            /** Format: date-time */
                            createdAt: string;
                            feature?: string;
                            variant?: string | null;
                            quantities?: {
                                [key: string]: number;
                            };
                            cost?: number;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.debited": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.debited: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.debited";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            reference: string;
                            amount: number;
                            balanceBefore: number;
                            balanceAfter: number;
                            reason: string;
                            /** Format: date-time */
                            createdAt: string;
                            feature?: string;
                            variant?: string | null;
                            quantities?: {
                                [key: string]: number;
                            };
                            cost?: number;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.balance_low": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.balance_low: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.balance_low";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            balance: number;
                            threshold: number;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "subscription.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** subscription.updated: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "subscription.updated";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            planId: string | null;
                            /** @enum {string} */
                            status: "active" | "inactive";
                            expiresAt: string | null;
                            store: string | null;
                            autoRenew: boolean;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "studio.request.completed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** studio.request.completed: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "studio.request.completed";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            id: string;
                            kind: string;
                            /** @enum {string} */
                            status: "completed" | "failed";
                            tokensCharged: number;
                            refunded: boolean;
                            error: {
                                code: string | null;
                                message: string | null;
                            } | null;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "studio.request.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** studio.request.failed: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "studio.request.failed";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            id: string;
                            kind: string;
                            /** @enum {string} */
                            status: "completed" | "failed";
                            tokensCharged: number;
                            refunded: boolean;
                            error: {
                                code: string | null;
                                message: string | null;
                            } | null;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.credits_expiring": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.credits_expiring: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.credits_expiring";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            lotId: number;
                            remaining: number;
                            /** Format: date-time */
                            expiresAt: string;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.credits_expired": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.credits_expired: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.credits_expired";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            lotId: number;
                            amount: number;
                            balanceAfter: number;
                            reference: string;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.debt_changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.debt_changed: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.debt_changed";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            debt: number;
                            change: number;
                            reason: string;
                            reference: string | null;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.auto_topup_failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.auto_topup_failed: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.auto_topup_failed";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            attemptId: string;
                            code: string;
                            requiresAction: boolean;
                            clientSecret: string | null;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "wallet.auto_topup_disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet.auto_topup_disabled: POSTed to APP_WEBHOOK_URL (Standard Webhooks; docs/app-webhooks.md) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description msg_ and 32 hex digits, the same on every attempt of a message */
                    "webhook-id": string;
                    /** @description Unix seconds of this attempt */
                    "webhook-timestamp": string;
                    /** @description one v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> per secret, space separated */
                    "webhook-signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        type: "wallet.auto_topup_disabled";
                        /**
                         * Format: date-time
                         * @description the ISO time of the change (the same on every attempt)
                         */
                        timestamp: string;
                        data: {
                            userId: string;
                            /** @enum {string} */
                            reason: "failures" | "operator";
                            failuresInARow: number;
                        };
                    };
                };
            };
            responses: {
                /** @description delivered: any 2xx answer ends the retries */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description not delivered: retried with backoff, then marked failed */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
