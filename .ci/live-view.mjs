// A real client of the Foxglove WebSocket protocol (@foxglove/ws-protocol's FoxgloveClient, the
// protocol library of Foxglove's own app, over the `ws` package) connects to `jaus-ocu serve` and
// checks what it is served:
// - the serverInfo arrives (within CONNECT_TIMEOUT s) and its capabilities are read-only: none of
//   clientPublish, services, parameters, parametersSubscribe;
// - every channel, as it is advertised (also later than the connect), is JSON with a JSON Schema
//   that compiles (ajv, draft by its "$schema": 2020-12, 2019-09, else draft-07) and is
//   subscribed; EVERY message received is UTF-8 JSON valid against its channel's schema;
// - each expected arm gets its /jaus/specification and /jaus/arm_state within 2 s of the
//   subscription (latched; on the first connection counted from the arm's first message on any
//   channel when the arm turned up after the subscription);
// - /jaus/joint_positions of each arm (its `component`), after its first second, comes at the
//   expected rate +-20 %, and no other arm is served;
// - the topics of REQUIRE_TOPICS (default: positions, specification, arm_state, transforms,
//   scene) had data.
// With --late (or LIVE_VIEW_LATE=1): connect, wait for every arm's specification and arm state,
// disconnect, connect again, and require both again within 2 s of the new subscription (the
// latched state a client joining late gets); no rate check then.
// Prints a table (topic, messages, rate, validated) and the server's status messages; exits 1 on
// any failure, naming it. Never hangs: the whole run has a deadline.
// The subprotocol offered is `foxglove.sdk.v1` (LIVE_VIEW_SUBPROTOCOL to change it): the `foxglove`
// crate 0.30's server accepts only foxglove.sdk.v1 and foxglove.sdk.v1.1 (it answers 400 to
// FoxgloveClient.SUPPORTED_SUBPROTOCOL, foxglove.websocket.v1), and v1.1's advertisements
// reference a schema table FoxgloveClient 0.8 does not read; sdk.v1's messages are ws-protocol v1's.
// Usage: node live-view.mjs [--late] ws://HOST:PORT SECONDS RATE_HZ S.N.C[,S.N.C...]
import wsProtocol from "@foxglove/ws-protocol"; // CommonJS: no named exports in ESM
const { FoxgloveClient } = wsProtocol;
import WebSocket from "ws";
import Ajv07 from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";

const argv = process.argv.slice(2);
const late = argv.includes("--late") || process.env.LIVE_VIEW_LATE === "1";
const [url, secondsArg, rateArg, armsArg] = argv.filter((a) => a !== "--late");
if (!url || !secondsArg || !rateArg || !armsArg) {
  console.error("usage: node live-view.mjs [--late] ws://HOST:PORT SECONDS RATE_HZ S.N.C[,S.N.C...]");
  process.exit(2);
}
const seconds = Number(secondsArg);
const expectedRate = Number(rateArg);
const arms = armsArg.split(",").filter(Boolean);
const connectTimeout = Number(process.env.CONNECT_TIMEOUT ?? 10) * 1000;
const latchWindow = 2000;
const requiredTopics = (
  process.env.REQUIRE_TOPICS ??
  "/jaus/joint_positions,/jaus/specification,/jaus/arm_state,/foxglove/transforms,/foxglove/scene"
)
  .split(",")
  .filter(Boolean);
const subprotocol = process.env.LIVE_VIEW_SUBPROTOCOL ?? "foxglove.sdk.v1";
const FORBIDDEN = ["clientPublish", "services", "parameters", "parametersSubscribe"];
const LATCHED = ["/jaus/specification", "/jaus/arm_state"];
const POSITIONS = "/jaus/joint_positions";
const MAX_PRINTED = 25;

