#include "panels/lab/lab_tokens.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>

#include "core/base/format.hpp"
#include "panels/lab/lab_heatmap.hpp"
#include "panels/lab/lab_model.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"

namespace attnviz::app {

namespace {

// What a job answers once a run or edit has started since it was queued: its results are being
// replaced, so it is not shown (and not asked again for them).
constexpr const char* superseded = "superseded by a newer run";

template <class T>
bool was_superseded(const core::Result<T>& r) {
    return !r && r.problems.size() == 1 && r.problems.front().message == superseded;
}

// The position split of the run, with each part's share and the check against the run's scores_raw.
core::Result<LabSplit> compute_split(const model::ModelFolder& folder, const model::RunState<float>& state) {
    using R = core::Result<LabSplit>;
    const model::LayerRun<float>& block = state.layers.front();
    LabSplit s;
    core::Result<std::vector<model::PositionSplit>> split = model::position_split(
        folder, state.token_ids, block.edited ? &block.edited->params : nullptr, &s.stored_because);
    if (!split) return R::fail(std::move(split.problems));
    s.edited = block.edited && s.stored_because.empty();
    s.heads = std::move(*split.value);
    const auto n = static_cast<Eigen::Index>(state.token_ids.size());
    const bool traced = block.trace.heads.size() == s.heads.size();
    s.allowed = core::Matrix::Ones(n, n);
    if (traced && block.trace.heads.front().scores.rows() == n && block.trace.heads.front().scores.cols() == n)
        s.allowed = block.trace.heads.front().scores.array().isFinite().cast<double>().matrix();  // −∞: masked
    const double allowed = std::max(s.allowed.sum(), 1.0);
    for (size_t h = 0; h < s.heads.size(); ++h) {
        const model::PositionSplit& p = s.heads[h];
        const core::Matrix* parts[] = {&p.content_content, &p.content_position, &p.position_content,
                                       &p.position_position, &p.bias};
        std::array<double, 5> mean{};
        for (size_t k = 0; k < 5; ++k) mean[k] = parts[k]->cwiseAbs().cwiseProduct(s.allowed).sum() / allowed;
        double total = 0;
        for (const double m : mean) total += m;
        for (double& m : mean) m = total > 0 ? m / total : 0;
        s.shares.push_back(mean);
        const core::Matrix sum = p.content_content + p.content_position + p.position_content + p.position_position +
                                 p.bias;
        const bool same = traced && block.trace.heads[h].scores_raw.rows() == n &&
                          block.trace.heads[h].scores_raw.cols() == n;
        const core::Matrix raw = same ? block.trace.heads[h].scores_raw.cast<double>() : core::Matrix();
        s.difference.push_back(same ? (sum - raw).cwiseAbs().maxCoeff() : std::nan(""));
        s.scores_max.push_back(same ? raw.cwiseAbs().maxCoeff() : std::nan(""));
        s.scores_raw.push_back(raw);
    }
    return R::ok(std::move(s));
}

}  // namespace

bool position_split_applies(const ModelRun& run) {
    return run.folder() && run.editing_layer() == 0 && run.folder()->config().learned_positions();
}

std::string position_split_note(const ModelRun* run) {
    const std::string what =
        "split into content\xc2\xb7"
        "content, content\xc2\xb7position, position\xc2\xb7"
        "content, "
        "position\xc2\xb7position and bias parts";
    if (!run)
        return "With a model (attnviz --model) of learned positions (GPT-2, BERT, RoBERTa), its block 0 being edited, "
               "this tab shows that block's scores " +
               what + ": what they owe to the tokens and to their positions.";
    if (!run->folder()->config().learned_positions())
        return "This model has no learned positions: its scores have no position part to split off.";
    return "Layer " + std::to_string(run->editing_layer()) +
           " is being edited: only layer 0's input is a token's embedding plus its position, so only its scores are " +
           what + " (click a head of layer 0 in the model view).";
}

void update_token_circuits(LabTokens& t, ModelRun& run) {
    if (t.circuits_job.ready()) {
        std::optional<core::Result<model::TokenCircuits>> done = take_model_result(t.circuits_job);
        if (done && !was_superseded(*done)) {
            t.circuits_key = t.circuits_job_key;
            t.circuits_problem = *done ? "" : problems_text(done->problems);
            if (*done)
                t.circuits = std::move(*done->value);
            else
                t.circuits.reset();
        }
    }
    // Results being replaced (a run or edit under way) wait for the new ones.
    if (!run.results() || run.computing()) return;
    const TokensKey want{run.results()->serial, run.editing_layer()};
    if (t.circuits_key == want || (t.circuits_job.valid() && t.circuits_job_key == want)) return;
    const int layer = want.layer;
    t.circuits_job = run.on_results([layer](const model::ModelFolder& folder, const model::RunState<float>& state,
                                            const std::function<bool()>& stopped) {
        const std::shared_ptr<const core::Session>& edited = state.layers[static_cast<size_t>(layer)].edited;
        const model::TokenCircuitOptions options{edited ? &edited->params : nullptr, stopped};
        core::Result<model::TokenCircuits> circuits = model::token_circuits(folder, layer, state.token_ids,
                                                                            lab_token_top, options);
        return stopped() ? core::Result<model::TokenCircuits>::fail({{"", superseded}}) : std::move(circuits);
    });
    t.circuits_job_key = want;
}

void update_position_split(LabTokens& t, ModelRun& run) {
    if (t.split_job.ready()) {
        if (std::optional<core::Result<LabSplit>> done = take_model_result(t.split_job)) {
            t.split_serial = t.split_job_serial;
            t.split_problem = *done ? "" : problems_text(done->problems);
            if (*done)
                t.split = std::move(*done->value);
            else
                t.split.reset();
        }
    }
    if (!run.results() || run.computing() || !position_split_applies(run)) return;
    const std::uint64_t want = run.results()->serial;
    if (t.split_serial == want || (t.split_job.valid() && t.split_job_serial == want)) return;
    t.split_job = run.on_results([](const model::ModelFolder& folder, const model::RunState<float>& state,
                                    const std::function<bool()>&) { return compute_split(folder, state); });
    t.split_job_serial = want;
}

bool lab_tokens_busy(const LabTokens& t) { return t.circuits_job.valid() || t.split_job.valid(); }

void wait_for_lab_tokens(const LabTokens& t) {
    t.circuits_job.wait();
    t.split_job.wait();
}

namespace {

std::string token_label(const ModelRun& run, std::int32_t id) { return visible_token(run.token_text(id)); }

// The QK circuit over the sentence's tokens: x_a·W_QK·x_bᵀ, a the query (rows), b the key.
void draw_qk(UiContext& ui, const model::TokenCircuits& c, const model::HeadTokenCircuits& h,
             const std::vector<std::string>& labels, int layer, float width) {
    const float side = std::max(ImGui::GetFontSize() * 6,
                                std::min(width, ImGui::GetContentRegionAvail().y - ImGui::GetFontSize() * 2));
    const HeatmapHit hit = lab_heatmap(ui, "x_a\xc2\xb7W_QK\xc2\xb7x_b\xe1\xb5\x80 (query a, key b)", h.qk,
                                       core::Colormap::diverging, symmetric(h.qk), {side, side}, &labels, &labels);
    if (hit.hovered && hit.row >= 0 && hit.col >= 0) {
        ImGui::BeginTooltip();
        ImGui::Text("query a = %s, key b = %s", quoted_label(labels[static_cast<size_t>(hit.row)]).c_str(),
                    quoted_label(labels[static_cast<size_t>(hit.col)]).c_str());
        ImGui::Text(
            "x_a\xc2\xb7W_QK\xe2\x81\xbd\xca\xb0\xe2\x81\xbe\xc2\xb7x_b\xe1\xb5\x80 = "
            "(x_a\xc2\xb7W_Q\xe2\x81\xbd\xca\xb0\xe2\x81\xbe)\xc2\xb7(x_b\xc2\xb7W_K)\xe1\xb5\x80 = %s",
            core::format_number(h.qk(hit.row, hit.col), 6).c_str());
        ImGui::Text(
            "x_t: token t's embedding row alone (no position) through the norm in front of layer %d's "
            "attention.\nThe bilinear part of scores_raw, unscaled; b_Q, b_K and RoPE left out.",
            layer);
        ImGui::EndTooltip();
    }
    for (Eigen::Index a = 0; a < h.qk.rows(); ++a) {
        ui.report_value("lab: tokens id " + std::to_string(a), c.tokens[static_cast<size_t>(a)]);
        for (Eigen::Index b = 0; b < h.qk.cols(); ++b)
            ui.report_value("lab: tokens qk " + std::to_string(a) + " " + std::to_string(b), h.qk(a, b));
    }
}

// A table cell: its text, and a grey note after it (a token's id).
struct Cell {
    std::string text, note;
};

// Begins a table of these rows whose columns are as wide as their title and widest cell from its
// first frame on (a fitted table would measure them only in the frame after).
bool begin_fitted_table(const char* id, const std::vector<const char*>& titles,
                        const std::vector<std::vector<Cell>>& rows) {
    if (!ImGui::BeginTable(id, static_cast<int>(titles.size()),
                           ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit))
        return false;
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    for (size_t c = 0; c < titles.size(); ++c) {
        float width = ImGui::CalcTextSize(titles[c]).x;
        for (const std::vector<Cell>& row : rows) {
            const Cell& cell = row[c];
            width = std::max(width, ImGui::CalcTextSize(cell.text.c_str()).x +
                                        (cell.note.empty() ? 0 : gap + ImGui::CalcTextSize(cell.note.c_str()).x));
        }
        ImGui::TableSetupColumn(titles[c], ImGuiTableColumnFlags_WidthFixed, width);
    }
    ImGui::TableHeadersRow();
    return true;
}

// A cell's text and note; the last column's hover says `what` the number is.
void draw_cell(const Cell& cell, const char* what) {
    ImGui::TextUnformatted(cell.text.c_str());
    if (what && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", what);
    if (cell.note.empty()) return;
    ImGui::SameLine();
    ImGui::TextDisabled("%s", cell.note.c_str());
}

// The top token pairs of the QK circuit over the sentence's tokens.
void draw_pairs(UiContext& ui, const model::HeadTokenCircuits& h, const ModelRun& run) {
    ImGui::TextUnformatted("Top token pairs:");
    std::vector<std::vector<Cell>> rows;
    for (const model::TokenPair& p : h.top_pairs)
        rows.push_back({{quoted_label(token_label(run, p.query)), ""},
                        {quoted_label(token_label(run, p.key)), ""},
                        {core::format_number(p.value, 4), ""}});
    if (!begin_fitted_table("##token pairs", {"query a", "key b", "x_a\xc2\xb7W_QK\xc2\xb7x_b\xe1\xb5\x80"}, rows))
        return;
    for (size_t k = 0; k < h.top_pairs.size(); ++k) {
        ImGui::TableNextRow();
        for (size_t c = 0; c < 3; ++c) {
            ImGui::TableNextColumn();
            draw_cell(rows[k][c], c < 2 ? nullptr
                                        : "x_a\xc2\xb7W_QK\xc2\xb7x_b\xe1\xb5\x80 of this query and key token: one "
                                          "of the largest entries of the heatmap");
        }
        const std::string name = "lab: tokens pair " + std::to_string(k + 1);
        ui.report_value(name, h.top_pairs[k].value);
        ui.report_value(name + " query", h.top_pairs[k].query);
        ui.report_value(name + " key", h.top_pairs[k].key);
    }
    ImGui::EndTable();
}

// One vocabulary-wide ranking as a table: each token (quoted, then its id, as the Next token panel
// shows a token) and its value.
void ranking_table(UiContext& ui, const char* id, const char* value_title, const std::vector<model::TokenScore>& top,
                   const ModelRun& run, const char* what, const std::string& report_as) {
    std::vector<std::vector<Cell>> rows;
    for (const model::TokenScore& s : top)
        rows.push_back(
            {{quoted_label(token_label(run, s.id)), std::to_string(s.id)}, {core::format_number(s.value, 4), ""}});
    if (!begin_fitted_table(id, {"token", value_title}, rows)) return;
    for (size_t k = 0; k < top.size(); ++k) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        draw_cell(rows[k][0], nullptr);
        ImGui::TableNextColumn();
        draw_cell(rows[k][1], what);
        const std::string name = report_as + " " + std::to_string(k + 1);
        ui.report_value(name, top[k].id);
        ui.report_value(name + " value", top[k].value);
    }
    ImGui::EndTable();
}

// The chosen token (a combo of the sentence's), its top keys over the vocabulary and the tokens
// its OV circuit raises most.
void draw_chosen(UiContext& ui, LabTokens& t, const model::TokenCircuits& c, const model::HeadTokenCircuits& h,
                 const ModelRun& run, int head) {
    const auto at = std::find(c.tokens.begin(), c.tokens.end(), t.token.value_or(-1));
    const size_t chosen = static_cast<size_t>(at - c.tokens.begin());
    ImGui::TextUnformatted("Token t");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
    if (ImGui::BeginCombo("##token", quoted_label(token_label(run, c.tokens[chosen])).c_str())) {
        for (size_t k = 0; k < c.tokens.size(); ++k)
            if (ImGui::Selectable(quoted_label(token_label(run, c.tokens[k])).c_str(), k == chosen))
                t.token = c.tokens[k];
        ImGui::EndCombo();
    }
    ui.report_item("lab: token");
    ui.report_value("lab: tokens chosen", c.tokens[chosen]);
    const std::string keys_what =
        "x_t\xc2\xb7W_QK\xc2\xb7x_b\xe1\xb5\x80 with t the query and b this key, over every token of the vocabulary:\n"
        "a row of W_E\xc2\xb7W_QK\xc2\xb7W_E\xe1\xb5\x80 (x_b: E_b through the same norm)";
    const std::string outputs_what =
        "x_t\xc2\xb7W_V\xc2\xb7W_O\xe2\x81\xbd" + std::to_string(head + 1) +
        "\xe2\x81\xbe\xc2\xb7W_U\xe1\xb5\x80 for this token: the logit the head adds to it through the direct path\n"
        "per unit of attention weight on t (b_V and the final norm left out); W_U the LM head";
    ImGui::BeginGroup();
    ImGui::TextUnformatted("its top keys");
    ranking_table(ui, "##token keys", "x_t\xc2\xb7W_QK\xc2\xb7x_b\xe1\xb5\x80", h.top_keys[chosen], run,
                  keys_what.c_str(), "lab: tokens key");
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::TextUnformatted("what its OV raises");
    ranking_table(ui, "##token outputs", "logit", h.top_outputs[chosen], run, outputs_what.c_str(),
                  "lab: tokens output");
    ImGui::EndGroup();
}

// Which weights the circuits are of, and whether newer ones are on their way.
void draw_circuits_status(UiContext& ui, const LabTokens& t, int head, bool current) {
    ImGui::TextWrapped("Head %d of layer %d over the sentence's %zu distinct tokens, %s%s", head + 1,
                       t.circuits_key.layer, t.circuits->tokens.size(),
                       t.circuits->edited ? "edited weights" : "stored weights",
                       current ? "." : " (updating\xe2\x80\xa6)");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(t.circuits->edited ? "The block's W_Q, W_K, W_V and W_O as edited in the session."
                                             : "The block's weights as the model's folder has them.");
    if (!t.circuits->stored_because.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::TextWrapped("Not the edited weights: %s.", t.circuits->stored_because.c_str());
        ImGui::PopStyleColor();
    }
    ui.report_value("lab: tokens edited", t.circuits->edited ? 1 : 0);
}

}  // namespace

bool draw_token_circuits(UiContext& ui, LabTokens& t, ModelRun& run, int head) {
    int matrices = t.as_matrices ? 1 : 0;
    if (ImGui::RadioButton("in token space", &matrices, 0)) t.as_matrices = false;
    ui.report_item("lab: in token space");
    ImGui::SameLine();
    if (ImGui::RadioButton("as d_model matrices", &matrices, 1)) t.as_matrices = true;
    ui.report_item("lab: as matrices");
    if (t.as_matrices) return false;
    update_token_circuits(t, run);
    const TokensKey want{run.results()->serial, run.editing_layer()};
    if (!t.circuits_problem.empty() && t.circuits_key.layer == want.layer) {
        ImGui::TextWrapped("Could not compute the token circuits: %s", t.circuits_problem.c_str());
        return true;
    }
    if (!t.circuits || t.circuits_key.layer != want.layer || head >= static_cast<int>(t.circuits->heads.size())) {
        ImGui::TextDisabled("Computing the token circuits on the model's worker\xe2\x80\xa6");
        return true;
    }
    const model::TokenCircuits& c = *t.circuits;
    const model::HeadTokenCircuits& h = c.heads[static_cast<size_t>(head)];
    if (!t.token || std::find(c.tokens.begin(), c.tokens.end(), *t.token) == c.tokens.end())
        t.token = run.results()->run->token_ids.back();  // the sentence's last: the one predicting the next
    draw_circuits_status(ui, t, head, t.circuits_key == want);
    std::vector<std::string> labels;
    for (const std::int32_t id : c.tokens) labels.push_back(token_label(run, id));
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    // The tables take their width where there is room, else the heatmap takes about half (they scroll).
    const float tables_w = font * 23;
    ImGui::BeginGroup();
    draw_qk(ui, c, h, labels, t.circuits_key.layer, std::max({font * 8, avail.x - tables_w - font, avail.x * 0.45f}));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginChild("##token tables", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
    draw_pairs(ui, h, run);
    draw_chosen(ui, t, c, h, run, head);
    ImGui::EndChild();
    return true;
}

namespace {

constexpr const char* part_names[5] = {
    "content\xc2\xb7"
    "content",
    "content\xc2\xb7position",
    "position\xc2\xb7"
    "content",
    "position\xc2\xb7position", "bias"};
constexpr const char* part_keys[5] = {"cc", "cp", "pc", "pp", "bias"};

const core::Matrix& part_of(const model::PositionSplit& p, size_t k) {
    const core::Matrix* parts[] = {&p.content_content, &p.content_position, &p.position_content, &p.position_position,
                                   &p.bias};
    return *parts[k];
}

// What the split is, which weights it is of, and the check: Σ parts against the run's scores_raw.
void draw_split_header(UiContext& ui, const LabSplit& s, size_t h, bool current) {
    ImGui::TextWrapped("Head %zu of layer 0: scores_raw (query i by key j) split by token (content) and position, %s%s",
                       h + 1, s.edited ? "with the block's weights as edited" : "with the model's stored weights",
                       current ? "." : " (updating\xe2\x80\xa6)");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The attention's input is LN(e_i + p_i): e_i the token's row, p_i its position's. LayerNorm's centring\n"
            "is linear and its scale 1/\xcf\x83_i is per token, so LN(e_i + p_i) = C_i + P_i + \xce\xb2 exactly:\n"
            "C_i = \xce\xb3\xe2\x8a\x99(e_i \xe2\x88\x92 mean e_i)/\xcf\x83_i   content\n"
            "P_i = \xce\xb3\xe2\x8a\x99(p_i \xe2\x88\x92 mean p_i)/\xcf\x83_i   position\n"
            "content\xc2\xb7position_ij = (C_i\xc2\xb7W_Q)(P_j\xc2\xb7W_K)\xe1\xb5\x80 and so on; bias: what "
            "\xce\xb2, b_Q and b_K add.\nThe five parts add up to scores_raw (unscaled, before the mask).");
    if (!s.stored_because.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
        ImGui::TextWrapped("Not the edited weights: %s.", s.stored_because.c_str());
        ImGui::PopStyleColor();
    }
    const double diff = s.difference[h], top = s.scores_max[h];
    if (std::isnan(diff)) {
        ImGui::TextDisabled("The run's block 0 has other heads: the sum cannot be checked against its scores_raw.");
    } else {
        ImGui::TextWrapped("\xce\xa3 parts \xe2\x88\x92 scores_raw: max |difference| %s (max |scores_raw| %s)",
                           core::format_number(diff, 3).c_str(), core::format_number(top, 4).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "Over every query i and key j, against the run's scores_raw of this head: the parts are computed\n"
                "in double from the stored tables, the run in float. A difference far above float rounding means\n"
                "block 0's X was edited: the split is of the tokens' own embeddings and positions.");
        ui.report_value("lab: split difference", diff);
        ui.report_value("lab: split scores max", top);
    }
    ui.report_value("lab: split edited", s.edited ? 1 : 0);
}

// Cell (i, j)'s five parts, their sum and the run's scores_raw.
void split_tooltip(const LabSplit& s, size_t h, int i, int j, const std::vector<std::string>* labels) {
    const model::PositionSplit& p = s.heads[h];
    ImGui::BeginTooltip();
    if (labels)
        ImGui::Text("query %d %s, key %d %s", i, quoted_label((*labels)[static_cast<size_t>(i)]).c_str(), j,
                    quoted_label((*labels)[static_cast<size_t>(j)]).c_str());
    double sum = 0;
    for (size_t k = 0; k < 5; ++k) {
        sum += part_of(p, k)(i, j);
        ImGui::Text("%s = %s", part_names[k], core::format_number(part_of(p, k)(i, j), 5).c_str());
    }
    ImGui::Text("their sum %s; the run's scores_raw %s", core::format_number(sum, 6).c_str(),
                s.scores_raw[h].size() ? core::format_number(s.scores_raw[h](i, j), 6).c_str() : "\xe2\x80\x94");
    if (s.allowed(i, j) == 0) ImGui::TextDisabled("masked: this query does not see this key");
    ImGui::EndTooltip();
}

// The five parts' grid: as many columns (5, 3 or 2) as give the largest heatmaps in `room` while
// each column is at least as wide as the widest title; the first of each row has the row labels.
struct SplitGrid {
    int cols = 5;
    float side = 0;     // each heatmap's cells
    float label_w = 0;  // the row labels' gutter of the first of each row
};

SplitGrid split_grid(ImVec2 room, const std::vector<std::string>* labels) {
    const float gap = ImGui::GetStyle().ItemSpacing.x, lines = ImGui::GetTextLineHeightWithSpacing() * 2;
    float title_w = 0;
    for (const char* name : part_names) title_w = std::max(title_w, ImGui::CalcTextSize(name).x);
    HeatmapOptions o;
    o.row_labels = labels;
    const float label_w = labels ? heatmap_gutters(o).x : 0;
    SplitGrid best{5, -1, label_w};
    for (const int cols : {5, 3, 2}) {
        const float col_w = (room.x - label_w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
        if (col_w < title_w && cols > 2) continue;
        const float side = std::min(col_w, room.y / static_cast<float>((5 + cols - 1) / cols) - lines);
        if (side > best.side) best = {cols, side, label_w};
    }
    best.side = std::max(best.side, ImGui::GetFontSize() * 5);
    return best;
}

// The five parts as heatmaps on one symmetric colour range, each with its share. Rows are the
// queries i, columns the keys j (the same tokens, named on hover).
void draw_split_parts(UiContext& ui, const LabSplit& s, size_t h, const std::vector<std::string>* labels, ImVec2 room) {
    const model::PositionSplit& p = s.heads[h];
    double a = 1e-300;
    for (size_t k = 0; k < 5; ++k) a = std::max(a, part_of(p, k).cwiseAbs().maxCoeff());
    const core::ColorRange range{-a, a, false};
    const SplitGrid grid = split_grid(room, labels);
    for (size_t k = 0; k < 5; ++k) {
        const bool first = k % static_cast<size_t>(grid.cols) == 0;
        if (!first) ImGui::SameLine();
        ImGui::BeginGroup();
        const HeatmapHit hit = lab_heatmap(ui, part_names[k], part_of(p, k), core::Colormap::diverging, range,
                                           {grid.side + (first ? grid.label_w : 0), grid.side},
                                           first ? labels : nullptr, nullptr);
        ImGui::Text("share %.1f%%", s.shares[h][k] * 100);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "mean |part| over the %d entries the mask allows, as a share of the five parts' mean |part|",
                static_cast<int>(s.allowed.sum()));
        ImGui::EndGroup();
        if (hit.hovered && hit.row >= 0 && hit.col >= 0) split_tooltip(s, h, hit.row, hit.col, labels);
        const std::string name = std::string("lab: split ") + part_keys[k];
        ui.report_value(name + " share", s.shares[h][k]);
        const core::Matrix& m = part_of(p, k);
        for (Eigen::Index i = 0; i < m.rows(); ++i)
            for (Eigen::Index j = 0; j < m.cols(); ++j)
                ui.report_value(name + " " + std::to_string(i) + " " + std::to_string(j), m(i, j));
    }
}

// Every head's shares, a row each; a click on a row chooses the head.
void draw_split_table(UiContext& ui, const LabSplit& s, int& head) {
    std::vector<std::vector<Cell>> rows;
    for (size_t h = 0; h < s.heads.size(); ++h) {
        std::vector<Cell> row{{std::to_string(h + 1), ""}};
        for (const double share : s.shares[h]) {
            char text[32];
            std::snprintf(text, sizeof text, "%.1f%%", share * 100);  // as under each part
            row.push_back({text, ""});
        }
        row.push_back({std::isnan(s.difference[h]) ? "\xe2\x80\x94" : core::format_number(s.difference[h], 2), ""});
        rows.push_back(std::move(row));
    }
    std::vector<const char*> titles{"head"};
    titles.insert(titles.end(), std::begin(part_names), std::end(part_names));
    titles.push_back("max |\xce\xa3 \xe2\x88\x92 scores_raw|");
    if (!begin_fitted_table("##split heads", titles, rows)) return;
    for (size_t h = 0; h < s.heads.size(); ++h) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(h));
        if (ImGui::Selectable(rows[h][0].text.c_str(), static_cast<int>(h) == head,
                              ImGuiSelectableFlags_SpanAllColumns))
            head = static_cast<int>(h);
        ImGui::PopID();
        for (size_t c = 1; c < rows[h].size(); ++c) {
            ImGui::TableNextColumn();
            draw_cell(rows[h][c], nullptr);
        }
        for (size_t k = 0; k < 5; ++k)
            ui.report_value("lab: split share " + std::string(part_keys[k]) + " head " + std::to_string(h + 1),
                            s.shares[h][k]);
    }
    ImGui::EndTable();
}

}  // namespace

