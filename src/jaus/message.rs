//! The application layer (wire reference §2): a 2-byte message ID then the body. `Message` is
//! every message we speak; any other ID decodes to `Message::Unknown` with its body kept.

use serde::Serialize;
use serde::ser::SerializeMap;

use super::core::{
    CancelEvent, ClearEmergency, ConfirmControl, ConfirmEventRequest, CreateEvent, Event,
    QueryAuthority, QueryConfiguration, QueryControl, QueryEventTimeout, QueryEvents,
    QueryHeartbeatPulse, QueryIdentification, QueryServiceList, QueryServices, QueryStatus,
    QuerySubsystemList, QueryTimeout, RegisterServices, RejectControl, RejectEventRequest,
    ReleaseControl, ReportAuthority, ReportConfiguration, ReportControl, ReportEventTimeout,
    ReportEvents, ReportHeartbeatPulse, ReportIdentification, ReportServiceList, ReportServices,
    ReportStatus, ReportSubsystemList, ReportTimeout, RequestControl, Reset, Resume, SetAuthority,
    SetEmergency, Shutdown, Standby, UpdateEvent,
};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::iop::{
    QueryCurrentPose, QueryManipulatorEndEffectorForceTorque, QueryPresetPoseCapabilities,
    QueryPresetPoseSpecifications, ReportCurrentPose, ReportManipulatorEndEffectorForceTorque,
    ReportPresetPoseCapabilities, ReportPresetPoseSpecifications, ReportTransitionCompleted,
    SetCurrentPose,
};
use super::manipulator::{
    QueryCommandedEndEffectorVelocityState, QueryCommandedJointPositions,
    QueryCommandedJointVelocity, QueryEndEffectorPose, QueryEndEffectorVelocityState,
    QueryJointEffort, QueryJointForceTorques, QueryJointMotionProfile, QueryJointPositions,
    QueryJointVelocity, QueryManipulatorSpecifications, QueryToolOffset,
    ReportCommandedEndEffectorVelocityState, ReportCommandedJointPositions,
    ReportCommandedJointVelocity, ReportEndEffectorPose, ReportEndEffectorVelocityState,
    ReportJointEffort, ReportJointForceTorques, ReportJointMotionProfile, ReportJointPositions,
    ReportJointVelocity, ReportManipulatorSpecifications, ReportToolOffset,
    SetEndEffectorVelocityState, SetJointEffort, SetJointMotionProfile, SetJointPositions,
    SetJointVelocity, SetToolOffset,
};
use super::wire::{Body, DecodeContext, Dialect, Reader, Writer};

/// A complete JAUS message carried inside another (CreateEvent.QueryMessage,
/// Event.ReportMessage): a u32 count then the message with its ID. Kept as bytes so an
/// undecodable inner message does not lose the outer one; decode it with [`EmbeddedMessage::decode`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EmbeddedMessage(pub Vec<u8>);

impl EmbeddedMessage {
    /// Encodes `message` (JSIDL dialect) for embedding.
    pub fn new(message: &Message) -> Result<Self, EncodeError> {
        message.emit().map(Self)
    }

    /// Encodes `message` in `dialect` for embedding.
    pub fn with_dialect(message: &Message, dialect: Dialect) -> Result<Self, EncodeError> {
        message.emit_with(dialect).map(Self)
    }

