// The plainest undici download, for the big-file bench's baseline: each `url out` pair of the
// arguments requested with the bearer token and piped to its file, one after the other.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';

const [bearer, ...pairs] = process.argv.slice(2);
for (let i = 0; i + 1 < pairs.length; i += 2) {
  const res = await request(pairs[i], { headers: { authorization: `Bearer ${bearer}` } });
  if (res.statusCode !== 200) throw new Error(`${pairs[i]} answered ${res.statusCode}`);
  await pipeline(res.body, createWriteStream(pairs[i + 1]));
}
