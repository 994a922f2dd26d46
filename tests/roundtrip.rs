//! Property tests of the wire codec: every message round-trips exactly when its reals are on the
//! wire grid, off-grid reals come back within one LSB, every truncation fails cleanly, the
//! OpenJAUS dialect round-trips with the context it needs, and no input panics the decoder.
//!
//! The generators below cover every `Message` variant; `message_generator_covers_every_variant`
//! fails when a variant is added to the codec without a generator here.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::collections::BTreeSet;

use jaus_ocu::jaus::core::*;
use jaus_ocu::jaus::dump::decode_datagram;
use jaus_ocu::jaus::iop::*;
use jaus_ocu::jaus::manipulator::*;
use jaus_ocu::jaus::message::{ids, is_truncation, message_name};
use jaus_ocu::jaus::wire::{Scale, scales};
use jaus_ocu::jaus::{
    DecodeContext, Dialect, EmbeddedMessage, EncodeErrorKind, JausId, JointKind, Message,
};
use jaus_ocu::net::reassembly::Reassembler;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

// ---------------------------------------------------------------------------------------------
// Configuration.

/// `n` cases, and no regression files written into the source tree: a failure prints its
/// minimal input, which is what goes into a byte-exact vector test.
fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The known messages, spelled out independently of the codec so a new variant is noticed.

macro_rules! known_messages {
    ($($name:ident),* $(,)?) => {
        /// Every message ID the codec decodes, with its variant name.
        const KNOWN: &[(u16, &str)] = &[$((ids::$name, stringify!($name))),*];
    };
}

known_messages! {
    SetAuthority, Shutdown, Standby, Resume, Reset, SetEmergency, ClearEmergency, RequestControl,
    ReleaseControl, ConfirmControl, RejectControl, CreateEvent, UpdateEvent, CancelEvent,
    ConfirmEventRequest, RejectEventRequest, RegisterServices, QueryAuthority, QueryStatus,
    QueryTimeout, QueryControl, QueryEvents, QueryEventTimeout, QueryHeartbeatPulse,
    QueryIdentification, QueryConfiguration, QuerySubsystemList, QueryServices, QueryServiceList,
    ReportAuthority, ReportStatus, ReportTimeout, ReportControl, ReportEvents, Event,
    ReportEventTimeout, ReportHeartbeatPulse, ReportIdentification, ReportConfiguration,
    ReportSubsystemList, ReportServices, ReportServiceList, SetJointEffort, SetJointPositions,
    SetJointVelocity, SetToolOffset, QueryManipulatorSpecifications, QueryJointEffort,
    QueryJointPositions, QueryJointVelocity, QueryToolOffset, QueryJointForceTorques,
    QueryCommandedJointPositions, QueryEndEffectorPose, ReportManipulatorSpecifications,
    ReportJointEffort, ReportJointPositions, ReportJointVelocity, ReportToolOffset,
    ReportJointForceTorques, ReportCommandedJointPositions, ReportEndEffectorPose,
    QueryManipulatorEndEffectorForceTorque, ReportManipulatorEndEffectorForceTorque,
    QueryPresetPoseCapabilities, QueryCurrentPose, SetCurrentPose, QueryPresetPoseSpecifications,
    ReportPresetPoseCapabilities, ReportCurrentPose, ReportTransitionCompleted,
    ReportPresetPoseSpecifications, SetJointMotionProfile, QueryJointMotionProfile,
    ReportJointMotionProfile, QueryCommandedJointVelocity, ReportCommandedJointVelocity,
    SetEndEffectorVelocityState, QueryCommandedEndEffectorVelocityState,
    ReportCommandedEndEffectorVelocityState, QueryEndEffectorVelocityState,
    ReportEndEffectorVelocityState,
}

/// Every scale a message uses: the `scales` constants and the variable-field families.
fn all_scales() -> Vec<(&'static str, Scale)> {
    vec![
        ("JOINT_POSITION_RAD", scales::JOINT_POSITION_RAD),
        ("JOINT_POSITION_M", scales::JOINT_POSITION_M),
        ("JOINT_VELOCITY_RAD", scales::JOINT_VELOCITY_RAD),
        ("JOINT_VELOCITY_M", scales::JOINT_VELOCITY_M),
        ("JOINT_TORQUE", scales::JOINT_TORQUE),
        ("JOINT_FORCE", scales::JOINT_FORCE),
        ("POSITION_30M", scales::POSITION_30M),
        ("QUATERNION", scales::QUATERNION),
        ("EFFORT", scales::EFFORT),
        ("TOOL_OFFSET", scales::TOOL_OFFSET),
        ("EVENT_RATE", scales::EVENT_RATE),
        ("IOP_FORCE", scales::IOP_FORCE),
        ("IOP_TORQUE", scales::IOP_TORQUE),
        ("LENGTH_U16", scales::LENGTH_U16),
        ("ANGLE_U16", scales::ANGLE_U16),
        ("LIMIT_RAD", scales::LIMIT_RAD),
        ("LIMIT_M", scales::LIMIT_M),
        ("MAX_SPEED_RAD", scales::MAX_SPEED_RAD),
        ("MAX_SPEED_M", scales::MAX_SPEED_M),
        ("MAX_EFFORT", scales::MAX_EFFORT),
        ("RADIUS", scales::RADIUS),
        ("PROFILE_RAD", scales::PROFILE_RAD),
        ("PROFILE_SPEED_M", scales::PROFILE_SPEED_M),
        ("PROFILE_ACCEL_M", scales::PROFILE_ACCEL_M),
        ("EE_ANGULAR_VELOCITY", scales::EE_ANGULAR_VELOCITY),
        ("EE_LINEAR_VELOCITY", scales::EE_LINEAR_VELOCITY),
        ("POSITION.revolute", POSITION.revolute),
        ("POSITION.prismatic", POSITION.prismatic),
        ("VELOCITY.revolute", VELOCITY.revolute),
        ("VELOCITY.prismatic", VELOCITY.prismatic),
        ("FORCE_TORQUE.revolute", FORCE_TORQUE.revolute),
        ("FORCE_TORQUE.prismatic", FORCE_TORQUE.prismatic),
    ]
}

// ---------------------------------------------------------------------------------------------
// Generators: reals.

/// How a generator picks the real value of a scaled field.
type Reals = fn(Scale) -> BoxedStrategy<f64>;

// The generators of reals draw a fixed tuple of plain numbers and map it rather than use
// `prop_oneof!` or `option::of`: proptest clones its runner for every alternative before the
// one it picks, which made message generation 10 to 70 times slower in debug builds.

/// Grid point `sel`/`raw` of `s`: the two ends and the middle pair often, any integer otherwise.
fn grid_point(s: Scale, sel: u8, raw: u32) -> f64 {
    let max = s.max_int();
    let i = match sel {
        0 => 0,
        1 => max,
        2 => max / 2,
        3 => max / 2 + 1,
        _ => (u64::from(raw) % (u64::from(max) + 1)) as u32,
    };
    s.decode(i)
}

/// Reals exactly on the wire grid (`decode` of an integer in `0..=max_int`).
fn on_grid(s: Scale) -> BoxedStrategy<f64> {
    (0u8..16, any::<u32>())
        .prop_map(move |(sel, raw)| grid_point(s, sel, raw))
        .boxed()
}

/// Real `how`/`raw`/`f` in `[lo, hi]`: the ends, uniform values, values between two grid points
/// and exact grid midpoints (where rounding decides).
fn real_in_range(s: Scale, how: u8, raw: u32, f: f64) -> f64 {
    let i = (u64::from(raw) % u64::from(s.max_int())) as u32;
    match how {
        0 => s.lo,
        1 => s.hi,
        2..=5 => (s.lo + f * (s.hi - s.lo)).min(s.hi),
        6..=9 => (s.decode(i) + f * s.lsb()).min(s.hi),
        _ => (s.decode(i) + 0.5 * s.lsb()).min(s.hi),
    }
}

