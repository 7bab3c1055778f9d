#include "panels/lab/lab_model.hpp"

#include <algorithm>
#include <imgui.h>
#include <numeric>

#include "core/base/format.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

bool lab_in_model(const ModelRun* run, int heads) {
    if (!run || !run->is_open() || !run->results() || run->editing_layer() < 0) return false;
    const auto& layers = run->results()->run->layers;
    const auto layer = static_cast<size_t>(run->editing_layer());
    return layer < layers.size() && layers[layer].config.heads == heads;
}

void update_model_ablation(ModelAblation& m, ModelRun& run, int head) {
    if (m.job.ready()) {
        if (std::optional<core::Result<model::HeadEffect>> done = take_model_result(m.job)) {
            m.key = m.job_key;
            m.problem = *done ? "" : problems_text(done->problems);
            if (*done) m.effect = std::move(*done->value);
        }
    }
    if (m.table_job.ready()) {
        if (std::optional<core::Result<std::vector<model::HeadEffect>>> done = take_model_result(m.table_job)) {
            m.table_key = m.table_job_key;
            m.table_problem = *done ? "" : problems_text(done->problems);
            m.table = *done ? std::move(*done->value) : std::vector<model::HeadEffect>{};
        }
    }
    const AblationKey want{run.results()->serial, run.editing_layer(), head, m.how};
    if (m.key == want || (m.job.valid() && m.job_key == want)) return;
    const int layer = want.layer;
    const core::Ablation how = m.how;
    m.job = run.on_results(
        [layer, head, how](const model::ModelFolder& folder, const model::RunState<float>& state,
                           const std::function<bool()>&) {
            return model::head_effect(folder, state, layer, head, how);
        },
        Worker::Priority::high);
    m.job_key = want;
}

void start_ablation_table(ModelAblation& m, ModelRun& run, int heads) {
    const int layer = run.editing_layer();
    const core::Ablation how = m.how;
    m.table_done = std::make_shared<std::atomic<int>>(0);
    m.table_job = run.on_results([layer, heads, how, done = m.table_done](const model::ModelFolder& folder,
                                                                          const model::RunState<float>& state,
                                                                          const std::function<bool()>& stopped) {
        using R = core::Result<std::vector<model::HeadEffect>>;
        std::vector<model::HeadEffect> effects;
        for (int h = 0; h < heads; ++h) {
            if (stopped()) return R::fail({{"", "stopped: the run changed"}});
            core::Result<model::HeadEffect> e = model::head_effect(folder, state, layer, h, how);
            if (!e) return R::fail(std::move(e.problems));
            effects.push_back(std::move(*e.value));
            done->store(h + 1);
        }
        return R::ok(std::move(effects));
    });
    m.table_job_key = {run.results()->serial, layer, -1, how};
}

bool model_ablation_busy(const ModelAblation& m) { return m.job.valid() || m.table_job.valid(); }

void wait_for_model_ablation(const ModelAblation& m) {
    m.job.wait();
    m.table_job.wait();
}

namespace {

const char* ablation_name(core::Ablation how) {
    return how == core::Ablation::zero ? "replaced by zeros" : "replaced by its mean row";
}

// The five most likely tokens before and after, side by side.
void draw_tops(UiContext& ui, const model::HeadEffect& e, const ModelRun& run) {
    if (!ImGui::BeginTable("##model tops", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* title : {"", "before", "p", "after", "p "}) ImGui::TableSetupColumn(title);
    ImGui::TableHeadersRow();
    const size_t rows = std::max(e.top_before.size(), e.top_after.size());
    for (size_t k = 0; k < rows; ++k) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%zu", k + 1);
        for (const std::vector<model::TopToken>* top : {&e.top_before, &e.top_after}) {
            const bool has = k < top->size();
            ImGui::TableNextColumn();
            if (has) {  // as the Next token panel shows a token: its text quoted, then its id
                ImGui::TextUnformatted(quoted_label(run.token_text((*top)[k].id)).c_str());
                ImGui::SameLine();
                ImGui::TextDisabled("%d", (*top)[k].id);
            }
            ImGui::TableNextColumn();
            if (has) ImGui::TextUnformatted(core::format_number((*top)[k].p, 4).c_str());
            if (!has) continue;
            const std::string name = std::string("lab: model top ") + (top == &e.top_before ? "before " : "after ") +
                                     std::to_string(k + 1);
            ui.report_value(name, (*top)[k].id);
            ui.report_value(name + " p", (*top)[k].p);
        }
    }
    ImGui::EndTable();
}

// ‖Δ residual‖_F after each block from the edited one on, as bars on one scale.
void draw_later_layers(UiContext& ui, const model::HeadEffect& e) {
    ImGui::TextUnformatted("\xe2\x80\x96\xce\x94 residual\xe2\x80\x96_F after each block:");
    const float font = ImGui::GetFontSize();
    const double top = e.residual_delta.empty()
                           ? 1.0
                           : std::max(*std::max_element(e.residual_delta.begin(), e.residual_delta.end()), 1e-300);
    const float width = std::max(font * 4, ImGui::GetContentRegionAvail().x - font * 11);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (size_t k = 0; k < e.residual_delta.size(); ++k) {
        const int layer = e.layer + static_cast<int>(k);
        ImGui::Text("layer %d", layer);
        ImGui::SameLine(font * 4.5f);
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const std::string id = "##delta " + std::to_string(layer);
        ImGui::InvisibleButton(id.c_str(), {width, ImGui::GetTextLineHeight()});
        const float w = static_cast<float>(e.residual_delta[k] / top) * width;
        draw->AddRectFilled({at.x, at.y + 2}, {at.x + std::max(w, 1.0f), at.y + ImGui::GetTextLineHeight() - 2},
                            ui.color(Color::plot_current));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "layer %d: \xe2\x80\x96\xce\x94 residual\xe2\x80\x96_F = %s, its attention weights' "
                "\xe2\x80\x96\xce\x94"
                "A\xe2\x80\x96_F = %s",
                layer, core::format_number(e.residual_delta[k], 4).c_str(),
                core::format_number(e.weights_delta[k], 4).c_str());
        ImGui::SameLine();
        ImGui::TextUnformatted(core::format_number(e.residual_delta[k], 3).c_str());
        ui.report_value("lab: model residual delta " + std::to_string(layer), e.residual_delta[k]);
    }
}

