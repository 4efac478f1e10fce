//! The report's charts, drawn with plotters' SVG backend: time series, a cumulative distribution on a
//! logarithmic axis, and signed bars over time.

use std::error::Error;
use std::io;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::time_axis::{TimeAxis, duration_label};

/// Width and height of every chart, in pixels.
const SIZE: (u32, u32) = (820, 380);
/// Series colours, in order; chosen to stay distinguishable for common colour blindness.
const COLOURS: [RGBColor; 4] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
];
const FONT: &str = "sans-serif";
/// Durations offered as ticks on the logarithmic wait axis.
const DURATION_TICKS: [i64; 9] = [
    1,
    10,
    60,
    600,
    3_600,
    6 * 3_600,
    86_400,
    7 * 86_400,
    30 * 86_400,
];

/// One named line of (x, y) points, x increasing.
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// Points in the chart's units.
    pub points: Vec<(f64, f64)>,
}

/// Chart title and the vertical axis title (the horizontal one follows from the axis).
pub struct Labels<'a> {
    /// Heading above the plot.
    pub title: &'a str,
    /// Vertical axis title.
    pub y: &'a str,
}

/// One bar from `from` to `to` on the time axis, `value` high (negative values point down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// Left edge, in the axis unit.
    pub from: f64,
    /// Right edge, in the axis unit.
    pub to: f64,
    /// Signed height.
    pub value: f64,
}

type DrawResult = Result<(), Box<dyn Error>>;

/// Lines over time, the x axis fitted to `axis`, the y axis from 0 to `y_max`.
pub fn time_chart(
    labels: &Labels<'_>,
    axis: TimeAxis,
    lines: &[Series<'_>],
    y_max: f64,
) -> io::Result<String> {
    render(|root| {
        let mut chart = frame(root, labels.title)
            .build_cartesian_2d(0.0..axis.end(), 0.0..y_max.max(f64::MIN_POSITIVE))?;
        chart
            .configure_mesh()
            .x_desc(axis.title())
            .y_desc(labels.y)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| tick(*x))
            .y_label_formatter(&|y| tick(*y))
            .draw()?;
        lines_with_legend(&mut chart, lines)
    })
}

/// Cumulative shares (0–100 %) over durations in seconds on a logarithmic axis from 1 s to `x_max`.
pub fn cumulative_chart(
    labels: &Labels<'_>,
    x_title: &str,
    lines: &[Series<'_>],
    x_max: f64,
) -> io::Result<String> {
    let x_max = x_max.max(2.0);
    let ticks: Vec<f64> = DURATION_TICKS
        .iter()
        .map(|&s| s as f64)
        .filter(|&s| s <= x_max)
        .collect();
    render(|root| {
        let mut chart = frame(root, labels.title)
            .build_cartesian_2d((1.0..x_max).log_scale().with_key_points(ticks), 0.0..100.0)?;
        chart
            .configure_mesh()
            .x_desc(x_title)
            .y_desc(labels.y)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| duration_label(x.round() as i64))
            .y_label_formatter(&|y| format!("{y:.0} %"))
            .draw()?;
        lines_with_legend(&mut chart, lines)
    })
}

/// Signed bars over time: positive ones in the second colour named `up`, negative ones in the
/// first named `down`, on a y axis symmetric around zero.
pub fn signed_bars_chart(
    labels: &Labels<'_>,
    axis: TimeAxis,
    bars: &[Bar],
    (up, down): (&str, &str),
) -> io::Result<String> {
    let reach = bars.iter().map(|b| b.value.abs()).fold(0.0, f64::max);
    let reach = if reach > 0.0 { reach * 1.1 } else { 1.0 };
    render(|root| {
        let mut chart =
            frame(root, labels.title).build_cartesian_2d(0.0..axis.end(), -reach..reach)?;
        chart
            .configure_mesh()
            .x_desc(axis.title())
            .y_desc(labels.y)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| tick(*x))
            .y_label_formatter(&|y| tick(*y))
            .draw()?;
        for (name, colour, upward) in [(up, COLOURS[1], true), (down, COLOURS[0], false)] {
            let side = bars
                .iter()
                .filter(|b| (b.value > 0.0) == upward && b.value != 0.0);
            chart
                .draw_series(
                    side.map(|b| Rectangle::new([(b.from, 0.0), (b.to, b.value)], colour.filled())),
                )?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled())
                });
        }
        chart.draw_series(LineSeries::new([(0.0, 0.0), (axis.end(), 0.0)], BLACK))?;
        legend(&mut chart)
    })
}

/// Draws into a fresh SVG document and returns its text.
fn render(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> io::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(io::Error::other)?;
        draw(&root).map_err(|e| io::Error::other(e.to_string()))?;
        root.present().map_err(io::Error::other)?;
    }
    Ok(svg)
}

/// A chart builder with the title and the room the axis labels need.
fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64);
    builder
}

/// Draws each series as a line in the next colour, then the legend.
fn lines_with_legend<'a, 'b, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    lines: &[Series<'_>],
) -> DrawResult
where
    'b: 'a,
{
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(line.points.iter().copied(), colour))?
            .label(line.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
    }
    legend(chart)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font((FONT, 16))
        .draw()?;
    Ok(())
}

/// Whole numbers without decimals, others with at most two.
fn tick(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_chart_names_every_series_and_escapes_text() {
        let svg = time_chart(
            &Labels {
                title: "a < b",
                y: "jobs",
            },
            TimeAxis::fitted(2 * 86_400),
            &[
                Series {
                    name: "one",
                    points: vec![(0.0, 1.0), (48.0, 2.0)],
                },
                Series {
                    name: "two",
                    points: vec![(0.0, 0.0), (24.0, 1.0)],
                },
            ],
            2.0,
        )
        .unwrap();
        assert!(svg.contains("a &lt; b"));
        assert!(svg.contains("\none\n</text>") && svg.contains("\ntwo\n</text>"));
        assert!(svg.contains("hours since first submission"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn ticks_drop_needless_decimals() {
        assert_eq!(tick(50.0), "50");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(0.999_999_9), "1");
    }
}
