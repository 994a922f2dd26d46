//! Core service set v1.1 (AS5710A) messages an OCU uses: Events, `AccessControl`, Management,
//! Liveness, Discovery (wire reference §8.4).
//!
//! Over 800 lines on purpose: one file per message set, like the specification's tables.

use serde::Serialize;

use super::error::{DecodeError, EncodeError};
use super::message::EmbeddedMessage;
use super::wire::{Body, DecodeContext, Reader, Writer, scales};

wire_enum! {
    /// Events: `EventType`.
    pub enum EventType: u8 {
        /// Periodic (service-connection) event.
        Periodic = 0 => "PERIODIC",
        /// Event on every change.
        EveryChange = 1 => "EVERY_CHANGE",
    }
}

wire_enum! {
    /// `AccessControl`: ConfirmControl.ResponseCode.
    pub enum ConfirmControlCode: u8 {
        /// Control granted.
        ControlAccepted = 0 => "CONTROL_ACCEPTED",
        /// Control cannot be granted now.
        NotAvailable = 1 => "NOT_AVAILABLE",
        /// Another client holds control with a higher authority.
        InsufficientAuthority = 2 => "INSUFFICIENT_AUTHORITY",
    }
}

wire_enum! {
    /// `AccessControl`: RejectControl.ResponseCode.
    pub enum RejectControlCode: u8 {
        /// Control was released (on request or by timeout).
        ControlReleased = 0 => "CONTROL_RELEASED",
        /// Control is not available.
        NotAvailable = 1 => "NOT_AVAILABLE",
    }
}

wire_enum! {
    /// Management: ReportStatus.Status.
    pub enum Status: u8 {
        /// Initialising.
        Initialize = 0 => "INITIALIZE",
        /// Ready: commands are executed.
        Ready = 1 => "READY",
        /// Standby: commands are not executed.
        Standby = 2 => "STANDBY",
        /// Shut down.
        Shutdown = 3 => "SHUTDOWN",
        /// Failed.
        Failure = 4 => "FAILURE",
        /// Emergency stop.
        Emergency = 5 => "EMERGENCY",
    }
}

wire_enum! {
    /// Events: RejectEventRequest.ResponseCode.
    pub enum RejectEventCode: u8 {
        /// Periodic events are not supported.
        PeriodicNotSupported = 1 => "PERIODIC_EVENTS_NOT_SUPPORTED",
        /// Every-change events are not supported.
        ChangeNotSupported = 2 => "CHANGE_BASED_EVENTS_NOT_SUPPORTED",
        /// Connection refused.
        ConnectionRefused = 3 => "CONNECTION_REFUSED",
        /// Invalid event setup.
        InvalidSetup = 4 => "INVALID_EVENT_SETUP",
        /// The query message is not supported.
        MessageNotSupported = 5 => "MESSAGE_NOT_SUPPORTED",
        /// Invalid event ID for an update request.
        InvalidEventId = 6 => "INVALID_EVENT_ID",
    }
}

wire_enum! {
    /// Discovery: `QueryIdentification` / `ReportIdentification` `QueryType`.
    pub enum QueryType: u8 {
        /// Reserved.
        Reserved = 0 => "RESERVED",
        /// System identification.
        System = 1 => "SYSTEM",
        /// Subsystem identification.
        Subsystem = 2 => "SUBSYSTEM",
        /// Node identification.
        Node = 3 => "NODE",
        /// Component identification.
        Component = 4 => "COMPONENT",
    }
}

wire_enum! {
    /// Discovery: ReportIdentification.Type.
    pub enum IdentificationType: u16 {
        /// Reserved.
        Reserved = 0 => "RESERVED",
        /// A vehicle.
        Vehicle = 10001 => "VEHICLE",
        /// An operator control unit.
        Ocu = 20001 => "OCU",
        /// Another kind of subsystem.
        OtherSubsystem = 30001 => "OTHER_SUBSYSTEM",
        /// A node.
        Node = 40001 => "NODE",
        /// A payload.
        Payload = 50001 => "PAYLOAD",
        /// A component.
        Component = 60001 => "COMPONENT",
    }
}