fn real_in_range_parts() -> impl Strategy<Value = (u8, u32, f64)> {
    (0u8..12, any::<u32>(), 0.0..1.0f64)
}

/// Arbitrary (mostly off-grid) reals in `[lo, hi]`.
fn in_range(s: Scale) -> BoxedStrategy<f64> {
    real_in_range_parts()
        .prop_map(move |(how, raw, f)| real_in_range(s, how, raw, f))
        .boxed()
}

/// Real `how`/`d`/`any` outside `[lo, hi]`: just outside, far outside, arbitrary, NaN, ±inf.
fn real_out_of_range(s: Scale, how: u8, d: f64, any: f64) -> f64 {
    let span = s.hi - s.lo;
    match how {
        0 => s.hi.next_up(),
        1 => s.lo.next_down(),
        4 if !(s.lo..=s.hi).contains(&any) => any,
        2 | 4 => s.hi + d * span,
        3 => s.lo - d * span,
        5 => f64::NAN,
        6 => f64::INFINITY,
        7 => f64::NEG_INFINITY,
        8 => f64::MAX,
        _ => f64::MIN,
    }
}

fn real_out_of_range_parts() -> impl Strategy<Value = (u8, f64, f64)> {
    (0u8..10, 1e-9..=1e9f64, any::<f64>())
}

/// One of two values with even odds (a cheaper two-way `prop_oneof!`, see above).
fn either<T: std::fmt::Debug>(
    a: impl Strategy<Value = T>,
    b: impl Strategy<Value = T>,
) -> impl Strategy<Value = T> {
    (any::<bool>(), a, b).prop_map(|(second, a, b)| if second { b } else { a })
}

/// `Some(v)` or `None` with even odds (a cheaper `option::of`, see above).
fn maybe<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    (any::<bool>(), s).prop_map(|(present, v)| present.then_some(v))
}

// ---------------------------------------------------------------------------------------------
// Generators: small pieces.

/// Printable ASCII, up to `max` characters.
fn text(max: usize) -> impl Strategy<Value = String> + Clone {
    vec(0x20u8..=0x7e, 0..=max).prop_map(|b| String::from_utf8(b).expect("ASCII is UTF-8"))
}

/// A u8 enumeration value: the defined values (all small) often, any byte otherwise.
fn enum_u8() -> impl Strategy<Value = u8> {
    either(0u8..=7, any::<u8>())
}

fn identification_type() -> impl Strategy<Value = IdentificationType> {
    prop_oneof![
        select(vec![0u16, 10001, 20001, 30001, 40001, 50001, 60001]),
        any::<u16>(),
    ]
    .prop_map(IdentificationType::from_raw)
}

fn event_type() -> impl Strategy<Value = EventType> {
    enum_u8().prop_map(EventType::from_raw)
}

fn query_type() -> impl Strategy<Value = QueryType> {
    enum_u8().prop_map(QueryType::from_raw)
}

fn jaus_id() -> impl Strategy<Value = JausId> {
    any::<u32>().prop_map(JausId::from_u32)
}

/// A joint value of a random kind, with that kind's scale from `family`.
fn joint_value(family: VariableFamily, r: Reals) -> impl Strategy<Value = JointValue> + Clone {
    (any::<bool>(), r(family.revolute), r(family.prismatic)).prop_map(|(prismatic, rv, pv)| {
        if prismatic {
            JointValue::prismatic(pv)
        } else {
            JointValue::revolute(rv)
        }
    })
}

fn joint_values(family: VariableFamily, r: Reals) -> impl Strategy<Value = Vec<JointValue>> {
    vec(joint_value(family, r), 0..=8)
}

/// A joint motion profile: a list of entries of random kinds, each with its kind's scales.
fn joint_motion_profiles(r: Reals) -> impl Strategy<Value = Vec<JointMotionProfile>> {
    let entry = (
        any::<bool>(),
        (
            r(scales::PROFILE_RAD),
            r(scales::PROFILE_RAD),
            r(scales::PROFILE_RAD),
        ),
        (
            r(scales::PROFILE_SPEED_M),
            r(scales::PROFILE_ACCEL_M),
            r(scales::PROFILE_ACCEL_M),
        ),
    )
        .prop_map(|(prismatic, rv, pv)| {
            let (joint_type, (max_speed, max_acceleration, max_deceleration)) = if prismatic {
                (JointKind::Prismatic, pv)
            } else {
                (JointKind::Revolute, rv)
            };
            JointMotionProfile {
                joint_type,
                max_speed,
                max_acceleration,
                max_deceleration,
            }
        });
    vec(entry, 0..=8)
}

/// A tool-point twist: angular X, Y, Z then linear X, Y, Z, each over its own scale.
fn end_effector_velocity(r: Reals) -> impl Strategy<Value = EndEffectorVelocity> {
    let w = scales::EE_ANGULAR_VELOCITY;
    let v = scales::EE_LINEAR_VELOCITY;
    ((r(w), r(w), r(w)), (r(v), r(v), r(v))).prop_map(|((wx, wy, wz), (vx, vy, vz))| {
        EndEffectorVelocity {
            angular: [wx, wy, wz],
            linear: [vx, vy, vz],
        }
    })
}

fn pose(r: Reals) -> impl Strategy<Value = Pose> {
    (
        r(scales::POSITION_30M),
        r(scales::POSITION_30M),
        r(scales::POSITION_30M),
        r(scales::QUATERNION),
        r(scales::QUATERNION),
        r(scales::QUATERNION),
        r(scales::QUATERNION),
    )
        .prop_map(|(x, y, z, d, a, b, c)| Pose {
            x,
            y,
            z,
            d,
            a,
            b,
            c,
        })
}

fn first_joint(r: Reals) -> impl Strategy<Value = FirstJointParameters> {
    let revolute = (
        r(scales::LENGTH_U16),
        maybe(r(scales::LIMIT_RAD)),
        maybe(r(scales::LIMIT_RAD)),
        maybe(r(scales::MAX_SPEED_RAD)),
        maybe(r(scales::MAX_EFFORT)),
        maybe(r(scales::RADIUS)),
    )
        .prop_map(|(offset, min, max, speed, torque, radius)| {
            FirstJointParameters::Revolute(RevoluteJoint1 {
                joint1_offset: offset,
                joint1_min_value: min,
                joint1_max_value: max,
                joint1_max_speed: speed,
                joint1_max_torque: torque,
                offset_bounding_cylinder_radius: radius,
            })
        });
    let prismatic = (
        r(scales::ANGLE_U16),
        r(scales::LIMIT_M),
        r(scales::LIMIT_M),
        maybe(r(scales::MAX_SPEED_M)),
        maybe(r(scales::MAX_EFFORT)),
        maybe(r(scales::RADIUS)),
    )
        .prop_map(|(angle, min, max, speed, force, radius)| {
            FirstJointParameters::Prismatic(PrismaticJoint1 {
                joint1_angle: angle,
                joint1_min_value: min,
                joint1_max_value: max,
                joint1_max_speed: speed,
                joint1_max_force: force,
                joint_bounding_cylinder_radius: radius,
            })
        });
    either(revolute, prismatic)
}

