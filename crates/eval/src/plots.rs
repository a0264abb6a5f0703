//! The report's SVG plots, drawn with plotters' SVG backend: the mean time per stage of each run
//! (stacked), F1 per tag value (both definitions side by side), and the failure classes.
//! Horizontal bars throughout, so long labels (question types) stay readable.

use crate::summary::{Plot, Summary};
use chatty_kg_agents::explanation::StageTimings;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

const WIDTH: u32 = 760;
const ROW: u32 = 26;
const STAGE_COLORS: [RGBColor; 5] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
];
const F1_COLORS: [RGBColor; 2] = [RGBColor(0x4e, 0x79, 0xa7), RGBColor(0xf2, 0x8e, 0x2b)];

/// Every plot for these runs: stage latency (all runs in one), then per run F1 by each tag with
/// more than one value, and the failure classes.
pub fn plots(summaries: &[Summary]) -> Vec<Plot> {
    let mut out = Vec::new();
    if let Some(svg) = stage_latency(summaries) {
        out.push(Plot {
            file: "latency_by_stage.svg".into(),
            title: "Mean time per stage (ms)".into(),
            svg,
        });
    }
    for (i, s) in summaries.iter().enumerate() {
        let prefix = if summaries.len() > 1 {
            format!("run{}_", i + 1)
        } else {
            String::new()
        };
        for (tag, values) in &s.by_tag {
            if values.len() < 2 {
                continue;
            }
            let rows: Vec<(String, [f64; 2])> = values
                .iter()
                .map(|(v, a)| {
                    (
                        format!("{v} ({})", a.questions),
                        [a.f1_of_macro_p_and_macro_r, a.mean_per_question_f1],
                    )
                })
                .collect();
            out.push(Plot {
                file: format!("{prefix}f1_by_{tag}.svg"),
                title: format!("{}: F1 by {tag}", s.label),
                svg: grouped_bars(&rows, ["F1(macro P, macro R)", "mean per-question F1"], 1.0, "F1"),
            });
        }
        if !s.failures.is_empty() {
            let rows: Vec<(String, [f64; 1])> = s.failures.iter().map(|(k, n)| (k.clone(), [*n as f64])).collect();
            let max = rows.iter().map(|(_, [n])| *n).fold(1.0, f64::max);
            out.push(Plot {
                file: format!("{prefix}failures.svg"),
                title: format!("{}: failed questions by class", s.label),
                svg: grouped_bars(&rows, ["questions"], max * 1.1, "questions"),
            });
        }
    }
    out
}

fn height(rows: usize, bars: usize) -> u32 {
    // One more row for the legend when there are several series.
    let rows = if bars > 1 { rows + 1 } else { rows };
    90 + ROW * (rows * bars.max(1)) as u32
}

/// One group of `N` horizontal bars per row, in `[0, max]`.
fn grouped_bars<const N: usize>(rows: &[(String, [f64; N])], series: [&str; N], max: f64, axis: &str) -> String {
    // The SVG backend writes to a string: drawing cannot fail on I/O, and plotters reports
    // nothing else for these shapes, so results are ignored below.
    let mut svg = String::new();
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    // Counts are whole numbers; F1 values get three decimals.
    let counts = N == 1;
    // An empty row on top holds the legend, clear of the bars.
    let legend_rows = if N > 1 { 1.0 } else { 0.0 };
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height(rows.len(), N))).into_drawing_area();
        let n = rows.len() as f64;
        let x_label = |x: &f64| if counts { format!("{x:.0}") } else { format!("{x:.1}") };
        let Some(mut chart) = bar_chart(&root, &labels, 48, max * 1.08, n - 0.5 + legend_rows, axis, &x_label) else {
            return String::new();
        };
        let band = 0.8 / N as f64;
        for (k, name) in series.iter().enumerate() {
            let color = F1_COLORS[k % F1_COLORS.len()];
            let bars = rows.iter().enumerate().map(|(i, (_, values))| {
                // Row 0 at the top.
                let y = n - 1.0 - i as f64 + 0.4 - band * k as f64;
                Rectangle::new([(0.0, y), (values[k].min(max), y - band * 0.9)], color.filled())
            });
            if let Ok(drawn) = chart.draw_series(bars)
                && N > 1
            {
                drawn.label(*name).legend(swatch(color));
            }
            let values = rows.iter().enumerate().map(|(i, (_, values))| {
                let y = n - 1.0 - i as f64 + 0.4 - band * k as f64 - band * 0.45;
                Text::new(
                    format_value(values[k], counts),
                    (values[k].min(max), y),
                    ("sans-serif", 11).into_font(),
                )
            });
            let _ = chart.draw_series(values);
        }
        if N > 1 {
            draw_legend(&mut chart);
        }
        let _ = root.present();
    }
    svg
}

