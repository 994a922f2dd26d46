//! The work area: the tile tree ([`crate::ui::tiles`]) drawn in the window's central panel, each
//! tile with its panel's own `show` function, handed what it shows.

use eframe::egui;
use egui_tiles::{Behavior, EditAction, SimplificationOptions, TileId, Tiles, UiResponse};

use super::{OcuApp, with_drawn_of};
use crate::model::jog::Source;
use crate::ui::action::Action;
use crate::ui::arms;
use crate::ui::notice::NoticeLevel;
use crate::ui::panels::arm_list;
use crate::ui::panels::clearance;
use crate::ui::panels::event_log::{self, LogInput};
use crate::ui::panels::gauges;
use crate::ui::panels::jog_strip;
use crate::ui::panels::plots::{self, PlotsInput};
use crate::ui::panels::presets;
use crate::ui::panels::view3d::{self, View3dInput};
use crate::ui::settings::Settings;
use crate::ui::sources::read_vehicle;
use crate::ui::theme::Theme;
use crate::ui::tiles::{LayoutSnapshot, Pane, TileLayout, pane_rects};
use crate::ui::time_control::Shown;

/// Draws the tiles for one frame: what each pane needs from the app, the theme, and where the
/// operator's requests go.
struct WorkArea<'a> {
    app: &'a mut OcuApp,
    theme: &'a Theme,
    actions: &'a mut Vec<Action>,
    /// `LINK LOST — last known at …` while the positions are not current.
    last_known: Option<String>,
    /// How far back the drawn time is (`−12.4 s (12:03:04 UTC)`), when the past is drawn.
    past: Option<String>,
    /// The plots gave way to the 3D view in a short window (the view says so).
    plots_hidden: bool,
    /// The operator changed the tree this frame (a tab dropped or closed): undoable.
    edited: bool,
    /// A split is being dragged this frame.
    resized: bool,
}

/// What a tile holding the 3D view takes besides the view: its tab, margins and toolbar,
/// points.
const VIEW3D_CHROME: f32 = 50.0;

/// A tile's tab bar and the gap under it, points.
const TAB_BAR: f32 = 28.0;

impl Behavior<Pane> for WorkArea<'_> {
    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.title().into()
    }

    fn pane_ui(&mut self, ui: &mut egui::Ui, _tile_id: TileId, pane: &mut Pane) -> UiResponse {
        // Each tile's content with a small margin, clipped to its tile.
        egui::Frame::new().inner_margin(2.0).show(ui, |ui| {
            ui.set_min_size(ui.available_size());
            match pane {
                Pane::View3d => self.view3d(ui),
                Pane::Gauges => self.gauges(ui),
                Pane::Plots => self.plots(ui),
                Pane::Presets => self.presets(ui),
                Pane::EventLog => self.event_log(ui),
                Pane::Arms => self.arms(ui),
            }
        });
        UiResponse::None
    }

    fn is_tab_closable(&self, tiles: &Tiles<Pane>, tile_id: TileId) -> bool {
        // The 3D view stays: it is where the arm is.
        tiles.get_pane(&tile_id).is_some_and(|p| *p != Pane::View3d)
    }

    fn on_tab_close(&mut self, tiles: &mut Tiles<Pane>, tile_id: TileId) -> bool {
        // Closed is hidden: the View menu brings it back where it was.
        if let Some(pane) = tiles.get_pane(&tile_id).copied() {
            // Hidden from the next frame on (this frame's tabs are being drawn).
            if let Some(shown) = self.app.settings.shows(pane) {
                *shown = false;
            }
            self.edited = true;
        }
        false
    }

    fn on_edit(&mut self, edit: EditAction) {
        match edit {
            EditAction::TileDropped => self.edited = true,
            EditAction::TileResized => self.resized = true,
            EditAction::TileDragged | EditAction::TabSelected => {}
        }
    }

    fn tab_bar_height(&self, _style: &egui::Style) -> f32 {
        20.0
    }

    fn gap_width(&self, _style: &egui::Style) -> f32 {
        4.0
    }

    fn min_size(&self) -> f32 {
        48.0
    }

    fn simplification_options(&self) -> SimplificationOptions {
        SimplificationOptions {
            // Every pane in tabs: each has a title to drag it by and a close button.
            all_panes_must_have_tabs: true,
            ..SimplificationOptions::default()
        }
    }
}

