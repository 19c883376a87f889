#!/usr/bin/env node
/**
 * A move hint from the Cirulla engine over gRPC: a minimal Node.js client of
 * `cirulla.v1.EngineService.GetHint`.
 *
 *   node hint.js [ADDRESS] [REQUEST_JSON]
 *
 * ADDRESS defaults to 127.0.0.1:50051 and REQUEST_JSON to ../view.json (next
 * to this folder): a `cirulla.v1.GetHintRequest` in protobuf's JSON mapping
 * (camelCase field names, 64-bit integers as strings, enums by name). If
 * CIRULLA_TOKEN is set, the call carries `authorization: Bearer <token>`.
 *
 * On success it prints one line per legal move, best first (the move, its
 * expected points ± standard error, the chance that the next player sweeps
 * the table), then `best: <move>`, and exits 0. On a failed call it prints
 * `error: <CODE>: <message>` to stderr, then the `google.rpc.Status` details
 * the server attached (`  <field>: <problem>` per bad field, `  retry after
 * <n> s`), and exits 1. Bad usage (too many arguments, a file that is not a
 * GetHintRequest) exits 2.
 *
 * ADDRESS may name several replicas: `dns:///cirulla-server.NAMESPACE.svc:50051`
 * (a Kubernetes headless Service) or `ipv4:10.0.0.1:50051,10.0.0.2:50051`. The
 * channel uses the service config in ../service_config.json: calls spread
 * round_robin over the replicas, wait for one to be ready, and are retried on
 * another when one is going away (UNAVAILABLE) or busy (RESOURCE_EXHAUSTED,
 * after the delay the server asks for).
 *
 * The schema is read at run time from the repository's proto/ folder; the
 * google.rpc error protos come from the google-proto-files package.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');
const googleProtoFiles = require('google-proto-files');

const DEFAULT_ADDRESS = '127.0.0.1:50051';
const DEFAULT_REQUEST = path.join(__dirname, '../view.json');
const SERVICE_CONFIG = fs.readFileSync(path.join(__dirname, '../service_config.json'), 'utf8');
const DEADLINE_MS = 10000;

// Where the imports are found: "cirulla/v1/..." under the repository's proto/,
// "google/rpc/..." and "google/protobuf/..." (bounds.proto imports
// descriptor.proto) in google-proto-files, whose getProtoPath() is <package>/google.
const INCLUDE_DIRS = [path.join(__dirname, '../../proto'), path.dirname(googleProtoFiles.getProtoPath())];

// The gRPC client: proto-loader turns the schema into a service constructor.
const packageDefinition = protoLoader.loadSync('cirulla/v1/engine_service.proto', {
  includeDirs: INCLUDE_DIRS,
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { EngineService } = grpc.loadPackageDefinition(packageDefinition).cirulla.v1;

// Message reflection (protobufjs), from the same folders: to check the request
// file's field names, and to decode a failed call's google.rpc.Status.
const types = new protobuf.Root();
types.resolvePath = (origin, target) =>
  INCLUDE_DIRS.map((dir) => path.join(dir, target)).find((file) => fs.existsSync(file)) || target;
types.loadSync(['cirulla/v1/engine_service.proto', 'google/rpc/status.proto',
  'google/rpc/error_details.proto']);

class UsageError extends Error {}

/** The names in `value` that are no field of `type` (protobufjs's
 * fromObject would silently drop them: a typo would go unnoticed). */
function unknownFields(type, value, where = '') {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const unknown = [];
  for (const [key, item] of Object.entries(value)) {
    const field = type.fields[key];
    if (!field) {
      unknown.push(where + key);
      continue;
    }
    const fieldType = field.resolve().resolvedType;
    if (!(fieldType instanceof protobuf.Type)) continue;
    const items = field.repeated && Array.isArray(item) ? item : [item];
    items.forEach((element, i) => {
      const at = field.repeated ? `${where}${key}[${i}].` : `${where}${key}.`;
      unknown.push(...unknownFields(fieldType, element, at));
    });
  }
  return unknown;
}

