// multipart/form-data requests read with @fastify/multipart: file parts stream straight into
// the blob store, text fields are collected. A file name is read as busboy reads it: an RFC 7230
// quoted-string (`\"` and `\\` are escapes) or an RFC 5987 `filename*`; nothing is percent-decoded,
// so a name holding `%22` stays `%22` (docs/emulator.md, "File names in upload forms"). Parts may come in any order, so a route checks
// the fields only once the whole form (files included) has been read.
import type { FastifyRequest } from 'fastify';
import { type BlobStore, type EmulatorModes, type Gate, HttpError } from '../context.js';

/** Registration limits: files are unbounded (uploads of many GiB stream through), everything else small. */
export const MULTIPART_LIMITS = {
  fileSize: Number.MAX_SAFE_INTEGER,
  fieldSize: 1024 * 1024,
  fieldNameSize: 200,
  parts: 100,
  headerPairs: 100,
} as const;

export interface StoredFile {
  blobKey: string;
  fileName: string;
  contentType: string;
  size: number;
}

export interface ReceivedForm {
  /** Text fields; the last of repeated fields wins. */
  fields: Record<string, string>;
  /** Stored files by field name. */
  files: Record<string, StoredFile>;
}

/**
 * Reads the whole form. `fileFields` maps each accepted file field to the blob key its content is
 * stored under; any other file part, or a second one of the same field, is a 400. On failure every
 * stored file is deleted again and the error is a 400 HttpError (unless the store itself failed).
 * A form whose state was reset or restored while it streamed in is a 503 and keeps nothing
 * (src/emulator/http/state-gate.ts).
 */
export async function readForm(req: FastifyRequest, into: { blobs: BlobStore; gate: Gate }, fileFields: Record<string, string>, order: EmulatorModes['formOrder'] = 'any'): Promise<ReceivedForm> {
  if (!req.isMultipart()) throw malformed('The body must be multipart/form-data.');
  const { blobs, gate } = into;
  const began = gate.now;
  const form: ReceivedForm = { fields: Object.create(null) as Record<string, string>, files: {} };
  let afterFile = false;
  try {
    for await (const part of req.parts()) {
      if (!part.fieldname) throw malformed('A part has no name.');
      if (part.type === 'file') {
        const blobKey = fileFields[part.fieldname];
        if (blobKey === undefined || form.files[part.fieldname]) {
          part.file.resume();
          throw malformed(`Unexpected file part "${part.fieldname}".`);
        }
        gate.check(began);
        const release = gate.track(part.file);
        let size: number;
        try {
          size = await blobs.put(blobKey, part.file);
        } finally {
          release();
        }
        form.files[part.fieldname] = { blobKey, fileName: part.filename, contentType: part.mimetype, size };
        afterFile = true;
      } else if (afterFile && order === 'fields-first') {
        // A service that reads its fields before the file never sees those after it.
        continue;
      } else {
        if (part.valueTruncated || part.fieldnameTruncated) throw malformed(`Field "${part.fieldname}" is larger than ${MULTIPART_LIMITS.fieldSize} bytes.`);
        // A field sent as application/json arrives parsed; the routes read fields as text.
        form.fields[part.fieldname] = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
      }
    }
    // The route writes what the form holds next, synchronously: into the state the form began in, or nowhere.
    gate.check(began);
  } catch (error) {
    discardForm(blobs, form);
    // A body ended by a reset fails as the reset says, whatever the parser made of its end.
    gate.check(began);
    throw asHttpError(error);
  }
  return form;
}

/** Deletes the form's stored files (when a route rejects the form after reading it). */
export function discardForm(blobs: BlobStore, form: ReceivedForm): void {
  for (const file of Object.values(form.files)) blobs.delete(file.blobKey);
}

export function malformed(detail: string): HttpError {
  return new HttpError(400, 'Bad Request', detail);
}

function asHttpError(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  // A failing disk (ENOSPC, EACCES...) is the emulator's fault, not the client's.
  if ((error as NodeJS.ErrnoException).syscall) return error;
  return malformed(`Malformed multipart body: ${(error as Error).message}`);
}
