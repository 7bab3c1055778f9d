#include "panels/model/head_view_panel.hpp"

#include <algorithm>
#include <imgui.h>
#include <string>

#include "core/attention/session.hpp"
#include "core/base/format.hpp"
#include "panels/model/head_view_detail.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

using namespace head_view_detail;

namespace head_view_detail {

bool contains(const std::vector<int>& sorted, int t) { return std::binary_search(sorted.begin(), sorted.end(), t); }

}  // namespace head_view_detail

namespace {

// The selection without tokens that no longer exist (the session shrank).
void prune(std::vector<int>& selected, int count) {
    std::erase_if(selected, [count](int t) { return t < 0 || t >= count; });
}

// What the head view shows this frame before its own options: a layer's heads' weights and their
// tokens, and the layers it can switch between.
struct HeadViewSource {
    int layers = 1;                          // > 1: a layer selector
    int layer = 0;                           // the one shown; in model mode −1: the session, no block
    std::vector<std::string> layer_names;    // the selector's entries
    std::vector<const core::Matrix*> heads;  // the layer's heads' weights, q × k each
    const std::vector<std::string>* queries = nullptr;
    const std::vector<std::string>* keys = nullptr;
    HeadViewPanel::WeightsKey key;
    std::string note;                    // what the weights are, over the view (opened attentions: weights only)
    bool can_norm = false;               // norm-weighted is offered (the session's layer)
    const NormWeighted* norm = nullptr;  // drawn in place of the weights (rows normalised)
};

// What "hide special tokens" can do with the tokens shown.
struct SpecialTokens {
    bool any = false;       // some token is one
    bool can_hide = false;  // hiding them leaves a query and a key
    bool hidden = false;    // they are hidden this frame
};

// A chip of the legend: a swatch (filled while on) and its text; returns whether it was clicked.
bool legend_chip(UiContext& ui, const std::string& id, const std::string& text, ImU32 colour, bool on) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float chip = ImGui::GetFrameHeight();
    const float w = chip + style.ItemInnerSpacing.x + ImGui::CalcTextSize(text.c_str()).x;
    same_line_if_fits(w);
    const bool clicked = ImGui::InvisibleButton(id.c_str(), {w, chip});
    ui.report_item("head view: " + id.substr(2));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 a = ImGui::GetItemRectMin();
    const float inset = chip * 0.18f;
    const ImVec2 c0{a.x + inset, a.y + inset}, c1{a.x + chip - inset, a.y + chip - inset};
    if (on)
        dl->AddRectFilled(c0, c1, colour, 2);
    else
        dl->AddRect(c0, c1, colour, 2, 0, 1.5f);
    dl->AddText({a.x + chip + style.ItemInnerSpacing.x, a.y + style.FramePadding.y},
                ImGui::GetColorU32(on ? ImGuiCol_Text : ImGuiCol_TextDisabled), text.c_str());
    return clicked;
}

// The layer shown, when there are several (a combo); nothing with one.
void draw_layer_choice(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s) {
    if (s.layers <= 1) return;
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("layer");
    ImGui::SameLine();
    const std::string current = s.layer >= 0 ? s.layer_names[static_cast<std::size_t>(s.layer)] : "this session";
    float widest = ImGui::CalcTextSize(current.c_str()).x;
    for (const std::string& name : s.layer_names) widest = std::max(widest, ImGui::CalcTextSize(name.c_str()).x);
    ImGui::SetNextItemWidth(std::min(widest + ImGui::GetFrameHeight() * 1.5f, font * 12));
    if (ImGui::BeginCombo("##layer", current.c_str())) {
        for (int l = 0; l < s.layers; ++l)
            if (ImGui::Selectable(s.layer_names[static_cast<std::size_t>(l)].c_str(), l == s.layer)) p.layer = l;
        ImGui::EndCombo();
    }
    ui.report_item("head view: layer");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The layer whose heads are drawn (%d layers)", s.layers);
    ImGui::SameLine();
}

// The switch "weights | norm-weighted"; norm-weighted only for the session's layer (it needs V and W_O).
void draw_norm_choice(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s) {
    same_line_if_fits(toggle_width("weights") + toggle_width("norm-weighted") + ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::RadioButton("weights", !p.norm_weighted)) p.norm_weighted = false;
    ui.report_item("head view: weights");
    ImGui::SameLine();
    ImGui::BeginDisabled(!s.can_norm);
    if (ImGui::RadioButton("norm-weighted", p.norm_weighted && s.can_norm)) p.norm_weighted = true;
    ImGui::EndDisabled();
    ui.report_item("head view: norm-weighted");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", s.can_norm ? "Lines of each head's norm-weighted attention ‖α_ij·f_h(x_j)‖ (f_h(x_j) = "
                                             "V_j·W_O⁽ʰ⁾: how far key j moves query i's output),\neach query row "
                                             "divided by its sum: the lines show relative strength. Hover a token "
                                             "for ‖f_h(x_j)‖, α_ij and their product."
                                           : "Norm-weighted needs the layer's V and W_O: only the session's own "
                                             "layer has them (not opened attentions, nor a model's other blocks)");
}

