//! The chart model: a [`Chart`] is its axes, its series, shaded spans and reference lines,
//! in the axes' units, and the colours the report draws them in.

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color(pub u8, pub u8, pub u8);

/// Colours for lines that are told apart by name only (configurations, runs, trials). No
/// red: red is the SLA's.
pub const PALETTE: [Color; 10] = [
    Color(31, 119, 180),
    Color(44, 160, 44),
    Color(148, 103, 189),
    Color(255, 127, 14),
    Color(140, 86, 75),
    Color(23, 190, 207),
    Color(227, 119, 194),
    Color(188, 189, 34),
    Color(80, 80, 80),
    Color(0, 70, 140),
];

/// The colour of the `i`-th of several lines.
pub fn palette(i: usize) -> Color {
    PALETTE[i % PALETTE.len()]
}

/// The SLA's threshold lines and failing windows.
pub const SLA_RED: Color = Color(200, 30, 30);
/// The warmup's shade.
pub const WARMUP_GREY: Color = Color(120, 120, 120);
/// Client hiccups.
pub const HICCUP_GREY: Color = Color(110, 110, 110);
/// Errors.
pub const ERROR_RED: Color = Color(214, 39, 40);
/// Throughput.
pub const THROUGHPUT_BLUE: Color = Color(31, 119, 180);

/// The percentiles the latency charts show, with their colours: light to dark as the
/// percentile climbs, so that the order of the lines reads at a glance.
pub const LATENCY_LINES: [(&str, Color); 4] = [
    ("p50", Color(120, 170, 220)),
    ("p99", Color(31, 119, 180)),
    ("p99.9", Color(255, 127, 14)),
    ("max", Color(90, 30, 120)),
];

/// Which of the charts a chart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Worst-window SLA value against attempted rate.
    SlaVsRate,
    /// Latency percentiles against achieved throughput.
    LatencyVsThroughput,
    /// Percentile spectrum.
    Spectrum,
    /// Latency per interval over a run.
    TimelineLatency,
    /// Throughput and errors per interval over a run.
    TimelineThroughput,
    /// The recall of the ANN queries per interval over a run.
    TimelineRecall,
    /// Throughput against concurrency.
    ConcurrencyThroughput,
    /// Latency against concurrency.
    ConcurrencyLatency,
    /// Client latency per interval and the nodes' pauses over a run.
    ServerPauses,
    /// Client latency per interval and Cassandra's own latency, read during a run.
    ServerLatency,
    /// Capacity against cluster size, with the scaling model.
    CapacityVsNodes,
    /// An interval search's share of failing windows against attempted rate, with its bounds.
    WindowsVsRate,
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly.
    Linear,
    /// Logarithmically, for values spanning orders of magnitude; values must be positive.
    Log,
    /// A percentile p (a fraction below 1) placed at 1/(1−p) on a log scale and labelled
    /// 90%, 99%, 99.9%, …
    Percentile,
}

/// One axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What the axis shows, with its unit.
    pub label: String,
    /// How values are placed.
    pub scale: Scale,
    /// Whether a linear axis starts at zero whatever the data.
    pub from_zero: bool,
    /// Whether only whole numbers make sense as ticks (counts).
    pub integer: bool,
}

impl Axis {
    pub(super) fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            from_zero: true,
            integer: false,
        }
    }

    pub(super) fn log(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            from_zero: false,
            integer: false,
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A solid line.
    Line,
    /// A solid line with a dot at each point.
    LineWithPoints,
    /// Dots only.
    Points,
    /// A dashed line.
    Dashed,
}

/// One named line or set of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// Its colour.
    pub color: Color,
    /// How it is drawn.
    pub style: Style,
    /// (x, y) in the axes' units, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Whether y is on the secondary (right) axis.
    pub secondary: bool,
    /// Whether the axes are fitted to this series; a series that is not (an overlay for
    /// context) is clipped to the range the others need.
    pub fit: bool,
}

/// A shaded span of x, e.g. the warmup or a failing SLA window.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The legend's text (one entry per distinct name).
    pub name: String,
    /// Start, in x's units.
    pub from: f64,
    /// End, in x's units.
    pub to: f64,
    /// Its colour (drawn translucent).
    pub color: Color,
}

/// A reference line across the whole plot: horizontal at a y, or vertical at an x.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The legend's text.
    pub name: String,
    /// Where, in the axis' units.
    pub at: f64,
    /// Its colour.
    pub color: Color,
}

/// One chart, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Which chart of the report this is.
    pub kind: Kind,
    /// A name for its SVG file; the page makes it unique and numbers it in page order.
    pub id: String,
    /// The title drawn above the plot.
    pub title: String,
    /// What the chart shows and how to read it, for the text beside it.
    pub caption: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// A second vertical axis on the right, when a series needs one.
    pub y2: Option<Axis>,
    /// The lines and points.
    pub series: Vec<Series>,
    /// Shaded spans of x.
    pub bands: Vec<Band>,
    /// Horizontal reference lines (on the primary y axis).
    pub hlines: Vec<Rule>,
    /// Vertical reference lines.
    pub vlines: Vec<Rule>,
}

impl Chart {
    pub(super) fn new(kind: Kind, id: String, title: String, x: Axis, y: Axis) -> Chart {
        Chart {
            kind,
            id,
            title,
            caption: String::new(),
            x,
            y,
            y2: None,
            series: Vec::new(),
            bands: Vec::new(),
            hlines: Vec::new(),
            vlines: Vec::new(),
        }
    }

    /// The series named `name`.
    pub fn series_named(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }
}
