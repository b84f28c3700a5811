// The SVG case map of a domain report (report/kind_domain.hpp: render_domain_svg).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "report/kind_domain.hpp"
#include "report/markup.hpp"

namespace bitproof {
namespace {

// The share of a cell's cases that hold, in six steps of ColorBrewer's PiYG
// (readable by the colour-blind: magenta to green, dark at both ends, so one
// failing case in a column of 256 is light green, not the dark green of "all
// hold"). Outside the claimed interval the same step is paler (kPale of the
// colour, the rest white). tests/render/check_svg_png.py holds the same table.
struct Step {
  const char* colour;
  const char* words;
};
constexpr Step kSteps[] = {{"#c51b7d", "none hold"},        {"#de77ae", "under 1/4 hold"},
                           {"#f1b6da", "1/4 to under 1/2"}, {"#b8e186", "1/2 to under 3/4"},
                           {"#7fbc41", "3/4 to under all"}, {"#276419", "all hold"}};
constexpr double kPale = 0.4;
constexpr const char* kFailsInside = "#c51b7d";  // words about a claim that fails
constexpr const char* kClaimed = "#2166ac";
constexpr int kLeft = 190;     // room for row labels
constexpr int kMaxBands = 64;  // rows drawn at most; more cases are grouped into bands

struct Map {
  std::size_t rows = 0;
  std::size_t columns = 0;
  std::vector<bool> failing;  // column-major
  [[nodiscard]] bool fails(std::size_t row, std::size_t column) const { return failing[column * rows + row]; }
};

Expected<Map> read_map(const Json& claim, const std::string& path, std::size_t index) {
  const std::string field = fmt::format("result.claims[{}].map", index);
  if (!claim.contains("map")) {
    return Error{fmt::format("{}: {}: missing (the SVG needs a domain report of at most 4096 cases per code)", path, field)};
  }
  const Json& m = claim["map"];
  if (!m.is_object() || !m.value("rows", Json()).is_number_unsigned() || !m.value("columns", Json()).is_number_unsigned() ||
      !m.value("failing_hex", Json()).is_string()) {
    return Error{fmt::format("{}: {}: expected rows, columns and failing_hex", path, field)};
  }
  Map map{m["rows"].get<std::size_t>(), m["columns"].get<std::size_t>(), {}};
  const std::string hex = m["failing_hex"].get<std::string>();
  constexpr std::size_t kMaxSide = std::size_t{1} << 20;  // discovery maps are far smaller
  if (map.rows > kMaxSide || map.columns > kMaxSide) {
    return Error{fmt::format("{}: {}: {} x {} cases is not a map bitproof draws", path, field, map.rows, map.columns)};
  }
  const std::size_t bits = map.rows * map.columns;
  if (map.rows == 0 || map.columns == 0 || hex.size() != (bits + 3) / 4) {
    return Error{fmt::format("{}: {}: failing_hex has {} digits for {} x {} cases", path, field, hex.size(), map.rows,
                             map.columns)};
  }
  for (char digit : hex) {
    const auto pos = std::string_view("0123456789abcdef").find(digit);
    if (pos == std::string_view::npos) return Error{fmt::format("{}: {}: not a hex digit '{}'", path, field, digit)};
    for (int b = 3; b >= 0 && map.failing.size() < bits; --b) map.failing.push_back(((pos >> b) & 1) != 0);
  }
  return map;
}

// Labels of the rows: the codes of the one input that is not swept.
std::vector<std::string> row_labels(const Json& result, std::size_t rows) {
  std::vector<std::string> labels;
  const std::string over = result["over"]["input"].get<std::string>();
  const Json* other = nullptr;
  int others = 0;
  for (const Json& in : result["spec"]["inputs"]) {
    if (in.value("name", "") != over) {
      other = &in;
      ++others;
    }
  }
  std::optional<FormatId> format;
  if (others == 1) format = format_by_name(other->value("format", ""));
  std::vector<std::uint32_t> codes;
  if (format) {
    const Json& c = (*other)["codes"];
    if (c.is_string()) {
      for (std::uint64_t k = 0; k < spec_of(*format).code_count() && codes.size() < rows; ++k) codes.push_back(static_cast<std::uint32_t>(k));
    } else if (c.contains("range")) {
      const std::uint64_t lo = c["range"][0].get<std::uint64_t>(), hi = c["range"][1].get<std::uint64_t>();
      for (std::uint64_t k = lo; k <= hi && codes.size() < rows; ++k) codes.push_back(static_cast<std::uint32_t>(k));
    } else if (c.contains("list")) {
      for (const Json& k : c["list"]) {
        if (codes.size() < rows) codes.push_back(k.get<std::uint32_t>());
      }
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    if (format && codes.size() == rows) {
      const int digits = (spec_of(*format).bits + 3) / 4;
      labels.push_back(fmt::format("{} 0x{:0{}X} = {}", spec_of(*format).name, codes[r], digits,
                                   oracle::to_string(oracle::exact_of(*format, codes[r]))));
    } else {
      labels.push_back(fmt::format("case {}", r));
    }
  }
  return labels;
}

// One drawing of a claim's map: `columns` columns of `per_column` consecutive
// codes each, the first starting at `first` (a code of the swept input). Maps of
// at most kMaxColumns codes get one panel, a code a column; wider ones (16-bit
// inputs) an overview of every code, binned, and a zoom on the claimed interval.
constexpr std::size_t kMaxColumns = 256;
struct Panel {
  std::uint32_t first = 0;
  std::uint32_t per_column = 1;
  std::size_t columns = 0;
  std::string title;
};

struct Geometry {
  int cell_w;
  int cell_h;
  std::size_t bands;
  std::size_t rows_per_band;
};

// A map of more than kMaxColumns codes draws two panels, each with half the bands.
Geometry geometry_for(const Map& map, const Panel& panel) {
  const int cell_w = panel.columns <= 64 ? 14 : (panel.columns <= 128 ? 7 : 4);
  const std::size_t most = map.columns <= kMaxColumns ? kMaxBands : kMaxBands / 2;
  const std::size_t bands = std::min(map.rows, most);
  const std::size_t per_band = (map.rows + bands - 1) / bands;
  return {cell_w, map.rows <= 32 ? 16 : 8, (map.rows + per_band - 1) / per_band, per_band};
}

std::string code_text(std::uint32_t code, bool hex) { return hex ? fmt::format("0x{:04X}", code) : std::to_string(code); }

// The panels of a map whose first column is code `first`, claimed interval lo..hi.
// The zoom shows 256 codes at one code a column: the whole claimed interval when
// it fits, else where the claim ends (its upper end, or its lower one when the
// upper is the format's last code); none when the claim covers every code.
std::vector<Panel> panels_for(const Map& map, std::uint32_t first, std::uint32_t lo, std::uint32_t hi, bool hex) {
  const auto last = static_cast<std::uint32_t>(first + map.columns - 1);
  if (map.columns <= kMaxColumns) return {{first, 1, map.columns, ""}};
  const auto per = static_cast<std::uint32_t>((map.columns + kMaxColumns - 1) / kMaxColumns);
  std::vector<Panel> panels = {{first, per, (map.columns + per - 1) / per,
                                fmt::format("every code, {} codes a column", per)}};
  if (lo == first && hi == last) return panels;
  const bool fits = hi - std::uint64_t{lo} + 1 <= kMaxColumns;
  const std::uint32_t from = fits ? lo : (hi < last ? hi : lo), to = fits ? hi : from;
  const char* what = fits ? "the claimed interval" : (hi < last ? "the claimed interval's upper end" : "its lower end");
  const std::uint64_t pad = (kMaxColumns - (to - std::uint64_t{from} + 1)) / 2;
  std::uint64_t start = from - std::uint64_t{first} >= pad ? from - pad : first;
  if (start + kMaxColumns - 1 > last) start = last - kMaxColumns + 1;
  const auto zoom_first = static_cast<std::uint32_t>(start);
  panels.push_back({zoom_first, 1, kMaxColumns,
                    fmt::format("zoom on {}: codes {}..{}, one code a column", what, code_text(zoom_first, hex),
                                code_text(static_cast<std::uint32_t>(start + kMaxColumns - 1), hex))});
  return panels;
}

// The codes of column `col` of a panel, clipped to the map.
std::pair<std::size_t, std::size_t> column_codes(const Map& map, const Panel& p, std::uint32_t first, std::size_t col) {
  const std::size_t from = p.first - first + col * p.per_column;
  return {from, std::min(map.columns, from + p.per_column)};
}

// The cases of one cell: those of the band's rows in codes from..to-1 of the map.
struct Count {
  std::size_t holding = 0;
  std::size_t total = 0;
};

Count cell_count(const Map& map, const Geometry& g, std::size_t band, std::size_t from, std::size_t to) {
  Count n;
  for (std::size_t column = from; column < to; ++column) {
    for (std::size_t r = band * g.rows_per_band; r < std::min(map.rows, (band + 1) * g.rows_per_band); ++r) {
      ++n.total;
      if (!map.fails(r, column)) ++n.holding;
    }
  }
  return n;
}

// The step of a share of holding cases: 0 none, 5 all, quarters between.
std::size_t share_step(const Count& n) {
  if (n.holding == 0) return 0;
  if (n.holding == n.total) return 5;
  return 1 + std::min<std::size_t>(3, 4 * n.holding / n.total);
}

// A step's colour, inside the claimed interval or (paler) outside it.
std::string step_colour(std::size_t step, bool inside) {
  const std::string colour = kSteps[step].colour;
  if (inside) return colour;
  std::string pale = "#";
  for (std::size_t i = 1; i < 7; i += 2) {
    const int c = std::stoi(colour.substr(i, 2), nullptr, 16);
    pale += fmt::format("{:02x}", static_cast<int>(255 - (255 - c) * kPale + 0.5));
  }
  return pale;
}

// What a cell's <title> says: its codes, its rows and how many of its cases hold.
std::string cell_title(const Map& map, const Geometry& g, const std::vector<std::string>& labels, std::size_t band,
                       std::uint32_t from, std::uint32_t to, const Count& n, bool hex) {
  const std::string codes = from == to ? fmt::format("code {}", code_text(from, hex))
                                       : fmt::format("codes {}..{}", code_text(from, hex), code_text(to, hex));
  const std::size_t r0 = band * g.rows_per_band, r1 = std::min(map.rows, (band + 1) * g.rows_per_band) - 1;
  const std::string rows = r0 == r1 ? (labels.size() == map.rows ? labels[r0] : fmt::format("case {}", r0))
                                    : fmt::format("cases {}..{}", r0, r1);
  return fmt::format("{}, {}: {}/{} hold", codes, xml_escape(rows), n.holding, n.total);
}

// Cells, each shaded by the share of its cases that hold and titled with its
// codes and counts. Neighbours where every case holds (or none does), on the same
// side of the claim, merge into one rectangle whose title sums them.
void draw_cells(std::string& svg, const Map& map, const Panel& p, const Geometry& g, int y0, std::uint32_t first,
                std::uint32_t lo, std::uint32_t hi, const std::vector<std::string>& labels, bool hex) {
  struct Run {
    std::size_t start = 0, end = 0;  // columns start..end-1
    std::string colour;
    bool uniform = false;
    Count n;
  };
  for (std::size_t band = 0; band < g.bands; ++band) {
    auto flush = [&](const Run& run) {
      const std::size_t from = column_codes(map, p, first, run.start).first;
      const std::size_t to = column_codes(map, p, first, run.end - 1).second;
      svg +=
          fmt::format("    <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                      kLeft + run.start * g.cell_w, y0 + band * g.cell_h, (run.end - run.start) * g.cell_w,
                      g.cell_h - 1, run.colour,
                      cell_title(map, g, labels, band, static_cast<std::uint32_t>(first + from),
                                 static_cast<std::uint32_t>(first + to - 1), run.n, hex));
    };
    std::optional<Run> run;
    for (std::size_t col = 0; col < p.columns; ++col) {
      const auto [from, to] = column_codes(map, p, first, col);
      const bool inside = first + to - 1 >= lo && first + from <= hi;
      const Count n = cell_count(map, g, band, from, to);
      const std::size_t step = share_step(n);
      const std::string colour = step_colour(step, inside);
      const bool uniform = step == 0 || step == 5;
      if (run && run->uniform && uniform && run->colour == colour) {
        run->end = col + 1;
        run->n.holding += n.holding;
        run->n.total += n.total;
        continue;
      }
      if (run) flush(*run);
      run = Run{col, col + 1, colour, uniform, n};
    }
    if (run) flush(*run);
  }
}

void draw_axes(std::string& svg, const Json& result, const Map& map, const Panel& p, const Geometry& g, int y0, bool hex) {
  const int grid_h = static_cast<int>(g.bands) * g.cell_h;
  const std::size_t step = p.columns > 64 ? (hex ? 32 : 16) : 4;
  for (std::size_t col = 0; col < p.columns; col += step) {
    const std::size_t x = kLeft + col * g.cell_w;
    svg += fmt::format("  <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", x, y0 + grid_h, x, y0 + grid_h + 4);
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, y0 + grid_h + 16,
                       code_text(static_cast<std::uint32_t>(p.first + col * p.per_column), hex));
  }
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} ({} code)</text>\n",
                     kLeft + p.columns * g.cell_w / 2, y0 + grid_h + 32, xml_escape(result["over"]["input"].get<std::string>()),
                     xml_escape(result["over"]["format"].get<std::string>()));
  if (map.rows != g.bands) {
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} cases in {} bands</text>\n", kLeft - 6,
                       y0 + grid_h / 2, map.rows, g.bands);
    return;
  }
  const std::vector<std::string> labels = row_labels(result, map.rows);
  for (std::size_t r = 0; r < map.rows; ++r) {
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       y0 + r * g.cell_h + g.cell_h - 4, labels[r]);
  }
}