// The legend (a colour chip per head: click to hide or show its lines; all, none; the mean of the
// heads shown) and the controls.
void draw_controls(UiContext& ui, HeadViewPanel& p, const HeadViewSource& s, const SpecialTokens& special,
                   float min_weight, int top_k, bool scaled) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = ImGui::GetFontSize();
    const int heads = static_cast<int>(s.heads.size());
    draw_layer_choice(ui, p, s);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("heads");
    for (int h = 0; h < heads; ++h) {
        const std::string number = std::to_string(h + 1);
        const bool shown = head_shown(p, h);
        if (legend_chip(ui, "##head " + number, number, head_color(h, heads), shown)) set_head_shown(p, h, !shown);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Head %d: click to %s its lines", h + 1, shown ? "hide" : "show");
    }
    const auto button = [&](const char* label, const char* tip) {
        same_line_if_fits(ImGui::CalcTextSize(label).x + style.FramePadding.x * 2);
        const bool pressed = ImGui::Button(label);
        ui.report_item(std::string("head view: ") + label);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
        return pressed;
    };
    if (button("all", "Show every head's lines"))
        for (int h = 0; h < heads; ++h) set_head_shown(p, h, true);
    if (button("none", "Hide every head's lines (then click a head to see it alone)"))
        for (int h = 0; h < heads; ++h) set_head_shown(p, h, false);
    if (legend_chip(ui, "##mean of heads", "mean", ui.color(Color::heads_mean), p.heads_mean))
        p.heads_mean = !p.heads_mean;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: one set of lines, the mean of the heads shown (cell by cell). Off: each head's lines in its colour.");
    draw_norm_choice(ui, p, s);

    const bool unicode = ui.notation() == core::Notation::unicode;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(unicode ? "weight ≥" : "weight >=");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5);
    if (ImGui::SliderFloat("##min weight", &min_weight, 0, 1, min_weight < 0.01f ? "%.4f" : "%.3f",
                           ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
        p.min_weight = min_weight;
    ui.report_item("head view: min weight");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Lines of a smaller weight are not drawn (Ctrl+click to type a value)");
    same_line_if_fits(font * 6 + ImGui::CalcTextSize("top-k").x);
    ImGui::SetNextItemWidth(font * 5.5f);
    if (ImGui::InputInt("top-k", &top_k)) p.top_k = std::max(top_k, 0);
    ui.report_item("head view: top-k");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each query keeps only its k strongest keys in each head (0: all)");
    same_line_if_fits(toggle_width("sum") + toggle_width("mean") + style.ItemSpacing.x);
    if (ImGui::RadioButton("sum", !p.mean)) p.mean = false;
    ui.report_item("head view: sum");
    ImGui::SameLine();
    if (ImGui::RadioButton("mean", p.mean)) p.mean = true;
    ui.report_item("head view: mean");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Several selected tokens: their weights added (sum), or added and divided by their number");
    if (checkbox_on_line("scale opacity", &scaled)) p.scaled_opacity = scaled;
    ui.report_item("head view: scale opacity");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: opacity = weight / the 99th percentile of the weights drawn, so lines stay visible\n"
            "when every weight is small (at large n). Off: opacity = weight.");
    const bool any = !p.queries.empty() || !p.keys.empty();
    same_line_if_fits(ImGui::CalcTextSize("clear").x + style.FramePadding.x * 2);
    ImGui::BeginDisabled(!any);
    if (ImGui::Button("clear")) clear_selection(p);
    ImGui::EndDisabled();
    ui.report_item("head view: clear");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Clear the selection (Esc)");
    ImGui::BeginDisabled(!special.can_hide);
    bool hide = special.hidden;
    if (checkbox_on_line("hide special tokens", &hide)) {
        p.hide_special = hide;
        clear_selection(p);  // the tokens shown are others now
    }
    ImGui::EndDisabled();
    ui.report_item("head view: hide special tokens");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", !special.any
                                    ? "No token here is a special one ([CLS], [SEP], <s>, </s>, <|endoftext|>, ...)"
                                : !special.can_hide
                                    ? "Every query or every key is a special token: hiding them would leave nothing"
                                    : "Leave [CLS], [SEP], <s>, <|endoftext|> and the like out: their rows and "
                                      "columns go, and each row is renormalised over the keys left (divided by "
                                      "its sum), so it is again a distribution");
}

}  // namespace

