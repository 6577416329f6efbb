// Minimal HS256 JWTs: enough to give clients real bearer tokens with `exp`,
// and to reject forged, malformed and expired ones.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TokenClaims {
  sub: string;
  client_id: string;
  tenant: string;
  permissions: string[];
  aud: string;
  iat: number;
  exp: number;
}

export type VerifyResult = { ok: true; claims: TokenClaims } | { ok: false; reason: string };

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}

function signature(signingInput: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(signingInput).digest();
}

export function signToken(claims: TokenClaims, key: Buffer): string {
  const signingInput = `${HEADER}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${signature(signingInput, key).toString('base64url')}`;
}

export function verifyToken(token: string, key: Buffer, audience: string, nowSeconds: number): VerifyResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'The token is not a JWT.' };
  const [header, payload, sig] = parts as [string, string, string];
  const expected = signature(`${header}.${payload}`, key);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'The token signature is invalid.' };
  }
  let claims: TokenClaims;
  try {
    const alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg;
    if (alg !== 'HS256') return { ok: false, reason: 'The token algorithm is not HS256.' };
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
  } catch {
    return { ok: false, reason: 'The token is malformed.' };
  }
  if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds) return { ok: false, reason: 'The token has expired.' };
  if (claims.aud !== audience) return { ok: false, reason: 'The token audience is not accepted.' };
  if (typeof claims.tenant !== 'string' || !Array.isArray(claims.permissions)) {
    return { ok: false, reason: 'The token lacks tenant or permissions claims.' };
  }
  return { ok: true, claims };
}
