"""Reads a jaus-ocu recording with the official `mcap` Python library and checks it against
what `jaus-ocu inspect --summary --json` says of the same file; every JSON message validates
against its channel's JSON Schema (the `jsonschema` package); every arm the file has an
`arm/S.N.C` metadata record for has its specification and joint positions in the decoded
channels, each message naming it (`"component"`), and its own Foxglove frame tree. With
EXPECT_NOTES=N in the environment, the operator notes channel `/ocu/notes` holds exactly N notes
(each validated against its schema with the other JSON messages). Exits non-zero on a mismatch.

Usage: check_mcap.py FILE.mcap SUMMARY.json [ARMS]
  ARMS: the arms the recording must hold, comma-separated JAUS IDs (e.g. 126.1.10,126.1.11)."""

import json
import os
import sys
from collections import Counter, defaultdict

import jsonschema
from mcap.reader import make_reader


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


# The Foxglove channels and the schema each must use (Foxglove's own names).
FOXGLOVE_SCHEMAS = {
    "/foxglove/transforms": ("foxglove.FrameTransforms",),
    "/foxglove/scene": ("foxglove.SceneUpdate",),
    "/foxglove/log": ("foxglove.Log",),
}


def has_foxglove_time(body: dict) -> bool:
    """Every Foxglove message we write is stamped: a Log at the top, a FrameTransforms per
    transform, a SceneUpdate per entity (deletions carry one too)."""
    def stamped(x: dict) -> bool:
        ts = x.get("timestamp")
        return isinstance(ts, dict) and "sec" in ts and "nsec" in ts

    if "transforms" in body:
        return len(body["transforms"]) > 0 and all(stamped(t) for t in body["transforms"])
    if "entities" in body or "deletions" in body:
        items = body.get("entities", []) + body.get("deletions", [])
        return len(items) > 0 and all(stamped(e) for e in items)
    return stamped(body)


# Decoded topics whose every message is about one arm (its schema requires "component").
PER_ARM_TOPICS = ("/jaus/joint_positions", "/jaus/joint_velocities", "/jaus/joint_efforts",
                  "/jaus/joint_force_torques", "/jaus/force_torque", "/jaus/specification")


def frame_tree_arm(body: dict) -> str:
    """The arm a `foxglove.FrameTransforms` message is the tree of: world -> vehicle ->
    S.N.C/manipulator -> frames of S.N.C only."""
    ts = body["transforms"]
    if (ts[0]["parent_frame_id"], ts[0]["child_frame_id"]) != ("world", "vehicle") \
            or ts[1]["parent_frame_id"] != "vehicle" \
            or not ts[1]["child_frame_id"].endswith("/manipulator"):
        fail(f"/foxglove/transforms: not world -> vehicle -> S.N.C/manipulator: {ts[:2]}")
    arm = ts[1]["child_frame_id"].rsplit("/", 1)[0]
    for t in ts[2:]:
        for key in ("parent_frame_id", "child_frame_id"):
            if not t[key].startswith(arm + "/"):
                fail(f"/foxglove/transforms: {t[key]} in the frame tree of {arm}")
    return arm