bool head_shown(const HeadViewPanel& p, int head) {
    return head < 0 || static_cast<std::size_t>(head) >= p.hidden.size() || !p.hidden[static_cast<std::size_t>(head)];
}

void set_head_shown(HeadViewPanel& p, int head, bool shown) {
    if (head < 0) return;
    if (static_cast<std::size_t>(head) >= p.hidden.size()) p.hidden.resize(static_cast<std::size_t>(head) + 1, 0);
    p.hidden[static_cast<std::size_t>(head)] = !shown;
}

void click_token(HeadViewPanel& p, TokenSide side, int token, bool add) {
    std::vector<int>& own = side == TokenSide::query ? p.queries : p.keys;
    std::vector<int>& other = side == TokenSide::query ? p.keys : p.queries;
    const auto at = std::lower_bound(own.begin(), own.end(), token);
    const bool in = at != own.end() && *at == token;
    if (add) {
        if (in)
            own.erase(at);
        else
            own.insert(at, token);
        return;
    }
    const bool alone = in && own.size() == 1 && other.empty();
    clear_selection(p);
    if (!alone) own.push_back(token);
}

void clear_selection(HeadViewPanel& p) {
    p.queries.clear();
    p.keys.clear();
}

std::string select_tokens(HeadViewPanel& p, const std::string& text, int n, int n_keys) {
    core::TokenChoice chosen = core::parse_token_choice(text, n, n_keys);
    for (auto [from, own] : {std::pair{&chosen.queries, &p.queries}, std::pair{&chosen.keys, &p.keys}})
        for (int t : *from)
            if (!contains(*own, t)) own->insert(std::lower_bound(own->begin(), own->end(), t), t);
    return chosen.problem;
}

