// Throwaway TLS certificates for tests, made with the system's openssl: self-signed, one day long,
// naming one IP address, so that a server on loopback can be trusted (or not) exactly.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** A certificate for `ip` and its private key, written into `dir` as `name`.pem and `name`.key; their paths. */
export function throwawayCertificate(dir: string, ip = '127.0.0.1', name = ip): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${ip}`, '-addext', `subjectAltName=IP:${ip}`], { stdio: 'ignore' });
  return { cert, key };
}
