// Writes a zip of N empty stored entries in folders of 1,000 (d<k>/f<j>/e<i>), streaming, with a
// zip64 end record past 65,535 entries. Written by hand because archiver queues every entry it is
// given and ran out of a 4 GiB heap at about a million; the central directory goes to a second
// file as the entries are written and is appended at the end, so this process stays small too.
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';

const [path, countText] = process.argv.slice(2);
const count = Number(countText);
const data = createWriteStream(path);
const directoryPath = `${path}.cd`;
const directory = createWriteStream(directoryPath);
let offset = 0;
let directorySize = 0;

async function write(stream, buffer) {
  if (!stream.write(buffer)) await once(stream, 'drain');
}

for (let i = 0; i < count; i++) {
  const name = Buffer.from(`d${Math.floor(i / 100_000)}/f${Math.floor(i / 1000)}/e${i}`);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x800, 6);
  local.writeUInt16LE(name.length, 26);
  await write(data, Buffer.concat([local, name]));
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE((3 << 8) | 20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x800, 8);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
  central.writeUInt32LE(offset, 42);
  await write(directory, Buffer.concat([central, name]));
  offset += 30 + name.length;
  directorySize += 46 + name.length;
}
directory.end();
await once(directory, 'close');
await pipeline(createReadStream(directoryPath), data, { end: false });
const zip64End = Buffer.alloc(56);
zip64End.writeUInt32LE(0x06064b50, 0);
zip64End.writeBigUInt64LE(44n, 4);
zip64End.writeUInt16LE(45, 12);
zip64End.writeUInt16LE(45, 14);
zip64End.writeBigUInt64LE(BigInt(count), 24);
zip64End.writeBigUInt64LE(BigInt(count), 32);
zip64End.writeBigUInt64LE(BigInt(directorySize), 40);
zip64End.writeBigUInt64LE(BigInt(offset), 48);
const locator = Buffer.alloc(20);
locator.writeUInt32LE(0x07064b50, 0);
locator.writeBigUInt64LE(BigInt(offset + directorySize), 8);
locator.writeUInt32LE(1, 16);
const end = Buffer.alloc(22);
end.writeUInt32LE(0x06054b50, 0);
end.writeUInt16LE(Math.min(count, 0xffff), 8);
end.writeUInt16LE(Math.min(count, 0xffff), 10);
end.writeUInt32LE(Math.min(directorySize, 0xffffffff), 12);
end.writeUInt32LE(count > 0xffff ? 0xffffffff : offset, 16);
data.end(Buffer.concat([zip64End, locator, end]));
await once(data, 'close');
await rm(directoryPath);
