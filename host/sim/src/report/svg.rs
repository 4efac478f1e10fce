//! Minimal hand-written SVG charts: line charts and grouped bar charts with axes and a legend.

use std::fmt::Write;

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;
/// Series colours, in order; chosen to stay distinguishable for common colour blindness.
const COLOURS: [&str; 4] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7"];

/// One named line of (x, y) points.
pub struct Line<'a> {
    /// Legend text.
    pub name: &'a str,
    /// Points in increasing x.
    pub points: Vec<(f64, f64)>,
}

/// One named bar series; bar `i` belongs to category `i`.
pub struct Bars<'a> {
    /// Legend text.
    pub name: &'a str,
    /// Bar heights.
    pub values: Vec<f64>,
}

/// Axis titles and chart title.
pub struct Labels<'a> {
    /// Heading above the plot.
    pub title: &'a str,
    /// Horizontal axis title.
    pub x: &'a str,
    /// Vertical axis title.
    pub y: &'a str,
}

/// A line chart; `y_max` fixes the top of the axis (e.g. 1.0 for a utilization), else it is the
/// data maximum rounded up to a round number.
pub fn line_chart(labels: &Labels<'_>, lines: &[Line<'_>], y_max: Option<f64>) -> String {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let data_y = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let x_axis = nice_max(x_max);
    let y_axis = y_max.unwrap_or_else(|| nice_max(data_y));
    let mut svg = open(labels);
    axes(&mut svg, labels, x_axis, y_axis, None);
    for (i, line) in lines.iter().enumerate() {
        let mut path = String::new();
        for &(x, y) in &line.points {
            let sep = if path.is_empty() { "" } else { " " };
            let _ = write!(path, "{sep}{:.1},{:.1}", px(x, x_axis), py(y, y_axis));
        }
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.2" stroke-opacity="0.85" points="{path}"/>"#,
            COLOURS[i % COLOURS.len()]
        );
    }
    legend(&mut svg, lines.iter().map(|l| l.name));
    svg.push_str("</svg>\n");
    svg
}

/// A grouped bar chart over named categories.
pub fn bar_chart(labels: &Labels<'_>, categories: &[String], series: &[Bars<'_>]) -> String {
    let data_y = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let y_axis = nice_max(data_y);
    let mut svg = open(labels);
    axes(
        &mut svg,
        labels,
        categories.len() as f64,
        y_axis,
        Some(categories),
    );
    let slot = (WIDTH - LEFT - RIGHT) / categories.len().max(1) as f64;
    let bar = slot * 0.8 / series.len().max(1) as f64;
    for (s, bars) in series.iter().enumerate() {
        for (i, &value) in bars.values.iter().enumerate() {
            let x = LEFT + slot * i as f64 + slot * 0.1 + bar * s as f64;
            let y = py(value, y_axis);
            let _ = writeln!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{bar:.1}" height="{:.1}" fill="{}" fill-opacity="0.85"/>"#,
                HEIGHT - BOTTOM - y,
                COLOURS[s % COLOURS.len()]
            );
        }
    }
    legend(&mut svg, series.iter().map(|s| s.name));
    svg.push_str("</svg>\n");
    svg
}

fn open(labels: &Labels<'_>) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(labels.title)
    );
    svg
}

/// Axes, grid, ticks and titles; with `categories` the x ticks are category names.
fn axes(
    svg: &mut String,
    labels: &Labels<'_>,
    x_axis: f64,
    y_axis: f64,
    categories: Option<&[String]>,
) {
    let (x0, y0, x1, y1) = (LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, TOP);
    for i in 0..=5 {
        let value = y_axis * i as f64 / 5.0;
        let y = py(value, y_axis);
        let _ = writeln!(
            svg,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            y + 4.0,
            tick(value)
        );
    }
    match categories {
        Some(names) => {
            let slot = (x1 - x0) / names.len().max(1) as f64;
            for (i, name) in names.iter().enumerate() {
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                    x0 + slot * (i as f64 + 0.5),
                    y0 + 16.0,
                    escape(name)
                );
            }
        }
        None => {
            for i in 0..=5 {
                let value = x_axis * i as f64 / 5.0;
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    px(value, x_axis),
                    y0 + 18.0,
                    tick(value)
                );
            }
        }
    }
    let _ = writeln!(
        svg,
        r#"<polyline fill="none" stroke="black" points="{x0},{y1} {x0},{y0} {x1},{y0}"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        HEIGHT - 14.0,
        escape(labels.x)
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (y0 + y1) / 2.0,
        escape(labels.y)
    );
}

fn legend<'a>(svg: &mut String, names: impl Iterator<Item = &'a str>) {
    for (i, name) in names.enumerate() {
        let y = TOP + 8.0 + 16.0 * i as f64;
        let x = WIDTH - RIGHT - 220.0;
        let _ = writeln!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 10.0,
            COLOURS[i % COLOURS.len()],
            x + 18.0,
            y,
            escape(name)
        );
    }
}

fn px(x: f64, x_axis: f64) -> f64 {
    LEFT + (WIDTH - LEFT - RIGHT) * if x_axis > 0.0 { x / x_axis } else { 0.0 }
}

fn py(y: f64, y_axis: f64) -> f64 {
    HEIGHT
        - BOTTOM
        - (HEIGHT - TOP - BOTTOM)
            * if y_axis > 0.0 {
                (y / y_axis).min(1.0)
            } else {
                0.0
            }
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `value` (1 for an empty chart).
fn nice_max(value: f64) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|step| step * magnitude)
        .find(|&candidate| candidate >= value)
        .unwrap_or(10.0 * magnitude)
}

fn tick(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// Escapes text for SVG element content.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round_numbers() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(0.93), 1.0);
        assert_eq!(nice_max(130.0), 200.0);
        assert_eq!(nice_max(2_400.0), 2_500.0);
    }

    #[test]
    fn a_line_chart_has_one_polyline_per_series_and_escaped_labels() {
        let labels = Labels {
            title: "a < b",
            x: "x",
            y: "y",
        };
        let svg = line_chart(
            &labels,
            &[
                Line {
                    name: "one",
                    points: vec![(0.0, 1.0), (1.0, 2.0)],
                },
                Line {
                    name: "two",
                    points: vec![(0.0, 0.0)],
                },
            ],
            None,
        );
        assert_eq!(svg.matches("<polyline fill=\"none\" stroke=\"#").count(), 2);
        assert!(svg.contains("a &lt; b"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
