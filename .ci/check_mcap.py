"""Reads a jaus-ocu recording with the official `mcap` Python library and checks it against
what `jaus-ocu inspect --summary --json` says of the same file. Exits non-zero on a mismatch."""

import json
import sys
from collections import Counter

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


def main(path: str, summary_path: str) -> None:
    with open(summary_path) as f:
        ours = json.load(f)
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
    for name in ("session", "arm", "session_end"):
        if name not in metadata:
            fail(f"metadata record '{name}' missing (have {sorted(metadata)})")
    end = metadata["session_end"]
    if (int(end["datagrams_rx"]), int(end["datagrams_tx"])) != (rx, tx):
        fail(f"session_end says {end}, the file holds {rx} rx and {tx} tx")
    if end.get("dropped") != "0":
        fail(f"the recorder could not keep up with 150 datagrams/s: {end}")
    span_s = (last - first) / 1e9
    print(f"OK: {len(topics)} channels, {sum(counts.values())} messages "
          f"({raw} raw datagrams: {rx} rx, {tx} tx), {span_s:.2f} s, "
          f"schemas {sorted(s.name for s in schemas.values())}")
    for topic, n in sorted(counts.items()):
        print(f"  {n:>8}  {topic}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