/** The GetHintRequest in `file`, as the plain object grpc-js sends. */
function readRequest(file) {
  let text;
  let request;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${e.message}`);
  }
  try {
    request = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: not valid JSON: ${e.message}`);
  }
  const GetHintRequest = types.lookupType('cirulla.v1.GetHintRequest');
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new UsageError(`${file}: not a cirulla.v1.GetHintRequest (a JSON object)`);
  }
  const unknown = unknownFields(GetHintRequest, request);
  if (unknown.length) {
    throw new UsageError(`${file}: not a cirulla.v1.GetHintRequest: unknown field(s) ${unknown.join(', ')}`);
  }
  try {
    GetHintRequest.fromObject(request);   // what grpc-js does before sending
  } catch (e) {
    throw new UsageError(`${file}: not a cirulla.v1.GetHintRequest: ${e.message}`);
  }
  return request;
}

const signed = (x) => (x < 0 ? '' : '+') + x.toFixed(2);

/** One line per move, best first, then the recommended move. */
function printHint(hint) {
  for (const m of hint.moves) {
    console.log(`${m.move.text.padEnd(16)} ${signed(m.expectedPoints)} ± ${m.expectedPointsStderr.toFixed(2)}` +
      `  scopa risk ${(m.scopaRisk * 100).toFixed(0)}%`);
  }
  console.log(`best: ${hint.best.text}`);
}

/** The details of a failed call's google.rpc.Status (the grpc-status-details-bin
 * trailer), each as [its type's full name, the message as a plain object]. */
function statusDetails(error) {
  const [bin] = error.metadata ? error.metadata.get('grpc-status-details-bin') : [];
  if (!bin) return [];
  const status = types.lookupType('google.rpc.Status').decode(bin);
  return status.details.map((any) => {
    const name = any.type_url.split('/').pop();       // type.googleapis.com/google.rpc.BadRequest
    const type = types.lookup(name);
    if (!(type instanceof protobuf.Type)) return [name, null];   // a detail this client does not know
    return [name, type.toObject(type.decode(any.value), { longs: Number, defaults: true })];
  });
}

/** The lines the status details of a failed call add to its message. */
function detailLines(error) {
  const lines = [];
  for (const [name, detail] of statusDetails(error)) {
    if (name === 'google.rpc.BadRequest') {
      for (const v of detail.fieldViolations) lines.push(`  ${v.field}: ${v.description}`);
    } else if (name === 'google.rpc.RetryInfo' && detail.retryDelay) {
      const { seconds = 0, nanos = 0 } = detail.retryDelay;
      lines.push(`  retry after ${(seconds + nanos / 1e9).toFixed(3).replace(/\.?0+$/, '')} s`);
    }
  }
  return lines;
}

function main(args) {
  if (args.length > 2 || args.some((a) => a === '-h' || a === '--help')) {
    throw new UsageError('usage: node hint.js [ADDRESS] [REQUEST_JSON]');
  }
  const [address = DEFAULT_ADDRESS, file = DEFAULT_REQUEST] = args;
  const request = readRequest(file);

  const metadata = new grpc.Metadata();
  if (process.env.CIRULLA_TOKEN) metadata.add('authorization', `Bearer ${process.env.CIRULLA_TOKEN}`);

  const client = new EngineService(address, grpc.credentials.createInsecure(),
    { 'grpc.service_config': SERVICE_CONFIG });
  client.GetHint(request, metadata, { deadline: Date.now() + DEADLINE_MS }, (err, response) => {
    client.close();
    if (err) {
      console.error(`error: ${grpc.status[err.code] || err.code}: ${err.details}`);
      for (const line of detailLines(err)) console.error(line);
      process.exitCode = 1;
      return;
    }
    printHint(response.hint);
  });
}

try {
  main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(e.message);
  process.exitCode = 2;
}