impl WorkArea<'_> {
    fn view3d(&mut self, ui: &mut egui::Ui) {
        let app = &mut *self.app;
        let badge = app.sources.badge();
        let shown = app.shown();
        let others = app.scene_arms();
        let clearance = app.scene_clearance();
        with_drawn_of(app.past.as_ref(), &app.sources, |state| {
            let input = View3dInput {
                state,
                preview: app.view.preview,
                shown,
                badge: badge.as_ref(),
                last_known: self.last_known.as_deref(),
                focus: app.focus,
                others,
                clearance,
                past: self.past.as_deref(),
                // The banner has its own strip over the tiles (`app/frame.rs`).
                banner: &[],
                plots_hidden: self.plots_hidden,
                notices: &app.view.notices,
            };
            let (panel, settings) = (&mut app.view.arm, &mut app.settings);
            view3d::show(ui, &input, panel, settings, self.theme, self.actions);
        });
        app.view.notice_rect = app.view.arm.notice_rect;
    }

    fn gauges(&mut self, ui: &mut egui::Ui) {
        let app = &mut *self.app;
        let shown = app.shown();
        // What the gauges and the jog strip read of the drawn state, taken at once.
        let (data, status, tool_available, control, revolute) = app.with_drawn(|state| {
            let tool_available = state.selected.is_some_and(|id| {
                state.components.get(&id).is_some_and(|(c, _)| {
                    c.services
                        .iter()
                        .any(|(uri, _, _)| uri.ends_with("EndEffectorVelocityStateDriver"))
                })
            });
            let revolute: Vec<bool> = state.spec.as_ref().map_or_else(Vec::new, |s| {
                s.joints
                    .iter()
                    .map(|j| j.kind == crate::model::arm::JointType::Revolute)
                    .collect()
            });
            (
                gauges::gauge_data(state, &app.settings),
                state.jog.clone(),
                tool_available,
                state.control_words(),
                revolute,
            )
        });
        let (note, past) = (self.last_known.as_deref(), self.past.as_deref());
        // Jogging acts on the live arm now: the strip and the buttons only while it is drawn.
        let live_jog = shown == Shown::Live && app.sources.net().is_some() && !data.is_empty();
        let mut gauge_jog = None;
        if live_jog {
            let pad = app.pad_status();
            let view = jog_strip::JogView {
                revolute: &revolute,
                pad: pad.as_deref(),
                control: &control,
                status: &status,
                tool_available,
                shown,
                needs: app.jog_needs(ui.ctx()),
            };
            jog_strip::show(ui, &view, &mut app.view.jog, &mut app.settings, self.theme);
        }
        // Beside the jog strip, live and in the past alike: the state drawn.
        if !data.is_empty() {
            let clearance = app.clearance_view();
            clearance::show(ui, &clearance, &mut app.settings, self.theme);
            ui.separator();
        }
        if live_jog {
            let j = &app.view.jog;
            let moving = match status.source {
                _ if !status.moving => None,
                Some(Source::Screen) => j.last_screen,
                Some(Source::Keys) if !j.tool => Some(j.axis),
                _ => None,
            };
            gauge_jog = Some(gauges::GaugeJog {
                selected: (!j.tool).then_some(j.axis),
                moving,
                held: None,
            });
        }
        gauges::show(
            ui,
            &data,
            shown,
            note,
            past,
            &mut app.settings,
            self.theme,
            gauge_jog.as_mut(),
        );
        if let Some(g) = gauge_jog {
            app.view.jog.screen = g.held;
        }
    }

    fn plots(&mut self, ui: &mut egui::Ui) {
        let app = &mut *self.app;
        let shown = app.shown();
        // Where the session holds only an envelope, the exact values read back from the
        // file draw the plots while they cover the plots' range (`exact.rs`).
        let edge = read_vehicle(app.sources.vehicle()).envelope_before();
        let exact = app.view.plots.range.and_then(|(a, b)| {
            let r = app
                .sources
                .replay()
                .filter(|_| edge.is_some_and(|e| a < e))?;
            r.exact.covering(a, b)
        });
        let vehicle = read_vehicle(exact.unwrap_or(app.sources.vehicle()));
        let input = PlotsInput {
            session: vehicle.arm_or_focused(app.focus),
            shown,
            time: shown.time(app.now()),
        };
        plots::show(
            ui,
            &input,
            &mut app.view.plots,
            &mut app.view.plot_caches,
            &mut app.settings,
            self.theme,
        );
    }

    fn presets(&mut self, ui: &mut egui::Ui) {
        let app = &*self.app;
        let shown = app.shown();
        app.with_drawn(|state| {
            presets::show(ui, state, app.view.preview, shown, self.theme, self.actions);
        });
    }

    fn event_log(&mut self, ui: &mut egui::Ui) {
        let app = &mut *self.app;
        let shown = app.shown();
        let shared = app.vehicle().clone();
        let vehicle = read_vehicle(&shared);
        let session = vehicle.arm_or_focused(app.focus);
        let time = shown.time(app.now());
        let input = LogInput {
            session,
            shown,
            time,
            landed: app.time_control().landed_at(&session.marks, time),
            start_ns: app.start_ns(),
            unsaved: app
                .view
                .log
                .unsaved(app.replay().map(|r| r.replay.path.as_path())),
        };
        event_log::show(
            ui,
            &input,
            &mut app.settings.marks,
            self.theme,
            self.actions,
        );
    }

    fn arms(&mut self, ui: &mut egui::Ui) {
        let app = &*self.app;
        let rows = if app.drawn.is_some() {
            arms::rows(
                app.drawn_arms.iter().map(|(id, s)| (*id, s)),
                None,
                app.focus,
            )
        } else {
            let v = read_vehicle(app.sources.vehicle());
            arms::rows(v.arms().map(|(id, s)| (id, &s.latest)), None, app.focus)
        };
        if rows.is_empty() {
            ui.label(egui::RichText::new("no manipulator yet").color(self.theme.muted));
            return;
        }
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.horizontal_wrapped(|ui| arm_list::strip(ui, &rows, self.theme, self.actions));
        });
    }
}