/// One AuthorityCode-only body (`RequestControl`, `SetAuthority`, `ReportAuthority`).
macro_rules! authority_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        pub struct $name {
            /// `AuthorityCode` 0..=255.
            pub authority_code: u8,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self { authority_code: r.u8("AuthorityCode")? })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.u8(self.authority_code);
                Ok(())
            }
        }
    )*};
}

authority_message! {
    /// 0x000D `RequestControl`.
    RequestControl,
    /// 0x0001 `SetAuthority`.
    SetAuthority,
    /// 0x4001 `ReportAuthority`.
    ReportAuthority
}

/// One EmergencyCode-only body.
macro_rules! emergency_message {
    ($( $(#[$meta:meta])* $name:ident ),*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        pub struct $name {
            /// `EmergencyCode`; 1 = STOP is the only defined value (peers also send 0).
            pub emergency_code: u16,
        }

        impl Body for $name {
            fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self { emergency_code: r.u16("EmergencyCode")? })
            }

            fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.u16(self.emergency_code);
                Ok(())
            }
        }
    )*};
}

emergency_message! {
    /// 0x0006 `SetEmergency`.
    SetEmergency,
    /// 0x0007 `ClearEmergency`.
    ClearEmergency
}

/// §9 C10: a `SetEmergency` or `ClearEmergency` whose body is shorter than its u16
/// `EmergencyCode` (one peer writes a u8, some send none) — `bytes` is the whole message,
/// `MessageID` first. Returns the message it stands for (code 1 = STOP) when it is one of those
/// two with a 0- or 1-byte body, else `None`. For an emergency stop safety wins over
/// strictness; the caller counts it, and never applies this to any other message.
pub fn short_emergency(bytes: &[u8]) -> Option<crate::jaus::Message> {
    let (id, body) = bytes.split_first_chunk::<2>()?;
    if body.len() >= 2 {
        return None;
    }
    match u16::from_le_bytes(*id) {
        0x0006 => Some(SetEmergency { emergency_code: 1 }.into()),
        0x0007 => Some(ClearEmergency { emergency_code: 1 }.into()),
        _ => None,
    }
}

empty_message! {
    /// 0x0002 Shutdown.
    Shutdown,
    /// 0x0003 Standby.
    Standby,
    /// 0x0004 Resume.
    Resume,
    /// 0x0005 Reset.
    Reset,
    /// 0x000E `ReleaseControl`.
    ReleaseControl,
    /// 0x2001 `QueryAuthority`.
    QueryAuthority,
    /// 0x2002 `QueryStatus`.
    QueryStatus,
    /// 0x2003 `QueryTimeout`.
    QueryTimeout,
    /// 0x200D `QueryControl`.
    QueryControl,
    /// 0x21F2 `QueryEventTimeout`.
    QueryEventTimeout,
    /// 0x2202 `QueryHeartbeatPulse`.
    QueryHeartbeatPulse,
    /// 0x4202 `ReportHeartbeatPulse`.
    ReportHeartbeatPulse,
    /// 0x2B02 `QuerySubsystemList`.
    QuerySubsystemList,
}

/// 0x000F `ConfirmControl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConfirmControl {
    /// `ResponseCode`.
    pub response_code: ConfirmControlCode,
}

impl Body for ConfirmControl {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            response_code: ConfirmControlCode::from_raw(r.u8("ResponseCode")?),
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.response_code.raw());
        Ok(())
    }
}

/// 0x0010 `RejectControl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RejectControl {
    /// `ResponseCode`.
    pub response_code: RejectControlCode,
}

impl Body for RejectControl {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            response_code: RejectControlCode::from_raw(r.u8("ResponseCode")?),
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.response_code.raw());
        Ok(())
    }
}