namespace {

enum : int { from_session = 0, from_model_block = 1, from_attentions = 2 };

// The opened attentions' layer.
HeadViewSource attentions_source(const HeadViewPanel& p, const AttentionsMode& mode) {
    HeadViewSource s;
    const core::Attentions& a = *mode.weights;
    s.layers = static_cast<int>(a.layers.size());
    s.layer = std::clamp(p.layer.value_or(0), 0, s.layers - 1);
    for (int l = 0; l < s.layers; ++l) s.layer_names.push_back("layer " + std::to_string(l));
    for (const core::Matrix& w : a.layers[static_cast<std::size_t>(s.layer)]) s.heads.push_back(&w);
    s.queries = &a.query_tokens;
    s.keys = &a.key_tokens;
    s.key = {from_attentions, mode.serial, s.layer, p.hide_special};
    s.note = "Weights only: no X and no weight to edit (" + attentions_summary(mode) + ").";
    return s;
}

// The session's layer, or in model mode a block of the run: the block being edited is the session
// (its edits show at once), another block its run's weights.
HeadViewSource session_source(const AppState& state, HeadViewPanel& p, const ModelRun* run) {
    HeadViewSource s;
    const ModelResults* r = run ? run->results() : nullptr;
    const int edited = run ? run->editing_layer() : -1;
    const int blocks = r ? static_cast<int>(r->run->layers.size()) : 0;
    if (r) {
        s.layers = blocks;
        for (int l = 0; l < blocks; ++l)
            s.layer_names.push_back("layer " + std::to_string(l) + (l == edited ? " (edited)" : ""));
    }
    if (r && p.layer && *p.layer >= 0 && *p.layer < blocks && *p.layer != edited) {
        const int l = *p.layer;
        const HeadViewPanel::WeightsKey block{from_model_block, r->serial, l, false};
        if (!(p.block_of == block)) {  // its weights in double, once per run and layer
            p.block_weights.clear();
            for (const core::HeadTraceT<float>& h : r->run->layers[static_cast<std::size_t>(l)].trace.heads)
                p.block_weights.push_back(h.weights.cast<double>());
            p.block_of = block;
        }
        for (const core::Matrix& w : p.block_weights) s.heads.push_back(&w);
        s.layer = l;
        s.queries = s.keys = &r->run->tokens;
        s.key = {from_model_block, r->serial, l, p.hide_special};
        return s;
    }
    const Snapshot& shown = state.shown();
    s.layer = r ? edited : 0;
    s.can_norm = true;
    s.norm = p.norm_weighted ? p.norm.get(state) : nullptr;
    if (s.norm) {  // the rows of the snapshot they are of (the shown one, or the last while it is computed)
        for (const core::Matrix& m : s.norm->rows) s.heads.push_back(&m);
        s.queries = &s.norm->snapshot->session.tokens;
        s.keys = &core::key_tokens(s.norm->snapshot->session);
        s.key = {from_session, s.norm->generation, s.layer, p.hide_special, true};
        s.note =
            "Norm-weighted: each line is ‖α_ij·f_h(x_j)‖, how far key j moves query i's output, with each query "
            "row divided by its sum (the lines show relative strength). Hover a token for ‖f_h(x_j)‖, α_ij "
            "and their product.";
        return s;
    }
    for (const core::HeadTrace& h : shown.trace.heads) s.heads.push_back(&h.weights);
    s.queries = &shown.session.tokens;
    s.keys = &core::key_tokens(shown.session);
    s.key = {from_session, state.generation(), s.layer, p.hide_special};
    if (p.norm_weighted) s.note = "Norm-weighted: computing... (the weights meanwhile)";
    return s;
}

HeadViewSource source_of(const AppState& state, HeadViewPanel& p, const AttentionsMode* attentions,
                         const ModelRun* run) {
    return attentions && attentions->on() ? attentions_source(p, *attentions) : session_source(state, p, run);
}

// The tokens that are not special, once per weights shown.
const core::KeptTokens& ordinary_tokens(HeadViewPanel& p, const HeadViewSource& s) {
    HeadViewPanel::WeightsKey key = s.key;
    key.hide_special = true;
    if (!(p.ordinary_of == key)) {
        p.ordinary = core::kept_tokens(*s.queries, *s.keys, true);
        p.ordinary_of = key;
    }
    return p.ordinary;
}

SpecialTokens special_tokens(HeadViewPanel& p, const HeadViewSource& s) {
    const core::KeptTokens& kept = ordinary_tokens(p, s);
    SpecialTokens special;
    special.any = kept.queries.size() < s.queries->size() || kept.keys.size() < s.keys->size();
    special.can_hide = special.any && !kept.queries.empty() && !kept.keys.empty();
    special.hidden = p.hide_special && special.can_hide;
    return special;
}

// The source's heads with special tokens left out, each row renormalised (core::renormalised_weights),
// made again when the weights change.
void hide_special_tokens(HeadViewPanel& p, HeadViewSource& s) {
    if (!(p.renormalised_of == s.key)) {
        const core::KeptTokens& kept = ordinary_tokens(p, s);
        p.renormalised.clear();
        for (const core::Matrix* w : s.heads) p.renormalised.push_back(core::renormalised_weights(*w, kept));
        p.kept_queries.clear();
        p.kept_keys.clear();
        for (int q : kept.queries) p.kept_queries.push_back((*s.queries)[static_cast<std::size_t>(q)]);
        for (int k : kept.keys) p.kept_keys.push_back((*s.keys)[static_cast<std::size_t>(k)]);
        p.renormalised_of = s.key;
    }
    for (std::size_t h = 0; h < s.heads.size(); ++h) s.heads[h] = &p.renormalised[h];
    s.queries = &p.kept_queries;
    s.keys = &p.kept_keys;
}

// The mean of the heads shown, made again when they or their weights change; null when none is shown.
const core::Matrix* heads_mean(HeadViewPanel& p, const HeadViewFrame& f) {
    if (!(p.heads_mean_of == f.weights) || p.heads_mean_hidden != f.hidden) {
        core::Result<core::Matrix> mean = core::mean_of_heads(f.given);
        p.heads_mean_weights = mean ? std::move(*mean.value) : core::Matrix();
        p.heads_mean_of = f.weights;
        p.heads_mean_hidden = f.hidden;
    }
    return p.heads_mean_weights.size() > 0 ? &p.heads_mean_weights : nullptr;
}

// The legend of the options that change what a line is: the mean, hidden special tokens ("" for neither).
std::string options_note(const HeadViewFrame& f, const SpecialTokens& special) {
    std::string note;
    if (f.mean) note = "Lines: the mean of the heads shown (cell by cell).";
    if (special.hidden)
        note += std::string(note.empty() ? "" : " ") +
                "Special tokens hidden: each row is renormalised over the keys left (divided by its sum).";
    return note;
}

// The numbers the view shows, for tests: its shape, its options and the selection's attention.
void report_values(UiContext& ui, const HeadViewPanel& p, const HeadViewSource& s, const HeadViewFrame& f,
                   const SpecialTokens& special) {
    if (!ui.report) return;
    ui.report_value("head view layers", s.layers);
    ui.report_value("head view layer", s.layer);
    ui.report_value("head view heads", f.heads);
    ui.report_value("head view queries", f.n);
    ui.report_value("head view keys", f.n_keys);
    ui.report_value("head view special hidden", special.hidden);
    ui.report_value("head view mean", f.mean != nullptr);
    ui.report_value("head view norm-weighted", f.norm != nullptr);
    for (Eigen::Index j = 0; j < p.of_queries.size(); ++j)
        ui.report_value("head view of queries " + std::to_string(j), p.of_queries(j));
    for (Eigen::Index i = 0; i < p.to_keys.size(); ++i)
        ui.report_value("head view to keys " + std::to_string(i), p.to_keys(i));
}

}  // namespace

