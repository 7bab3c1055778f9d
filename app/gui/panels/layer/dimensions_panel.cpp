#include "panels/layer/dimensions_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "core/attention/presets.hpp"
#include "widgets/fitted_text.hpp"

namespace attnviz::app {

bool apply_dimensions(AppState& state, const DimensionsPanel& panel, core::Config wanted, char changed) {
    if (panel.lock_per_head && (changed == 'd' || changed == 'h')) {
        if (wanted.heads < 1 || wanted.d_model < 1 || wanted.d_model % wanted.heads != 0) {
            state.set_message("d_model = " + std::to_string(wanted.d_model) +
                                  " is not divisible by h = " + std::to_string(wanted.heads) +
                                  ": with the lock on, d_k = d_v = d_model / h must be whole. Nothing was changed.",
                              true);
            return false;
        }
        wanted.d_k = wanted.d_v = wanted.d_model / wanted.heads;
    }
    return state.set_config(wanted);
}

int stepped_dimension(const core::Config& c, bool lock, char key, int direction, int by) {
    const int value = key == 'n'   ? c.n
                      : key == 'd' ? c.d_model
                      : key == 'h' ? c.heads
                      : key == 'k' ? c.d_k
                      : key == 'v' ? c.d_v
                      : key == 'm' ? c.n_kv
                      : key == 'g' ? c.kv_count()
                                   : 0;
    // Whether a value is one the field can take: a divisor or a multiple where the lock or the
    // groups ask for one, any positive value elsewhere.
    const auto valid = [&](int v) {
        if (v < 1) return false;
        if (key == 'h' && lock) return c.d_model % v == 0;
        if (key == 'd' && lock) return v % c.heads == 0;
        if (key == 'g') return v <= c.heads && c.heads % v == 0;
        return true;
    };
    // The bound of the search: h and the groups never pass d_model and h, d_model needs at most h more.
    const long limit = key == 'h' && lock ? c.d_model : key == 'g' ? c.heads : std::numeric_limits<int>::max();
    for (long v = static_cast<long>(value) + static_cast<long>(direction) * std::max(by, 1); v >= 1 && v <= limit;
         v += direction)
        if (valid(static_cast<int>(v))) return static_cast<int>(v);
    return value;
}

namespace {

// The panel's error, where the user acted (below the fields), wrapped to the panel's width.
void error_here(const AppState& state, UiContext& ui) {
    if (!state.message().error) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ui.color(Color::error_text));
    ImGui::TextWrapped("%s", state.message().text.c_str());
    ImGui::PopStyleColor();
}

// − and + after an integer field, as ImGui's InputInt draws them, stepping to the next value the
// field can take (stepped_dimension); true when one was clicked, with *value stepped.
bool step_buttons(UiContext& ui, const DimensionsPanel& panel, const core::Config& c, char key, int* value,
                  const char* name) {
    const float side = ImGui::GetFrameHeight();
    const float inner = ImGui::GetStyle().ItemInnerSpacing.x;
    const int by = ImGui::GetIO().KeyCtrl ? 8 : 1;
    bool stepped = false;
    ImGui::PushButtonRepeat(true);
    for (const int direction : {-1, 1}) {
        ImGui::SameLine(0, inner);
        if (ImGui::Button(direction < 0 ? "-" : "+", {side, side})) {
            *value = stepped_dimension(c, panel.lock_per_head, key, direction, by);
            stepped = true;
        }
        ui.report_item(std::string("dimensions: ") + name + (direction < 0 ? " -" : " +"));
    }
    ImGui::PopButtonRepeat();
    return stepped;
}

// An integer field that applies on Enter, on leaving the field, or with its − and + buttons, which
// step to the next value the lock allows.
void dimension_field(AppState& state, UiContext& ui, DimensionsPanel& panel, const char* label, int* value, char key,
                     bool enabled, const char* help) {
    ImGui::PushID(label);
    ImGui::BeginDisabled(!enabled);
    const float side = ImGui::GetFrameHeight(), inner = ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7 - 2 * (side + inner));
    bool apply = ImGui::InputInt("##value", value, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemActive()) panel.editing_active = true;
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    const bool hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled);
    apply |= step_buttons(ui, panel, state.config(), key, value, label);
    ImGui::SameLine(0, inner);
    ImGui::TextUnformatted(label);
    ImGui::EndDisabled();
    ImGui::PopID();
    if (apply) apply_dimensions(state, panel, panel.editing, key);
    if (hovered || ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", help);
}