/// 0x400D `ReportControl`: who holds control, and with what authority (all zero = nobody).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportControl {
    /// `SubsystemID` of the controlling client.
    pub subsystem_id: u16,
    /// `NodeID` of the controlling client.
    pub node_id: u8,
    /// `ComponentID` of the controlling client.
    pub component_id: u8,
    /// `AuthorityCode` of the controlling client.
    pub authority_code: u8,
}

impl Body for ReportControl {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            subsystem_id: r.u16("SubsystemID")?,
            node_id: r.u8("NodeID")?,
            component_id: r.u8("ComponentID")?,
            authority_code: r.u8("AuthorityCode")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u16(self.subsystem_id);
        w.u8(self.node_id);
        w.u8(self.component_id);
        w.u8(self.authority_code);
        Ok(())
    }
}

/// 0x4003 `ReportTimeout` (`AccessControl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportTimeout {
    /// Control timeout in seconds; 0 = no timeout.
    pub timeout: u8,
}

impl Body for ReportTimeout {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            timeout: r.u8("Timeout")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.timeout);
        Ok(())
    }
}

/// 0x41F2 `ReportEventTimeout` (Events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportEventTimeout {
    /// Event timeout in **minutes**, as the wire carries it; 0 = disabled.
    pub timeout: u8,
}

impl Body for ReportEventTimeout {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            timeout: r.u8("Timeout")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.timeout);
        Ok(())
    }
}

/// 0x4002 `ReportStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportStatus {
    /// Status.
    pub status: Status,
    /// Reserved u32 (kept so a re-encode is byte-exact).
    pub reserved: u32,
}

impl Body for ReportStatus {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            status: Status::from_raw(r.u8("Status")?),
            reserved: r.u32("Reserved")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.status.raw());
        w.u32(self.reserved);
        Ok(())
    }
}

/// 0x01F0 `CreateEvent`: subscribe to a query's report, periodically or on every change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CreateEvent {
    /// `RequestID` chosen by the client.
    pub request_id: u8,
    /// `EventType`.
    pub event_type: EventType,
    /// `RequestedPeriodicRate`, Hz (0..=1092; 0 for every-change events).
    pub requested_periodic_rate: f64,
    /// `QueryMessage`: the complete query message, with its message ID.
    pub query_message: EmbeddedMessage,
}

impl Body for CreateEvent {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            event_type: EventType::from_raw(r.u8("EventType")?),
            requested_periodic_rate: r.scaled(scales::EVENT_RATE, "RequestedPeriodicRate")?,
            query_message: EmbeddedMessage::parse(r, "QueryMessage")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.event_type.raw());
        w.scaled(
            scales::EVENT_RATE,
            self.requested_periodic_rate,
            "RequestedPeriodicRate",
        )?;
        self.query_message.emit(w, "QueryMessage")
    }
}

/// 0x01F1 `UpdateEvent`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpdateEvent {
    /// `RequestID` chosen by the client.
    pub request_id: u8,
    /// `EventType`.
    pub event_type: EventType,
    /// `RequestedPeriodicRate`, Hz.
    pub requested_periodic_rate: f64,
    /// `EventID` being updated.
    pub event_id: u8,
    /// `QueryMessage` with its message ID.
    pub query_message: EmbeddedMessage,
}

impl Body for UpdateEvent {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            event_type: EventType::from_raw(r.u8("EventType")?),
            requested_periodic_rate: r.scaled(scales::EVENT_RATE, "RequestedPeriodicRate")?,
            event_id: r.u8("EventID")?,
            query_message: EmbeddedMessage::parse(r, "QueryMessage")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.event_type.raw());
        w.scaled(
            scales::EVENT_RATE,
            self.requested_periodic_rate,
            "RequestedPeriodicRate",
        )?;
        w.u8(self.event_id);
        self.query_message.emit(w, "QueryMessage")
    }
}

