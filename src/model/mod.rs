//! Facts the UI shows, in domain terms (SI units, no wire types): the arm's description,
//! its kinematics, the time-indexed session history of each arm and the vehicle of every arm.

pub mod arm;
pub mod clearance;
pub mod clock;
pub mod command;
pub mod events;
pub mod fresh;
pub mod history;
pub mod id;
pub mod jog;
pub mod kinematics;
pub mod lanes;
pub mod limits;
pub mod session;
pub mod signals;
pub mod state;
pub mod update;
pub mod vehicle;
