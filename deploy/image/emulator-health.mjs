// The emulator image's HEALTHCHECK (Dockerfile, target `emulator`): exit 0 when the control API's
// health route answers 200, 1 otherwise. Node alone, as the image has no curl. The address is the
// first argument, or FERRY_EMULATOR_HEALTH_URL, or the image's own port.
const url = process.argv[2] ?? process.env.FERRY_EMULATOR_HEALTH_URL ?? 'http://127.0.0.1:4010/_emulator/health';
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.body?.cancel();
  process.exitCode = res.status === 200 ? 0 : 1;
  if (res.status !== 200) console.error(`${url}: ${res.status}`);
} catch (error) {
  console.error(`${url}: ${error.cause?.code ?? error.message}`);
  process.exitCode = 1;
}