/// The layout as undo restores it: the tree and the View menu's ticks.
fn snapshot(settings: &mut Settings) -> LayoutSnapshot {
    let shown = Pane::ALL.map(|p| settings.shows(p).is_none_or(|s| *s));
    LayoutSnapshot {
        tiles: settings.tiles.clone(),
        shown,
    }
}

/// The words of the panes in `panes`: `the Plots tab`, `the Joints and Arms tabs`.
fn tab_words(panes: &[Pane]) -> String {
    let titles: Vec<&str> = panes.iter().map(|p| p.title()).collect();
    match titles.as_slice() {
        [] => "the other tabs".to_string(),
        [one] => format!("the {one} tab"),
        [rest @ .., last] => format!("the {} and {last} tabs", rest.join(", ")),
    }
}

impl OcuApp {
    /// Undoes the last change to the tiles (Ctrl+Z): the tree and the View menu's ticks as
    /// they were before it.
    pub fn undo_layout(&mut self) {
        let Some(before) = self.view.layout_history.pop() else {
            self.notify(
                NoticeLevel::Info,
                "No layout change to undo. View > Layout > Reset layout gives the default \
                 layout.",
            );
            return;
        };
        self.settings.tiles = before.tiles;
        for (pane, on) in Pane::ALL.into_iter().zip(before.shown) {
            if let Some(shown) = self.settings.shows(pane) {
                *shown = on;
            }
        }
        // Not itself a change to undo.
        let now = snapshot(&mut self.settings);
        self.view.layout_history.end(now, false);
    }

    /// The layout of what is drawn now (a replay and the live view each keep their own),
    /// with the changes made from outside the tiles since the last frame kept for undo.
    fn begin_layout(&mut self) {
        if self.settings.use_tiles_of(self.shown().is_replay()) {
            self.view.layout_history.clear();
        }
        let now = snapshot(&mut self.settings);
        self.view.layout_history.begin(&now);
    }

