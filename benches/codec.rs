//! Codec throughput: decode and encode of the messages the OCU sees most, and the JUDP header.
//! Target (issue 2): >= 5 million 7-joint `ReportJointPositions` decodes per second on one core.
//!
//! Run: `cargo bench --bench codec` (criterion prints time per operation and elements/s).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jaus_ocu::jaus::iop::ReportManipulatorEndEffectorForceTorque;
use jaus_ocu::jaus::judp::{Datagram, Header};
use jaus_ocu::jaus::manipulator::{
    FirstJointParameters, JointSpecification, JointValue, Pose, PrismaticJointSpecification,
    ReportJointPositions, ReportManipulatorSpecifications, RevoluteJoint1,
    RevoluteJointSpecification,
};
use jaus_ocu::jaus::wire::PI;
use jaus_ocu::jaus::{JausId, Message, judp};

fn joint_positions() -> Message {
    ReportJointPositions {
        joint_positions: vec![
            JointValue::revolute(0.3),
            JointValue::revolute(-1.2),
            JointValue::prismatic(0.45),
            JointValue::revolute(2.1),
            JointValue::revolute(-0.7),
            JointValue::revolute(1.1),
            JointValue::revolute(12.0),
        ],
    }
    .into()
}

fn specification() -> Message {
    let revolute = |a: f64, alpha: f64, s: f64| {
        JointSpecification::Revolute(RevoluteJointSpecification {
            link_length: a,
            twist_angle: alpha,
            joint_offset: s,
            min_value: Some(-2.5),
            max_value: Some(2.5),
            max_speed: Some(1.5),
            max_torque: Some(120.0),
            offset_bounding_cylinder_radius: Some(0.06),
            link_length_bounding_cylinder_radius: Some(0.05),
        })
    };
    ReportManipulatorSpecifications {
        manipulator_coordinate_system: Some(Pose {
            x: 0.4,
            y: 0.0,
            z: -0.3,
            d: 1.0,
            a: 0.0,
            b: 0.0,
            c: 0.0,
        }),
        first_joint_parameters: FirstJointParameters::Revolute(RevoluteJoint1 {
            joint1_offset: 0.2,
            joint1_min_value: Some(-3.0),
            joint1_max_value: Some(3.0),
            joint1_max_speed: Some(1.0),
            joint1_max_torque: Some(200.0),
            offset_bounding_cylinder_radius: Some(0.08),
        }),
        joint_specifications: vec![
            revolute(0.0, PI / 2.0, 0.0),
            revolute(0.6, 0.0, 0.0),
            JointSpecification::Prismatic(PrismaticJointSpecification {
                link_length: 0.05,
                twist_angle: 0.0,
                joint_angle: 0.0,
                min_value: 0.0,
                max_value: 0.5,
                max_speed: Some(0.2),
                max_force: Some(800.0),
                joint_bounding_cylinder_radius: Some(0.05),
                link_length_bounding_cylinder_radius: Some(0.05),
            }),
            revolute(0.0, -PI / 2.0, 0.3),
            revolute(0.0, PI / 2.0, 0.0),
            revolute(0.0, -PI / 2.0, 0.1),
        ],
        joint_names: Some(
            [
                "turret",
                "shoulder",
                "elbow",
                "telescope",
                "wrist pitch",
                "wrist yaw",
                "wrist roll",
            ]
            .map(String::from)
            .to_vec(),
        ),
    }
    .into()
}

fn force_torque() -> Message {
    ReportManipulatorEndEffectorForceTorque::full([12.5, -3.0, 98.1], [0.25, -0.5, 1.0]).into()
}

fn bench_message(c: &mut Criterion, label: &str, m: &Message) {
    let bytes = m.emit().unwrap();
    let mut g = c.benchmark_group(label);
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode", |b| {
        b.iter(|| Message::parse(black_box(&bytes)).unwrap());
    });
    g.bench_function("encode", |b| b.iter(|| black_box(m).emit().unwrap()));
    g.finish();
}

fn codec(c: &mut Criterion) {
    bench_message(c, "report_joint_positions_7", &joint_positions());
    bench_message(c, "report_manipulator_specifications_7", &specification());
    bench_message(c, "report_end_effector_force_torque", &force_torque());

    let header = Header::new(JausId::new(126, 1, 20), JausId::new(126, 1, 10), 42);
    let datagram = judp::single(&header, &joint_positions().emit().unwrap()).unwrap();
    let mut g = c.benchmark_group("judp_header");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let dg = Datagram::new_checked(black_box(&datagram)).unwrap();
            let first = dg.blocks().next().unwrap().unwrap();
            Header::parse(&first.block)
        });
    });
    let payload = joint_positions().emit().unwrap();
    g.bench_function("encode", |b| {
        let mut out = Vec::with_capacity(128);
        b.iter(|| {
            out.clear();
            black_box(&header)
                .emit(black_box(&payload), &mut out)
                .unwrap();
            out.len()
        });
    });
    g.finish();

    // Header + message: what the network thread does per report datagram.
    let mut g = c.benchmark_group("datagram_joint_positions_7");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let dg = Datagram::new_checked(black_box(&datagram)).unwrap();
            let first = dg.blocks().next().unwrap().unwrap();
            (
                Header::parse(&first.block),
                Message::parse(first.block.payload()).unwrap(),
            )
        });
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
