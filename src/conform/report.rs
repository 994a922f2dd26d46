//! The report in its forms: the terminal's text, Markdown or HTML to hand over, `JUnit` XML for
//! CI, and JSON. Each starts with the summary an integrator hands over, then the component's
//! interface statement, then every check with its reason, evidence frames and reference.

use std::fmt::Write as _;

use super::check::{CheckResult, Verdict};
use super::run::Report;
use crate::record::xml::xml_escape;

fn verdict_counts(r: &Report) -> String {
    let mut s = format!(
        "{} passed, {} failed, {} warnings, {} not applicable",
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Warning),
        r.count(Verdict::NotApplicable)
    );
    let not_run = r.count(Verdict::NotRun);
    if not_run > 0 {
        let _ = write!(s, ", {not_run} not run (the component stopped answering)");
    }
    s
}

fn overall(r: &Report) -> &'static str {
    if r.passed() { "PASSED" } else { "FAILED" }
}

fn evidence_text(c: &CheckResult) -> String {
    let mut s = c.frames_text().unwrap_or_else(|| "no frames".into());
    if !c.outcome.evidence.is_empty() {
        let named: Vec<String> = c
            .outcome
            .evidence
            .iter()
            .map(|e| format!("{} {}", e.frame, e.what))
            .collect();
        let _ = write!(s, " ({})", named.join(", "));
    }
    s
}

/// The lines of the interface statement: identification, services, messages answered, rates.
fn interface_lines(r: &Report) -> Vec<String> {
    let f = &r.facts;
    let mut out = Vec::new();
    out.push(format!(
        "Identification: {}",
        f.identification.as_deref().unwrap_or("(not answered)")
    ));
    match &f.services {
        Some(s) if !s.is_empty() => {
            out.push("Services:".into());
            for rec in s {
                out.push(format!(
                    "  {} {}.{}",
                    rec.uri, rec.major_version_number, rec.minor_version_number
                ));
            }
        }
        Some(_) => out.push("Services: none listed".into()),
        None => out.push("Services: unknown (QueryServices not answered)".into()),
    }
    if !f.answered.is_empty() {
        out.push("Messages answered:".into());
        for a in &f.answered {
            out.push(format!("  {} -> {}", a.query, a.reply));
        }
    }
    if !f.unanswered.is_empty() {
        let names: Vec<&str> = f.unanswered.iter().map(String::as_str).collect();
        out.push(format!(
            "Not answered within {:.1} s: {}",
            r.reply_bound_s,
            names.join(", ")
        ));
    }
    for rate in &f.rates {
        out.push(format!(
            "Event {}: {:.1} Hz asked, {:.1} Hz confirmed{}",
            rate.report,
            rate.requested_hz,
            rate.confirmed_hz,
            rate.measured_hz
                .map(|m| format!(", {m:.1} Hz measured"))
                .unwrap_or_default()
        ));
    }
    if let Some(t) = f.control_timeout_s {
        out.push(format!("Access-control timeout: {t} s"));
    }
    for (d, reference) in &f.deviations {
        out.push(format!("Deviation: {d} ({reference})"));
    }
    out
}

fn summary_lines(r: &Report) -> Vec<String> {
    let mut lines = vec![
        format!(
            "Component {} at {}: {} ({})",
            r.target,
            r.address,
            overall(r),
            verdict_counts(r)
        ),
        format!(
            "Suites: {}; motion {}",
            r.suites.join(", "),
            if r.allow_motion {
                "allowed (--allow-motion)"
            } else {
                "not allowed: no motion command was sent"
            }
        ),
        format!(
            "Tester {} ({}), started {}, {:.1} s; every reply waited for at most {:.1} s",
            r.tester, r.header.tool, r.header.started, r.header.seconds, r.reply_bound_s
        ),
        match &r.header.capture {
            Some(c) => format!(
                "Evidence: {c}, {} frames (frame numbers as in Wireshark)",
                r.frames
            ),
            None => format!(
                "Evidence: {} frames (no capture written: --pcapng FILE)",
                r.frames
            ),
        },
    ];
    if r.strangers > 0 || r.unrecorded > 0 || r.malformed_received > 0 {
        lines.push(format!(
            "Not read: {} datagrams from other addresses than the component's (anyone can \
             claim its ID), {} past the capture's bound; {} received were not JUDP v2",
            r.strangers, r.unrecorded, r.malformed_received
        ));
    }
    lines
}

