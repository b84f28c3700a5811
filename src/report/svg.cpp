// The SVG case map of a domain report (see render.hpp).
#include <fmt/format.h>

#include <vector>

#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "report/render.hpp"

namespace bitproof {
namespace {

// PiYG, readable by the colour-blind: green holds, magenta fails; pale outside the claimed interval.
constexpr const char* kHoldsInside = "#4dac26";
constexpr const char* kFailsInside = "#d01c8b";
constexpr const char* kHoldsOutside = "#b8e186";
constexpr const char* kFailsOutside = "#f1b6da";
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

struct Geometry {
  int cell_w;
  int cell_h;
  std::size_t bands;
  std::size_t rows_per_band;
};

Geometry geometry_for(const Map& map) {
  const int cell_w = map.columns <= 64 ? 14 : (map.columns <= 128 ? 7 : 4);
  const std::size_t bands = map.rows <= static_cast<std::size_t>(kMaxBands) ? map.rows : kMaxBands;
  const std::size_t per_band = (map.rows + bands - 1) / bands;
  return {cell_w, map.rows <= 32 ? 16 : 8, (map.rows + per_band - 1) / per_band, per_band};
}

bool band_fails(const Map& map, const Geometry& g, std::size_t band, std::size_t column) {
  for (std::size_t r = band * g.rows_per_band; r < std::min(map.rows, (band + 1) * g.rows_per_band); ++r) {
    if (map.fails(r, column)) return true;
  }
  return false;
}

// Cells, merged into horizontal runs of one colour.
void draw_cells(std::string& svg, const Map& map, const Geometry& g, int y0, std::uint32_t lo, std::uint32_t hi) {
  for (std::size_t band = 0; band < g.bands; ++band) {
    std::size_t start = 0;
    const char* run_colour = nullptr;
    for (std::size_t col = 0; col <= map.columns; ++col) {
      const char* colour = nullptr;
      if (col < map.columns) {
        const bool inside = col >= lo && col <= hi;
        const bool fails = band_fails(map, g, band, col);
        colour = fails ? (inside ? kFailsInside : kFailsOutside) : (inside ? kHoldsInside : kHoldsOutside);
      }
      if (colour == run_colour) continue;
      if (run_colour != nullptr) {
        svg += fmt::format("    <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                           kLeft + start * g.cell_w, y0 + band * g.cell_h, (col - start) * g.cell_w, g.cell_h - 1, run_colour);
      }
      start = col;
      run_colour = colour;
    }
  }
}

void draw_axes(std::string& svg, const Json& result, const Map& map, const Geometry& g, int y0) {
  const int grid_h = static_cast<int>(g.bands) * g.cell_h;
  const std::size_t step = map.columns > 64 ? 16 : 4;
  for (std::size_t col = 0; col < map.columns; col += step) {
    const std::size_t x = kLeft + col * g.cell_w;
    svg += fmt::format("  <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", x, y0 + grid_h, x, y0 + grid_h + 4);
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, y0 + grid_h + 16, col);
  }
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} ({} code)</text>\n",
                     kLeft + map.columns * g.cell_w / 2, y0 + grid_h + 32, result["over"]["input"].get<std::string>(),
                     result["over"]["format"].get<std::string>());
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

void draw_intervals(std::string& svg, const Json& claim, const Geometry& g, int y0, std::uint32_t lo, std::uint32_t hi) {
  const int grid_h = static_cast<int>(g.bands) * g.cell_h;
  svg += fmt::format(
      "  <rect class=\"claimed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
      "stroke-width=\"2\"/>\n",
      kLeft + lo * g.cell_w - 1, y0 - 1, (hi - lo + 1) * g.cell_w + 2, grid_h + 1, kClaimed);
  if (claim["maximal"].is_null()) {
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" fill=\"{}\">not exact on the whole claimed interval</text>\n", kLeft,
                       y0 - 8, kFailsInside);
    return;
  }
  const auto mlo = claim["maximal"][0].get<std::uint32_t>(), mhi = claim["maximal"][1].get<std::uint32_t>();
  const int x1 = kLeft + static_cast<int>(mlo) * g.cell_w, x2 = kLeft + static_cast<int>(mhi + 1) * g.cell_w;
  svg += fmt::format("  <line class=\"exact\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\" stroke-width=\"3\"/>\n",
                     x1, y0 - 6, x2, y0 - 6);
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">exact on {}..{}, claimed {}..{}</text>\n",
                     (x1 + x2) / 2, y0 - 11, mlo, mhi, lo, hi);
}