/// 0x01F2 `CancelEvent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CancelEvent {
    /// `RequestID` chosen by the client.
    pub request_id: u8,
    /// `EventID` to cancel.
    pub event_id: u8,
}

impl Body for CancelEvent {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            event_id: r.u8("EventID")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.event_id);
        Ok(())
    }
}

/// 0x01F3 `ConfirmEventRequest`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConfirmEventRequest {
    /// `RequestID` echoed from the request.
    pub request_id: u8,
    /// `EventID` assigned by the service.
    pub event_id: u8,
    /// `ConfirmedPeriodicRate`, Hz.
    pub confirmed_periodic_rate: f64,
}

impl Body for ConfirmEventRequest {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            request_id: r.u8("RequestID")?,
            event_id: r.u8("EventID")?,
            confirmed_periodic_rate: r.scaled(scales::EVENT_RATE, "ConfirmedPeriodicRate")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.request_id);
        w.u8(self.event_id);
        w.scaled(
            scales::EVENT_RATE,
            self.confirmed_periodic_rate,
            "ConfirmedPeriodicRate",
        )
    }
}

/// 0x01F4 `RejectEventRequest`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectEventRequest {
    /// `RequestID` echoed from the request.
    pub request_id: u8,
    /// `ResponseCode` (PV bit 0).
    pub response_code: Option<RejectEventCode>,
    /// `ErrorMessage`, at most 80 ASCII bytes (PV bit 1).
    pub error_message: Option<String>,
}

impl Body for RejectEventRequest {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let pv = r.presence_u8(0b11, "PresenceVector")?;
        let request_id = r.u8("RequestID")?;
        let response_code = if pv & 1 != 0 {
            Some(RejectEventCode::from_raw(r.u8("ResponseCode")?))
        } else {
            None
        };
        let error_message = if pv & 2 != 0 {
            Some(r.string_fixed(80, "ErrorMessage")?)
        } else {
            None
        };
        Ok(Self {
            request_id,
            response_code,
            error_message,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        let pv =
            u8::from(self.response_code.is_some()) | u8::from(self.error_message.is_some()) << 1;
        w.u8(pv);
        w.u8(self.request_id);
        if let Some(c) = self.response_code {
            w.u8(c.raw());
        }
        if let Some(m) = &self.error_message {
            w.string_fixed(m, 80, "ErrorMessage")?;
        }
        Ok(())
    }
}

/// 0x21F0 `QueryEvents`: which events to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "query_events_var", rename_all = "snake_case")]
pub enum QueryEvents {
    /// Tag 0: events for one query message code.
    MessageId {
        /// `MessageCode`.
        message_code: u16,
    },
    /// Tag 1: events of one type.
    EventType {
        /// `EventType`.
        event_type: EventType,
    },
    /// Tag 2: one event.
    EventId {
        /// `EventID`.
        event_id: u8,
    },
    /// Tag 3: all events.
    AllEvents {
        /// `AllEvents` (always 0).
        all_events: u8,
    },
}

impl Body for QueryEvents {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.tag(4, "QueryEventsVar")? {
            0 => Self::MessageId {
                message_code: r.u16("MessageCode")?,
            },
            1 => Self::EventType {
                event_type: EventType::from_raw(r.u8("EventType")?),
            },
            2 => Self::EventId {
                event_id: r.u8("EventID")?,
            },
            _ => Self::AllEvents {
                all_events: r.u8("AllEvents")?,
            },
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        match *self {
            Self::MessageId { message_code } => {
                w.u8(0);
                w.u16(message_code);
            }
            Self::EventType { event_type } => {
                w.u8(1);
                w.u8(event_type.raw());
            }
            Self::EventId { event_id } => {
                w.u8(2);
                w.u8(event_id);
            }
            Self::AllEvents { all_events } => {
                w.u8(3);
                w.u8(all_events);
            }
        }
        Ok(())
    }
}

/// One entry of `ReportEvents`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportEventRec {
    /// `EventType`.
    pub event_type: EventType,
    /// `EventID`.
    pub event_id: u8,
    /// `QueryMessage` with its message ID.
    pub query_message: EmbeddedMessage,
}

