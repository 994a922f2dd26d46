// Times @mcap/core (the reader Foxglove's web app uses) iterating the messages of an MCAP file:
// McapIndexedReader with the zstd/lz4 handlers of @mcap/support, from opening the file to the
// last message, doing nothing with them. `--topic-prefix P` reads only the channels whose topic
// starts with P (readMessages' own `topics` filter: what a reader of just those channels
// does). Prints one JSON line: {"seconds", "messages"}. The replay bench (benches/replay.rs)
// runs it on its recording for the side-by-side ratios.
// Usage: node mcap-iterate.mjs [--topic-prefix P] FILE.mcap
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";

const args = process.argv.slice(2);
let prefix;
if (args[0] === "--topic-prefix") {
  prefix = args[1];
  args.splice(0, 2);
}
const [file] = args;
if (!file || args.length !== 1) {
  console.error("usage: node mcap-iterate.mjs [--topic-prefix P] FILE.mcap");
  process.exit(2);
}
const decompressHandlers = await loadDecompressHandlers();
const t0 = process.hrtime.bigint();
const handle = await open(file, "r");
const reader = await McapIndexedReader.Initialize({
  readable: new FileHandleReadable(handle),
  decompressHandlers,
});
const options = {};
if (prefix !== undefined) {
  const topics = new Set();
  for (const channel of reader.channelsById.values()) {
    if (channel.topic.startsWith(prefix)) {
      topics.add(channel.topic);
    }
  }
  options.topics = [...topics];
}
let messages = 0;
for await (const _ of reader.readMessages(options)) {
  messages++;
}
await handle.close();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ seconds, messages }));