    /// The embedded message's ID, if it has one.
    pub fn message_id(&self) -> Option<u16> {
        self.0.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    /// Decodes the embedded message.
    pub fn decode(&self, ctx: &DecodeContext) -> Result<Message, DecodeError> {
        Message::parse_with(&self.0, ctx)
    }

    pub(crate) fn parse(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        Ok(Self(r.bytes_u32(field)?.to_vec()))
    }

    pub(crate) fn emit(&self, w: &mut Writer, field: &'static str) -> Result<(), EncodeError> {
        w.bytes_u32(&self.0, field)
    }
}

/// How deep embedded messages are rendered as decoded messages; deeper ones stay hex. A hostile
/// peer can nest Events thousands deep in one block, and rendering recurses once per level.
pub const MAX_RENDER_DEPTH: usize = 8;

thread_local! {
    static RENDER_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Serialize for EmbeddedMessage {
    /// The decoded message, or its bytes in hex with the reason it did not decode (or that it
    /// is nested deeper than [`MAX_RENDER_DEPTH`]).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let depth = RENDER_DEPTH.with(std::cell::Cell::get);
        if depth >= MAX_RENDER_DEPTH {
            let mut map = s.serialize_map(Some(2))?;
            map.serialize_entry("raw", &hex_string(&self.0))?;
            map.serialize_entry("note", "embedded messages nested too deep to render")?;
            return map.end();
        }
        match self.decode(&DecodeContext::NONE) {
            Ok(m) => {
                RENDER_DEPTH.with(|d| d.set(depth + 1));
                let out = m.serialize(s);
                RENDER_DEPTH.with(|d| d.set(depth));
                out
            }
            Err(e) => {
                let mut map = s.serialize_map(Some(3))?;
                map.serialize_entry("raw", &hex_string(&self.0))?;
                map.serialize_entry("error", &e.to_string())?;
                map.serialize_entry("offset", &e.offset)?;
                map.end()
            }
        }
    }
}

/// Lower-case hex without separators.
pub fn hex_string(b: &[u8]) -> String {
    use std::fmt::Write;
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

macro_rules! messages {
    // The type a variant holds: the body itself, or boxed (`boxed` after the ID) when it is
    // much bigger than the rest, so that every message is small to move.
    (@ty $variant:ident) => { $variant };
    (@ty $variant:ident boxed) => { Box<$variant> };
    ($( $variant:ident = $id:literal $($boxed:ident)? ),* $(,)?) => {
        /// Every JAUS message jaus-ocu speaks, plus `Unknown` for the rest.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Message {
            $(
                #[doc = concat!("`", stringify!($id), "` ", stringify!($variant), ".")]
                $variant(messages!(@ty $variant $($boxed)?)),
            )*
            /// A message ID we do not decode; the body is kept as received.
            Unknown {
                /// The message ID.
                id: u16,
                /// The body bytes after the ID.
                body: Vec<u8>,
            },
        }

        /// Message IDs, by name.
        pub mod ids {
            $(
                #[doc = concat!("ID of ", stringify!($variant), ".")]
                #[allow(non_upper_case_globals)]
                pub const $variant: u16 = $id;
            )*
        }

        impl Message {
            /// The message ID.
            pub fn id(&self) -> u16 {
                match self {
                    $( Message::$variant(_) => $id, )*
                    Message::Unknown { id, .. } => *id,
                }
            }

            /// The specification's name of the message, `"Unknown"` for unknown IDs.
            pub fn name(&self) -> &'static str {
                message_name(self.id()).unwrap_or("Unknown")
            }

            fn parse_body(id: u16, r: &mut Reader<'_>) -> Result<Message, DecodeError> {
                Ok(match id {
                    $( $id => Message::$variant(<$variant as Body>::parse(r)?.into()), )*
                    _ => Message::Unknown { id, body: r.rest().to_vec() },
                })
            }

            fn emit_body(&self, w: &mut Writer) -> Result<(), EncodeError> {
                match self {
                    $( Message::$variant(m) => m.emit(w), )*
                    Message::Unknown { body, .. } => {
                        w.bytes(body);
                        Ok(())
                    }
                }
            }

            fn fields(&self) -> Result<serde_json::Value, serde_json::Error> {
                match self {
                    $( Message::$variant(m) => serde_json::to_value(m), )*
                    Message::Unknown { body, .. } => {
                        Ok(serde_json::json!({ "body": hex_string(body) }))
                    }
                }
            }
        }

        /// The specification's name of message `id`, if jaus-ocu knows it.
        pub fn message_name(id: u16) -> Option<&'static str> {
            match id {
                $( $id => Some(stringify!($variant)), )*
                _ => None,
            }
        }

        $(
            impl From<$variant> for Message {
                fn from(m: $variant) -> Self {
                    Message::$variant(m.into())
                }
            }
        )*
    };
}

