//! A small client of Foxglove's WebSocket protocol (`foxglove.sdk.v1`) for the live view
//! server's tests and bench: the JSON control messages and the binary message data.

#![allow(
    dead_code,
    reason = "each test file uses its own part of the shared support"
)]

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::WebSocket;
use tungstenite::{Message, stream::MaybeTlsStream};

/// A channel the server advertised.
#[derive(Debug, Clone)]
pub struct Advertised {
    /// Its ID.
    pub id: u64,
    /// Its topic.
    pub topic: String,
    /// Its message encoding.
    pub encoding: String,
    /// Its schema's name, encoding and text.
    pub schema_name: String,
    /// See `schema_name`.
    pub schema_encoding: String,
    /// See `schema_name`.
    pub schema: String,
}

/// One message received on a subscription.
#[derive(Debug, Clone)]
pub struct Received {
    /// The channel's topic.
    pub topic: String,
    /// Its log time, ns.
    pub log_time: u64,
    /// The payload.
    pub payload: Vec<u8>,
    /// When it arrived here.
    pub at: Instant,
}

/// A connected viewer.
pub struct Viewer {
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    /// The serverInfo message.
    pub server_info: Option<serde_json::Value>,
    /// Channels advertised, by ID.
    pub channels: BTreeMap<u64, Advertised>,
    /// Subscription ID → channel ID.
    subscriptions: BTreeMap<u32, u64>,
    next_subscription: u32,
    /// Status messages received.
    pub statuses: Vec<serde_json::Value>,
    /// The newest time the server broadcast (a file's playback), ns.
    pub time: Option<u64>,
    /// Playback states received: status (0 playing, 1 paused, 2 buffering, 3 ended), time
    /// (ns), speed, whether it answers a seek.
    pub playback: Vec<(u8, u64, f32, bool)>,
}