// What real layers add to the seeds' layer: biases, K/V groups and RoPE, each off by default.
void draw_real_layer_options(AppState& state, UiContext& ui, DimensionsPanel& panel) {
    ImGui::Separator();
    core::Config now = state.config();
    if (ImGui::Checkbox("biases", &now.biases)) state.set_config(now);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Q = X%sW_Q + b_Q, K and V alike, output = concat%sW_O + b_O\n"
            "(BERT, GPT-2, PyTorch's nn.MultiheadAttention). Edit them in the Inputs panel.",
            ui.symbols().dot, ui.symbols().dot);
    if (checkbox_on_line("RoPE", &now.rope.on)) state.set_config(now);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Rotary position embeddings (Llama, GPT-NeoX, GPT-J): the query and key of\n"
            "token p have each pair of columns turned by the angle p%s%s_j before QK%s.",
            ui.symbols().dot, ui.notation() == core::Notation::unicode ? "θ" : "theta", ui.symbols().transpose);
    // K/V groups: edited as a number, applied on Enter or when the field is left.
    core::Config& c = panel.editing;
    int groups = c.kv_count();
    const float side = ImGui::GetFrameHeight(), inner = ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7 - 2 * (side + inner));
    bool apply = ImGui::InputInt("##K/V groups", &groups, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemActive()) panel.editing_active = true;
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    bool hovered = ImGui::IsItemHovered();
    // ± step to the next divisor of h (the groups must divide it).
    apply |= step_buttons(ui, panel, state.config(), 'g', &groups, "K/V groups");
    ImGui::SameLine(0, inner);
    ImGui::TextUnformatted("K/V groups");
    hovered |= ImGui::IsItemHovered();
    c.kv_heads = groups == c.heads ? 0 : groups;
    if (apply) apply_dimensions(state, panel, c, 'g');
    if (hovered)
        ImGui::SetTooltip(
            "Grouped-query attention (Llama 2/3, Mistral): query heads share W_K and W_V in\n"
            "groups; h = one per head (plain multi-head), 1 = multi-query. Must divide h.");
    if (!now.rope.on) return;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    double base = now.rope.base;
    if (ImGui::InputDouble("RoPE base", &base, 0, 0, "%.6g", ImGuiInputTextFlags_EnterReturnsTrue) ||
        ImGui::IsItemDeactivatedAfterEdit()) {
        now.rope.base = base;
        state.set_config(now);
    }
    int style = now.rope.style == core::Rope::Style::half ? 0 : 1;
    bool style_changed = ImGui::RadioButton("half pairs", &style, 0);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pairs (j, j + d/2): rotate_half, as Llama and GPT-NeoX");
    same_line_if_fits(toggle_width("interleaved"));
    style_changed |= ImGui::RadioButton("interleaved", &style, 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pairs (2j, 2j + 1), as GPT-J");
    if (style_changed) {
        now.rope.style = style == 0 ? core::Rope::Style::half : core::Rope::Style::interleaved;
        state.set_config(now);
    }
    int dims = now.rope.rotated(now.d_k);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    if (ImGui::InputInt("rotated columns", &dims, 2, 2, ImGuiInputTextFlags_EnterReturnsTrue) ||
        ImGui::IsItemDeactivatedAfterEdit()) {
        now.rope.dims = dims == now.d_k ? 0 : dims;
        state.set_config(now);
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("How many of each head's d_k columns RoPE turns (even; d_k: all)");
}

// The softmax that turns scores into weights: the standard one, or softmax₁ (plus one), whose rows
// may sum to below 1. Undoable as a change of the scale is.
void draw_softmax_options(AppState& state, UiContext& ui) {
    core::Config now = state.config();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("softmax");
    ImGui::SameLine();
    int kind = static_cast<int>(now.softmax);
    bool changed = ImGui::RadioButton("standard##softmax", &kind, 0);
    ui.report_item("dimensions: softmax standard");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("weights = e^s / %s e^s: each row of weights sums to 1.", ui.symbols().sum);
    same_line_if_fits(toggle_width("plus one"));
    changed |= ImGui::RadioButton("plus one", &kind, 1);
    ui.report_item("dimensions: softmax plus one");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "weights = e^s / (1 + %s e^s), the softmax plus one (Miller 2023): the 1 is somewhere for\n"
            "weight to go that moves nothing, so a row sums to below 1 and a query that finds no key\n"
            "worth attending to need not pile its weight onto a sink token.",
            ui.symbols().sum);
    if (changed) {
        now.softmax = static_cast<core::Softmax>(kind);
        state.set_config(now);
    }
    // Soft-capping (Gemma 2): scores_capped = c·tanh(scores / c) is the softmax's input; 0: none.
    double cap = now.softcap;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    if (ImGui::InputDouble("soft-cap c", &cap, 0, 0, "%.6g", ImGuiInputTextFlags_EnterReturnsTrue) ||
        ImGui::IsItemDeactivatedAfterEdit()) {
        now.softcap = std::max(cap, 0.0);
        if (now.softcap != state.config().softcap) state.set_config(now);
    }
    ui.report_item("dimensions: soft-cap");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Gemma 2's soft-capping: scores_capped = c%stanh(scores / c) goes into the softmax, every\n"
            "score squeezed into (-c, c). 0: none.",
            ui.symbols().dot);
    // OLMo 2's norms of Q and K over every head (their weights start at 1, edited in the Inputs panel).
    bool qk_norm = now.qk_norm.on;
    if (ImGui::Checkbox("q/k norms", &qk_norm)) {
        now.qk_norm.on = qk_norm;
        state.set_config(now);
    }
    ui.report_item("dimensions: q/k norms");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "OLMo 2's q_norm and k_norm: before RoPE each token's queries of every head together are\n"
            "divided by their RMS and multiplied by q_norm (its keys by k_norm), so one number per\n"
            "token scales all its heads. The weights are in the Inputs panel's q/k norms tab.");
}