void draw_position_split(UiContext& ui, LabTokens& t, ModelRun& run, int& head) {
    update_position_split(t, run);
    const bool current = t.split_serial == run.results()->serial;
    if (!t.split_problem.empty()) {
        ImGui::TextWrapped("Could not split the scores: %s", t.split_problem.c_str());
        return;
    }
    if (!t.split || head >= static_cast<int>(t.split->heads.size())) {
        ImGui::TextDisabled("Splitting layer 0's scores on the model's worker\xe2\x80\xa6");
        return;
    }
    const LabSplit& s = *t.split;
    const auto h = static_cast<size_t>(head);
    draw_split_header(ui, s, h, current);
    std::vector<std::string> labels;
    for (const std::string& text : run.results()->texts) labels.push_back(visible_token(text));
    const bool labelled = static_cast<Eigen::Index>(labels.size()) == s.allowed.rows();
    // The table of every head under the parts when both fit, else the parts take the room (it scrolls).
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float table_h = ImGui::GetFrameHeightWithSpacing() * static_cast<float>(s.heads.size() + 1);
    const float font = ImGui::GetFontSize();
    const float parts_h = avail.y - table_h >= font * 12 ? avail.y - table_h : avail.y;
    draw_split_parts(ui, s, h, labelled ? &labels : nullptr, {avail.x, parts_h});
    draw_split_table(ui, s, head);
}

}  // namespace attnviz::app