/// Stacked bars of the mean time per stage, one bar per run; `None` when no run has timings.
fn stage_latency(summaries: &[Summary]) -> Option<String> {
    // Pipeline order, then any other stage a summary has.
    let mut stages: Vec<&String> = summaries.first()?.efficiency.stage_ms.keys().collect();
    let order = StageTimings::default().stages().map(|(name, _)| name);
    stages.sort_by_key(|s| order.iter().position(|o| o == s).unwrap_or(order.len()));
    let total = |s: &Summary| s.efficiency.stage_ms.values().sum::<f64>();
    let max = summaries.iter().map(total).fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    let mut svg = String::new();
    {
        let labels: Vec<&str> = summaries.iter().map(|s| s.label.as_str()).collect();
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, 150 + ROW * 2 * summaries.len() as u32)).into_drawing_area();
        let n = summaries.len() as f64;
        let x_label = |x: &f64| format!("{x:.1}");
        let mut chart = bar_chart(
            &root,
            &labels,
            40,
            max * 1.05,
            n + 0.5,
            "ms per question (mean)",
            &x_label,
        )?;
        for (k, stage) in stages.iter().enumerate() {
            let color = STAGE_COLORS[k % STAGE_COLORS.len()];
            let bars = summaries.iter().enumerate().map(|(i, s)| {
                let start: f64 = stages[..k].iter().filter_map(|st| s.efficiency.stage_ms.get(*st)).sum();
                let ms = s.efficiency.stage_ms.get(*stage).copied().unwrap_or(0.0);
                let y = n - 1.0 - i as f64;
                Rectangle::new([(start, y + 0.35), (start + ms, y - 0.35)], color.filled())
            });
            if let Ok(drawn) = chart.draw_series(bars) {
                drawn.label(stage.as_str()).legend(swatch(color));
            }
        }
        draw_legend(&mut chart);
        let _ = root.present();
    }
    Some(svg)
}

type BarChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A white chart of horizontal bars on `root`: x in `[0, x_max]`, rows from -0.5 to `y_top`
/// with `labels[0]` on the top row, the axes drawn. `label_chars` bounds the label area.
fn bar_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    labels: &[&str],
    label_chars: usize,
    x_max: f64,
    y_top: f64,
    x_desc: &str,
    x_label: &dyn Fn(&f64) -> String,
) -> Option<BarChart<'a, 'b>> {
    let _ = root.fill(&WHITE);
    let label_width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, label_chars) as u32
        * 7
        + 10;
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0.0..x_max, -0.5..y_top)
        .ok()?;
    let rows = labels.len() as f64;
    let _ = chart
        .configure_mesh()
        .disable_y_mesh()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .y_labels(labels.len() + 2)
        .y_label_formatter(&|y| label_at(labels, rows - 1.0 - *y))
        .x_label_formatter(x_label)
        .x_desc(x_desc)
        .draw();
    Some(chart)
}

/// The legend's colour square for a series.
fn swatch(color: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
}

fn draw_legend<'a, 'b: 'a>(chart: &mut BarChart<'a, 'b>) {
    let _ = chart
        .configure_series_labels()
        .label_font(("sans-serif", 12))
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw();
}

/// The label of row `y` when `y` is a row index, else nothing (an axis tick between rows).
fn label_at(labels: &[&str], y: f64) -> String {
    let i = y.round();
    if (y - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).map_or_else(String::new, |l| (*l).to_owned())
}

fn format_value(v: f64, count: bool) -> String {
    if count { format!(" {v:.0}") } else { format!(" {v:.3}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(label: &str, understanding: f64) -> Summary {
        let aggregate = |n: usize, f1: f64, mean: f64| {
            json!({"questions": n, "macro_precision": f1, "macro_recall": f1,
                "f1_of_macro_p_and_macro_r": f1, "mean_per_question_f1": mean})
        };
        serde_json::from_value(json!({
            "label": label, "questions": 5, "unscored": 0, "overall": aggregate(5, 0.6, 0.5), "ranking": null,
            "by_tag": {"hops": {"1": aggregate(3, 1.0, 1.0), "2": aggregate(2, 0.25, 0.2)}, "turn": {"0": aggregate(5, 0.6, 0.5)}},
            "failures": {"wrong entity": 2, "empty result": 1}, "errors": {},
            "efficiency": {"llm_calls": 1.0, "input_tokens": 300.0, "output_tokens": 50.0, "sparql_queries": 1.0,
                "latency_ms_p50": 1000.0, "latency_ms_p95": 2000.0, "latency_ms_mean": 1200.0,
                "stage_ms": {"understanding": understanding, "linking": 100.0, "query_selection": 5.0, "execution": 2.0, "reply": 1.0}}
        }))
        .unwrap()
    }

    #[test]
    fn plots_are_svg_with_every_label_and_one_bar_per_value() {
        let plots = plots(&[summary("dialogue", 900.0), summary("standalone", 700.0)]);
        let files: Vec<&str> = plots.iter().map(|p| p.file.as_str()).collect();
        // A tag with a single value gets no plot.
        assert_eq!(
            files,
            [
                "latency_by_stage.svg",
                "run1_f1_by_hops.svg",
                "run1_failures.svg",
                "run2_f1_by_hops.svg",
                "run2_failures.svg"
            ]
        );
        for plot in &plots {
            assert!(
                plot.svg.starts_with("<svg") && plot.svg.trim_end().ends_with("</svg>"),
                "{}",
                plot.file
            );
        }
        let latency = &plots[0].svg;
        for text in [
            "dialogue",
            "standalone",
            "understanding",
            "linking",
            "execution",
            "ms per question",
        ] {
            assert!(latency.contains(text), "{text} missing from the latency plot");
        }
        let hops = &plots[1].svg;
        for text in [
            "1 (3)",
            "2 (2)",
            "F1(macro P, macro R)",
            "mean per-question F1",
            "0.250",
            "0.200",
        ] {
            assert!(hops.contains(text), "{text} missing from the F1 plot");
        }
        let failures = &plots[2].svg;
        assert!(failures.contains("wrong entity") && failures.contains("empty result"));
        assert!(
            failures.contains(">\n 2\n<") || failures.contains("> 2<"),
            "the count is written: {failures}"
        );
    }
}
