//! A press-and-hold button: it acts while the pointer holds it down, and stops the moment it
//! is let go or the pointer leaves it (a jog button: the held button is the enable).

use eframe::egui::{self, Response, Sense, Ui, Vec2};

/// What a [`hold_button`] did this frame.
#[derive(Debug, Clone)]
pub struct Hold {
    /// The button's response (for tooltips).
    pub response: Response,
    /// The pointer holds it down now, over it.
    pub held: bool,
}

/// A button of `size` reading `text` that reports whether it is held down now; `active`
/// draws it pressed (what it commands is moving). `name` is what a screen reader (and a
/// test) calls it, where `text` alone says too little (`−` of which joint).
pub fn hold_button(ui: &mut Ui, text: &str, name: &str, size: Vec2, active: bool) -> Hold {
    let button = egui::Button::new(text)
        .min_size(size)
        .selected(active)
        .sense(Sense::click_and_drag());
    let response = ui.add(button).accessible_name(name);
    // Held only while the pointer is down on it and still over it: sliding off lets go.
    let held = response.is_pointer_button_down_on() && response.contains_pointer();
    Hold { response, held }
}