/// 0x41F0 `ReportEvents`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportEvents {
    /// `EventList`.
    pub events: Vec<ReportEventRec>,
}

impl Body for ReportEvents {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(6, "EventList")?;
        let mut events = Vec::with_capacity(n);
        for _ in 0..n {
            events.push(ReportEventRec {
                event_type: EventType::from_raw(r.u8("EventType")?),
                event_id: r.u8("EventID")?,
                query_message: EmbeddedMessage::parse(r, "QueryMessage")?,
            });
        }
        Ok(Self { events })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.events.len(), "EventList")?;
        for e in &self.events {
            w.u8(e.event_type.raw());
            w.u8(e.event_id);
            e.query_message.emit(w, "QueryMessage")?;
        }
        Ok(())
    }
}

/// 0x41F1 Event: one report delivered for a subscription.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// `EventID`.
    pub event_id: u8,
    /// `SequenceNumber`, incremented per event (wraps at 255).
    pub sequence_number: u8,
    /// `ReportMessage`: the complete report with its message ID.
    pub report_message: EmbeddedMessage,
}

impl Body for Event {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        EventRef::read(r).map(|e| e.to_owned())
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.event_id);
        w.u8(self.sequence_number);
        self.report_message.emit(w, "ReportMessage")
    }
}

/// An [`Event`] read in place: its report is a slice of the buffer it was read from, not a
/// copy (smoltcp's packet beside its repr). Replay reads one for each of an hour's million
/// events; the owned [`Event`] is read through it, so the layout is written once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// `EventID`.
    pub event_id: u8,
    /// `SequenceNumber`.
    pub sequence_number: u8,
    /// `ReportMessage`: the complete report with its message ID.
    pub report: &'a [u8],
}

impl<'a> EventRef<'a> {
    /// Reads a whole message (ID included) that is an Event; `None` when its ID is another
    /// message's (it is then not an Event at all, whatever its bytes). Errors as
    /// [`Message::parse_with`](crate::jaus::Message::parse_with) gives them for an Event.
    pub fn parse_message(bytes: &'a [u8]) -> Option<Result<Self, DecodeError>> {
        // An Event's own fields need no context (its report is decoded apart).
        static NO_CONTEXT: DecodeContext = DecodeContext::NONE;
        if bytes.get(..2) != Some(&crate::jaus::message::ids::Event.to_le_bytes()[..]) {
            return None;
        }
        let mut r = Reader::new(bytes, 0, &NO_CONTEXT);
        Some((|| {
            r.u16("MessageID")?;
            let e = Self::read(&mut r)?;
            r.finish("Event")?;
            Ok(e)
        })())
    }

    /// Reads the body after the message ID.
    fn read(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            event_id: r.u8("EventID")?,
            sequence_number: r.u8("SequenceNumber")?,
            report: r.bytes_u32("ReportMessage")?,
        })
    }

    /// The report's message ID, if it has one.
    pub fn report_id(&self) -> Option<u16> {
        self.report
            .get(..2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    /// The owned [`Event`].
    pub fn to_owned(&self) -> Event {
        Event {
            event_id: self.event_id,
            sequence_number: self.sequence_number,
            report_message: EmbeddedMessage(self.report.to_vec()),
        }
    }
}

/// 0x2B00 `QueryIdentification`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueryIdentification {
    /// `QueryType`.
    pub query_type: QueryType,
}

impl Body for QueryIdentification {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            query_type: QueryType::from_raw(r.u8("QueryType")?),
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.query_type.raw());
        Ok(())
    }
}

