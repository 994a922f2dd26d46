// A stand-in for `jaus-ocu serve`, to test .ci/live-view.mjs without the Rust server: a
// @foxglove/ws-protocol FoxgloveServer on a `ws` WebSocketServer serving one arm's joint positions
// (at RATE Hz), specification and arm state (latched: sent again to whoever subscribes),
// transforms, scene and log, each JSON with a JSON Schema. Faults to prove each check can fail:
//   --bad-message     every 100th /jaus/joint_positions message violates its schema
//   --client-publish  serverInfo capabilities include clientPublish
//   --no-latch        the specification is sent once, before any client, never again
//   --rate HZ         positions at HZ (default 50)
//   --bad-schema      the schema of /jaus/specification does not compile
//   --latch-connections N  the latched values go to the first N connections only (later ones,
//                     a late joiner, get none)
//   --latch-delay MS  the latched values go to a subscriber MS ms late (default 50)
// Usage: node live-view-fake.mjs PORT [faults...]   (prints ws://127.0.0.1:PORT when listening)
import wsProtocol from "@foxglove/ws-protocol"; // CommonJS: no named exports in ESM
const { FoxgloveServer } = wsProtocol;
import { WebSocketServer } from "ws";
import foxglove from "@foxglove/schemas/jsonschema.js";

const args = process.argv.slice(2);
const port = Number(args[0]);
const has = (f) => args.includes(f);
const opt = (f, dflt) => (has(f) ? Number(args[args.indexOf(f) + 1]) : dflt);
const rate = opt("--rate", 50);
const latchDelay = opt("--latch-delay", 50);
const latchConnections = opt("--latch-connections", Infinity);
let connections = 0;
const arm = "126.1.10";

const component = { type: "string", pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+$" };
const obj = (title, properties, required) =>
  JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", title, type: "object", properties, required });
const server = new FoxgloveServer({
  name: "live-view-fake",
  capabilities: has("--client-publish") ? ["clientPublish"] : [],
});
const chan = (topic, schemaName, schema) =>
  server.addChannel({ topic, encoding: "json", schemaName, schemaEncoding: "jsonschema", schema });
const positions = chan(
  "/jaus/joint_positions",
  "jaus.JointPositions",
  obj("Joint positions", { t: { type: "number" }, component, positions: { type: "array", items: { type: ["number", "null"] } } }, ["t", "component", "positions"]),
);
const spec = chan("/jaus/specification", "jaus.Specification", has("--bad-schema") ? '{"type":"objekt"}' : obj("Specification", { t: { type: "number" }, component, joints: { type: "array" } }, ["t", "component", "joints"]));
const armState = chan(
  "/jaus/arm_state",
  "jaus.ArmState",
  obj("Arm state", { t: { type: "number" }, component, control: { type: ["string", "null"] }, link: { enum: ["ok", "stale", "lost"] } }, ["t", "component", "link"]),
);
const transforms = chan("/foxglove/transforms", "foxglove.FrameTransforms", JSON.stringify(foxglove.FrameTransforms));
const scene = chan("/foxglove/scene", "foxglove.SceneUpdate", JSON.stringify(foxglove.SceneUpdate));
const log = chan("/foxglove/log", "foxglove.Log", JSON.stringify(foxglove.Log));

const t0 = process.hrtime.bigint();
const t = () => Number(process.hrtime.bigint() - t0) / 1e9;
const send = (ch, value) => server.sendMessage(ch, process.hrtime.bigint(), Buffer.from(JSON.stringify(value)));
const stamp = () => ({ sec: Math.floor(Date.now() / 1000), nsec: (Date.now() % 1000) * 1e6 });
const latest = new Map();
const latch = (ch, value) => {
  latest.set(ch, value);
  send(ch, value);
};
latch(spec, { t: t(), component: arm, joints: [{ kind: "revolute" }, { kind: "revolute" }] });
if (has("--no-latch")) latest.delete(spec);
latch(armState, { t: t(), component: arm, control: null, link: "ok" });

const wss = new WebSocketServer({
  host: "127.0.0.1",
  port,
  // As the `foxglove` crate 0.30: foxglove.sdk.v1 only (not FoxgloveServer's foxglove.websocket.v1).
  handleProtocols: (protocols) => (protocols.has("foxglove.sdk.v1") ? "foxglove.sdk.v1" : false),
});
wss.on("listening", () => console.log(`live-view-fake: ws://127.0.0.1:${port}`));
wss.on("connection", (conn, req) => {
  const number = ++connections;
  server.handleConnection(conn, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
  // Latched: the current value to a new subscriber (FoxgloveServer broadcasts to all subscribers).
  conn.on("message", (data, isBinary) => {
    if (isBinary) return;
    const msg = JSON.parse(data.toString());
    if (msg.op !== "subscribe") return;
    for (const { channelId } of msg.subscriptions) {
      if (!latest.has(channelId) || number > latchConnections) continue;
      setTimeout(() => send(channelId, latest.get(channelId)), latchDelay);
    }
  });
});
server.on("error", (e) => console.error("live-view-fake:", e));

let n = 0;
setInterval(() => {
  const i = n++;
  send(positions, { t: t(), component: arm, positions: i % 100 === 50 && has("--bad-message") ? "oops" : [Math.sin(i / 50), 0.5, null] });
}, 1000 / rate);
setInterval(() => {
  send(transforms, { transforms: [{ timestamp: stamp(), parent_frame_id: "world", child_frame_id: `${arm}/base`, translation: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0, w: 1 } }] });
  send(scene, { deletions: [], entities: [] });
}, 100);
send(log, { timestamp: stamp(), level: 2, message: "fake up", name: "fake", file: "", line: 0 });
const stop = () => process.exit(0);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
