// Times @mcap/core (the reader Foxglove's web app uses) iterating every message of an MCAP
// file: McapIndexedReader with the zstd/lz4 handlers of @mcap/support, from opening the file
// to the last message, doing nothing with them. Prints one JSON line: {"seconds", "messages"}.
// The replay bench (benches/replay.rs) runs it on its recording for the side-by-side ratio.
// Usage: node mcap-iterate.mjs FILE.mcap
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: node mcap-iterate.mjs FILE.mcap");
  process.exit(2);
}
const decompressHandlers = await loadDecompressHandlers();
const t0 = process.hrtime.bigint();
const handle = await open(file, "r");
const reader = await McapIndexedReader.Initialize({
  readable: new FileHandleReadable(handle),
  decompressHandlers,
});
let messages = 0;
for await (const _ of reader.readMessages()) {
  messages++;
}
await handle.close();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ seconds, messages }));