/// 0x2B01 `QueryConfiguration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueryConfiguration {
    /// `QueryType` (2 = subsystem, 3 = node).
    pub query_type: QueryType,
}

impl Body for QueryConfiguration {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            query_type: QueryType::from_raw(r.u8("QueryType")?),
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.query_type.raw());
        Ok(())
    }
}

/// 0x4B00 `ReportIdentification`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportIdentification {
    /// `QueryType` being answered.
    pub query_type: QueryType,
    /// Type of the identified entity.
    #[serde(rename = "type")]
    pub kind: IdentificationType,
    /// Identification string.
    pub identification: String,
}

impl Body for ReportIdentification {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            query_type: QueryType::from_raw(r.u8("QueryType")?),
            kind: IdentificationType::from_raw(r.u16("Type")?),
            identification: r.string_u8("Identification")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.u8(self.query_type.raw());
        w.u16(self.kind.raw());
        w.string_u8(&self.identification, "Identification")
    }
}

/// A component and instance ID pair (`ReportConfiguration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ComponentInstance {
    /// `ComponentID`.
    pub component_id: u8,
    /// `InstanceID`.
    pub instance_id: u8,
}

/// A node and its components (`ReportConfiguration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigurationNode {
    /// `NodeID`.
    pub node_id: u8,
    /// `ComponentList`.
    pub components: Vec<ComponentInstance>,
}

/// 0x4B01 `ReportConfiguration`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportConfiguration {
    /// `NodeList`.
    pub nodes: Vec<ConfigurationNode>,
}

impl Body for ReportConfiguration {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(2, "NodeList")?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            let node_id = r.u8("NodeID")?;
            let m = r.count_u8(2, "ComponentList")?;
            let mut components = Vec::with_capacity(m);
            for _ in 0..m {
                components.push(ComponentInstance {
                    component_id: r.u8("ComponentID")?,
                    instance_id: r.u8("InstanceID")?,
                });
            }
            nodes.push(ConfigurationNode {
                node_id,
                components,
            });
        }
        Ok(Self { nodes })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.nodes.len(), "NodeList")?;
        for n in &self.nodes {
            w.u8(n.node_id);
            w.count_u8(n.components.len(), "ComponentList")?;
            for c in &n.components {
                w.u8(c.component_id);
                w.u8(c.instance_id);
            }
        }
        Ok(())
    }
}

/// One subsystem entry of `ReportSubsystemList`: the subsystem's Discovery component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SubsystemRec {
    /// `SubsystemID`.
    pub subsystem_id: u16,
    /// `NodeID`.
    pub node_id: u8,
    /// `ComponentID`.
    pub component_id: u8,
}

/// 0x4B02 `ReportSubsystemList`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportSubsystemList {
    /// `SubsystemList`.
    pub subsystems: Vec<SubsystemRec>,
}

impl Body for ReportSubsystemList {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(4, "SubsystemList")?;
        let mut subsystems = Vec::with_capacity(n);
        for _ in 0..n {
            subsystems.push(SubsystemRec {
                subsystem_id: r.u16("SubsystemID")?,
                node_id: r.u8("NodeID")?,
                component_id: r.u8("ComponentID")?,
            });
        }
        Ok(Self { subsystems })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.subsystems.len(), "SubsystemList")?;
        for s in &self.subsystems {
            w.u16(s.subsystem_id);
            w.u8(s.node_id);
            w.u8(s.component_id);
        }
        Ok(())
    }
}

/// A service URI and version (`ReportServices`, `RegisterServices`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceRec {
    /// URI, e.g. `urn:jaus:jss:core:Events`.
    pub uri: String,
    /// `MajorVersionNumber`.
    pub major_version_number: u8,
    /// `MinorVersionNumber`.
    pub minor_version_number: u8,
}

