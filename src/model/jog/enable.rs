//! The three-position enable (deadman): motion is allowed only while the enable is held in
//! its middle position. Released is off; squeezed fully (the panic grip) is off too, and it
//! stays off until the input has been fully released, so relaxing a panicked squeeze back to
//! the middle never restarts motion (IEC 60204-1 §10.9's enabling device, ISO 10218-1 §5.8.3).
//!
//! A gamepad trigger gives the three positions as one value 0..1. A held key or an on-screen
//! button has only two: [`Enable::key`] maps held to the middle ([`KEY_HELD`]) and not held
//! to released, so the same machine serves every source. Neither is a safety-rated enabling
//! device: the robot's own E-stop chain is the safety function.

/// The trigger value a held key or button stands for: the middle of the enabling band.
pub const KEY_HELD: f64 = 0.5;

/// Where the trigger's positions begin and end, as trigger values 0..1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnableThresholds {
    /// At or below this the trigger counts as fully released (re-arms the enable).
    pub release: f64,
    /// At or above this (and below `squeeze`) a released trigger enables.
    pub engage: f64,
    /// At or above this the trigger counts as squeezed fully: off until released.
    pub squeeze: f64,
}

impl Default for EnableThresholds {
    /// Released ≤ 0.1, enabling from 0.25, squeezed from 0.9. The gap between `release`
    /// and `engage` is hysteresis: a trigger resting near the first threshold does not chatter.
    fn default() -> Self {
        Self {
            release: 0.1,
            engage: 0.25,
            squeeze: 0.9,
        }
    }
}

/// The state of the enable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnableState {
    /// Released fully: off, and armed (moving to the middle enables).
    Released,
    /// Held in the middle: motion allowed.
    Enabled,
    /// Squeezed fully: off until a full release.
    Squeezed,
    /// Not yet seen released (just created, or an unreadable value): off until a full
    /// release, so a trigger already held when the source appears does not enable.
    Unarmed,
}

/// The three-position enable state machine. Feed it every reading with [`Enable::update`]
/// (or [`Enable::key`]); [`Enable::is_enabled`] says whether motion is allowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Enable {
    thresholds: EnableThresholds,
    state: EnableState,
}

impl Default for Enable {
    fn default() -> Self {
        Self::new(EnableThresholds::default())
    }
}

impl Enable {
    /// An enable with these thresholds, unarmed until it sees a full release.
    pub fn new(thresholds: EnableThresholds) -> Self {
        Self {
            thresholds,
            state: EnableState::Unarmed,
        }
    }

    /// The state now.
    pub fn state(&self) -> EnableState {
        self.state
    }

    /// Whether motion is allowed (held in the middle).
    pub fn is_enabled(&self) -> bool {
        self.state == EnableState::Enabled
    }

    /// Takes a trigger reading 0..1 and returns the new state. A value that is not a number
    /// disarms (off until a full release): a reading we cannot trust never enables.
    pub fn update(&mut self, value: f64) -> EnableState {
        let t = self.thresholds;
        self.state = if value.is_nan() {
            EnableState::Unarmed
        } else if value <= t.release {
            EnableState::Released
        } else if value >= t.squeeze {
            // From any state: a full squeeze is off at once.
            EnableState::Squeezed
        } else {
            match self.state {
                EnableState::Released if value >= t.engage => EnableState::Enabled,
                // Between release and engage from released: not pressed far enough yet.
                EnableState::Released => EnableState::Released,
                // Held stays held down to the release threshold (hysteresis).
                EnableState::Enabled => EnableState::Enabled,
                // Only a full release re-arms.
                s @ (EnableState::Squeezed | EnableState::Unarmed) => s,
            }
        };
        self.state
    }

    /// Takes a two-position input (a key, a mouse button on the screen): held is the
    /// middle, not held is released.
    pub fn key(&mut self, held: bool) -> EnableState {
        self.update(if held { KEY_HELD } else { 0.0 })
    }

    /// Forgets what was held: off until a full release (call it when the source goes away,
    /// a gamepad unplugged or the window losing focus).
    pub fn disarm(&mut self) {
        self.state = EnableState::Unarmed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn armed() -> Enable {
        let mut e = Enable::default();
        e.update(0.0);
        e
    }

    #[test]
    fn starts_unarmed_so_a_trigger_already_held_does_not_enable() {
        let mut e = Enable::default();
        assert_eq!(e.state(), EnableState::Unarmed);
        assert_eq!(e.update(0.5), EnableState::Unarmed);
        assert!(!e.is_enabled());
        assert_eq!(e.update(0.05), EnableState::Released);
        assert_eq!(e.update(0.5), EnableState::Enabled);
    }

    #[test]
    fn released_to_middle_enables_and_back_to_released_disables() {
        let mut e = armed();
        assert_eq!(e.state(), EnableState::Released);
        assert_eq!(e.update(0.5), EnableState::Enabled);
        assert!(e.is_enabled());
        assert_eq!(e.update(0.0), EnableState::Released);
        assert!(!e.is_enabled());
    }

    #[test]
    fn a_light_touch_below_engage_does_not_enable() {
        let mut e = armed();
        assert_eq!(e.update(0.2), EnableState::Released);
        assert_eq!(e.update(0.25), EnableState::Enabled);
    }

    #[test]
    fn held_stays_enabled_down_to_the_release_threshold() {
        let mut e = armed();
        e.update(0.5);
        assert_eq!(e.update(0.15), EnableState::Enabled);
        assert_eq!(e.update(0.1), EnableState::Released);
    }

    #[test]
    fn squeezing_fully_disables() {
        let mut e = armed();
        e.update(0.5);
        assert_eq!(e.update(0.95), EnableState::Squeezed);
        assert!(!e.is_enabled());
    }

    #[test]
    fn squeeze_then_back_to_middle_stays_off_until_released() {
        let mut e = armed();
        e.update(0.5);
        e.update(1.0);
        for v in [0.8, 0.5, 0.3, 0.15, 0.5] {
            assert_eq!(e.update(v), EnableState::Squeezed, "at {v}");
            assert!(!e.is_enabled());
        }
        assert_eq!(e.update(0.0), EnableState::Released);
        assert_eq!(e.update(0.5), EnableState::Enabled);
    }

    #[test]
    fn squeezing_straight_from_released_is_off_and_needs_a_release() {
        let mut e = armed();
        assert_eq!(e.update(1.0), EnableState::Squeezed);
        assert_eq!(e.update(0.5), EnableState::Squeezed);
        e.update(0.0);
        assert_eq!(e.update(0.5), EnableState::Enabled);
    }

    #[test]
    fn an_unreadable_value_disarms() {
        let mut e = armed();
        e.update(0.5);
        assert_eq!(e.update(f64::NAN), EnableState::Unarmed);
        assert_eq!(e.update(0.5), EnableState::Unarmed);
        e.update(0.0);
        assert_eq!(e.update(0.5), EnableState::Enabled);
    }

    #[test]
    fn disarm_needs_a_release_before_enabling_again() {
        let mut e = armed();
        e.update(0.5);
        e.disarm();
        assert!(!e.is_enabled());
        assert_eq!(e.update(0.5), EnableState::Unarmed);
        e.update(0.0);
        assert_eq!(e.update(0.5), EnableState::Enabled);
    }

    #[test]
    fn a_key_is_the_middle_when_held() {
        let mut e = Enable::default();
        assert_eq!(e.key(false), EnableState::Released);
        assert_eq!(e.key(true), EnableState::Enabled);
        assert_eq!(e.key(true), EnableState::Enabled);
        assert_eq!(e.key(false), EnableState::Released);
    }
}