// The mask (none, causal, or the session's own grid, edited in the Mask panel) and
// cross-attention (keys and values from a second input Y of n_kv tokens).
void draw_mask_options(AppState& state, UiContext& ui, DimensionsPanel& panel, core::Config now) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("mask");
    ImGui::SameLine();
    int mask = static_cast<int>(now.mask);
    bool changed = ImGui::RadioButton("none##mask", &mask, 0);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Every query may look at every key.");
    same_line_if_fits(toggle_width("causal"));
    changed |= ImGui::RadioButton("causal", &mask, 1);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Query i may not look at keys j > i: their scores become %s.", ui.symbols().neg_inf);
    same_line_if_fits(toggle_width("custom"));
    changed |= ImGui::RadioButton("custom", &mask, 2);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Your own n×keys grid of 1 (may attend) and 0 (may not): padding, sliding windows,\n"
            "segments. Edit it in the Mask panel.");
    if (changed) {
        now.mask = static_cast<core::Mask>(mask);
        if (state.set_config(now) && now.mask == core::Mask::custom) ui.request(command::ShowPanel{PanelId::mask});
    }
    if (now.mask == core::Mask::custom) {
        if (ImGui::SmallButton("edit the mask")) ui.request(command::ShowPanel{PanelId::mask});
    }

    core::Config& c = panel.editing;
    bool cross = now.cross();
    if (ImGui::Checkbox("cross-attention", &cross)) {
        now.n_kv = cross ? now.n : 0;
        if (now.mask == core::Mask::causal && cross) now.mask = core::Mask::none;  // a causal mask needs no Y
        state.set_config(now);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Keys and values from a second input Y (n_kv×d_model, its own tokens), as a\n"
            "decoder attends to the encoder's output: K = Y%sW_K, V = Y%sW_V, scores n×n_kv.",
            ui.symbols().dot, ui.symbols().dot);
    if (cross) {
        dimension_field(state, ui, panel, "n_kv (keys)", &c.n_kv, 'm', true,
                        "Tokens of Y: the keys and values each query attends over");
    }
}

}  // namespace