impl ServiceRec {
    /// A service record.
    pub fn new(uri: &str, major: u8, minor: u8) -> Self {
        Self {
            uri: uri.to_owned(),
            major_version_number: major,
            minor_version_number: minor,
        }
    }

    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            uri: r.string_u8("URI")?,
            major_version_number: r.u8("MajorVersionNumber")?,
            minor_version_number: r.u8("MinorVersionNumber")?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.string_u8(&self.uri, "URI")?;
        w.u8(self.major_version_number);
        w.u8(self.minor_version_number);
        Ok(())
    }
}

fn parse_services(r: &mut Reader<'_>) -> Result<Vec<ServiceRec>, DecodeError> {
    let n = r.count_u8(3, "ServiceList")?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(ServiceRec::parse(r)?);
    }
    Ok(v)
}

fn emit_services(w: &mut Writer, services: &[ServiceRec]) -> Result<(), EncodeError> {
    w.count_u8(services.len(), "ServiceList")?;
    services.iter().try_for_each(|s| s.emit(w))
}

/// 0x0B00 `RegisterServices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegisterServices {
    /// `ServiceList`.
    pub services: Vec<ServiceRec>,
}

impl Body for RegisterServices {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            services: parse_services(r)?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        emit_services(w, &self.services)
    }
}

/// A node and the component IDs asked about (`QueryServices`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueryServicesNode {
    /// `NodeID` (255 = all nodes).
    pub node_id: u8,
    /// `ComponentIDs` (255 = all components).
    pub components: Vec<u8>,
}

/// 0x2B03 `QueryServices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueryServices {
    /// `NodeList`.
    pub nodes: Vec<QueryServicesNode>,
}

impl QueryServices {
    /// Asks every component of every node.
    pub fn all() -> Self {
        Self {
            nodes: vec![QueryServicesNode {
                node_id: 255,
                components: vec![255],
            }],
        }
    }
}

impl Body for QueryServices {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u8(2, "NodeList")?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            let node_id = r.u8("NodeID")?;
            let m = r.count_u8(1, "ComponentList")?;
            let components = r.bytes(m, "ComponentID")?.to_vec();
            nodes.push(QueryServicesNode {
                node_id,
                components,
            });
        }
        Ok(Self { nodes })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u8(self.nodes.len(), "NodeList")?;
        for n in &self.nodes {
            w.u8(n.node_id);
            w.count_u8(n.components.len(), "ComponentList")?;
            w.bytes(&n.components);
        }
        Ok(())
    }
}

/// A component and its services (`ReportServices`, `ReportServiceList`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentServices {
    /// `ComponentID`.
    pub component_id: u8,
    /// `InstanceID`.
    pub instance_id: u8,
    /// `ServiceList`.
    pub services: Vec<ServiceRec>,
}

/// A node and its components' services.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeServices {
    /// `NodeID`.
    pub node_id: u8,
    /// `ComponentList`.
    pub components: Vec<ComponentServices>,
}

fn parse_node_services(r: &mut Reader<'_>) -> Result<Vec<NodeServices>, DecodeError> {
    let n = r.count_u8(2, "NodeList")?;
    let mut nodes = Vec::with_capacity(n);
    for _ in 0..n {
        let node_id = r.u8("NodeID")?;
        let m = r.count_u8(3, "ComponentList")?;
        let mut components = Vec::with_capacity(m);
        for _ in 0..m {
            components.push(ComponentServices {
                component_id: r.u8("ComponentID")?,
                instance_id: r.u8("InstanceID")?,
                services: parse_services(r)?,
            });
        }
        nodes.push(NodeServices {
            node_id,
            components,
        });
    }
    Ok(nodes)
}

fn emit_node_services(w: &mut Writer, nodes: &[NodeServices]) -> Result<(), EncodeError> {
    w.count_u8(nodes.len(), "NodeList")?;
    for n in nodes {
        w.u8(n.node_id);
        w.count_u8(n.components.len(), "ComponentList")?;
        for c in &n.components {
            w.u8(c.component_id);
            w.u8(c.instance_id);
            emit_services(w, &c.services)?;
        }
    }
    Ok(())
}

