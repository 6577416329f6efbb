// Short-lived signed URLs for blobs: anyone holding the URL may download until `exp`,
// without a bearer token (like a cloud storage SAS URL).
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedBlobRequest {
  key: string;
  expiresAtSeconds: number;
  contentType: string;
}

function signature(request: SignedBlobRequest, secret: Buffer): string {
  return createHmac('sha256', secret)
    .update(`${request.key}\n${request.expiresAtSeconds}\n${request.contentType}`)
    .digest('base64url');
}

export function signedBlobPath(request: SignedBlobRequest, secret: Buffer): string {
  const query = new URLSearchParams({
    exp: String(request.expiresAtSeconds),
    ct: request.contentType,
    sig: signature(request, secret),
  });
  return `/_blobs/${request.key}?${query.toString()}`;
}

export function signatureMatches(request: SignedBlobRequest, given: string, secret: Buffer): boolean {
  const expected = Buffer.from(signature(request, secret));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