// The x of code `code`'s column edge in a panel (left edge, or right with `right`), clamped to the panel.
int code_x(const Panel& p, const Geometry& g, std::uint64_t code, bool right) {
  const std::uint64_t end = p.first + std::uint64_t{p.per_column} * p.columns;
  const std::uint64_t c = std::clamp<std::uint64_t>(code, p.first, end - 1);
  return kLeft + static_cast<int>((c - p.first) / p.per_column + (right ? 1 : 0)) * g.cell_w;
}

// Where a label centred on x stays inside its panel (a panel narrower than the label: its middle).
int label_x(int x, const Panel& p, const Geometry& g) {
  const int width = static_cast<int>(p.columns) * g.cell_w;
  if (width <= 300) return kLeft + width / 2;
  return std::clamp(x, kLeft + 150, kLeft + width - 150);
}

// What a claim of this kind holds as, in the picture's words: "equal", "exact", "correctly rounded".
std::string holds_word(const Json& claim) {
  const std::string kind = claim["claim"].get<std::string>();
  return kind == "correctly_rounded" ? "correctly rounded" : xml_escape(kind);
}

void draw_intervals(std::string& svg, const Json& claim, const Panel& p, const Geometry& g, int y0, std::uint32_t lo,
                    std::uint32_t hi, bool hex) {
  const int grid_h = static_cast<int>(g.bands) * g.cell_h;
  const std::uint64_t end = p.first + std::uint64_t{p.per_column} * p.columns;
  if (hi >= p.first && lo < end) {
    const int x1 = code_x(p, g, lo, false), x2 = code_x(p, g, hi, true);
    svg += fmt::format(
        "  <rect class=\"claimed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\"/>\n",
        x1 - 1, y0 - 1, x2 - x1 + 2, grid_h + 1, kClaimed);
  }
  if (claim["maximal"].is_null()) {
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" fill=\"{}\">not {} on the whole claimed interval {}..{}</text>\n", kLeft,
                       y0 - 8, kFailsInside, holds_word(claim), code_text(lo, hex), code_text(hi, hex));
    return;
  }
  const auto mlo = claim["maximal"][0].get<std::uint32_t>(), mhi = claim["maximal"][1].get<std::uint32_t>();
  const int x1 = code_x(p, g, mlo, false), x2 = code_x(p, g, mhi, true);
  svg += fmt::format("  <line class=\"holds\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\" stroke-width=\"3\"/>\n",
                     x1, y0 - 6, x2, y0 - 6);
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} on {}..{}, claimed {}..{}</text>\n",
                     label_x((x1 + x2) / 2, p, g), y0 - 11,
                     holds_word(claim), code_text(mlo, hex), code_text(mhi, hex), code_text(lo, hex), code_text(hi, hex));
}