impl Viewer {
    /// Connects to `addr` with the `foxglove.sdk.v1` subprotocol.
    pub fn connect(addr: SocketAddr) -> Viewer {
        let mut req = format!("ws://{addr}").into_client_request().unwrap();
        req.headers_mut()
            .insert("Sec-WebSocket-Protocol", "foxglove.sdk.v1".parse().unwrap());
        let (ws, _) = tungstenite::connect(req).unwrap();
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
        }
        Viewer {
            ws,
            server_info: None,
            channels: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            next_subscription: 1,
            statuses: Vec::new(),
            time: None,
            playback: Vec::new(),
        }
    }

    /// Connects as [`Viewer::connect`] over a socket whose receive buffer is `bytes`, set
    /// before connecting so the TCP window stays that small: a viewer on a thin link.
    pub fn connect_small(addr: SocketAddr, bytes: usize) -> Viewer {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )
        .unwrap();
        socket.set_recv_buffer_size(bytes).unwrap();
        socket.connect(&addr.into()).unwrap();
        let stream: TcpStream = socket.into();
        let mut req = format!("ws://{addr}").into_client_request().unwrap();
        req.headers_mut()
            .insert("Sec-WebSocket-Protocol", "foxglove.sdk.v1".parse().unwrap());
        let (ws, _) = tungstenite::client(req, MaybeTlsStream::Plain(stream)).unwrap();
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
        }
        Viewer::connect_with(ws)
    }

    fn connect_with(ws: WebSocket<MaybeTlsStream<TcpStream>>) -> Viewer {
        Viewer {
            ws,
            server_info: None,
            channels: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            next_subscription: 1,
            statuses: Vec::new(),
            time: None,
            playback: Vec::new(),
        }
    }

    /// The viewer's own address (what the server's figures name it by).
    pub fn local_addr(&self) -> SocketAddr {
        match self.ws.get_ref() {
            MaybeTlsStream::Plain(s) => s.local_addr().unwrap(),
            _ => unreachable!("plain TCP only"),
        }
    }

    /// Asks for play (or pause) at `speed`, with a seek to `seek` (ns) if given.
    pub fn send_playback(&mut self, play: bool, speed: f32, seek: Option<u64>) {
        let mut b = vec![3u8, u8::from(!play)];
        b.extend_from_slice(&speed.to_le_bytes());
        b.push(u8::from(seek.is_some()));
        b.extend_from_slice(&seek.unwrap_or(0).to_le_bytes());
        let id = b"r1";
        b.extend_from_slice(&u32::try_from(id.len()).unwrap().to_le_bytes());
        b.extend_from_slice(id);
        self.ws.send(Message::Binary(b.into())).unwrap();
    }

    /// Reads one message (up to the read timeout); returns the data message if it was one.
    pub fn poll(&mut self) -> Option<Received> {
        let msg = match self.ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None;
            }
            Err(e) => panic!("the live view server's connection failed: {e}"),
        };
        match msg {
            Message::Text(text) => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                match v["op"].as_str() {
                    Some("serverInfo") => self.server_info = Some(v),
                    Some("advertise") => {
                        for c in v["channels"].as_array().unwrap() {
                            let a = Advertised {
                                id: c["id"].as_u64().unwrap(),
                                topic: c["topic"].as_str().unwrap().to_owned(),
                                encoding: c["encoding"].as_str().unwrap().to_owned(),
                                schema_name: c["schemaName"].as_str().unwrap_or("").to_owned(),
                                schema_encoding: c["schemaEncoding"]
                                    .as_str()
                                    .unwrap_or("")
                                    .to_owned(),
                                schema: c["schema"].as_str().unwrap_or("").to_owned(),
                            };
                            self.channels.insert(a.id, a);
                        }
                    }
                    Some("status") => self.statuses.push(v),
                    _ => {}
                }
                None
            }
            Message::Binary(bytes) if bytes.first() == Some(&2) && bytes.len() >= 9 => {
                self.time = Some(u64::from_le_bytes(bytes[1..9].try_into().unwrap()));
                None
            }
            Message::Binary(bytes) if bytes.first() == Some(&5) && bytes.len() >= 15 => {
                self.playback.push((
                    bytes[1],
                    u64::from_le_bytes(bytes[2..10].try_into().unwrap()),
                    f32::from_le_bytes(bytes[10..14].try_into().unwrap()),
                    bytes[14] != 0,
                ));
                None
            }
            Message::Binary(bytes) if bytes.first() == Some(&1) && bytes.len() >= 13 => {
                let sub = u32::from_le_bytes(bytes[1..5].try_into().unwrap());
                let log_time = u64::from_le_bytes(bytes[5..13].try_into().unwrap());
                let channel = self.subscriptions.get(&sub)?;
                Some(Received {
                    topic: self.channels.get(channel)?.topic.clone(),
                    log_time,
                    payload: bytes[13..].to_vec(),
                    at: Instant::now(),
                })
            }
            _ => None,
        }
    }

    /// Subscribes to every advertised channel not subscribed yet.
    pub fn subscribe_all(&mut self) {
        let subscribed: Vec<u64> = self.subscriptions.values().copied().collect();
        let mut subs = Vec::new();
        for id in self.channels.keys() {
            if !subscribed.contains(id) {
                subs.push(serde_json::json!({"id": self.next_subscription, "channelId": id}));
                self.subscriptions.insert(self.next_subscription, *id);
                self.next_subscription += 1;
            }
        }
        if !subs.is_empty() {
            let msg = serde_json::json!({"op": "subscribe", "subscriptions": subs});
            self.ws.send(Message::Text(msg.to_string().into())).unwrap();
        }
    }

    /// Sends a text message as is (for what a viewer must not be able to do).
    pub fn send_text(&mut self, text: &str) {
        self.ws.send(Message::Text(text.to_owned().into())).unwrap();
    }

    /// Reads until `done` says so with what was received, or `deadline` passes; subscribes
    /// to channels as they are advertised.
    pub fn read_until(
        &mut self,
        deadline: Duration,
        got: &mut Vec<Received>,
        done: &dyn Fn(&[Received], &Viewer) -> bool,
    ) -> bool {
        let end = Instant::now() + deadline;
        while Instant::now() < end {
            if let Some(r) = self.poll() {
                got.push(r);
            }
            self.subscribe_all();
            if done(got, self) {
                return true;
            }
        }
        false
    }
}