/// 0x4B03 `ReportServices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportServices {
    /// `NodeList`.
    pub nodes: Vec<NodeServices>,
}

impl Body for ReportServices {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            nodes: parse_node_services(r)?,
        })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        emit_node_services(w, &self.nodes)
    }
}

/// A component asked about in `QueryServiceList`, with an optional search filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceListComponent {
    /// `ComponentID` (255 = all).
    pub component_id: u8,
    /// `SearchFilter` (PV bit 0).
    pub search_filter: Option<String>,
}

/// A node asked about in `QueryServiceList`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceListNode {
    /// `NodeID` (255 = all).
    pub node_id: u8,
    /// `ComponentList`.
    pub components: Vec<ServiceListComponent>,
}

/// A subsystem asked about in `QueryServiceList`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceListSubsystem {
    /// `SubsystemID` (65535 = all).
    pub subsystem_id: u16,
    /// `NodeList`.
    pub nodes: Vec<ServiceListNode>,
}

/// 0x2B04 `QueryServiceList`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueryServiceList {
    /// `SubsystemList` (u16 count).
    pub subsystems: Vec<ServiceListSubsystem>,
}

impl Body for QueryServiceList {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u16(3, "SubsystemList")?;
        let mut subsystems = Vec::with_capacity(n);
        for _ in 0..n {
            let subsystem_id = r.u16("SubsystemID")?;
            let m = r.count_u8(2, "NodeList")?;
            let mut nodes = Vec::with_capacity(m);
            for _ in 0..m {
                let node_id = r.u8("NodeID")?;
                let k = r.count_u8(2, "ComponentList")?;
                let mut components = Vec::with_capacity(k);
                for _ in 0..k {
                    let pv = r.presence_u8(1, "PresenceVector")?;
                    let component_id = r.u8("ComponentID")?;
                    let search_filter = if pv & 1 != 0 {
                        Some(r.string_u8("SearchFilter")?)
                    } else {
                        None
                    };
                    components.push(ServiceListComponent {
                        component_id,
                        search_filter,
                    });
                }
                nodes.push(ServiceListNode {
                    node_id,
                    components,
                });
            }
            subsystems.push(ServiceListSubsystem {
                subsystem_id,
                nodes,
            });
        }
        Ok(Self { subsystems })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u16(self.subsystems.len(), "SubsystemList")?;
        for s in &self.subsystems {
            w.u16(s.subsystem_id);
            w.count_u8(s.nodes.len(), "NodeList")?;
            for n in &s.nodes {
                w.u8(n.node_id);
                w.count_u8(n.components.len(), "ComponentList")?;
                for c in &n.components {
                    w.u8(u8::from(c.search_filter.is_some()));
                    w.u8(c.component_id);
                    if let Some(f) = &c.search_filter {
                        w.string_u8(f, "SearchFilter")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A subsystem and its nodes' services (`ReportServiceList`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubsystemServices {
    /// `SubsystemID`.
    pub subsystem_id: u16,
    /// `NodeList`.
    pub nodes: Vec<NodeServices>,
}

/// 0x4B04 `ReportServiceList`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportServiceList {
    /// `SubsystemList` (u16 count).
    pub subsystems: Vec<SubsystemServices>,
}

impl Body for ReportServiceList {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count_u16(3, "SubsystemList")?;
        let mut subsystems = Vec::with_capacity(n);
        for _ in 0..n {
            subsystems.push(SubsystemServices {
                subsystem_id: r.u16("SubsystemID")?,
                nodes: parse_node_services(r)?,
            });
        }
        Ok(Self { subsystems })
    }

    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.count_u16(self.subsystems.len(), "SubsystemList")?;
        for s in &self.subsystems {
            w.u16(s.subsystem_id);
            emit_node_services(w, &s.nodes)?;
        }
        Ok(())
    }
}