def main(path: str, summary_path: str, arms_arg: str = "") -> None:
    with open(summary_path) as f:
        ours = json.load(f)
    validators = {}
    # Per arm: specifications and joint positions naming it, and its frame trees.
    named = defaultdict(Counter)
    trees = Counter()
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        if summary is None:
            fail("no summary section: the recording was not finished")
        topics = {c.id: c for c in summary.channels.values()}
        schemas = summary.schemas
        counts: Counter = Counter()
        first = last = None
        for schema, channel, message in reader.iter_messages():
            counts[channel.topic] += 1
            first = message.log_time if first is None else min(first, message.log_time)
            last = message.log_time if last is None else max(last, message.log_time)
            if channel.message_encoding == "json":
                if schema is None or schema.encoding != "jsonschema":
                    fail(f"{channel.topic}: JSON channel without a JSON Schema")
                body = json.loads(message.data)
                if schema.id not in validators:
                    doc = json.loads(schema.data)
                    cls = jsonschema.validators.validator_for(doc)
                    cls.check_schema(doc)
                    validators[schema.id] = cls(doc)
                errors = sorted(e.message for e in validators[schema.id].iter_errors(body))
                if errors:
                    fail(f"{channel.topic}: message invalid under its schema {schema.name}: {errors[:3]}: {body}")
                if channel.topic in PER_ARM_TOPICS and "component" not in body:
                    fail(f"{channel.topic}: message names no component: {body}")
                if "component" in body and channel.topic.startswith("/jaus/"):
                    named[body["component"]][channel.topic] += 1
                if channel.topic == "/foxglove/transforms":
                    trees[frame_tree_arm(body)] += 1
                if channel.topic.startswith("/foxglove/"):
                    # Foxglove's well-known schemas carry their own time fields.
                    if schema.name not in FOXGLOVE_SCHEMAS.get(channel.topic, ()):
                        fail(f"{channel.topic}: schema {schema.name}, expected {FOXGLOVE_SCHEMAS.get(channel.topic)}")
                    if not has_foxglove_time(body):
                        fail(f"{channel.topic}: message without a Foxglove timestamp: {body}")
                elif "t" not in body:
                    fail(f"{channel.topic}: message without its time field 't': {body}")
            elif channel.message_encoding == "judp":
                if message.data[:1] != b"\x02":
                    fail(f"{channel.topic}: raw message is not a JUDP v2 datagram")
            else:
                fail(f"{channel.topic}: unexpected encoding {channel.message_encoding}")
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}

    stats = summary.statistics
    if stats is None:
        fail("no statistics record")
    for cid, n in stats.channel_message_counts.items():
        if counts[topics[cid].topic] != n:
            fail(f"{topics[cid].topic}: statistics say {n}, read {counts[topics[cid].topic]}")
    raw = sum(n for t, n in counts.items() if t.startswith("/judp/"))
    rx = sum(n for t, n in counts.items() if t.startswith("/judp/rx/"))
    tx = sum(n for t, n in counts.items() if t.startswith("/judp/tx/"))
    want = ours["datagrams"]
    if (raw, rx, tx) != (want["total"], want["received"], want["sent"]):
        fail(f"raw datagrams: mcap reader {raw} ({rx} rx, {tx} tx), jaus-ocu {want}")
    for topic in ("/jaus/joint_positions", "/jaus/force_torque", "/jaus/specification", "/jaus/events",
                  "/foxglove/transforms", "/foxglove/scene", "/foxglove/log"):
        if counts[topic] == 0:
            fail(f"{topic}: no messages")
    for name in ("session", "session_end"):
        if name not in metadata:
            fail(f"metadata record '{name}' missing (have {sorted(metadata)})")
    # One "arm/S.N.C" record per arm; each arm named in the decoded channels, with a frame tree.
    arms = sorted(m[len("arm/"):] for m in metadata if m.startswith("arm/"))
    if not arms:
        fail(f"no arm/S.N.C metadata record (have {sorted(metadata)})")
    expected = sorted(a for a in arms_arg.split(",") if a)
    if expected and arms != expected:
        fail(f"arms in the metadata: {arms}, expected {expected}")
    for arm in arms:
        if metadata[f"arm/{arm}"].get("component_id") != arm:
            fail(f"arm/{arm}: component_id is {metadata[f'arm/{arm}'].get('component_id')}")
        for topic in ("/jaus/specification", "/jaus/joint_positions"):
            if named[arm][topic] == 0:
                fail(f"{topic}: no message of arm {arm} (components named: {dict(named)})")
        if trees[arm] == 0:
            fail(f"/foxglove/transforms: no frame tree of arm {arm} (trees: {dict(trees)})")
    if sorted(trees) != arms:
        fail(f"frame trees of {sorted(trees)}, arms {arms}")
    if sorted(ours.get("arms", {})) != arms:
        fail(f"jaus-ocu inspect counts arms {sorted(ours.get('arms', {}))}, the metadata names {arms}")
    end = metadata["session_end"]
    if (int(end["datagrams_rx"]), int(end["datagrams_tx"])) != (rx, tx):
        fail(f"session_end says {end}, the file holds {rx} rx and {tx} tx")
    if end.get("dropped") != "0":
        fail(f"the recorder could not keep up with 150 datagrams/s: {end}")
    expect_notes = os.environ.get("EXPECT_NOTES")
    if expect_notes is not None and counts["/ocu/notes"] != int(expect_notes):
        fail(f"/ocu/notes: {counts['/ocu/notes']} notes, expected {expect_notes}")
    span_s = (last - first) / 1e9
    per_arm = ", ".join(
        f"{a} ({named[a]['/jaus/joint_positions']} positions, {trees[a]} frame trees)" for a in arms)
    print(f"OK: {len(topics)} channels, {sum(counts.values())} messages "
          f"({raw} raw datagrams: {rx} rx, {tx} tx), {span_s:.2f} s, "
          f"schemas {sorted(s.name for s in schemas.values())}, every JSON message valid; "
          f"arms {per_arm}")
    for topic, n in sorted(counts.items()):
        print(f"  {n:>8}  {topic}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