/// The terminal's report.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    for line in summary_lines(r) {
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(s, "\nInterface statement");
    for line in interface_lines(r) {
        let _ = writeln!(s, "  {line}");
    }
    let mut suite = "";
    for c in &r.checks {
        if c.suite != suite {
            suite = c.suite;
            let _ = writeln!(s, "\n{suite}");
        }
        let _ = writeln!(
            s,
            "  {:<7} {:<34} {}",
            c.outcome.verdict.word(),
            c.name,
            c.title
        );
        let _ = writeln!(
            s,
            "          {} [{}; {}]",
            c.outcome.reason,
            c.reference,
            evidence_text(c)
        );
    }
    let _ = writeln!(s, "\n{}: {}", overall(r), verdict_counts(r));
    s
}

fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# JAUS conformance report: component {} — {}\n",
        r.target,
        overall(r)
    );
    let _ = writeln!(s, "## Summary\n");
    for line in summary_lines(r) {
        let _ = writeln!(s, "- {}", md_cell(&line));
    }
    let _ = writeln!(
        s,
        "\n| Suite | Pass | Fail | Warning | N/A | Not run |\n|---|---|---|---|---|---|"
    );
    for suite in &r.suites {
        let n = |v: Verdict| {
            r.checks
                .iter()
                .filter(|c| c.suite == *suite && c.outcome.verdict == v)
                .count()
        };
        let _ = writeln!(
            s,
            "| {suite} | {} | {} | {} | {} | {} |",
            n(Verdict::Pass),
            n(Verdict::Fail),
            n(Verdict::Warning),
            n(Verdict::NotApplicable),
            n(Verdict::NotRun)
        );
    }
    let problems: Vec<&CheckResult> = r
        .checks
        .iter()
        .filter(|c| matches!(c.outcome.verdict, Verdict::Fail | Verdict::Warning))
        .collect();
    if !problems.is_empty() {
        let _ = writeln!(s, "\nFailures and deviations:\n");
        for c in problems {
            let _ = writeln!(
                s,
                "- **{}** {}.{}: {} ({}; {})",
                c.outcome.verdict.word(),
                c.suite,
                c.name,
                md_cell(&c.outcome.reason),
                c.reference,
                evidence_text(c)
            );
        }
    }
    let _ = writeln!(s, "\n## Interface statement\n\n```");
    for line in interface_lines(r) {
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(s, "```");
    let mut suite = "";
    for c in &r.checks {
        if c.suite != suite {
            suite = c.suite;
            let _ = writeln!(
                s,
                "\n## {suite}\n\n| Check | Verdict | Reason | Evidence | Reference |\n|---|---|---|---|---|"
            );
        }
        let _ = writeln!(
            s,
            "| `{}` {} | {} | {} | {} | {} |",
            c.name,
            md_cell(&c.title),
            c.outcome.verdict.word(),
            md_cell(&c.outcome.reason),
            md_cell(&evidence_text(c)),
            c.reference
        );
    }
    s
}