fn joint_specification(r: Reals) -> impl Strategy<Value = JointSpecification> {
    let revolute = (
        r(scales::LENGTH_U16),
        r(scales::ANGLE_U16),
        r(scales::LENGTH_U16),
        maybe(r(scales::LIMIT_RAD)),
        maybe(r(scales::LIMIT_RAD)),
        maybe(r(scales::MAX_SPEED_RAD)),
        maybe(r(scales::MAX_EFFORT)),
        maybe(r(scales::RADIUS)),
        maybe(r(scales::RADIUS)),
    )
        .prop_map(
            |(length, twist, offset, min, max, speed, torque, offset_radius, link_radius)| {
                JointSpecification::Revolute(RevoluteJointSpecification {
                    link_length: length,
                    twist_angle: twist,
                    joint_offset: offset,
                    min_value: min,
                    max_value: max,
                    max_speed: speed,
                    max_torque: torque,
                    offset_bounding_cylinder_radius: offset_radius,
                    link_length_bounding_cylinder_radius: link_radius,
                })
            },
        );
    let prismatic = (
        r(scales::LENGTH_U16),
        r(scales::ANGLE_U16),
        r(scales::ANGLE_U16),
        r(scales::LIMIT_M),
        r(scales::LIMIT_M),
        maybe(r(scales::MAX_SPEED_M)),
        maybe(r(scales::MAX_EFFORT)),
        maybe(r(scales::RADIUS)),
        maybe(r(scales::RADIUS)),
    )
        .prop_map(
            |(length, twist, angle, min, max, speed, force, joint_radius, link_radius)| {
                JointSpecification::Prismatic(PrismaticJointSpecification {
                    link_length: length,
                    twist_angle: twist,
                    joint_angle: angle,
                    min_value: min,
                    max_value: max,
                    max_speed: speed,
                    max_force: force,
                    joint_bounding_cylinder_radius: joint_radius,
                    link_length_bounding_cylinder_radius: link_radius,
                })
            },
        );
    either(revolute, prismatic)
}

/// A specification with `names` as its `JointNamesList`.
fn manipulator_specifications(
    r: Reals,
    names: impl Strategy<Value = Option<Vec<String>>>,
) -> impl Strategy<Value = ReportManipulatorSpecifications> {
    (
        maybe(pose(r)),
        first_joint(r),
        vec(joint_specification(r), 0..=12),
        names,
    )
        .prop_map(
            |(frame, first, specs, names)| ReportManipulatorSpecifications {
                manipulator_coordinate_system: frame,
                first_joint_parameters: first,
                joint_specifications: specs,
                joint_names: names,
            },
        )
}

fn end_effector_force_torque(
    r: Reals,
) -> impl Strategy<Value = ReportManipulatorEndEffectorForceTorque> {
    (
        maybe(r(scales::IOP_FORCE)),
        maybe(r(scales::IOP_FORCE)),
        maybe(r(scales::IOP_FORCE)),
        maybe(r(scales::IOP_TORQUE)),
        maybe(r(scales::IOP_TORQUE)),
        maybe(r(scales::IOP_TORQUE)),
    )
        .prop_map(
            |(fx, fy, fz, tx, ty, tz)| ReportManipulatorEndEffectorForceTorque {
                force_x: fx,
                force_y: fy,
                force_z: fz,
                torque_x: tx,
                torque_y: ty,
                torque_z: tz,
            },
        )
}

fn report_joint_positions(r: Reals) -> impl Strategy<Value = ReportJointPositions> {
    joint_values(POSITION, r).prop_map(|joint_positions| ReportJointPositions { joint_positions })
}

/// An embedded message (CreateEvent.QueryMessage, Event.ReportMessage): the encoding of a
/// small message, or now and then opaque bytes, which the outer message must carry unchanged.
fn embedded() -> impl Strategy<Value = EmbeddedMessage> + Clone {
    let queries = select(vec![
        Message::QueryJointPositions(QueryJointPositions),
        Message::QueryJointVelocity(QueryJointVelocity),
        Message::QueryEndEffectorPose(QueryEndEffectorPose),
        Message::QueryStatus(QueryStatus),
        Message::QueryHeartbeatPulse(QueryHeartbeatPulse),
        Message::QueryControl(QueryControl),
    ]);
    let inner = prop_oneof![
        3 => queries,
        1 => query_type().prop_map(|query_type| Message::from(QueryIdentification { query_type })),
        3 => report_joint_positions(on_grid).prop_map(Message::from),
    ]
    .prop_map(|m| EmbeddedMessage::new(&m).expect("embedded message encodes"));
    prop_oneof![
        6 => inner,
        1 => vec(any::<u8>(), 0..=16).prop_map(EmbeddedMessage),
    ]
    .boxed()
}

fn service_rec() -> impl Strategy<Value = ServiceRec> + Clone {
    (text(40), any::<u8>(), any::<u8>()).prop_map(|(uri, major, minor)| ServiceRec {
        uri,
        major_version_number: major,
        minor_version_number: minor,
    })
}

/// Nested lists stay short (0..=3 below the top level) so messages stay small.
fn node_services() -> impl Strategy<Value = NodeServices> + Clone {
    let component = (any::<u8>(), any::<u8>(), vec(service_rec(), 0..=3)).prop_map(
        |(component_id, instance_id, services)| ComponentServices {
            component_id,
            instance_id,
            services,
        },
    );
    (any::<u8>(), vec(component, 0..=3)).prop_map(|(node_id, components)| NodeServices {
        node_id,
        components,
    })
}

fn preset_target(r: Reals) -> impl Strategy<Value = PresetTarget> {
    prop_oneof![
        joint_values(POSITION, r)
            .prop_map(|joint_positions| PresetTarget::JointPositions { joint_positions }),
        pose(r).prop_map(|pose| PresetTarget::EndEffectorPose { pose }),
        (r(scales::JOINT_POSITION_RAD), r(scales::JOINT_POSITION_RAD)).prop_map(|(a, b)| {
            PresetTarget::PanTilt {
                joint1_position: a,
                joint2_position: b,
            }
        }),
        (any::<u8>(), r(scales::ANGLE_U16)).prop_map(|(stabilizer_id, position)| {
            PresetTarget::Stabilizer {
                stabilizer_id,
                position,
            }
        }),
    ]
}

// ---------------------------------------------------------------------------------------------
// Generators: one per message variant.

type Gen = BoxedStrategy<Message>;

fn variant<T, S>(s: S) -> Gen
where
    T: Into<Message> + std::fmt::Debug + 'static,
    S: Strategy<Value = T> + 'static,
{
    s.prop_map(Into::into).boxed()
}