messages! {
    // Core: Management and AccessControl commands.
    SetAuthority = 0x0001,
    Shutdown = 0x0002,
    Standby = 0x0003,
    Resume = 0x0004,
    Reset = 0x0005,
    SetEmergency = 0x0006,
    ClearEmergency = 0x0007,
    RequestControl = 0x000D,
    ReleaseControl = 0x000E,
    ConfirmControl = 0x000F,
    RejectControl = 0x0010,
    // Core: Events.
    CreateEvent = 0x01F0,
    UpdateEvent = 0x01F1,
    CancelEvent = 0x01F2,
    ConfirmEventRequest = 0x01F3,
    RejectEventRequest = 0x01F4,
    // Core: Discovery command.
    RegisterServices = 0x0B00,
    // Core: queries.
    QueryAuthority = 0x2001,
    QueryStatus = 0x2002,
    QueryTimeout = 0x2003,
    QueryControl = 0x200D,
    QueryEvents = 0x21F0,
    QueryEventTimeout = 0x21F2,
    QueryHeartbeatPulse = 0x2202,
    QueryIdentification = 0x2B00,
    QueryConfiguration = 0x2B01,
    QuerySubsystemList = 0x2B02,
    QueryServices = 0x2B03,
    QueryServiceList = 0x2B04,
    // Core: reports.
    ReportAuthority = 0x4001,
    ReportStatus = 0x4002,
    ReportTimeout = 0x4003,
    ReportControl = 0x400D,
    ReportEvents = 0x41F0,
    Event = 0x41F1,
    ReportEventTimeout = 0x41F2,
    ReportHeartbeatPulse = 0x4202,
    ReportIdentification = 0x4B00,
    ReportConfiguration = 0x4B01,
    ReportSubsystemList = 0x4B02,
    ReportServices = 0x4B03,
    ReportServiceList = 0x4B04,
    // Manipulator v2.0.
    SetJointEffort = 0x0601,
    SetJointPositions = 0x0602,
    SetJointVelocity = 0x0603,
    SetToolOffset = 0x0604,
    SetJointMotionProfile = 0x0607,
    SetEndEffectorVelocityState = 0x0612,
    QueryManipulatorSpecifications = 0x2600,
    QueryJointEffort = 0x2601,
    QueryJointPositions = 0x2602,
    QueryJointVelocity = 0x2603,
    QueryToolOffset = 0x2604,
    QueryJointForceTorques = 0x2605,
    QueryJointMotionProfile = 0x2607,
    QueryCommandedJointPositions = 0x2608,
    QueryCommandedJointVelocity = 0x2611,
    QueryCommandedEndEffectorVelocityState = 0x2612,
    QueryEndEffectorPose = 0x2615,
    QueryEndEffectorVelocityState = 0x2616,
    // 200 bytes (the next biggest is 96): boxed.
    ReportManipulatorSpecifications = 0x4600 boxed,
    ReportJointEffort = 0x4601,
    ReportJointPositions = 0x4602,
    ReportJointVelocity = 0x4603,
    ReportToolOffset = 0x4604,
    ReportJointForceTorques = 0x4605,
    ReportJointMotionProfile = 0x4607,
    ReportCommandedJointPositions = 0x4608,
    ReportCommandedJointVelocity = 0x4611,
    ReportCommandedEndEffectorVelocityState = 0x4612,
    ReportEndEffectorPose = 0x4615,
    ReportEndEffectorVelocityState = 0x4616,
    // IOP v3.
    QueryManipulatorEndEffectorForceTorque = 0xD998,
    ReportManipulatorEndEffectorForceTorque = 0xD999,
    QueryPresetPoseCapabilities = 0xF001,
    QueryCurrentPose = 0xF002,
    SetCurrentPose = 0xF003,
    QueryPresetPoseSpecifications = 0xF005,
    ReportPresetPoseCapabilities = 0xF0F1,
    ReportCurrentPose = 0xF0F2,
    ReportTransitionCompleted = 0xF0F4,
    ReportPresetPoseSpecifications = 0xF0F5,
}

impl Message {
    /// Decodes a whole message (ID + body) with no context.
    pub fn parse(bytes: &[u8]) -> Result<Message, DecodeError> {
        Self::parse_at(bytes, 0, &DecodeContext::NONE)
    }

    /// Decodes a whole message with what the caller knows about the peer (joint types).
    pub fn parse_with(bytes: &[u8], ctx: &DecodeContext) -> Result<Message, DecodeError> {
        Self::parse_at(bytes, 0, ctx)
    }

    /// Decodes a message that starts `base` bytes into a larger buffer (error offsets count
    /// from the start of that buffer). Bytes after the last field are an error.
    pub fn parse_at(
        bytes: &[u8],
        base: usize,
        ctx: &DecodeContext,
    ) -> Result<Message, DecodeError> {
        let mut r = Reader::new(bytes, base, ctx);
        let id = r.u16("MessageID")?;
        let m = Self::parse_body(id, &mut r)?;
        r.finish(m.name())?;
        Ok(m)
    }

    /// Encodes ID + body in the SAE JSIDL dialect.
    pub fn emit(&self) -> Result<Vec<u8>, EncodeError> {
        self.emit_with(Dialect::Jsidl)
    }

    /// Encodes ID + body in `dialect`.
    pub fn emit_with(&self, dialect: Dialect) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::new(dialect);
        self.emit_to(&mut w)?;
        Ok(w.into_inner())
    }

    /// Appends ID + body to `w`. On error, `w` may hold a partial message.
    pub fn emit_to(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u16(self.id());
        self.emit_body(w)
    }

    /// The message as a JSON object: `{"id": "0x000D", "name": "RequestControl", <fields>}`,
    /// fields named as the specification in `snake_case`, values in SI units.
    pub fn to_json(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("id".into(), format!("0x{:04X}", self.id()).into());
        obj.insert("name".into(), self.name().into());
        match self.fields() {
            Ok(serde_json::Value::Object(fields)) => obj.extend(fields),
            Ok(serde_json::Value::Null) => {}
            Ok(other) => {
                obj.insert("value".into(), other);
            }
            Err(e) => {
                obj.insert("error".into(), e.to_string().into());
            }
        }
        serde_json::Value::Object(obj)
    }
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// Whether a decode error means the buffer was too short (as opposed to malformed).
pub fn is_truncation(e: &DecodeError) -> bool {
    matches!(e.kind, DecodeErrorKind::Truncated { .. })
}
