// Node flags each Tally process runs with, the one list every launcher reads: `npm start` and
// `start:<name>` (scripts/stack.mjs, scripts/run.mjs), the bench, and — checked by
// test/infra — the Kubernetes manifests and docker-compose.yml.
//
// ingest: a young generation of 4 MB semi-spaces instead of V8's default 16 MB. Ingest's
// garbage is short-lived per-request buffers; smaller semi-spaces keep its peak RSS under
// 200 MB at 50 concurrent connections (214 MB before, bench/README.md) with more, cheaper
// scavenges and no measurable throughput cost in the bench.
// The list itself is node-flags.json, so the infra tests (TypeScript) read the same file.
import { readFileSync } from 'node:fs';

export const nodeFlags = JSON.parse(readFileSync(new URL('./node-flags.json', import.meta.url), 'utf8'));