    /// After the tiles are drawn: a drop that stacked the 3D view behind another tab is
    /// refused (the tree goes back to `before`); a 3D view found stacked otherwise (a layout
    /// saved before this rule) is given its own tile again. Both say so.
    fn keep_view3d_in_front(&mut self, layout: &mut TileLayout, before: LayoutSnapshot) -> bool {
        let stacked = layout.stacked_with_view3d();
        if layout.view3d_stacked_in().is_none() {
            return false;
        }
        let words = tab_words(&stacked);
        if before.tiles.view3d_stacked_in().is_none() {
            *layout = before.tiles;
            self.notify(
                NoticeLevel::Info,
                format!(
                    "The 3D view keeps a tile of its own: {words} went back where it was. To \
                     make a tile taller or wider, drag the gap between two tiles.",
                ),
            );
        } else {
            layout.unstack_view3d();
            self.notify(
                NoticeLevel::Info,
                format!(
                    "The 3D view was behind {words}: they now have a tile of their own under \
                     it (Ctrl+Z puts them back)."
                ),
            );
        }
        true
    }

    /// Draws the tiles in the central panel: each pane's tile shown or hidden as the View
    /// menu says, then the tree (the operator's splits, tabs and sizes). Returns where each
    /// visible pane was drawn.
    pub(crate) fn work_area(
        &mut self,
        ui: &mut egui::Ui,
        theme: &Theme,
        last_known: Option<String>,
        past: Option<String>,
        actions: &mut Vec<Action>,
    ) -> Vec<(Pane, egui::Rect)> {
        self.begin_layout();
        let before = snapshot(&mut self.settings);
        let placeholder = TileLayout(egui_tiles::Tree::empty(egui::Id::unique(
            "jaus-ocu placeholder",
        )));
        let mut layout = std::mem::replace(&mut self.settings.tiles, placeholder);
        for pane in Pane::ALL {
            let on = self.settings.shows(pane).is_none_or(|s| *s);
            // Turned on (View menu): shown where it was, in front of its tabs.
            let turned_on = on && !layout.is_visible(pane);
            layout.set_visible(pane, on);
            if turned_on {
                layout.make_active(pane);
            }
        }
        // The 3D view keeps its minimum height: a split dragged past it stops there, and in
        // a short window (800×600 with the banner) the plots give way, hidden for as long as
        // the window is that short without changing the View menu's tick. Decided from the
        // work area's height, not from how the view came out, so it does not flip from frame
        // to frame.
        let height = ui.available_height();
        let mut plots_hidden = !layout.keep_view3d(
            height,
            view3d::MIN_VIEW3D_HEIGHT + VIEW3D_CHROME,
            plots::MIN_PANEL_HEIGHT + 24.0,
        );
        // The presets keep the height of their list and the row under it ("Go to …"); in a
        // column too short for them and the plots' least, the plots give way as above (the
        // presets are commands).
        let presets = self.with_drawn(|s| s.presets.len());
        let wanted = presets::wanted_height(ui, presets) + TAB_BAR;
        let plots_least = plots::MIN_PANEL_HEIGHT + TAB_BAR;
        if wanted + plots_least > height && layout.share_a_column(Pane::Presets, Pane::Plots) {
            plots_hidden = true;
        }
        if plots_hidden {
            layout.set_visible(Pane::Plots, false);
        }
        layout.keep_height(Pane::Presets, height, wanted);
        let mut area = WorkArea {
            app: self,
            theme,
            actions,
            last_known,
            past,
            plots_hidden,
            edited: false,
            resized: false,
        };
        egui::CentralPanel::default()
            .frame(egui::Frame::new().inner_margin(2.0))
            .show(ui, |ui| layout.0.ui(&mut area, ui));
        let (edited, resized) = (area.edited, area.resized);
        let rects = pane_rects(&layout.0);
        let refused = self.keep_view3d_in_front(&mut layout, before.clone());
        self.settings.tiles = layout;
        let after = snapshot(&mut self.settings);
        let resize_started = self.view.layout_history.end(after, resized);
        if (edited && !refused) || resize_started {
            self.view.layout_history.push(before);
        }
        if !rects.iter().any(|(p, _)| *p == Pane::Plots) {
            self.view.plots.range = None;
        }
        rects
    }
}
