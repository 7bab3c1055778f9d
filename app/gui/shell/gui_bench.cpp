#include "shell/gui_detail.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/file_io.hpp"

namespace attnviz::app::gui_detail {

namespace {

// The median of some times (0 for none).
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

bool write_report(const DrawReport& r, ImVec2 display, const std::string& path) {
    nlohmann::json doc;
    doc["display"] = {display.x, display.y};
    doc["workspace"] = r.workspace;
    for (const DrawReport::Window& w : r.windows)
        doc["windows"].push_back({{"title", w.title}, {"pos", {w.pos.x, w.pos.y}}, {"size", {w.size.x, w.size.y}}});
    for (const DrawReport::Number& n : r.numbers)
        doc["numbers"].push_back({{"matrix", n.matrix},
                                  {"row", n.row},
                                  {"col", n.col},
                                  {"text", n.text},
                                  {"min", {n.min.x, n.min.y}},
                                  {"max", {n.max.x, n.max.y}}});
    for (const DrawReport::Item& i : r.items)
        doc["items"].push_back({{"name", i.name}, {"min", {i.min.x, i.min.y}}, {"max", {i.max.x, i.max.y}}});
    for (const DrawReport::Heatmap& h : r.heatmaps)
        doc["heatmaps"].push_back({{"matrix", h.matrix}, {"min", {h.min.x, h.min.y}}, {"max", {h.max.x, h.max.y}}});
    for (const DrawReport::Label& l : r.labels)
        doc["labels"].push_back({{"name", l.name},
                                 {"text", l.text},
                                 {"shown", l.shown},
                                 {"cut", l.cut},
                                 {"min", {l.min.x, l.min.y}},
                                 {"max", {l.max.x, l.max.y}}});
    doc["values"] = nlohmann::json::object();
    for (const DrawReport::Value& v : r.values) doc["values"][v.name] = v.value;
    const core::Problems problems = core::write_file_atomic(path, doc.dump(1) + "\n");
    if (!problems.empty()) std::cerr << "error: " << problems.front().str() << "\n";
    return problems.empty();
}

void print_frame_times(FrameTimes t, bool edits) {
    std::sort(t.ms.begin(), t.ms.end());
    nlohmann::json out;
    const size_t n = t.ms.size();
    out["frames"] = n;
    out["frames_drawn"] = t.drawn;
    out["median_ms"] = n ? t.ms[n / 2] : 0.0;
    out["p95_ms"] = n ? t.ms[std::min(n - 1, static_cast<size_t>(0.95 * n))] : 0.0;
    out["max_ms"] = n ? t.ms.back() : 0.0;
    if (edits) {
        out["last_edit_to_trace_ms"] = t.last_edit_to_trace_ms;
        out["traces_shown"] = t.trace_ms.size();
        out["trace_median_ms"] = median(t.trace_ms);
        if (t.model) {
            out["model_runs_shown"] = t.model_ms.size();
            out["model_run_median_ms"] = median(t.model_ms);
        }
    }
    std::cout << out.dump() << "\n";
}

void bench_edit(int edits, int measured, AppState& state, const ModelRun& model, FrameTimes& bench,
                std::uint64_t& model_serial) {
    if (measured == 0) {
        bench.base_x = state.session().params.X(0, 0);
        bench.model = model.editing_layer() >= 0;
        if (const ModelResults* r = model.results()) model_serial = r->serial;
    }
    if (measured < edits) {
        state.set_cell({{core::MatrixId::X, 0}, 0, 0}, bench.base_x + 0.01 * (measured + 1));
        bench.last_edit = std::chrono::steady_clock::now();
    }
}

}  // namespace attnviz::app::gui_detail