const failures = [];
const fail = (msg) => failures.push(msg);
const statuses = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Whatever happens, the run ends: the listening time, the connects and the late joiner's wait.
const deadline = seconds * 1000 + 3 * connectTimeout + (late ? 15000 : 0) + 10000;
const overall = setTimeout(() => {
  console.error(`FAIL: the check did not finish within ${deadline / 1000} s (overall deadline)`);
  report();
  process.exit(1);
}, deadline);
overall.unref();

const ajvFor = (schema) => {
  const opts = { strict: false, allErrors: true, logger: { log() {}, warn() {}, error: console.error } };
  const draft = typeof schema?.$schema === "string" ? schema.$schema : "";
  if (draft.includes("2020-12")) return new Ajv2020(opts);
  if (draft.includes("2019-09")) return new Ajv2019(opts);
  return new Ajv07(opts);
};
const utf8 = new TextDecoder("utf-8", { fatal: true });
const errorsText = (errors) =>
  (errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`)
    .join("; ") + ((errors?.length ?? 0) > 5 ? `; ... ${errors.length - 5} more` : "");

// Totals over every connection, by topic, for the table.
const totals = new Map(); // topic -> { messages, valid, seconds }
let listened = 0; // ms, over every connection
const total = (topic) => {
  if (!totals.has(topic)) totals.set(topic, { messages: 0, valid: 0 });
  return totals.get(topic);
};

// One connection: subscribe to all, validate all, until `until(session)` or `ms` have passed.
async function session(label, ms, until) {
  const s = {
    label,
    serverInfo: undefined,
    channels: new Map(), // channel id -> { topic, validate, subscribedAt, index }
    subs: new Map(), // subscription id -> channel id
    byArm: new Map(), // topic -> Map(component -> [receive times, ms])
    armFirstSeen: new Map(), // component -> first receive time on any channel
    closed: false,
    protocol: undefined,
  };
  const ws = new WebSocket(url, [subprotocol]);
  const client = new FoxgloveClient({ ws });
  let connectError;
  client.on("open", () => (s.protocol = ws.protocol));
  client.on("error", (e) => {
    if (!s.serverInfo) connectError = e;
    else fail(`${label}: client error: ${e?.message ?? e}`);
  });
  client.on("close", () => (s.closed = true));
  client.on("serverInfo", (info) => {
    s.serverInfo = info;
    s.serverInfoAt = performance.now();
  });
  client.on("status", (st) => statuses.push(`${label}: level ${st.level}: ${st.message}`));
  client.on("advertise", (channels) => {
    for (const ch of channels) {
      if (s.channels.has(ch.id)) continue;
      const entry = { topic: ch.topic, validate: undefined, index: 0 };
      s.channels.set(ch.id, entry);
      total(ch.topic);
      if (ch.encoding !== "json") fail(`${label}: ${ch.topic}: encoding ${ch.encoding}, not json`);
      else if (ch.schemaEncoding !== "jsonschema")
        fail(`${label}: ${ch.topic}: schemaEncoding ${ch.schemaEncoding}, not jsonschema`);
      else {
        try {
          const schema = JSON.parse(ch.schema);
          entry.validate = ajvFor(schema).compile(schema);
        } catch (e) {
          fail(`${label}: ${ch.topic}: its schema (${ch.schemaName}) does not compile: ${e.message}`);
        }
      }
      const subId = client.subscribe(ch.id);
      s.subs.set(subId, ch.id);
      entry.subscribedAt = performance.now();
    }
  });
  client.on("unadvertise", (ids) => {
    for (const id of ids) {
      const ch = s.channels.get(id);
      if (ch) ch.unadvertised = true;
    }
  });
  client.on("message", ({ subscriptionId, data }) => {
    const now = performance.now();
    const chId = s.subs.get(subscriptionId);
    const ch = s.channels.get(chId);
    if (!ch) {
      fail(`${label}: a message for subscription ${subscriptionId}, which is not one of ours`);
      return;
    }
    const index = ch.index++;
    const t = total(ch.topic);
    t.messages++;
    let value;
    try {
      value = JSON.parse(utf8.decode(data));
    } catch (e) {
      fail(`${label}: ${ch.topic} message ${index}: not UTF-8 JSON: ${e.message}`);
      return;
    }
    // Who it is about (counted even if invalid: validity is reported on its own).
    const comp = value && typeof value === "object" ? value.component : undefined;
    if (typeof comp === "string") {
      if (!s.armFirstSeen.has(comp)) s.armFirstSeen.set(comp, now);
      if (!s.byArm.has(ch.topic)) s.byArm.set(ch.topic, new Map());
      const m = s.byArm.get(ch.topic);
      if (!m.has(comp)) m.set(comp, []);
      m.get(comp).push(now);
    }
    if (!ch.validate) return; // its channel already failed
    if (!ch.validate(value)) {
      fail(`${label}: ${ch.topic} message ${index}: invalid: ${errorsText(ch.validate.errors)}`);
      return;
    }
    t.valid++;
  });

  // The serverInfo within the connect timeout, or a clear failure.
  const start = performance.now();
  while (!s.serverInfo && performance.now() - start < connectTimeout) {
    if (connectError || s.closed) break;
    await sleep(20);
  }
  if (!s.serverInfo) {
    const why = connectError
      ? `connection failed: ${connectError.message || connectError.code || connectError}`
      : s.closed
        ? "the connection closed before a serverInfo"
        : `no serverInfo within ${connectTimeout / 1000} s`;
    client.close();
    throw new Error(`${label}: ${url}: ${why}`);
  }
  s.start = start;
  if (s.protocol !== subprotocol) fail(`${label}: subprotocol ${s.protocol} negotiated, ${subprotocol} offered`);
  const caps = s.serverInfo.capabilities ?? [];
  for (const c of FORBIDDEN) {
    if (caps.includes(c)) fail(`${label}: serverInfo capabilities include ${c} (the server must be read-only)`);
  }
  while (performance.now() - start < ms && !s.closed && !(until && until(s))) await sleep(20);
  if (s.closed) fail(`${label}: the server closed the connection after ${((performance.now() - start) / 1000).toFixed(1)} s`);
  s.end = performance.now();
  listened += s.end - start;
  client.close();
  return s;
}

const subscribedAt = (s, topic) => [...s.channels.values()].find((c) => c.topic === topic)?.subscribedAt;
const firstFor = (s, topic, arm) => s.byArm.get(topic)?.get(arm)?.[0];

// The latched topics of every arm, within 2 s of their subscription (strict: from it only).
function checkLatched(s, strict) {
  for (const topic of LATCHED) {
    const sub = subscribedAt(s, topic);
    for (const arm of arms) {
      const first = firstFor(s, topic, arm);
      if (sub === undefined) {
        fail(`${s.label}: ${topic} never advertised (arm ${arm})`);
        continue;
      }
      if (first === undefined) {
        fail(`${s.label}: arm ${arm}: no ${topic} message at all (latched state missing)`);
        continue;
      }
      const seen = s.armFirstSeen.get(arm) ?? sub;
      const from = strict ? sub : Math.max(sub, seen);
      const after = first - from;
      if (after > latchWindow) {
        fail(
          `${s.label}: arm ${arm}: ${topic} came ${(after / 1000).toFixed(2)} s after ` +
            `${from === sub ? "the subscription" : "the arm's first message"} (latched: within ${latchWindow / 1000} s)`,
        );
      }
    }
  }
}

function report() {
  // The rate: messages over the time listened (all connections).
  const rows = [["topic", "messages", "rate Hz", "validated"]];
  for (const [topic, t] of [...totals.entries()].sort()) {
    const rate = listened > 0 ? (t.messages / (listened / 1000)).toFixed(1) : "-";
    rows.push([topic, String(t.messages), rate, `${t.valid}/${t.messages}`]);
  }
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  "));
  if (statuses.length) {
    console.log(`server status messages (${statuses.length}):`);
    for (const st of statuses.slice(0, MAX_PRINTED)) console.log(`  ${st}`);
    if (statuses.length > MAX_PRINTED) console.log(`  ... ${statuses.length - MAX_PRINTED} more`);
  } else console.log("server status messages: none");
  if (failures.length) {
    for (const f of failures.slice(0, MAX_PRINTED)) console.error(`FAIL: ${f}`);
    if (failures.length > MAX_PRINTED) console.error(`FAIL: ... and ${failures.length - MAX_PRINTED} more failures`);
  }
}

try {
  if (!late) {
    const s = await session("live", seconds * 1000);
    console.log(
      `serverInfo: name ${JSON.stringify(s.serverInfo.name)}, subprotocol ${s.protocol}, ` +
        `capabilities [${(s.serverInfo.capabilities ?? []).join(", ")}]`,
    );
    checkLatched(s, false);
    // The positions rate of each arm, after its first second.
    const seen = s.byArm.get(POSITIONS) ?? new Map();
    for (const comp of seen.keys()) if (!arms.includes(comp)) fail(`${POSITIONS}: arm ${comp} served, not one of ${arms}`);
    for (const arm of arms) {
      const times = seen.get(arm);
      if (!times?.length) {
        fail(`arm ${arm}: no ${POSITIONS} message`);
        continue;
      }
      const from = Math.max(subscribedAt(s, POSITIONS), times[0]) + 1000;
      const window = (s.end - from) / 1000;
      if (window < 2) {
        fail(
          `arm ${arm}: ${POSITIONS} began ${((times[0] - s.start) / 1000).toFixed(1)} s in: ` +
            `${Math.max(window, 0).toFixed(1)} s after its first second, under the 2 s needed to measure its rate`,
        );
        continue;
      }
      const n = times.filter((t) => t >= from).length;
      const rate = n / window;
      console.log(`arm ${arm}: ${POSITIONS} ${rate.toFixed(1)} Hz over ${window.toFixed(1)} s (expected ${expectedRate} Hz +-20 %)`);
      if (Math.abs(rate - expectedRate) > 0.2 * expectedRate) {
        fail(`arm ${arm}: ${POSITIONS} at ${rate.toFixed(1)} Hz, expected ${expectedRate} Hz +-20 %`);
      }
    }
  } else {
    const got = (s) => LATCHED.every((topic) => arms.every((arm) => firstFor(s, topic, arm) !== undefined));
    const first = await session("first", Math.max(seconds, 10) * 1000, got);
    if (!got(first)) fail(`first: not every arm's ${LATCHED.join(" and ")} within ${Math.max(seconds, 10)} s`);
    console.log(`first connection: every arm's latched state after ${((first.end - first.start) / 1000).toFixed(1)} s; disconnected`);
    await sleep(1000);
    const again = await session("late", latchWindow + 1000);
    checkLatched(again, true);
    console.log(`late joiner: ${arms.length} arm(s) checked for ${LATCHED.join(", ")} within ${latchWindow / 1000} s of subscribing`);
  }
  for (const topic of requiredTopics) {
    if (!(totals.get(topic)?.messages > 0) && !(late && !LATCHED.includes(topic))) fail(`${topic}: no data`);
  }
} catch (e) {
  fail(e.message);
}
report();
if (failures.length) {
  console.error(`FAIL: live view of ${url}: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log(
  late
    ? `OK: a late joiner got every arm's latched ${LATCHED.join(" and ")} within ${latchWindow / 1000} s`
    : `OK: ${[...totals.values()].reduce((a, t) => a + t.messages, 0)} messages on ${totals.size} channels valid against their schemas, read-only, latched state and ${expectedRate} Hz positions for ${arms.join(", ")}`,
);
process.exit(0);
