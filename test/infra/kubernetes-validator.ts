// Validates Kubernetes manifests offline, document by document, by apiVersion and kind:
//  1. the JSON schemas that `kubernetes-models` (Kubernetes API, OpenAPI-generated) and
//     `@kubernetes-models/keda` (KEDA's CRDs) compile into each model's validate(): required
//     fields, types, enums and formats;
//  2. unknown fields, which those schemas let through (they carry no additionalProperties: false):
//     every document is type-checked by the TypeScript compiler against the same packages'
//     interfaces, whose excess-property check rejects a misspelt or misplaced key;
//  3. Kustomization and kustomize Component files, which no npm package models, against the
//     minimal hand-written schema below (only the fields these manifests use, no others).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import Ajv from 'ajv';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

export type Manifest = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  [key: string]: unknown;
};
/** A document and where it came from, for messages. */
export type Located = { file: string; index: number; doc: Manifest };

type ModelClass = new (data: never) => { validate(): void };
/** apiVersion → the module of kubernetes-models that holds its kinds (for the type check too). */
const modelModules: Record<string, { module: string; exports: Record<string, unknown> }> = {
  v1: { module: 'kubernetes-models/v1', exports: coreV1 },
  'apps/v1': { module: 'kubernetes-models/apps/v1', exports: appsV1 },
  'batch/v1': { module: 'kubernetes-models/batch/v1', exports: batchV1 },
  'policy/v1': { module: 'kubernetes-models/policy/v1', exports: policyV1 },
  'autoscaling/v2': { module: 'kubernetes-models/autoscaling/v2', exports: autoscalingV2 },
  'keda.sh/v1alpha1': { module: '@kubernetes-models/keda/keda.sh/v1alpha1', exports: keda },
};

const stringList = { type: 'array', items: { type: 'string', minLength: 1 } };
const labelsEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['pairs'],
  properties: {
    pairs: { type: 'object', additionalProperties: { type: 'string' } },
    includeSelectors: { type: 'boolean' },
    includeTemplates: { type: 'boolean' },
  },
};
const imagesEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string' },
    newName: { type: 'string' },
    newTag: { type: 'string' },
    digest: { type: 'string' },
  },
};
const configMapGenerator = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string' },
    behavior: { enum: ['create', 'replace', 'merge'] },
    literals: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_.-]*=' } },
    files: stringList,
    envs: stringList,
  },
};
/** kustomize's Kustomization (v1beta1) and Component (v1alpha1), limited to what we use. */
const kustomizeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind'],
  properties: {
    apiVersion: { enum: ['kustomize.config.k8s.io/v1beta1', 'kustomize.config.k8s.io/v1alpha1'] },
    kind: { enum: ['Kustomization', 'Component'] },
    namespace: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    resources: stringList,
    components: stringList,
    labels: { type: 'array', items: labelsEntry },
    images: { type: 'array', items: imagesEntry },
    configMapGenerator: { type: 'array', items: configMapGenerator },
  },
  // A Component is v1alpha1, a Kustomization v1beta1.
  oneOf: [
    { properties: { kind: { const: 'Component' }, apiVersion: { const: 'kustomize.config.k8s.io/v1alpha1' } } },
    { properties: { kind: { const: 'Kustomization' }, apiVersion: { const: 'kustomize.config.k8s.io/v1beta1' } } },
  ],
};
const validateKustomize = new Ajv({ allErrors: true }).compile(kustomizeSchema);

function where(item: Located): string {
  return `${item.file}#${item.index} ${item.doc.kind ?? '?'}/${item.doc.metadata?.name ?? '?'}`;
}

/** Schema problems of one document (steps 1 and 3 above). */
function schemaProblems(item: Located): string[] {
  const { apiVersion = '', kind = '' } = item.doc;
  if (apiVersion.startsWith('kustomize.config.k8s.io/')) {
    if (validateKustomize(item.doc)) return [];
    return (validateKustomize.errors ?? []).map((e) => `${where(item)}: ${e.instancePath || '/'} ${e.message}`);
  }
  const Model = modelModules[apiVersion]?.exports[kind] as ModelClass | undefined;
  if (typeof Model !== 'function') return [`${where(item)}: no schema for ${apiVersion} ${kind}`];
  try {
    new Model(item.doc as never).validate();
    return [];
  } catch (error) {
    return [`${where(item)}: ${(error as Error).message}`];
  }
}

/** Reused by the next run, so the library's declaration files are parsed once. */
let previousProgram: ts.Program | undefined;

/** Unknown fields (and type errors) found by the TypeScript compiler (step 2 above). */
function typeProblems(items: Located[]): string[] {
  const typed = items.filter((item) => {
    const entry = modelModules[item.doc.apiVersion ?? ''];
    return entry && typeof entry.exports[item.doc.kind ?? ''] === 'function';
  });
  if (typed.length === 0) return [];
  // One line per import, then each document as a typed constant; `owners[line]` names the
  // document a diagnostic's line belongs to.
  const lines: string[] = [];
  const owners: Located[] = [];
  typed.forEach((item, i) => {
    const module = modelModules[item.doc.apiVersion ?? '']?.module;
    lines.push(`import type { I${item.doc.kind} as T${i} } from '${module}/${item.doc.kind}';`);
    owners.push(item);
  });
  typed.forEach((item, i) => {
    for (const line of `export const d${i}: T${i} = ${JSON.stringify(item.doc, null, 1)};`.split('\n')) {
      lines.push(line);
      owners.push(item);
    }
  });
  const source = lines.join('\n');
  // A virtual file beside this one, so that module resolution finds test/node_modules.
  const fileName = path.join(__dirname, '__manifests__.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === fileName ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host, previousProgram);
  previousProgram = program;
  const sourceFile = program.getSourceFile(fileName);
  return ts.getPreEmitDiagnostics(program, sourceFile).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    const owner = owners[line];
    return `${owner ? where(owner) : fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/** Every problem in these documents; empty when all are valid. */
export function kubernetesProblems(items: Located[]): string[] {
  return [...items.flatMap(schemaProblems), ...typeProblems(items)];
}

/** Every YAML document under `dir` (recursively), with its path relative to `root`. */
export function readManifests(root: string, dir: string): Located[] {
  const files = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))
    .sort();
  return files.flatMap((name) => {
    const file = path.join(dir, name);
    return parseAllDocuments(readFileSync(path.join(root, file), 'utf8')).flatMap((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file}#${index}: ${document.errors[0]?.message}`);
      const doc = document.toJS() as Manifest | null;
      return doc === null ? [] : [{ file, index, doc }];
    });
  });
}
