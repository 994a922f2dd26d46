// Reads a jaus-ocu recording with @mcap/core's McapIndexedReader (the reader Foxglove's web
// app uses: it needs message indexes) and with its McapStreamReader, and checks that both
// read every message: the same count both ways, equal to the file's statistics, to what the
// official Python reader counted (when given) and, for the raw datagrams, to
// `jaus-ocu inspect --summary --json`. Also checks that the Foxglove JSON Schemas vendored
// in assets/foxglove/ equal the pinned @foxglove/schemas package.
// Usage: node mcap-js.mjs FILE.mcap SUMMARY.json ASSETS_FOXGLOVE_DIR [PYTHON_COUNT]
import { open, readFile } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";
import foxglove from "@foxglove/schemas/jsonschema.js";

const [file, summaryPath, schemaDir, pythonCount] = process.argv.slice(2);
const fail = (msg) => {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
};

const decompressHandlers = await loadDecompressHandlers();

// Indexed: every message of every channel through the chunk and message indexes.
const handle = await open(file, "r");
let indexed;
try {
  indexed = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers,
  });
} catch (e) {
  fail(`McapIndexedReader cannot open ${file}: ${e.message}`);
}
const indexedByTopic = new Map();
let indexedCount = 0;
try {
  for await (const m of indexed.readMessages()) {
    const topic = indexed.channelsById.get(m.channelId).topic;
    indexedByTopic.set(topic, (indexedByTopic.get(topic) ?? 0) + 1);
    indexedCount++;
  }
} catch (e) {
  fail(`McapIndexedReader cannot read the messages of ${file}: ${e.message}`);
}
const stats = indexed.statistics;
if (!stats) fail("no statistics record");
await handle.close();

// Streamed: the same file front to back.
const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true });
stream.append(await readFile(file));
const channels = new Map();
const streamedByTopic = new Map();
let streamedCount = 0;
for (let rec; (rec = stream.nextRecord()); ) {
  if (rec.type === "Channel") channels.set(rec.id, rec);
  if (rec.type === "Message") {
    const topic = channels.get(rec.channelId).topic;
    streamedByTopic.set(topic, (streamedByTopic.get(topic) ?? 0) + 1);
    streamedCount++;
  }
}
if (!stream.done()) fail("the stream reader did not reach the end of the file");

const statsCount = Number(stats.messageCount);
if (indexedCount !== streamedCount || indexedCount !== statsCount) {
  fail(`messages: indexed ${indexedCount}, streamed ${streamedCount}, statistics ${statsCount}`);
}
for (const [topic, n] of streamedByTopic) {
  if (indexedByTopic.get(topic) !== n) {
    fail(`${topic}: indexed ${indexedByTopic.get(topic)}, streamed ${n}`);
  }
}
for (const [id, n] of stats.channelMessageCounts) {
  const topic = indexed.channelsById.get(id).topic;
  if (indexedByTopic.get(topic) !== Number(n)) {
    fail(`${topic}: statistics ${n}, read ${indexedByTopic.get(topic)}`);
  }
}
if (pythonCount !== undefined && Number(pythonCount) !== indexedCount) {
  fail(`the Python mcap reader read ${pythonCount} messages, @mcap/core ${indexedCount}`);
}
const ours = JSON.parse(await readFile(summaryPath, "utf8"));
const sum = (prefix) =>
  [...indexedByTopic].filter(([t]) => t.startsWith(prefix)).reduce((a, [, n]) => a + n, 0);
const raw = { total: sum("/judp/"), received: sum("/judp/rx/"), sent: sum("/judp/tx/") };
const want = ours.datagrams;
if (raw.total !== want.total || raw.received !== want.received || raw.sent !== want.sent) {
  fail(`raw datagrams: @mcap/core ${JSON.stringify(raw)}, jaus-ocu inspect ${JSON.stringify(want)}`);
}
if (raw.total === 0) fail("no datagrams in the recording");

// The vendored Foxglove schemas are the package's, byte for byte.
for (const name of ["FrameTransforms", "SceneUpdate", "Log"]) {
  const path = `${schemaDir}/foxglove.${name}.json`;
  const vendored = await readFile(path, "utf8");
  const published = JSON.stringify(foxglove[name], null, 2) + "\n";
  if (vendored !== published) {
    fail(`${path} differs from @foxglove/schemas' ${name}: regenerate it (see assets/foxglove/README.md)`);
  }
}

console.log(
  `OK: @mcap/core read ${indexedCount} messages indexed and streamed (statistics ${statsCount}` +
    `${pythonCount !== undefined ? `, Python reader ${pythonCount}` : ""}), ` +
    `${raw.total} raw datagrams as jaus-ocu counts them, ${indexed.chunkIndexes.length} chunks; ` +
    `assets/foxglove/ equals @foxglove/schemas`,
);