// The legend: the six steps of the share of a cell's cases that hold, the paler
// twin outside the claim, the claimed interval's outline, and the <title>s.
void draw_legend(std::string& svg, int y) {
  svg += fmt::format(
      "  <text x=\"{}\" y=\"{}\">each cell: the share of its cases that hold (left swatch: inside the claimed "
      "interval; "
      "right, paler: outside it)</text>\n",
      kLeft, y + 10);
  y += 18;
  int x = kLeft;
  for (std::size_t step = 0; step < std::size(kSteps); ++step) {
    svg +=
        fmt::format("  <rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, y, kSteps[step].colour);
    svg += fmt::format("  <rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x + 13, y,
                       step_colour(step, false));
    svg += fmt::format("  <text x=\"{}\" y=\"{}\">{}</text>\n", x + 30, y + 10, kSteps[step].words);
    x += 126;
  }
  y += 20;
  svg += fmt::format(
      "  <rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", kLeft,
      y, kClaimed);
  svg += fmt::format(
      "  <text x=\"{}\" y=\"{}\">claimed interval; black bar: where the claim holds around it; a cell's tooltip: its "
      "codes and how many of its cases hold</text>\n",
      kLeft + 16, y + 10);
}

std::string claim_title(const Json& claim) {
  std::string recipes;
  const std::string joiner = claim["claim"] == "equal" ? " ≡ " : ", ";
  for (const Json& r : claim["recipes"]) recipes += (recipes.empty() ? "" : joiner) + r.get<std::string>();
  return fmt::format("{} claim: {}", holds_word(claim), xml_escape(recipes));
}

// One panel of claim c's map at height y; returns the height used.
int draw_panel(std::string& body, const Json& result, std::size_t c, const Map& map, const Panel& p, int y,
               std::uint32_t first, bool hex) {
  const auto lo = result["over"]["spec_interval"][0].get<std::uint32_t>();
  const auto hi = result["over"]["spec_interval"][1].get<std::uint32_t>();
  const Geometry g = geometry_for(map, p);
  const int y0 = y + (p.title.empty() ? 22 : 36);
  if (!p.title.empty()) body += fmt::format("  <text x=\"{}\" y=\"{}\" font-style=\"italic\">{}</text>\n", kLeft, y + 8, p.title);
  body += fmt::format(
      "  <g class=\"cells\" id=\"map-{}-{}\" data-claim=\"{}\" data-x0=\"{}\" data-y0=\"{}\" data-cell-w=\"{}\" "
      "data-cell-h=\"{}\" data-rows=\"{}\" data-rows-per-band=\"{}\" data-columns=\"{}\" data-first-code=\"{}\" "
      "data-codes-per-column=\"{}\" data-map-first-code=\"{}\">\n",
      c, p.first, c, kLeft, y0, g.cell_w, g.cell_h, g.bands, g.rows_per_band, p.columns, p.first, p.per_column, first);
  const std::vector<std::string> labels =
      map.rows == g.bands ? row_labels(result, map.rows) : std::vector<std::string>{};
  draw_cells(body, map, p, g, y0, first, lo, hi, labels, hex);
  body += "  </g>\n";
  draw_intervals(body, result["claims"][c], p, g, y0, lo, hi, hex);
  draw_axes(body, result, map, p, g, y0, hex);
  return y0 - y + static_cast<int>(g.bands) * g.cell_h + 40;
}

}  // namespace