/// The report as a self-contained HTML page.
pub fn html(r: &Report) -> String {
    let e = xml_escape;
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>JAUS conformance: {}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:75em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #bbb;padding:.3em .5em;vertical-align:top;text-align:left}}\
         .pass{{color:#1a7f37}}.FAIL{{color:#c00;font-weight:bold}}.warning{{color:#9a6700}}.na{{color:#666}}\
         pre{{background:#f4f4f4;padding:.6em}}</style></head><body>\n",
        e(&r.target.to_string())
    );
    let _ = writeln!(
        s,
        "<h1>JAUS conformance report: component {} — <span class=\"{}\">{}</span></h1>",
        e(&r.target.to_string()),
        if r.passed() { "pass" } else { "FAIL" },
        overall(r)
    );
    let _ = writeln!(s, "<h2>Summary</h2><ul>");
    for line in summary_lines(r) {
        let _ = writeln!(s, "<li>{}</li>", e(&line));
    }
    let _ = writeln!(s, "</ul><h2>Interface statement</h2><pre>");
    for line in interface_lines(r) {
        let _ = writeln!(s, "{}", e(&line));
    }
    let _ = writeln!(s, "</pre>");
    let mut suite = "";
    for c in &r.checks {
        if c.suite != suite {
            if !suite.is_empty() {
                let _ = writeln!(s, "</table>");
            }
            suite = c.suite;
            let _ = writeln!(
                s,
                "<h2>{}</h2><table><tr><th>Check</th><th>Verdict</th><th>Reason</th><th>Evidence</th><th>Reference</th></tr>",
                e(suite)
            );
        }
        let class = match c.outcome.verdict {
            Verdict::NotApplicable | Verdict::NotRun => "na",
            v => v.word(),
        };
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code> {}</td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&c.name),
            e(&c.title),
            e(c.outcome.verdict.word()),
            e(&c.outcome.reason),
            e(&evidence_text(c)),
            e(c.reference)
        );
    }
    if !suite.is_empty() {
        let _ = writeln!(s, "</table>");
    }
    let _ = writeln!(s, "</body></html>");
    s
}

/// The report as `JUnit` XML: one `testsuite` per suite, one `testcase` per check; a failure is
/// `<failure>`, not applicable `<skipped>`, a warning passes with its reason in
/// `<system-out>`; the properties `verdict`, `frames` (`N-M`), `evidence` (`frame:ID:name`,
/// one property per frame) and `reference` carry what CI checks against the capture.
pub fn junit(r: &Report) -> String {
    let e = xml_escape;
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total_time = r.checks.iter().map(|c| c.seconds).sum::<f64>().max(0.0);
    let _ = writeln!(
        s,
        "<testsuites name=\"jaus-ocu conform {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{total_time:.3}\">",
        e(&r.target.to_string()),
        r.checks.len(),
        r.count(Verdict::Fail),
        r.count(Verdict::NotApplicable) + r.count(Verdict::NotRun)
    );
    for suite in &r.suites {
        let cases: Vec<&CheckResult> = r.checks.iter().filter(|c| c.suite == *suite).collect();
        let failures = cases
            .iter()
            .filter(|c| c.outcome.verdict == Verdict::Fail)
            .count();
        let skipped = cases
            .iter()
            .filter(|c| matches!(c.outcome.verdict, Verdict::NotApplicable | Verdict::NotRun))
            .count();
        let time = cases.iter().map(|c| c.seconds).sum::<f64>().max(0.0);
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\" timestamp=\"{}\">",
            e(suite),
            cases.len(),
            e(&r.header.started)
        );
        for c in cases {
            let _ = writeln!(
                s,
                "    <testcase classname=\"conform.{}\" name=\"{}\" time=\"{:.3}\">",
                e(c.suite),
                e(&c.name),
                c.seconds
            );
            let _ = writeln!(s, "      <properties>");
            let _ = writeln!(
                s,
                "        <property name=\"verdict\" value=\"{}\"/>",
                e(c.outcome.verdict.word())
            );
            let _ = writeln!(
                s,
                "        <property name=\"reference\" value=\"{}\"/>",
                e(c.reference)
            );
            if let Some((a, b)) = c.frames {
                let _ = writeln!(s, "        <property name=\"frames\" value=\"{a}-{b}\"/>");
            }
            for ev in &c.outcome.evidence {
                let _ = writeln!(
                    s,
                    "        <property name=\"evidence\" value=\"{}:{}:{}\"/>",
                    ev.frame,
                    ev.message_id
                        .map_or_else(|| "-".into(), |id| format!("0x{id:04X}")),
                    e(&ev.what)
                );
            }
            let _ = writeln!(s, "      </properties>");
            let text = format!(
                "{}: {} [{}; {}]",
                c.title,
                c.outcome.reason,
                c.reference,
                evidence_text(c)
            );
            match c.outcome.verdict {
                Verdict::Fail => {
                    let _ = writeln!(
                        s,
                        "      <failure message=\"{}\" type=\"nonconformance\">{}</failure>",
                        e(&c.outcome.reason),
                        e(&text)
                    );
                }
                Verdict::NotApplicable | Verdict::NotRun => {
                    let _ = writeln!(s, "      <skipped message=\"{}\"/>", e(&c.outcome.reason));
                }
                Verdict::Warning | Verdict::Pass => {
                    let _ = writeln!(
                        s,
                        "      <system-out>{}{}</system-out>",
                        if c.outcome.verdict == Verdict::Warning {
                            "warning: "
                        } else {
                            ""
                        },
                        e(&text)
                    );
                }
            }
            let _ = writeln!(s, "    </testcase>");
        }
        let _ = writeln!(s, "  </testsuite>");
    }
    let _ = writeln!(s, "</testsuites>");
    s
}

/// The report as JSON.
pub fn json(r: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("result".into(), overall(r).into());
    }
    v
}