void draw_legend(std::string& svg, int y) {
  const std::pair<const char*, const char*> items[] = {{kHoldsInside, "equal, claimed"},
                                                       {kFailsInside, "mismatch, claimed"},
                                                       {kHoldsOutside, "equal, outside the claim"},
                                                       {kFailsOutside, "mismatch, outside the claim"}};
  int x = kLeft;
  for (const auto& [colour, text] : items) {
    svg += fmt::format("  <rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, y, colour);
    svg += fmt::format("  <text x=\"{}\" y=\"{}\">{}</text>\n", x + 16, y + 10, text);
    x += 180;
  }
  svg += fmt::format("  <rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                     x, y, kClaimed);
  svg += fmt::format("  <text x=\"{}\" y=\"{}\">claimed interval; black bar: proven exact</text>\n", x + 16, y + 10);
}

std::string claim_title(const Json& claim) {
  std::string recipes;
  for (const Json& r : claim["recipes"]) recipes += (recipes.empty() ? "" : ", ") + r.get<std::string>();
  return fmt::format("{}: {}", claim["claim"].get<std::string>(), recipes);
}

}  // namespace

Expected<std::string> render_svg(const Json& report, const std::string& path) {
  if (report["kind"] != "domain") {
    return Error{fmt::format("{}: kind: the SVG case map is drawn from a domain report (bitproof domain SPEC --report)", path)};
  }
  const Json& result = report["result"];
  const auto lo = result["over"]["spec_interval"][0].get<std::uint32_t>();
  const auto hi = result["over"]["spec_interval"][1].get<std::uint32_t>();
  std::vector<Map> maps;
  for (std::size_t c = 0; c < result["claims"].size(); ++c) {
    auto map = read_map(result["claims"][c], path, c);
    if (!map) return map.error();
    maps.push_back(std::move(*map));
  }
  std::string body;
  int y = 56;
  int width = 900;
  for (std::size_t c = 0; c < maps.size(); ++c) {
    const Geometry g = geometry_for(maps[c]);
    const int y0 = y + 34;
    body += fmt::format("  <text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", 12, y + 4,
                        claim_title(result["claims"][c]));
    body += fmt::format(
        "  <g class=\"cells\" id=\"map-{}\" data-x0=\"{}\" data-y0=\"{}\" data-cell-w=\"{}\" data-cell-h=\"{}\" "
        "data-rows=\"{}\" data-columns=\"{}\">\n",
        c, kLeft, y0, g.cell_w, g.cell_h, g.bands, maps[c].columns);
    draw_cells(body, maps[c], g, y0, lo, hi);
    body += "  </g>\n";
    draw_intervals(body, result["claims"][c], g, y0, lo, hi);
    draw_axes(body, result, maps[c], g, y0);
    y = y0 + static_cast<int>(g.bands) * g.cell_h + 48;
    width = std::max(width, kLeft + static_cast<int>(maps[c].columns) * g.cell_w + 24);
  }
  draw_legend(body, y);
  const int height = y + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  svg += fmt::format("  <rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, height);
  svg += fmt::format("  <text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">bitproof case map: {}</text>\n",
                     result["spec"]["name"].get<std::string>());
  svg += fmt::format("  <text x=\"12\" y=\"42\">every {} code, claimed interval {}..{}</text>\n",
                     result["over"]["input"].get<std::string>(), lo, hi);
  return svg + body + "</svg>\n";
}

}  // namespace bitproof
