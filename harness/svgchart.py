"""A small SVG line chart of one quantity per iteration, bad against fixed, written without
a plotting stack so that scripts/confirm runs wherever python3 does."""
import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 78, 20, 40, 84
# Colour-blind-safe pair (Okabe-Ito); the fixed line is also dashed, for grey-scale prints.
STYLES = {"bad": ("#D55E00", ""), "fixed": ("#0072B2", ' stroke-dasharray="7 4"')}
FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'


def nice_step(span, ticks=5):
    raw = span / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def format_value(value, unit):
    if unit == "B":
        for prefix in ("B", "KiB", "MiB", "GiB"):
            if abs(value) < 1024 or prefix == "GiB":
                return f"{value:.4g} {prefix}" if prefix != "B" else f"{value:.0f} B"
            value /= 1024
    if abs(value) >= 10000:
        return f"{value / 1000:.4g}k"
    return f"{value:.4g}"


def axis(low, high, unit):
    """Tick values covering [low, high]: round numbers, or powers of two for bytes."""
    if high <= low:
        high = low + 1
    step = nice_step(high - low)
    if unit == "B" and step >= 1:
        step = 2 ** math.ceil(math.log2(step))
    start = math.floor(low / step) * step
    ticks = []
    while not ticks or ticks[-1] < high - 1e-9 * step:
        ticks.append(start + len(ticks) * step)
    return ticks


def line_chart(title, chart, endings):
    """SVG text of `chart` (confirmlib.Chart); endings maps "bad"/"fixed" to a note drawn at
    the last point of a run that stopped early (the error it threw), or None."""
    lines = {"bad": chart.bad, "fixed": chart.fixed}
    values = [v for points in lines.values() for v in points]
    low, high = min(values + [0]), max(values + [0])
    # Headroom, so that a line at the maximum does not run along the top edge.
    y_ticks = axis(low, high + (high - low) * 0.05, chart.unit)
    last_x = max(len(points) for points in lines.values()) - 1 if values else 0
    x_ticks = axis(0, max(last_x, 1), "")
    x_ticks = [t for t in x_ticks if t == int(t)]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_at(i):
        return LEFT + plot_w * i / x_ticks[-1]

    def y_at(v):
        return TOP + plot_h * (1 - (v - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" {FONT} font-size="12">',
           f"<title>{escape(title)}: {escape(chart.label)} per iteration, bad vs fixed</title>",
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
           f'<text x="{LEFT}" y="33" fill="#444">{escape(chart.label)}</text>']
    for tick in y_ticks:
        y = y_at(tick)
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f"{escape(format_value(tick, chart.unit))}</text>")
    for tick in x_ticks:
        x = x_at(tick)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP + plot_h}" y2="{TOP + plot_h + 4}" stroke="#444"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP + plot_h + 17}" text-anchor="middle">{int(tick)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="#444"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" stroke="#444"/>')
    out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{TOP + plot_h + 33}" text-anchor="middle">iteration</text>')

    legend_y = TOP + plot_h + 50
    for slot, (name, points) in enumerate(lines.items()):
        colour, dash = STYLES[name]
        coords = " ".join(f"{x_at(i):.1f},{y_at(v):.1f}" for i, v in enumerate(points))
        if len(points) > 1:
            out.append(f'<polyline class="{name}" fill="none" stroke="{colour}" stroke-width="2.2"{dash} '
                       f'points="{coords}"/>')
        if len(points) <= 40:
            for i, v in enumerate(points):
                out.append(f'<circle cx="{x_at(i):.1f}" cy="{y_at(v):.1f}" r="2.8" fill="{colour}"/>')
        ending = endings.get(name)
        legend = name + (f": {ending}" if ending else "") + ("" if points else " before its first iteration")
        if ending and points:
            x, y = x_at(len(points) - 1), y_at(points[-1])
            out.append(f'<path d="M{x - 6:.1f},{y - 6:.1f}l12,12m0,-12l-12,12" stroke="{colour}" stroke-width="2.5"/>')
        ly = legend_y + 16 * slot
        out.append(f'<line x1="{LEFT}" x2="{LEFT + 26}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2.2"{dash}/>')
        out.append(f'<text x="{LEFT + 32}" y="{ly}">{escape(shorten(legend, 70))}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def shorten(text, width):
    return text if len(text) <= width else text[:width - 1] + "\u2026"
