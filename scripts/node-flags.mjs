// Node flags each Tally process runs with, the one list every launcher reads: `npm start` and
// `start:<name>` (scripts/stack.mjs, scripts/run.mjs), the bench, and — checked by
// test/infra — the Kubernetes manifests and docker-compose.yml.
//
// ingest: 16 MB young-generation semi-spaces (stated explicitly) and a heap cap of 192 MB, half
// the pod's 384 MiB limit (the rest: the node binary's text, malloc's heap, the young
// generation), so V8 collects before the cgroup would kill the pod; garbage
// collected on the main thread alone (--single-threaded-gc). Why those values (and why the
// semi-spaces are no longer 4 MB): infra/README.md, "How the processes scale".
// The list itself is node-flags.json, so the infra tests (TypeScript) read the same file.
import { readFileSync } from 'node:fs';

export const nodeFlags = JSON.parse(readFileSync(new URL('./node-flags.json', import.meta.url), 'utf8'));