std::pair<int, int> head_view_tokens(const AppState& state, const HeadViewPanel& p, const AttentionsMode* attentions) {
    const bool opened = attentions && attentions->on();
    const std::vector<std::string>& queries = opened ? attentions->weights->query_tokens : state.shown().session.tokens;
    const std::vector<std::string>& keys = opened ? attentions->weights->key_tokens
                                                  : core::key_tokens(state.shown().session);
    const core::KeptTokens kept = core::kept_tokens(queries, keys, p.hide_special);
    if (kept.queries.empty() || kept.keys.empty())
        return {static_cast<int>(queries.size()), static_cast<int>(keys.size())};
    return {static_cast<int>(kept.queries.size()), static_cast<int>(kept.keys.size())};
}

void draw_head_view_panel(AppState& state, UiContext& ui, HeadViewPanel& p, const AttentionsMode* attentions,
                          const ModelRun* run) {
    HeadViewSource s = source_of(state, p, attentions, run);
    if (!s.note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("%s", s.note.c_str());
        ImGui::PopStyleColor();
        ui.report_item(s.can_norm ? "head view: norm-weighted note" : "head view: weights only");
    }
    const int heads = static_cast<int>(s.heads.size());
    if (heads == 0 || s.heads[0]->size() == 0) {
        ImGui::TextDisabled("No weights to show: the trace is empty.");
        return;
    }
    const SpecialTokens special = special_tokens(p, s);
    if (special.hidden) hide_special_tokens(p, s);
    const int n = static_cast<int>(s.heads[0]->rows());
    const int n_keys = static_cast<int>(s.heads[0]->cols());
    prune(p.queries, n);
    prune(p.keys, n_keys);
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && !ImGui::GetIO().WantTextInput &&
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
        clear_selection(p);

    const float min_weight = p.min_weight.value_or(static_cast<float>(core::default_min_weight(n_keys)));
    const int top_k = p.top_k.value_or(core::default_top_k(n_keys));
    const bool scaled = p.scaled_opacity.value_or(core::default_scaled_opacity(n_keys));
    draw_controls(ui, p, s, special, min_weight, top_k, scaled);
    HeadViewFrame f{*s.queries,
                    *s.keys,
                    heads,
                    n,
                    n_keys,
                    min_weight,
                    top_k,
                    scaled,
                    std::vector<const core::Matrix*>(static_cast<std::size_t>(heads)),
                    std::vector<char>(static_cast<std::size_t>(heads)),
                    s.key};
    f.weights.hide_special = special.hidden;
    f.norm = s.norm;
    if (special.hidden) f.kept = &p.ordinary;
    for (int h = 0; h < heads; ++h) {
        f.hidden[static_cast<std::size_t>(h)] = !head_shown(p, h);
        if (head_shown(p, h)) f.given[static_cast<std::size_t>(h)] = s.heads[static_cast<std::size_t>(h)];
    }
    if (p.heads_mean) f.mean = heads_mean(p, f);

    const std::string options = options_note(f, special);
    const HeadViewLayout l = layout_head_view(p, f, options);
    draw_header(p, l);
    ImGui::Dummy({l.avail.x, l.row_h + l.columns_h});
    const ImVec2 after = ImGui::GetCursorScreenPos();
    take_pointer(ui, p, f, l);
    update_lines(p, f);
    draw_lines(ui, p, f, l);
    draw_labels(ui, p, f, l);
    report_values(ui, p, s, f, special);

    ImGui::SetCursorScreenPos(after);
    draw_drawn_line(ui, p, l, options);
    if (!l.selection) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        text_fitted("Hover a token: its lines. Click: keep them. Ctrl+click: select several. Esc: clear.");
        ImGui::PopStyleColor();
        return;
    }
    draw_selection_tables(ui, p, f, l);
}

}  // namespace attnviz::app