fn core_generators() -> Vec<Gen> {
    let rate = || on_grid(scales::EVENT_RATE);
    vec![
        variant(any::<u8>().prop_map(|authority_code| SetAuthority { authority_code })),
        variant(Just(Shutdown)),
        variant(Just(Standby)),
        variant(Just(Resume)),
        variant(Just(Reset)),
        variant(any::<u16>().prop_map(|emergency_code| SetEmergency { emergency_code })),
        variant(any::<u16>().prop_map(|emergency_code| ClearEmergency { emergency_code })),
        variant(any::<u8>().prop_map(|authority_code| RequestControl { authority_code })),
        variant(Just(ReleaseControl)),
        variant(enum_u8().prop_map(|c| ConfirmControl {
            response_code: ConfirmControlCode::from_raw(c),
        })),
        variant(enum_u8().prop_map(|c| RejectControl {
            response_code: RejectControlCode::from_raw(c),
        })),
        variant((any::<u8>(), event_type(), rate(), embedded()).prop_map(
            |(request_id, event_type, rate, query_message)| CreateEvent {
                request_id,
                event_type,
                requested_periodic_rate: rate,
                query_message,
            },
        )),
        variant(
            (any::<u8>(), event_type(), rate(), any::<u8>(), embedded()).prop_map(
                |(request_id, event_type, rate, event_id, query_message)| UpdateEvent {
                    request_id,
                    event_type,
                    requested_periodic_rate: rate,
                    event_id,
                    query_message,
                },
            ),
        ),
        variant(
            (any::<u8>(), any::<u8>()).prop_map(|(request_id, event_id)| CancelEvent {
                request_id,
                event_id,
            }),
        ),
        variant(
            (any::<u8>(), any::<u8>(), rate()).prop_map(|(request_id, event_id, rate)| {
                ConfirmEventRequest {
                    request_id,
                    event_id,
                    confirmed_periodic_rate: rate,
                }
            }),
        ),
        variant(
            (
                any::<u8>(),
                maybe(enum_u8().prop_map(RejectEventCode::from_raw)),
                maybe(text(80)),
            )
                .prop_map(|(request_id, response_code, error_message)| {
                    RejectEventRequest {
                        request_id,
                        response_code,
                        error_message,
                    }
                }),
        ),
        variant(vec(service_rec(), 0..=8).prop_map(|services| RegisterServices { services })),
        variant(Just(QueryAuthority)),
        variant(Just(QueryStatus)),
        variant(Just(QueryTimeout)),
        variant(Just(QueryControl)),
        variant(prop_oneof![
            any::<u16>().prop_map(|message_code| QueryEvents::MessageId { message_code }),
            event_type().prop_map(|event_type| QueryEvents::EventType { event_type }),
            any::<u8>().prop_map(|event_id| QueryEvents::EventId { event_id }),
            any::<u8>().prop_map(|all_events| QueryEvents::AllEvents { all_events }),
        ]),
        variant(Just(QueryEventTimeout)),
        variant(Just(QueryHeartbeatPulse)),
        variant(query_type().prop_map(|query_type| QueryIdentification { query_type })),
        variant(query_type().prop_map(|query_type| QueryConfiguration { query_type })),
        variant(Just(QuerySubsystemList)),
        variant(
            vec((any::<u8>(), vec(any::<u8>(), 0..=8)), 0..=8).prop_map(|nodes| QueryServices {
                nodes: nodes
                    .into_iter()
                    .map(|(node_id, components)| QueryServicesNode {
                        node_id,
                        components,
                    })
                    .collect(),
            }),
        ),
        variant({
            let component =
                (any::<u8>(), maybe(text(40))).prop_map(|(component_id, search_filter)| {
                    ServiceListComponent {
                        component_id,
                        search_filter,
                    }
                });
            let node = (any::<u8>(), vec(component, 0..=3)).prop_map(|(node_id, components)| {
                ServiceListNode {
                    node_id,
                    components,
                }
            });
            let subsystem = (any::<u16>(), vec(node, 0..=3)).prop_map(|(subsystem_id, nodes)| {
                ServiceListSubsystem {
                    subsystem_id,
                    nodes,
                }
            });
            vec(subsystem, 0..=8).prop_map(|subsystems| QueryServiceList { subsystems })
        }),
        variant(any::<u8>().prop_map(|authority_code| ReportAuthority { authority_code })),
        variant(
            (enum_u8(), any::<u32>()).prop_map(|(status, reserved)| ReportStatus {
                status: Status::from_raw(status),
                reserved,
            }),
        ),
        variant(any::<u8>().prop_map(|timeout| ReportTimeout { timeout })),
        variant(
            (any::<u16>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(
                |(subsystem_id, node_id, component_id, authority_code)| ReportControl {
                    subsystem_id,
                    node_id,
                    component_id,
                    authority_code,
                },
            ),
        ),
        variant(
            vec((event_type(), any::<u8>(), embedded()), 0..=8).prop_map(|events| ReportEvents {
                events: events
                    .into_iter()
                    .map(|(event_type, event_id, query_message)| ReportEventRec {
                        event_type,
                        event_id,
                        query_message,
                    })
                    .collect(),
            }),
        ),
        variant((any::<u8>(), any::<u8>(), embedded()).prop_map(
            |(event_id, sequence_number, report_message)| Event {
                event_id,
                sequence_number,
                report_message,
            },
        )),
        variant(any::<u8>().prop_map(|timeout| ReportEventTimeout { timeout })),
        variant(Just(ReportHeartbeatPulse)),
        variant((query_type(), identification_type(), text(40)).prop_map(
            |(query_type, kind, identification)| ReportIdentification {
                query_type,
                kind,
                identification,
            },
        )),
        variant(
            vec((any::<u8>(), vec((any::<u8>(), any::<u8>()), 0..=8)), 0..=8).prop_map(|nodes| {
                ReportConfiguration {
                    nodes: nodes
                        .into_iter()
                        .map(|(node_id, components)| ConfigurationNode {
                            node_id,
                            components: components
                                .into_iter()
                                .map(|(component_id, instance_id)| ComponentInstance {
                                    component_id,
                                    instance_id,
                                })
                                .collect(),
                        })
                        .collect(),
                }
            }),
        ),
        variant(
            vec((any::<u16>(), any::<u8>(), any::<u8>()), 0..=8).prop_map(|subsystems| {
                ReportSubsystemList {
                    subsystems: subsystems
                        .into_iter()
                        .map(|(subsystem_id, node_id, component_id)| SubsystemRec {
                            subsystem_id,
                            node_id,
                            component_id,
                        })
                        .collect(),
                }
            }),
        ),
        variant(vec(node_services(), 0..=8).prop_map(|nodes| ReportServices { nodes })),
        variant(
            vec((any::<u16>(), vec(node_services(), 0..=3)), 0..=8).prop_map(|subsystems| {
                ReportServiceList {
                    subsystems: subsystems
                        .into_iter()
                        .map(|(subsystem_id, nodes)| SubsystemServices {
                            subsystem_id,
                            nodes,
                        })
                        .collect(),
                }
            }),
        ),
    ]
}

fn manipulator_generators() -> Vec<Gen> {
    let efforts = || vec(on_grid(scales::EFFORT), 0..=8);
    let tool = || {
        (
            on_grid(scales::TOOL_OFFSET),
            on_grid(scales::TOOL_OFFSET),
            on_grid(scales::TOOL_OFFSET),
        )
    };
    vec![
        variant(efforts().prop_map(|joint_efforts| SetJointEffort { joint_efforts })),
        variant(
            joint_values(POSITION, on_grid)
                .prop_map(|joint_positions| SetJointPositions { joint_positions }),
        ),
        variant(
            joint_values(VELOCITY, on_grid)
                .prop_map(|joint_velocities| SetJointVelocity { joint_velocities }),
        ),
        variant(tool().prop_map(|(x, y, z)| SetToolOffset { x, y, z })),
        variant(
            any::<u8>()
                .prop_map(|presence_vector| QueryManipulatorSpecifications { presence_vector }),
        ),
        variant(Just(QueryJointEffort)),
        variant(Just(QueryJointPositions)),
        variant(Just(QueryJointVelocity)),
        variant(Just(QueryToolOffset)),
        variant(Just(QueryJointForceTorques)),
        variant(Just(QueryCommandedJointPositions)),
        variant(Just(QueryEndEffectorPose)),
        variant(manipulator_specifications(
            on_grid,
            maybe(vec(text(40), 0..=8)),
        )),
        variant(efforts().prop_map(|joint_efforts| ReportJointEffort { joint_efforts })),
        variant(report_joint_positions(on_grid)),
        variant(
            joint_values(VELOCITY, on_grid)
                .prop_map(|joint_velocities| ReportJointVelocity { joint_velocities }),
        ),
        variant(tool().prop_map(|(x, y, z)| ReportToolOffset { x, y, z })),
        variant(
            joint_values(FORCE_TORQUE, on_grid).prop_map(|joint_force_torques| {
                ReportJointForceTorques {
                    joint_force_torques,
                }
            }),
        ),
        variant(
            joint_values(POSITION, on_grid)
                .prop_map(|joint_positions| ReportCommandedJointPositions { joint_positions }),
        ),
        variant(pose(on_grid).prop_map(|pose| ReportEndEffectorPose { pose })),
        variant(
            joint_motion_profiles(on_grid).prop_map(|joint_motion_profiles| {
                SetJointMotionProfile {
                    joint_motion_profiles,
                }
            }),
        ),
        variant(Just(QueryJointMotionProfile)),
        variant(
            joint_motion_profiles(on_grid).prop_map(|joint_motion_profiles| {
                ReportJointMotionProfile {
                    joint_motion_profiles,
                }
            }),
        ),
        variant(Just(QueryCommandedJointVelocity)),
        variant(
            joint_values(VELOCITY, on_grid)
                .prop_map(|joint_velocities| ReportCommandedJointVelocity { joint_velocities }),
        ),
        variant(
            end_effector_velocity(on_grid)
                .prop_map(|velocity| SetEndEffectorVelocityState { velocity }),
        ),
        variant(Just(QueryCommandedEndEffectorVelocityState)),
        variant(
            end_effector_velocity(on_grid)
                .prop_map(|velocity| ReportCommandedEndEffectorVelocityState { velocity }),
        ),
        variant(Just(QueryEndEffectorVelocityState)),
        variant(
            end_effector_velocity(on_grid)
                .prop_map(|velocity| ReportEndEffectorVelocityState { velocity }),
        ),
    ]
}

fn iop_generators() -> Vec<Gen> {
    vec![
        variant(
            any::<u8>().prop_map(|presence_vector| QueryManipulatorEndEffectorForceTorque {
                presence_vector,
            }),
        ),
        variant(end_effector_force_torque(on_grid)),
        variant(Just(QueryPresetPoseCapabilities)),
        variant(Just(QueryCurrentPose)),
        variant(
            (any::<u8>(), any::<u8>()).prop_map(|(request_id, pose_id)| SetCurrentPose {
                request_id,
                pose_id,
            }),
        ),
        variant(Just(QueryPresetPoseSpecifications)),
        variant({
            let transition =
                (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(start, end, properties)| {
                    Transition {
                        start_pose_id: start,
                        end_pose_id: end,
                        transition_properties: properties,
                    }
                });
            let pose = (any::<u8>(), text(40), vec(transition, 0..=8)).prop_map(
                |(pose_id, pose_name, transitions)| PoseCapability {
                    pose_id,
                    pose_name,
                    transitions,
                },
            );
            vec(pose, 0..=8).prop_map(|poses| ReportPresetPoseCapabilities { poses })
        }),
        variant(prop_oneof![
            any::<u8>().prop_map(|current_state_id| ReportCurrentPose::AtPose { current_state_id }),
            (any::<u8>(), any::<u8>()).prop_map(|(start_state_id, end_state_id)| {
                ReportCurrentPose::Moving {
                    start_state_id,
                    end_state_id,
                }
            }),
        ]),
        variant((any::<u8>(), enum_u8()).prop_map(|(request_id, status)| {
            ReportTransitionCompleted {
                request_id,
                transition_status: TransitionStatus::from_raw(status),
            }
        })),
        variant({
            let positions = (jaus_id(), preset_target(on_grid))
                .prop_map(|(jaus_id, target)| PresetPositions { jaus_id, target });
            let pose = (any::<u8>(), text(40), vec(positions, 0..=4)).prop_map(
                |(pose_id, pose_name, positions)| PresetPoseSpecification {
                    pose_id,
                    pose_name,
                    positions,
                },
            );
            vec(pose, 0..=8).prop_map(|poses| ReportPresetPoseSpecifications { poses })
        }),
    ]
}

/// Any message the codec knows (not `Unknown`), every real on the wire grid.
fn any_known_message() -> impl Strategy<Value = Message> {
    let mut all = core_generators();
    all.extend(manipulator_generators());
    all.extend(iop_generators());
    // An index then the chosen generator (not `Union`, which clones the runner per option).
    (0..all.len()).prop_flat_map(move |i| all[i].clone())
}

/// An ID the codec does not know.
fn unknown_id() -> impl Strategy<Value = u16> {
    any::<u16>().prop_filter("an ID the codec does not know", |&id| {
        message_name(id).is_none()
    })
}

/// A message ID, usually a known one, then up to 64 arbitrary bytes.
fn id_biased_bytes() -> impl Strategy<Value = Vec<u8>> {
    let ids: Vec<u16> = KNOWN.iter().map(|&(id, _)| id).collect();
    (
        prop_oneof![9 => select(ids), 1 => any::<u16>()],
        vec(any::<u8>(), 0..=64),
    )
        .prop_map(|(id, body)| {
            let mut b = id.to_le_bytes().to_vec();
            b.extend(body);
            b
        })
}

// ---------------------------------------------------------------------------------------------
// Comparisons within one LSB (off-grid reals).

fn near(field: &str, s: Scale, sent: f64, got: f64) -> Result<(), TestCaseError> {
    prop_assert!(
        (sent - got).abs() <= s.lsb(),
        "{field}: sent {sent}, received {got}, more than one LSB ({}) apart",
        s.lsb()
    );
    Ok(())
}

fn near_opt(
    field: &str,
    s: Scale,
    sent: Option<f64>,
    got: Option<f64>,
) -> Result<(), TestCaseError> {
    match (sent, got) {
        (Some(a), Some(b)) => near(field, s, a, b),
        (None, None) => Ok(()),
        _ => Err(TestCaseError::fail(format!(
            "{field}: sent {sent:?}, received {got:?}"
        ))),
    }
}

fn near_joint_values(
    family: VariableFamily,
    sent: &[JointValue],
    got: &[JointValue],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(sent.len(), got.len(), "joint count");
    for (a, b) in sent.iter().zip(got) {
        prop_assert_eq!(a.joint_type, b.joint_type);
        near("joint value", family.scale(a.joint_type), a.value, b.value)?;
    }
    Ok(())
}

fn near_pose(sent: &Pose, got: &Pose) -> Result<(), TestCaseError> {
    near("X", scales::POSITION_30M, sent.x, got.x)?;
    near("Y", scales::POSITION_30M, sent.y, got.y)?;
    near("Z", scales::POSITION_30M, sent.z, got.z)?;
    near("D", scales::QUATERNION, sent.d, got.d)?;
    near("A", scales::QUATERNION, sent.a, got.a)?;
    near("B", scales::QUATERNION, sent.b, got.b)?;
    near("C", scales::QUATERNION, sent.c, got.c)
}

fn near_first_joint(
    sent: &FirstJointParameters,
    got: &FirstJointParameters,
) -> Result<(), TestCaseError> {
    use scales::*;
    match (sent, got) {
        (FirstJointParameters::Revolute(a), FirstJointParameters::Revolute(b)) => {
            near("Joint1Offset", LENGTH_U16, a.joint1_offset, b.joint1_offset)?;
            near_opt(
                "Joint1MinValue",
                LIMIT_RAD,
                a.joint1_min_value,
                b.joint1_min_value,
            )?;
            near_opt(
                "Joint1MaxValue",
                LIMIT_RAD,
                a.joint1_max_value,
                b.joint1_max_value,
            )?;
            near_opt(
                "Joint1MaxSpeed",
                MAX_SPEED_RAD,
                a.joint1_max_speed,
                b.joint1_max_speed,
            )?;
            near_opt(
                "Joint1MaxTorque",
                MAX_EFFORT,
                a.joint1_max_torque,
                b.joint1_max_torque,
            )?;
            near_opt(
                "OffsetBoundingCylinderRadius",
                RADIUS,
                a.offset_bounding_cylinder_radius,
                b.offset_bounding_cylinder_radius,
            )
        }
        (FirstJointParameters::Prismatic(a), FirstJointParameters::Prismatic(b)) => {
            near("Joint1Angle", ANGLE_U16, a.joint1_angle, b.joint1_angle)?;
            near(
                "Joint1MinValue",
                LIMIT_M,
                a.joint1_min_value,
                b.joint1_min_value,
            )?;
            near(
                "Joint1MaxValue",
                LIMIT_M,
                a.joint1_max_value,
                b.joint1_max_value,
            )?;
            near_opt(
                "Joint1MaxSpeed",
                MAX_SPEED_M,
                a.joint1_max_speed,
                b.joint1_max_speed,
            )?;
            near_opt(
                "Joint1MaxForce",
                MAX_EFFORT,
                a.joint1_max_force,
                b.joint1_max_force,
            )?;
            near_opt(
                "JointBoundingCylinderRadius",
                RADIUS,
                a.joint_bounding_cylinder_radius,
                b.joint_bounding_cylinder_radius,
            )
        }
        _ => Err(TestCaseError::fail(format!(
            "joint 1 kind changed: {sent:?} -> {got:?}"
        ))),
    }
}

fn near_joint_specification(
    sent: &JointSpecification,
    got: &JointSpecification,
) -> Result<(), TestCaseError> {
    use scales::*;
    match (sent, got) {
        (JointSpecification::Revolute(a), JointSpecification::Revolute(b)) => {
            near("LinkLength", LENGTH_U16, a.link_length, b.link_length)?;
            near("TwistAngle", ANGLE_U16, a.twist_angle, b.twist_angle)?;
            near("JointOffset", LENGTH_U16, a.joint_offset, b.joint_offset)?;
            near_opt("MinValue", LIMIT_RAD, a.min_value, b.min_value)?;
            near_opt("MaxValue", LIMIT_RAD, a.max_value, b.max_value)?;
            near_opt("MaxSpeed", MAX_SPEED_RAD, a.max_speed, b.max_speed)?;
            near_opt("MaxTorque", MAX_EFFORT, a.max_torque, b.max_torque)?;
            near_opt(
                "OffsetBoundingCylinderRadius",
                RADIUS,
                a.offset_bounding_cylinder_radius,
                b.offset_bounding_cylinder_radius,
            )?;
            near_opt(
                "LinkLengthBoundingCylinderRadius",
                RADIUS,
                a.link_length_bounding_cylinder_radius,
                b.link_length_bounding_cylinder_radius,
            )
        }
        (JointSpecification::Prismatic(a), JointSpecification::Prismatic(b)) => {
            near("LinkLength", LENGTH_U16, a.link_length, b.link_length)?;
            near("TwistAngle", ANGLE_U16, a.twist_angle, b.twist_angle)?;
            near("JointAngle", ANGLE_U16, a.joint_angle, b.joint_angle)?;
            near("MinValue", LIMIT_M, a.min_value, b.min_value)?;
            near("MaxValue", LIMIT_M, a.max_value, b.max_value)?;
            near_opt("MaxSpeed", MAX_SPEED_M, a.max_speed, b.max_speed)?;
            near_opt("MaxForce", MAX_EFFORT, a.max_force, b.max_force)?;
            near_opt(
                "JointBoundingCylinderRadius",
                RADIUS,
                a.joint_bounding_cylinder_radius,
                b.joint_bounding_cylinder_radius,
            )?;
            near_opt(
                "LinkLengthBoundingCylinderRadius",
                RADIUS,
                a.link_length_bounding_cylinder_radius,
                b.link_length_bounding_cylinder_radius,
            )
        }
        _ => Err(TestCaseError::fail(format!(
            "joint kind changed: {sent:?} -> {got:?}"
        ))),
    }
}

fn near_specifications(
    sent: &ReportManipulatorSpecifications,
    got: &ReportManipulatorSpecifications,
) -> Result<(), TestCaseError> {
    match (
        &sent.manipulator_coordinate_system,
        &got.manipulator_coordinate_system,
    ) {
        (Some(a), Some(b)) => near_pose(a, b)?,
        (None, None) => {}
        (a, b) => {
            return Err(TestCaseError::fail(format!(
                "coordinate system: sent {a:?}, received {b:?}"
            )));
        }
    }
    near_first_joint(&sent.first_joint_parameters, &got.first_joint_parameters)?;
    prop_assert_eq!(
        sent.joint_specifications.len(),
        got.joint_specifications.len()
    );
    for (a, b) in sent
        .joint_specifications
        .iter()
        .zip(&got.joint_specifications)
    {
        near_joint_specification(a, b)?;
    }
    prop_assert_eq!(&sent.joint_names, &got.joint_names);
    Ok(())
}

fn near_force_torque(
    sent: &ReportManipulatorEndEffectorForceTorque,
    got: &ReportManipulatorEndEffectorForceTorque,
) -> Result<(), TestCaseError> {
    near_opt("ForceX", scales::IOP_FORCE, sent.force_x, got.force_x)?;
    near_opt("ForceY", scales::IOP_FORCE, sent.force_y, got.force_y)?;
    near_opt("ForceZ", scales::IOP_FORCE, sent.force_z, got.force_z)?;
    near_opt("TorqueX", scales::IOP_TORQUE, sent.torque_x, got.torque_x)?;
    near_opt("TorqueY", scales::IOP_TORQUE, sent.torque_y, got.torque_y)?;
    near_opt("TorqueZ", scales::IOP_TORQUE, sent.torque_z, got.torque_z)
}

/// Emits `m` (JSIDL) and parses it back.
fn through_the_wire(m: &Message) -> Result<Message, TestCaseError> {
    let bytes = m
        .emit()
        .map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
    Message::parse(&bytes)
        .map_err(|e| TestCaseError::fail(format!("parse failed: {e}; bytes {bytes:02x?}")))
}

// ---------------------------------------------------------------------------------------------
// Coverage of the generators.

#[test]
fn known_message_table_matches_the_codec() {
    // Every ID the codec names is in KNOWN, under the same name, and nothing else is.
    for &(id, name) in KNOWN {
        assert_eq!(message_name(id), Some(name), "ID 0x{id:04X}");
    }
    let codec_ids: BTreeSet<u16> = (0..=u16::MAX)
        .filter(|&id| message_name(id).is_some())
        .collect();
    let table_ids: BTreeSet<u16> = KNOWN.iter().map(|&(id, _)| id).collect();
    assert_eq!(
        codec_ids, table_ids,
        "the codec knows IDs this file has no generator for"
    );
    assert_eq!(table_ids.len(), KNOWN.len(), "duplicate IDs in KNOWN");
}

#[test]
fn message_generator_covers_every_variant() {
    let strategy = any_known_message();
    let mut runner = TestRunner::deterministic();
    let mut seen = BTreeSet::new();
    for _ in 0..3000 {
        let m = strategy
            .new_tree(&mut runner)
            .expect("generator produces a value")
            .current();
        seen.insert(m.name());
    }
    let all: BTreeSet<&str> = KNOWN.iter().map(|&(_, name)| name).collect();
    let missing: Vec<_> = all.difference(&seen).collect();
    let extra: Vec<_> = seen.difference(&all).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, unexpected {extra:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 1. Exact round trip on the grid.

proptest! {
    #![proptest_config(cases(10_000))]

    #[test]
    fn every_message_round_trips_exactly_on_the_grid(m in any_known_message()) {
        let bytes = m.emit().map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
        prop_assert_eq!(&bytes[..2], &m.id().to_le_bytes()[..], "message ID first, little-endian");
        let parsed = Message::parse(&bytes);
        prop_assert_eq!(&parsed, &Ok(m.clone()), "bytes {:02x?}", bytes);
        prop_assert_eq!(parsed.unwrap().emit(), Ok(bytes), "re-emitting the parsed message");
    }
}

proptest! {
    #![proptest_config(cases(5_000))]

    /// Replay reads Events in place (`EventRef`): on any bytes (an Event of any message,
    /// cut short, with bytes after it, or another message) it agrees with the owned decoder,
    /// errors included.
    #[test]
    fn an_event_read_in_place_is_the_event_the_decoder_reads(
        m in any_known_message(),
        wrap in any::<bool>(),
        numbers in any::<(u8, u8)>(),
        cut in any::<prop::sample::Index>(),
        tail in vec(any::<u8>(), 0..3),
    ) {
        let m = if wrap {
            Message::Event(Event {
                event_id: numbers.0,
                sequence_number: numbers.1,
                report_message: EmbeddedMessage::new(&m).unwrap(),
            })
        } else {
            m
        };
        let mut bytes = m.emit().unwrap();
        if tail.is_empty() {
            bytes.truncate(cut.index(bytes.len() + 1));
        } else {
            bytes.extend_from_slice(&tail);
        }
        let owned = Message::parse(&bytes);
        match EventRef::parse_message(&bytes) {
            None => prop_assert!(
                bytes.get(..2) != Some(&ids::Event.to_le_bytes()[..]),
                "an Event's ID, not read as one: {:02x?}", bytes
            ),
            Some(Ok(e)) => prop_assert_eq!(owned, Ok(Message::Event(e.to_owned()))),
            Some(Err(e)) => prop_assert_eq!(owned, Err(e)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Quantization: within half an LSB in range, an error outside.

/// A scale (with its name) and a real in its range.
fn scale_and_real_in_range() -> impl Strategy<Value = (&'static str, Scale, f64)> {
    (select(all_scales()), real_in_range_parts())
        .prop_map(|((name, s), (how, raw, f))| (name, s, real_in_range(s, how, raw, f)))
}

/// A scale (with its name) and a real outside its range, NaN or an infinity.
fn scale_and_real_out_of_range() -> impl Strategy<Value = (&'static str, Scale, f64)> {
    (select(all_scales()), real_out_of_range_parts())
        .prop_map(|((name, s), (how, d, any))| (name, s, real_out_of_range(s, how, d, any)))
}

proptest! {
    #![proptest_config(cases(20_000))]

    #[test]
    fn quantize_is_within_half_an_lsb_inside_the_range((name, s, v) in scale_and_real_in_range()) {
        let q = s
            .quantize(v)
            .map_err(|e| TestCaseError::fail(format!("{name}: {v} refused: {e}")))?;
        let tolerance = s.lsb() / 2.0 + 1e-12 * s.lo.abs().max(s.hi.abs());
        prop_assert!(
            (q - v).abs() <= tolerance,
            "{}: {} quantized to {} (|error| {} > {})", name, v, q, (q - v).abs(), tolerance
        );
        prop_assert!((s.lo..=s.hi).contains(&q), "{}: {} quantized to {} outside the range", name, v, q);
        // A quantized value is on the grid: quantizing it again changes nothing.
        prop_assert_eq!(s.quantize(q), Ok(q), "{}: quantize is not idempotent at {}", name, v);
    }

    #[test]
    fn quantize_refuses_values_outside_the_range_and_non_finite(
        (name, s, v) in scale_and_real_out_of_range()
    ) {
        let e = s.quantize(v);
        if v.is_finite() {
            prop_assert!(
                matches!(e, Err(EncodeErrorKind::OutOfRange { .. })),
                "{}: {} gave {:?}", name, v, e
            );
        } else {
            prop_assert!(matches!(e, Err(EncodeErrorKind::NotFinite(_))), "{}: {} gave {:?}", name, v, e);
        }
        prop_assert!(s.encode(v).is_err());
    }
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn off_grid_joint_positions_round_trip_within_one_lsb(sent in report_joint_positions(in_range)) {
        let Message::ReportJointPositions(got) = through_the_wire(&sent.clone().into())? else {
            return Err(TestCaseError::fail("decoded as another message"));
        };
        near_joint_values(POSITION, &sent.joint_positions, &got.joint_positions)?;
    }

    #[test]
    fn off_grid_manipulator_specifications_round_trip_within_one_lsb(
        sent in manipulator_specifications(in_range, maybe(vec(text(40), 0..=8)))
    ) {
        let Message::ReportManipulatorSpecifications(got) = through_the_wire(&sent.clone().into())? else {
            return Err(TestCaseError::fail("decoded as another message"));
        };
        near_specifications(&sent, &got)?;
    }

    #[test]
    fn off_grid_end_effector_force_torque_round_trips_within_one_lsb(sent in end_effector_force_torque(in_range)) {
        let Message::ReportManipulatorEndEffectorForceTorque(got) = through_the_wire(&sent.into())? else {
            return Err(TestCaseError::fail("decoded as another message"));
        };
        near_force_torque(&sent, &got)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Truncation.

proptest! {
    #![proptest_config(cases(4000))]

    #[test]
    fn every_truncation_of_every_message_fails_cleanly(m in any_known_message()) {
        let bytes = m.emit().map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
        for k in 0..bytes.len() {
            match Message::parse(&bytes[..k]) {
                Ok(short) => {
                    return Err(TestCaseError::fail(format!(
                        "{} cut to {k} of {} bytes decoded as {short:?}",
                        m.name(),
                        bytes.len()
                    )));
                }
                Err(e) => {
                    prop_assert!(is_truncation(&e), "{} cut to {} bytes: {} (not a truncation)", m.name(), k, e);
                    prop_assert!(e.offset <= k, "{} cut to {} bytes: error offset {} beyond the end", m.name(), k, e.offset);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. The OpenJAUS dialect.

/// One of the joint-value-list messages, with the joint kinds of its values.
fn joint_value_list_message() -> impl Strategy<Value = (Message, Vec<JointKind>)> {
    let positions = || joint_values(POSITION, on_grid);
    let velocities = || joint_values(VELOCITY, on_grid);
    let kinds = |v: &[JointValue]| v.iter().map(|j| j.joint_type).collect::<Vec<_>>();
    prop_oneof![
        positions().prop_map(move |v| (
            ReportJointPositions {
                joint_positions: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        velocities().prop_map(move |v| (
            ReportJointVelocity {
                joint_velocities: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        joint_values(FORCE_TORQUE, on_grid).prop_map(move |v| (
            ReportJointForceTorques {
                joint_force_torques: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        positions().prop_map(move |v| (
            SetJointPositions {
                joint_positions: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        velocities().prop_map(move |v| (
            SetJointVelocity {
                joint_velocities: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        positions().prop_map(move |v| (
            ReportCommandedJointPositions {
                joint_positions: v.clone()
            }
            .into(),
            kinds(&v)
        )),
        velocities().prop_map(move |v| (
            ReportCommandedJointVelocity {
                joint_velocities: v.clone()
            }
            .into(),
            kinds(&v)
        )),
    ]
}

proptest! {
    #![proptest_config(cases(3000))]

    #[test]
    fn openjaus_joint_value_lists_round_trip_with_the_joint_kinds((m, kinds) in joint_value_list_message()) {
        let bytes = m.emit_with(Dialect::OpenJaus).map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
        // OpenJAUS unit codes: 0 rotary, 1 linear, at offsets 3, 8, 13, ...
        for (i, kind) in kinds.iter().enumerate() {
            let code = bytes[3 + 5 * i];
            prop_assert_eq!(code, u8::from(*kind == JointKind::Prismatic), "unit code of joint {}", i);
        }
        let ctx = DecodeContext { joint_kinds: Some(kinds) };
        prop_assert_eq!(Message::parse_with(&bytes, &ctx), Ok(m), "bytes {:02x?}", bytes);
    }

    #[test]
    fn openjaus_specifications_with_joint_names_round_trip_without_context(
        sent in manipulator_specifications(on_grid, maybe(vec(text(40), 1..=8)))
    ) {
        let m = Message::from(sent);
        let bytes = m.emit_with(Dialect::OpenJaus).map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
        prop_assert_eq!(bytes[2] & 0b10, 0, "OpenJAUS never sets PV bit 1");
        prop_assert_eq!(Message::parse(&bytes), Ok(m), "bytes {:02x?}", bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Arbitrary bytes.

/// Whatever decodes re-encodes to bytes that decode to the same message. Text that was not
/// UTF-8 decodes with replacement characters and can outgrow its field; nothing else may make a
/// decoded message unsendable.
fn decoded_messages_re_encode_to_themselves(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(m) = Message::parse(bytes) else {
        return Ok(());
    };
    match m.emit() {
        Ok(again) => prop_assert_eq!(Message::parse(&again), Ok(m), "bytes {:02x?}", bytes),
        Err(e) => prop_assert!(
            matches!(e.kind, EncodeErrorKind::StringTooLong { .. }),
            "{} decoded from {:02x?} does not re-encode: {}",
            m.name(),
            bytes,
            e
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(20_000))]

    #[test]
    fn arbitrary_bytes_after_a_message_id_never_panic(bytes in id_biased_bytes()) {
        decoded_messages_re_encode_to_themselves(&bytes)?;
    }

    #[test]
    fn arbitrary_datagrams_never_panic(
        bytes in prop_oneof![
            vec(any::<u8>(), 0..=96),
            vec(any::<u8>(), 0..=96).prop_map(|b| [&[2u8][..], &b].concat()),
        ]
    ) {
        if let Ok(d) = decode_datagram(&bytes, &DecodeContext::NONE, None) {
            let _ = d.to_json();
            let _ = d.to_lines();
        }
    }
}

/// One JUDP block as generated: flags, sequence number and payload.
#[derive(Debug, Clone)]
struct GenBlock {
    flags: u8,
    sequence: u16,
    payload: Vec<u8>,
}

/// `02`, then 1..=3 blocks with a valid header (`00 <size> <flags> <dst> <src>`) around random
/// or valid payloads, sometimes a wrong data size, then sometimes trailing garbage.
fn judp_datagram() -> impl Strategy<Value = (Vec<u8>, Vec<GenBlock>, bool)> {
    let payload = prop_oneof![
        3 => id_biased_bytes(),
        1 => any_known_message().prop_map(|m| m.emit().expect("generated messages encode")),
        1 => vec(any::<u8>(), 0..=8),
    ];
    let flags = prop_oneof![
        4 => Just(0x01u8),
        1 => select(vec![0x41u8, 0x81, 0xc1, 0x11, 0x31, 0x21]),
        2 => any::<u8>(),
    ];
    let block = (flags, prop_oneof![0u16..=3, any::<u16>()], payload).prop_map(
        |(flags, sequence, payload)| GenBlock {
            flags,
            sequence,
            payload,
        },
    );
    (
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        vec(block, 1..=3),
        prop_oneof![6 => Just(None), 1 => any::<u16>().prop_map(Some)],
        prop_oneof![4 => Just(Vec::new()), 1 => vec(any::<u8>(), 1..=32)],
    )
        .prop_map(|(dst, src, blocks, bad_size, trailing)| {
            let mut d = vec![2u8];
            for (i, b) in blocks.iter().enumerate() {
                let size = match bad_size {
                    Some(s) if i == 0 => s,
                    _ => u16::try_from(14 + b.payload.len()).expect("small block"),
                };
                d.push(0);
                d.extend(size.to_le_bytes());
                d.push(b.flags);
                d.extend(dst);
                d.extend(src);
                d.extend(&b.payload);
                d.extend(b.sequence.to_le_bytes());
            }
            d.extend(trailing);
            (d, blocks, bad_size.is_none())
        })
}

proptest! {
    #![proptest_config(cases(10_000))]

    #[test]
    fn datagrams_with_valid_judp_headers_never_panic((bytes, blocks, sizes_right) in judp_datagram()) {
        let plain = decode_datagram(&bytes, &DecodeContext::NONE, None);
        let mut reassembler = Reassembler::default();
        let with_reassembly = decode_datagram(&bytes, &DecodeContext::NONE, Some(&mut reassembler.defragmenter(0.0)));
        let d = plain.map_err(|e| TestCaseError::fail(format!("datagram refused: {e}")))?;
        prop_assert!(with_reassembly.is_ok());
        let _ = d.to_json();
        let _ = d.to_lines();
        if sizes_right {
            // Every block up to the first ACK/NAK carrying a payload (which is refused) frames,
            // at its offset, with its payload.
            let good = blocks
                .iter()
                .take_while(|b| (b.flags >> 4) & 3 < 2 || b.payload.is_empty())
                .count();
            prop_assert!(d.blocks.len() >= good, "{} of {} blocks framed", d.blocks.len(), good);
            let mut offset = 1;
            for (got, sent) in d.blocks.iter().zip(&blocks).take(good) {
                prop_assert_eq!(got.offset, offset);
                prop_assert_eq!(&got.payload, &sent.payload);
                prop_assert_eq!(got.header.sequence, sent.sequence);
                offset += 14 + sent.payload.len();
            }
        }
    }
}

/// A valid encoding with a few bytes overwritten, inserted or removed.
fn mutated_message() -> impl Strategy<Value = Vec<u8>> {
    let edit = (any::<prop::sample::Index>(), any::<u8>(), 0u8..3);
    (any_known_message(), vec(edit, 1..=4)).prop_map(|(m, edits)| {
        let mut b = m.emit().expect("generated messages encode");
        for (at, byte, op) in edits {
            match op {
                0 if !b.is_empty() => {
                    let i = at.index(b.len());
                    b[i] = byte;
                }
                1 => {
                    let i = at.index(b.len() + 1);
                    b.insert(i, byte);
                }
                _ if !b.is_empty() => {
                    let i = at.index(b.len());
                    b.remove(i);
                }
                _ => {}
            }
        }
        b
    })
}

proptest! {
    #![proptest_config(cases(10_000))]

    #[test]
    fn mutated_messages_never_panic(bytes in mutated_message()) {
        decoded_messages_re_encode_to_themselves(&bytes)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Unknown messages.

proptest! {
    #![proptest_config(cases(5000))]

    #[test]
    fn unknown_messages_round_trip_byte_exactly(id in unknown_id(), body in vec(any::<u8>(), 0..=64)) {
        let m = Message::Unknown { id, body: body.clone() };
        let bytes = m.emit().map_err(|e| TestCaseError::fail(format!("emit failed: {e}")))?;
        prop_assert_eq!(&bytes[..2], &id.to_le_bytes()[..]);
        prop_assert_eq!(&bytes[2..], &body[..]);
        prop_assert_eq!(m.name(), "Unknown");
        prop_assert_eq!(Message::parse(&bytes), Ok(m));
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Rendering what arrives.

/// A JUDP datagram of one block carrying `payload`.
fn datagram_with(payload: &[u8]) -> Vec<u8> {
    let size = u16::try_from(14 + payload.len()).expect("payload fits one block");
    let mut d = vec![2u8, 0];
    d.extend(size.to_le_bytes());
    d.push(0x01);
    d.extend(JausId::new(126, 1, 10).to_bytes());
    d.extend(JausId::new(126, 1, 20).to_bytes());
    d.extend(payload);
    d.extend(1u16.to_le_bytes());
    d
}

/// One UDP datagram (64 017 bytes) can carry 8 000 Events each embedding the next; the dump
/// (`decode --json`, `inspect`) must render it without recursing once per level. A stack
/// overflow aborts the process, so the rendering runs in a child process (this test binary,
/// re-run with `NESTING_CHILD` set) on a thread with a main thread's 8 MiB stack.
#[test]
fn deeply_nested_embedded_messages_render_without_overflowing_the_stack() {
    const CHILD: &str = "NESTING_CHILD";
    const NAME: &str = "deeply_nested_embedded_messages_render_without_overflowing_the_stack";
    if std::env::var_os(CHILD).is_some() {
        let mut m = Message::from(QueryStatus);
        for i in 0..8000u32 {
            m = Message::from(Event {
                event_id: 1,
                sequence_number: i as u8,
                report_message: EmbeddedMessage::new(&m).expect("nested message encodes"),
            });
        }
        let bytes = datagram_with(&m.emit().expect("nested message encodes"));
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let d =
                    decode_datagram(&bytes, &DecodeContext::NONE, None).expect("datagram frames");
                assert!(matches!(d.blocks[0].message, Some(Ok(Message::Event(_)))));
                let _ = d.to_json();
                let _ = d.to_lines();
            })
            .expect("thread starts")
            .join()
            .expect("rendering does not panic");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("test binary path"))
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("test binary re-runs");
    assert!(
        out.status.success(),
        "rendering a datagram of 8000 nested Events crashed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