// The chosen head's effect.
void draw_effect(UiContext& ui, const ModelAblation& m, const ModelRun& run) {
    if (!m.problem.empty()) {
        ImGui::TextWrapped("Could not run the ablation through the model: %s", m.problem.c_str());
        return;
    }
    if (!m.effect) {
        ImGui::TextDisabled("Running the later blocks again\xe2\x80\xa6");
        return;
    }
    const model::HeadEffect& e = *m.effect;
    ImGui::TextWrapped("Head %d of layer %d, its Z %s; the blocks from layer %d on run again%s", e.head + 1, e.layer,
                       ablation_name(e.how), e.layer,
                       m.key == m.job_key || !m.job.valid() ? "." : " (updating\xe2\x80\xa6)");
    if (e.next_token) {
        ImGui::Text("KL(p_before \xe2\x80\x96 p_after) = %s nats", core::format_number(e.kl, 4).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "\xce\xa3_i p_i\xc2\xb7(ln p_i \xe2\x88\x92 ln q_i) over the vocabulary: p the next-token "
                "distribution of the run shown, q the same with the head ablated.\n0 when the head "
                "changes nothing.");
        ui.report_value("lab: model kl", e.kl);
        draw_tops(ui, e, run);
    } else {
        ImGui::TextDisabled("An encoder predicts no next token: only the later layers' change.");
    }
    draw_later_layers(ui, e);
}

// Every head's KL, the largest first (or ‖Δ residual‖ of the last block for an encoder); a click
// on a row chooses the head.
void draw_table(UiContext& ui, ModelAblation& m, ModelRun& run, int& head, int heads) {
    const AblationKey want{run.results()->serial, run.editing_layer(), -1, m.how};
    const bool current = m.table_key == want && (!m.table.empty() || !m.table_problem.empty());
    if (m.table_job.valid() && m.table_job_key == want) {
        const int done = m.table_done->load();
        ImGui::TextUnformatted("Every head of the block, one rerun each:");
        ImGui::ProgressBar(static_cast<float>(done) / static_cast<float>(std::max(heads, 1)), {-1, 0},
                           (std::to_string(done) + " of " + std::to_string(heads)).c_str());
        return;
    }
    const std::string button = "KL of every head (" + std::to_string(heads) + " reruns)";
    if (ImGui::Button(button.c_str())) start_ablation_table(m, run, heads);
    ui.report_item("lab: model every head");
    if (!current) return;
    if (!m.table_problem.empty()) {
        ImGui::TextWrapped("%s", m.table_problem.c_str());
        return;
    }
    const bool next_token = m.table.front().next_token;
    const auto size = [&](const model::HeadEffect& e) { return next_token ? e.kl : e.residual_delta.back(); };
    std::vector<size_t> order(m.table.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return size(m.table[a]) > size(m.table[b]); });
    if (!ImGui::BeginTable("##model heads", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    ImGui::TableSetupColumn("head");
    ImGui::TableSetupColumn(next_token ? "KL (nats)" : "\xe2\x80\x96\xce\x94 last block\xe2\x80\x96_F");
    ImGui::TableSetupColumn(next_token ? "top token after" : "");
    ImGui::TableHeadersRow();
    for (size_t k : order) {
        const model::HeadEffect& e = m.table[k];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(e.head);
        if (ImGui::Selectable(std::to_string(e.head + 1).c_str(), e.head == head, ImGuiSelectableFlags_SpanAllColumns))
            head = e.head;
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(core::format_number(size(e), 4).c_str());
        ImGui::TableNextColumn();
        if (next_token && !e.top_after.empty())
            ImGui::TextUnformatted(quoted_label(run.token_text(e.top_after.front().id)).c_str());
        ui.report_value("lab: model kl head " + std::to_string(e.head + 1), size(e));
    }
    ImGui::EndTable();
}

}  // namespace

void draw_model_ablation(UiContext& ui, ModelAblation& m, ModelRun& run, int& head) {
    const int heads = run.results()->run->layers[static_cast<size_t>(run.editing_layer())].config.heads;
    int how = m.how == core::Ablation::zero ? 0 : 1;
    ImGui::TextUnformatted("Z");
    ImGui::SameLine();
    if (ImGui::RadioButton("by zeros", &how, 0)) m.how = core::Ablation::zero;
    ui.report_item("lab: model zero");
    ImGui::SameLine();
    if (ImGui::RadioButton("by its mean row", &how, 1)) m.how = core::Ablation::mean;
    ui.report_item("lab: model mean");
    update_model_ablation(m, run, head);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    ImGui::BeginChild("##model effect", {std::max(font * 16, avail.x * 0.55f), 0}, false);
    draw_effect(ui, m, run);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##model table", {0, 0}, false);
    draw_table(ui, m, run, head, heads);
    ImGui::EndChild();
}

}  // namespace attnviz::app