Expected<std::string> render_domain_svg(const Json& report, const std::string& path) {
  const Json& result = report["result"];
  const auto lo = result["over"]["spec_interval"][0].get<std::uint32_t>();
  const auto hi = result["over"]["spec_interval"][1].get<std::uint32_t>();
  const bool whole = !result["over"].contains("swept");
  const std::uint32_t first = whole ? 0 : result["over"]["swept"][0].get<std::uint32_t>();
  std::vector<Map> maps;
  for (std::size_t c = 0; c < result["claims"].size(); ++c) {
    auto map = read_map(result["claims"][c], path, c);
    if (!map) return map.error();
    maps.push_back(std::move(*map));
  }
  const auto format = format_by_name(result["over"]["format"].get<std::string>());
  const bool hex = format && spec_of(*format).bits > 8;
  std::string body;
  int y = 60;
  int width = 900;
  for (std::size_t c = 0; c < maps.size(); ++c) {
    if (first + std::uint64_t{maps[c].columns} - 1 < hi || lo < first) {
      return Error{fmt::format("{}: result.claims[{}].map: {} columns do not cover the claimed interval {}..{}", path, c,
                               maps[c].columns, lo, hi)};
    }
    body += fmt::format("  <text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", 12, y + 4,
                        claim_title(result["claims"][c]));
    y += 12;
    for (const Panel& p : panels_for(maps[c], first, lo, hi, hex)) {
      y += draw_panel(body, result, c, maps[c], p, y, first, hex);
      width = std::max(width, kLeft + static_cast<int>(p.columns) * geometry_for(maps[c], p).cell_w + 24);
    }
    y += 8;
  }
  draw_legend(body, y);
  width = std::max(width, kLeft + static_cast<int>(std::size(kSteps)) * 126 + 24);
  const int height = y + 76;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  svg += fmt::format("  <rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, height);
  svg += fmt::format("  <text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">bitproof case map: {}</text>\n",
                     xml_escape(result["spec"]["name"].get<std::string>()));
  const std::string over = xml_escape(result["over"]["input"].get<std::string>());
  svg += fmt::format("  <text x=\"12\" y=\"42\">{}, claimed interval {}..{}</text>\n",
                     whole ? fmt::format("every {} code", over)
                           : fmt::format("the proof's own domain: {} codes {}..{} (bitproof domain SPEC --svg draws every code)",
                                         over, code_text(first, hex),
                                         code_text(static_cast<std::uint32_t>(first + maps.front().columns - 1), hex)),
                     code_text(lo, hex), code_text(hi, hex));
  return svg + body + "</svg>\n";
}

}  // namespace bitproof