void draw_dimensions_panel(AppState& state, UiContext& ui, DimensionsPanel& panel) {
    if (!panel.editing_active) panel.editing = state.config();
    panel.editing_active = false;

    if (ImGui::Button("Worked example"))
        state.set_session(core::worked_example(), "The worked example: 2 tokens, d_model = 4, 2 heads");
    same_line_if_fits(ImGui::CalcTextSize("Random").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button("Random")) state.randomize(panel.seed);  // Glorot weights and X from the seed below
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Random X and weights from the seed, same dimensions and token labels");
    same_line_if_fits(ImGui::CalcTextSize("Sentence...").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button("Sentence...")) ui.request(command::NewSentence{});
    ui.report_item("dimensions: sentence");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("A new session from a sentence you type: its words become the tokens, X a row per word");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
    ImGui::InputScalar("seed", ImGuiDataType_U64, &panel.seed);
    same_line_if_fits(ImGui::CalcTextSize("Randomize").x + ImGui::GetStyle().FramePadding.x * 2);
    const bool randomize = ImGui::Button("Randomize");
    ui.report_item("dimensions: randomize");
    if (randomize) {
        ++panel.seed;
        state.randomize(panel.seed);
    }

    ImGui::Separator();
    core::Config& c = panel.editing;
    dimension_field(state, ui, panel, "n (tokens)", &c.n, 'n', true, "Sequence length: rows of X");
    dimension_field(state, ui, panel, "d_model", &c.d_model, 'd', true, "Embedding size: columns of X");
    dimension_field(state, ui, panel, "h (heads)", &c.heads, 'h', true, "Number of attention heads");
    if (checkbox_wrapped("lock", "lock d_k = d_v = d_model / h", &panel.lock_per_head) && panel.lock_per_head)
        apply_dimensions(state, panel, state.config(), 'd');
    ui.report_item("dimensions: lock");
    dimension_field(state, ui, panel, "d_k", &c.d_k, 'k', !panel.lock_per_head, "Query/key size per head");
    dimension_field(state, ui, panel, "d_v", &c.d_v, 'v', !panel.lock_per_head, "Value size per head");
    error_here(state, ui);

    ImGui::Separator();
    core::Config now = state.config();
    if (ImGui::Checkbox("W_O projection", &now.output_projection)) state.set_config(now);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: output = concat%sW_O, with the output projection W_O.\nOff: output = concat, multi-head attention "
            "without it.",
            ui.symbols().dot);
    draw_mask_options(state, ui, panel, now);

    ImGui::Text("scale: scores = QK%s / s,", ui.symbols().transpose);
    char divisor_text[48];
    std::snprintf(divisor_text, sizeof divisor_text, "s = %.6g", state.trace().scale);
    same_line_if_fits(ImGui::CalcTextSize(divisor_text).x);
    ImGui::TextUnformatted(divisor_text);
    int kind = static_cast<int>(now.scale.kind);
    bool scale_changed = ImGui::RadioButton(ui.symbols().sqrt_dk, &kind, 0);
    same_line_if_fits(toggle_width("none"));
    scale_changed |= ImGui::RadioButton("none", &kind, 1);
    same_line_if_fits(toggle_width("temperature"));
    scale_changed |= ImGui::RadioButton("temperature", &kind, 2);
    now.scale.kind = static_cast<core::Scale::Kind>(kind);
    if (now.scale.kind == core::Scale::Kind::divisor) {
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
        double divisor = now.scale.divisor;
        if (ImGui::InputDouble("divisor", &divisor, 0.1, 1.0, "%.4g", ImGuiInputTextFlags_EnterReturnsTrue) ||
            ImGui::IsItemDeactivatedAfterEdit()) {
            now.scale.divisor = divisor;
            scale_changed = true;
        }
    }
    if (scale_changed) state.set_config(now);
    draw_softmax_options(state, ui);

    draw_real_layer_options(state, ui, panel);

    ImGui::Separator();
    int orientation = state.column_vectors() ? 1 : 0;
    ImGui::TextUnformatted("tokens are");
    ImGui::SameLine();
    if (ImGui::RadioButton("rows", &orientation, 0)) state.set_column_vectors(false);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Row vectors: X is n×d_model, one token per row");
    same_line_if_fits(toggle_width("columns"));
    if (ImGui::RadioButton("columns", &orientation, 1)) state.set_column_vectors(true);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Column vectors, attention written as V%ssoftmax(K%sQ/%sd):\n"
            "every matrix is drawn as the transpose of its row form.",
            ui.symbols().dot, ui.symbols().transpose, ui.symbols().sqrt);
}

}  // namespace attnviz::app
