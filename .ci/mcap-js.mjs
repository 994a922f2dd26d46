// Reads a jaus-ocu recording with @mcap/core's McapIndexedReader (the reader Foxglove's web
// app uses: it needs message indexes) and with its McapStreamReader, and checks that both
// read every message: the same count both ways, equal to the file's statistics, to what the
// official Python reader counted (when given) and, for the raw datagrams, to
// `jaus-ocu inspect --summary --json`. Every arm the file has an `arm/S.N.C` metadata record for
// must have its specification and joint positions in the decoded channels (each message naming
// it: "component") and its own Foxglove frame tree, as read by @mcap/core; with
// EXPECT_ARMS=126.1.10,126.1.11 in the environment, exactly those arms. Also checks that the
// Foxglove JSON Schemas vendored in assets/foxglove/ equal the pinned @foxglove/schemas package.
// The operator notes (`/ocu/notes`, with EXPECT_NOTES=N exactly N of them) are validated against
// the JSON Schema their channel carries, and each has its `foxglove.Log` line on /foxglove/log.
// Usage: [EXPECT_ARMS=S.N.C,...] node mcap-js.mjs FILE.mcap SUMMARY.json ASSETS_FOXGLOVE_DIR [PYTHON_COUNT]
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

// A JSON Schema check of the parts our schemas use: type (one or a list), enum, required,
// properties, items, minItems/maxItems (no validator package is pinned for the CI).
const typeOf = (v) =>
  v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
const validate = (value, schema, where) => {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const t = typeOf(value);
    if (!types.includes(t) && !(t === "integer" && types.includes("number"))) {
      fail(`${where}: ${JSON.stringify(value)} is ${t}, the schema says ${types.join(" or ")}`);
    }
  }
  if (schema.enum && !schema.enum.includes(value)) fail(`${where}: ${value} not in ${schema.enum}`);
  if (typeOf(value) === "object") {
    for (const key of schema.required ?? []) {
      if (!(key in value)) fail(`${where}: required "${key}" missing in ${JSON.stringify(value)}`);
    }
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (key in value) validate(value[key], sub, `${where}.${key}`);
    }
  }
  if (typeOf(value) === "array") {
    if (schema.minItems !== undefined && value.length < schema.minItems) fail(`${where}: too short`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`${where}: too long`);
    if (schema.items) value.forEach((v, i) => validate(v, schema.items, `${where}[${i}]`));
  }
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
const schemas = new Map();
const notes = [];
const noteLogs = [];
const streamedByTopic = new Map();
let streamedCount = 0;
// Per arm: the arm/S.N.C metadata records, the components the decoded channels name, the
// roots of the Foxglove frame trees.
const metadataArms = new Set();
const named = new Map();
const trees = new Map();
const text = new TextDecoder();
const bump = (map, key, topic) => {
  const m = map.get(key) ?? new Map();
  m.set(topic, (m.get(topic) ?? 0) + 1);
  map.set(key, m);
};
for (let rec; (rec = stream.nextRecord()); ) {
  if (rec.type === "Channel") channels.set(rec.id, rec);
  if (rec.type === "Schema") schemas.set(rec.id, rec);
  if (rec.type === "Metadata" && rec.name.startsWith("arm/")) {
    metadataArms.add(rec.name.slice("arm/".length));
  }
  if (rec.type === "Message") {
    const topic = channels.get(rec.channelId).topic;
    streamedByTopic.set(topic, (streamedByTopic.get(topic) ?? 0) + 1);
    streamedCount++;
    if (topic === "/ocu/notes") {
      const channel = channels.get(rec.channelId);
      const schema = schemas.get(channel.schemaId);
      if (!schema || schema.encoding !== "jsonschema" || channel.messageEncoding !== "json") {
        fail("/ocu/notes: not a JSON channel with a jsonschema schema");
      }
      const body = JSON.parse(text.decode(rec.data));
      validate(body, JSON.parse(text.decode(schema.data)), "/ocu/notes");
      notes.push(body);
    } else if (topic === "/foxglove/log") {
      const body = JSON.parse(text.decode(rec.data));
      if (body.name === "note" || body.name.endsWith("/note")) noteLogs.push(body);
    } else if (topic === "/jaus/specification" || topic === "/jaus/joint_positions") {
      const body = JSON.parse(text.decode(rec.data));
      if (typeof body.component !== "string") fail(`${topic}: a message names no component`);
      bump(named, body.component, topic);
    } else if (topic === "/foxglove/transforms") {
      const ts = JSON.parse(text.decode(rec.data)).transforms;
      const base = ts[1]?.child_frame_id ?? "";
      if (ts[1]?.parent_frame_id !== "vehicle" || !base.endsWith("/manipulator")) {
        fail(`/foxglove/transforms: not vehicle -> S.N.C/manipulator: ${JSON.stringify(ts[1])}`);
      }
      const arm = base.slice(0, -"/manipulator".length);
      for (const t of ts.slice(2)) {
        if (!t.child_frame_id.startsWith(`${arm}/`) || !t.parent_frame_id.startsWith(`${arm}/`)) {
          fail(`/foxglove/transforms: ${t.child_frame_id} in the frame tree of ${arm}`);
        }
      }
      trees.set(arm, (trees.get(arm) ?? 0) + 1);
    }
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

// Every arm: its specification and positions named with it, its own frame tree.
const arms = [...metadataArms].sort();
if (arms.length === 0) fail("no arm/S.N.C metadata record");
const expected = (process.env.EXPECT_ARMS ?? "").split(",").filter((a) => a).sort();
if (expected.length > 0 && arms.join() !== expected.join()) {
  fail(`arms in the metadata: ${arms}, expected ${expected}`);
}
for (const arm of arms) {
  for (const topic of ["/jaus/specification", "/jaus/joint_positions"]) {
    if (!(named.get(arm)?.get(topic) > 0)) fail(`${topic}: no message of arm ${arm}`);
  }
  if (!(trees.get(arm) > 0)) fail(`/foxglove/transforms: no frame tree of arm ${arm}`);
}
if ([...trees.keys()].sort().join() !== arms.join()) {
  fail(`frame trees of ${[...trees.keys()].sort()}, arms ${arms}`);
}

// The notes: each valid (above), each with its Foxglove log line, as many as expected.
const expectNotes = process.env.EXPECT_NOTES;
if (expectNotes !== undefined && notes.length !== Number(expectNotes)) {
  fail(`/ocu/notes: ${notes.length} notes, expected ${expectNotes}`);
}
for (const n of notes) {
  const message = n.text === "" ? "bookmark" : n.text;
  if (!noteLogs.some((l) => l.message === message && l.level === 2)) {
    fail(`/foxglove/log: no INFO line for the note ${JSON.stringify(n)}`);
  }
}

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
  `OK: ${notes.length} operator notes valid against their schema; @mcap/core read ${indexedCount} messages indexed and streamed (statistics ${statsCount}` +
    `${pythonCount !== undefined ? `, Python reader ${pythonCount}` : ""}), ` +
    `${raw.total} raw datagrams as jaus-ocu counts them, ${indexed.chunkIndexes.length} chunks; ` +
    `arms ${arms.map((a) => `${a} (${named.get(a).get("/jaus/joint_positions")} positions, ${trees.get(a)} frame trees)`).join(", ")}; ` +
    `assets/foxglove/ equals @foxglove/schemas`,
);
