#include "panels/model/model_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/attention/session.hpp"
#include "core/base/format.hpp"
#include "panels/model/model_sentence.hpp"
#include "widgets/colormap.hpp"
#include "widgets/fitted_text.hpp"
#include "widgets/heatmap.hpp"
#include "widgets/matrix_view.hpp"

namespace attnviz::app {

namespace {

// Without textures (headless tests), a thumbnail is drawn as at most this many blocks a side.
constexpr int fallback_blocks = 16;

// A thumbnail in the square at `a` of side `side`, keeping the weights' aspect (queries × keys).
void draw_thumbnail(UiContext& ui, ImGuiID id, const core::HeadThumbnail& t, bool transposed, ImVec2 a, float side,
                    const core::ColorRange& range, std::uint64_t serial, const std::string& report_as) {
    const int rows = transposed ? t.keys : t.n, cols = transposed ? t.n : t.keys;
    if (rows <= 0 || cols <= 0 || t.cells.size() == 0) return;
    float w = side, h = side;
    if (rows > cols)
        w = std::max(2.0f, side * static_cast<float>(cols) / static_cast<float>(rows));
    else
        h = std::max(2.0f, side * static_cast<float>(rows) / static_cast<float>(cols));
    const ImVec2 p0{std::floor(a.x + (side - w) / 2), std::floor(a.y + (side - h) / 2)};
    const ImVec2 p1{p0.x + w, p0.y + h};
    if (ui.report) ui.report->heatmaps.push_back({report_as, p0, p1});
    const int cell_rows = static_cast<int>(transposed ? t.cells.cols() : t.cells.rows());
    const int cell_cols = static_cast<int>(transposed ? t.cells.rows() : t.cells.cols());
    ImDrawList* draw = ImGui::GetWindowDrawList();
    HeatmapOptions o;
    o.colormap = ui.colormap(core::MatrixId::weights);
    o.pooling = core::Pooling::mean;  // as the thumbnail's cells (core::thumbnail)
    o.range = range;
    o.generation = serial;
    const ImU32 masked = ui.color(Color::masked_cell);
    if (ui.heatmaps.has_textures()) {
        draw->AddImage(ui.heatmaps.texture(id, t.cells, transposed, {0, 0, cell_rows, cell_cols}, o, masked, {w, h}),
                       p0, p1);
        return;
    }
    // Blocks of cells, each coloured by their mean (as the textures pool).
    const int step_r = (cell_rows + fallback_blocks - 1) / fallback_blocks;
    const int step_c = (cell_cols + fallback_blocks - 1) / fallback_blocks;
    const float cw = w / static_cast<float>(cell_cols), ch = h / static_cast<float>(cell_rows);
    for (int r = 0; r < cell_rows; r += step_r)
        for (int c = 0; c < cell_cols; c += step_c) {
            core::BlockPool pool;
            for (int i = r; i < std::min(cell_rows, r + step_r); ++i)
                for (int j = c; j < std::min(cell_cols, c + step_c); ++j)
                    pool.add(o.pooling, transposed ? t.cells(j, i) : t.cells(i, j));
            const ImVec2 b0{p0.x + static_cast<float>(c) * cw, p0.y + static_cast<float>(r) * ch};
            const ImVec2 b1{p0.x + static_cast<float>(std::min(cell_cols, c + step_c)) * cw,
                            p0.y + static_cast<float>(std::min(cell_rows, r + step_r)) * ch};
            draw->AddRectFilled(b0, b1, colormap_color(o.colormap, range.position(pool.result(o.pooling))));
        }
}

// A sink head's marker: a small triangle pointing down after the head's number (at x, the caption's top y).
void draw_sink_marker(ImDrawList* draw, ImVec2 at, float size, ImU32 colour) {
    draw->AddTriangleFilled({at.x, at.y + size * 0.2f}, {at.x + size * 0.7f, at.y + size * 0.2f},
                            {at.x + size * 0.35f, at.y + size * 0.8f}, colour);
}

// The head's sink: its key (a token when the row has them) and share; whether it is flagged.
void sink_lines(const core::Sink& sink, const std::vector<std::string>* tokens) {
    const std::string key = tokens && sink.key < static_cast<int>(tokens->size())
                                ? "\"" + (*tokens)[static_cast<size_t>(sink.key)] + "\" (key " +
                                      std::to_string(sink.key) + ")"
                                : "key " + std::to_string(sink.key);
    ImGui::Text("sink   %s: mean weight %.3g; %.0f%% of the queries put >= %g of their weight on it", key.c_str(),
                sink.mean, sink.share * 100, core::sink_threshold);
    if (core::is_sink_head(sink))
        ImGui::TextDisabled(
            "A sink head (marked under its picture): at least %.0f%% of its queries put %g of their "
            "weight on one key",
            core::sink_head_share * 100, core::sink_threshold);
}

void head_tooltip(const Layers::Row& row, int head, const core::HeadSummary& s, const core::HeadThumbnail& t,
                  const core::ColorRange& range, int rank, core::HeadKey key, bool ascending, const char* click,
                  const core::Sink* sink, const std::vector<std::string>* tokens, const char* picture_of) {
    ImGui::BeginTooltip();
    ImGui::Text("%s, head %d of %d", row.name.c_str(), head + 1, row.heads);
    ImGui::TextDisabled("%s", row.source.c_str());
    ImGui::Separator();
    ImGui::Text("H      %.3g nats: mean entropy of a query's weights (0: one key; ln %d = %.3g: uniform)",
                s.mean_entropy, row.keys, std::log(static_cast<double>(std::max(row.keys, 1))));
    ImGui::Text("|i-j|  %.3g: mean distance from a query to the keys it attends to", s.mean_distance);
    ImGui::Text("first  %.1f%%: mean weight on the first token", s.first_share * 100);
    ImGui::Text("diag   %.1f%%: mean weight of a token on itself", s.diagonal_share * 100);
    if (sink) sink_lines(*sink, tokens);
    if (rank > 0)
        ImGui::Text("#%d of the whole model by %s, %s first (outlined)", rank, head_key_name(key),
                    ascending ? "smallest" : "largest");
    // What the picture is: each pixel the mean weight of the block of queries and keys it covers.
    ImGui::Separator();
    const double block_rows = static_cast<double>(t.n) / std::max<Eigen::Index>(t.cells.rows(), 1);
    const double block_cols = static_cast<double>(t.keys) / std::max<Eigen::Index>(t.cells.cols(), 1);
    ImGui::TextDisabled("Picture: %s;", picture_of);
    if (block_rows > 1 || block_cols > 1)
        ImGui::TextDisabled("each pixel the mean of the %s×%s queries × keys it covers;",
                            core::format_number(block_rows, 2).c_str(), core::format_number(block_cols, 2).c_str());
    else
        ImGui::TextDisabled("each pixel one cell;");
    if (range.hi == 1)
        ImGui::TextDisabled("colours from 0 to 1");
    else
        ImGui::TextDisabled("colours from 0 to %s: this head's 99th percentile, at least %g/n",
                            core::format_number(range.hi, 3).c_str(), core::even_headroom);
    ImGui::Separator();
    ImGui::TextDisabled("%s", click);
    ImGui::EndTooltip();
}

}  // namespace

void update_model_panel(AppState& state, ModelPanel& p) {
    p.layers.set_memory_budget(state.memory_budget());
    p.layers.poll(state);
    p.run.update(state, p.layers, ImGui::GetTime());
    // The box's text is the user's while it was being typed in at the last frame that drew it (a box
    // not drawn since, its panel hidden, is being typed in no more).
    if (!std::exchange(p.typing, false) && p.sentence != p.run.text()) p.sentence = p.run.text();
}

void open_beside_dialog(const AppState& state, ModelPanel& p) {
    p.beside_files.open(FileChooser::Mode::open_several, "Open sessions beside this one (Model view)",
                        session_filters(), state.file_path());
}

void open_model_dialog(const AppState& state, ModelPanel& p) {
    p.model_folder.open(FileChooser::Mode::folder, "Open a model folder (config.json, model.safetensors, tokenizer)",
                        {}, p.run.folder() ? p.run.folder()->folder() : state.file_path());
}

void open_model(const AppState& state, ModelPanel& p, const std::string& folder) {
    p.run.open(folder, p.run.is_open() ? p.run.text() : default_model_text, state.memory_budget());
}

void draw_model_dialogs(AppState& state, UiContext& ui, ModelPanel& p) {
    if (const std::optional<std::string> folder = p.model_folder.draw(ui)) open_model(state, p, *folder);
    if (const std::optional<std::string> path = p.beside_files.draw(ui)) {
        std::vector<std::string> paths{*path};
        for (std::string& more : p.beside_files.take_more()) paths.push_back(std::move(more));
        p.layers.open_files(paths);
    }
    draw_import_dialog(state, ui, p.import_all);
    if (p.import_all.requested) {
        p.import_all.requested = false;
        const core::Result<core::ImportOptions> options = import_options(p.import_all);
        if (options)
            p.layers.import_checkpoint(p.import_all.path, *options.value, p.import_all.layers);
        else
            state.set_message("Could not import: --x: " + options.problems.front().str(), true);
    }
}

namespace {

// Controls: wrap to the next line where the panel is narrow. `weights_only`: opened attentions,
// which have no layers to add beside them.
void draw_model_controls(UiContext& ui, ModelPanel& p, bool weights_only) {
    const float font = ImGui::GetFontSize();
    const ImGuiStyle& style = ImGui::GetStyle();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("sort heads by");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 9);
    if (ImGui::BeginCombo("##sort", head_key_name(p.sort))) {
        for (core::HeadKey k : core::all_head_keys)
            if (ImGui::Selectable(head_key_name(k), k == p.sort)) p.sort = k;
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Orders the heads of each layer by that number, each layer by its own heads: a column is "
            "not one head across layers");
    checkbox_on_line("smallest first", &p.ascending);
    same_line_if_fits(ImGui::CalcTextSize("outline the first").x + style.ItemSpacing.x + font * 5.5f);
    ImGui::BeginDisabled(p.sort == core::HeadKey::none);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("outline the first");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5.5f);
    if (ImGui::InputInt("##highlight", &p.highlight)) p.highlight = std::clamp(p.highlight, 0, 999);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(
            "Outlines the first N heads of the whole model in this order (e.g. the heads with the "
            "largest diagonal share); 0: none. Needs a sort.");
    same_line_if_fits(toggle_width("weights") + toggle_width("norm-weighted") + style.ItemSpacing.x);
    if (ImGui::RadioButton("weights", !p.norm_weighted)) p.norm_weighted = false;
    ui.report_item("model: weights");
    ImGui::SameLine();
    if (ImGui::RadioButton("norm-weighted", p.norm_weighted)) p.norm_weighted = true;
    ui.report_item("model: norm-weighted");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Each head's picture: its weights, or its norm-weighted attention ‖α_ij·f_h(x_j)‖ (how far key j\n"
            "moves query i's output; f_h(x_j) = V_j·W_O⁽ʰ⁾) with each query row divided by its sum.\n"
            "Norm-weighted needs a layer's V and W_O: layers of weights alone and a model's blocks show weights.\n"
            "A marker under a head's picture: a sink head, at least %.0f%% of its queries putting >= %g of\n"
            "their weight on one key (its tooltip names the key).",
            core::sink_head_share * 100, core::sink_threshold);
    checkbox_on_line("one scale 0..1", &p.one_scale);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "On: every head coloured on 0..1, to compare how sharp heads are.\nOff: each head from 0 "
            "to the 99th percentile of its thumbnail (at least %g/n, so that even attention looks even), to see "
            "each head's pattern.\nEach pixel of a thumbnail is the mean weight of the queries and keys it covers.",
            core::even_headroom);
    if (weights_only) return;
    // Adding and closing layers, in one menu (File has the same items).
    const char* layers_label = "Layers...";
    same_line_if_fits(ImGui::CalcTextSize(layers_label).x + style.FramePadding.x * 2);
    if (ImGui::Button(layers_label)) ImGui::OpenPopup("layers menu");
    ui.report_item("model: layers");
    if (ImGui::BeginPopup("layers menu")) {
        if (ImGui::MenuItem("Open beside...", nullptr, false)) ui.request(command::OpenBeside{});
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("A session file (or a checkpoint's layers) as rows below");
        if (ImGui::MenuItem("Import all layers...")) ui.request(command::ImportAllLayers{});
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The layers of a checkpoint, with the import's options");
        if (ImGui::MenuItem("Open model...")) ui.request(command::OpenModel{});
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("A Hugging Face model folder: every layer of its forward pass");
        ImGui::Separator();
        if (p.run.is_open()) {
            if (ImGui::MenuItem("Close the model")) p.run.close(p.layers);
        } else if (ImGui::MenuItem("Close every layer beside this session", nullptr, false, p.layers.size() > 1)) {
            p.layers.clear();
        }
        ImGui::EndPopup();
    }
}

// The order the heads are in and how they are coloured; a hint while only this session is open.
void draw_order_line(const ModelPanel& p, bool weights_only) {
    std::string order = p.sort == core::HeadKey::none
                            ? "Heads in their own order, each with its entropy H"
                            : std::string("Each layer's heads by its own ") + head_key_name(p.sort) + ", " +
                                  (p.ascending ? "smallest" : "largest") + " first (the order is per layer)";
    order += p.one_scale ? "; every head coloured on 0..1" : "; each head on its own colours";
    if (p.norm_weighted)
        order += "; norm-weighted attention, each query row divided by its sum, where a layer has V and W_O";
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(order.c_str());
    ImGui::PopTextWrapPos();
    if (!weights_only && p.layers.size() == 1 && !p.run.is_open() && p.run.opening().empty())
        ImGui::TextWrapped(
            "Only this session is open. Layers... (or File) > Open beside... adds session files as rows, Import all "
            "layers... a checkpoint's layers (also: attnviz SESSION --beside A.json B.json, attnviz --model DIR).");
    ImGui::PopStyleColor();
}

// The grid's measures this frame: a name column, then one thumbnail per head.
struct ModelGrid {
    std::span<const Layers::Row> layers;  // every row, shown or not
    std::vector<char> editing;            // per row: it is the session being edited
    bool weights_only = false;            // opened attentions' layers: a click shows a head in the head view
    int first = 0;                        // the first row shown (1 while a layer below is this session, unchanged)
    int rows = 0;
    ImVec2 avail;
    ImFont* small = nullptr;
    float small_size = 0, caption_h = 0;
    float name_w = 0, gap = 0, side = 0, column = 0, row_h = 0;
    bool transposed = false;
    bool computing = false;          // a model run is computing: the rows show the previous one
    bool model = false;              // the rows are a model run's blocks (they close with the model)
    std::vector<core::HeadRef> top;  // the heads to outline
    ImU32 text_col = 0, dim_col = 0;
    // The keys' tokens: of the opened attentions or a model's run (every row's), else null; and
    // this session's (row 0's).
    const std::vector<std::string>* tokens = nullptr;
    const std::vector<std::string>* session_tokens = nullptr;
    // The tokens of row r's keys.
    const std::vector<std::string>* keys_of(const Layers::Row& row) const {
        return tokens ? tokens : row.session ? &core::key_tokens(*row.session) : session_tokens;
    }
};

// The largest thumbnails that fit the width, within readable bounds (narrower panels scroll
// sideways, many layers scroll down). This session's row is left out while a layer below is it,
// unchanged (the same heads twice).
ModelGrid model_grid(const AppState& state, const UiContext& ui, const ModelPanel& p,
                     const AttentionsMode* attentions) {
    const float font = ImGui::GetFontSize();
    const ImGuiStyle& style = ImGui::GetStyle();
    ModelGrid g;
    if (attentions && attentions->on()) {
        g.layers = attentions->rows;
        g.weights_only = true;
        g.tokens = &attentions->weights->key_tokens;
        g.editing.assign(g.layers.size(), 0);
    } else {
        g.layers = p.layers.rows();
        for (int r = 0; r < p.layers.size(); ++r) g.editing.push_back(r > 0 && p.layers.editing(state, r));
        for (int r = 1; r < p.layers.size(); ++r)
            if (g.editing[static_cast<size_t>(r)]) g.first = 1;
        if (p.layers.model()) g.first = 1;  // this session is one of the model's blocks
        g.model = p.layers.model();
        // While a model opens, its rows are the blocks done so far (final) and those to come (each
        // computing on its own): only a run of a new sentence or an edit shows the previous one's.
        g.computing = p.run.computing() && p.run.opening().empty();
        if (g.model && p.run.results()) g.tokens = &p.run.results()->run->tokens;
    }
    g.session_tokens = &core::key_tokens(state.shown().session);
    const auto row_of = [&](int r) -> const Layers::Row& { return g.layers[static_cast<size_t>(r)]; };
    const int size = static_cast<int>(g.layers.size());
    int heads = 1;
    for (int r = g.first; r < size; ++r) heads = std::max(heads, row_of(r).heads);
    const ImVec2 avail = g.avail = ImGui::GetContentRegionAvail();
    ImFont* small = g.small = ui.fonts.numbers ? ui.fonts.numbers : ImGui::GetFont();
    const float small_size = g.small_size = ui.fonts.numbers ? ui.fonts.numbers->FontSize : ImGui::GetFontSize();
    g.caption_h = small_size + 3;
    // The name column as wide as the longest name, within 5 to 9 ems and a third of the width.
    float longest = 0;
    for (int r = g.first; r < size; ++r) longest = std::max(longest, ImGui::CalcTextSize(row_of(r).name.c_str()).x);
    const float name_w = g.name_w =
        std::floor(std::clamp(longest + font * 0.6f, font * 5, std::max(font * 5, std::min(font * 9, avail.x / 3))));
    const float gap = g.gap = std::max(3.0f, std::round(font * 0.35f));
    // The whole model in view when it can be (a thumbnail as large as both the width and the height
    // allow), else thumbnails of at least 1.8 ems, scrolling.
    const int rows = g.rows = size - g.first;
    const float by_width = (avail.x - name_w - style.ScrollbarSize - gap * static_cast<float>(heads)) / heads;
    const float by_height =
        (avail.y - (gap + style.ItemSpacing.y) * static_cast<float>(rows)) / static_cast<float>(rows) - g.caption_h;
    const float side = g.side = std::floor(std::clamp(std::min(by_width, by_height), font * 1.8f, font * 8));
    // A column is as wide as a caption ("12  100%") when the width has room for that; else captions
    // show the head's number only.
    const float caption_w = small->CalcTextSizeA(small_size, FLT_MAX, 0, "12  100%").x;
    g.column = name_w + (std::max(side, caption_w) + gap) * static_cast<float>(heads) <= avail.x - style.ScrollbarSize
                   ? std::max(side, caption_w)
                   : side;
    g.row_h = std::max(side + g.caption_h, ImGui::GetTextLineHeightWithSpacing() * 2) + gap;
    g.transposed = state.column_vectors();
    // The heads to outline: the first `highlight` of the whole model in the chosen order, of the
    // rows shown.
    std::vector<const core::LayerSummary*> summaries;
    for (int r = 0; r < size; ++r) summaries.push_back(r < g.first ? nullptr : row_of(r).summary.get());
    g.top = core::top_heads(summaries, p.sort, p.highlight, p.ascending);
    g.text_col = ImGui::GetColorU32(ImGuiCol_Text);
    g.dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    return g;
}

// What a click in the grid asks: a row and head to edit (head -1: the layer), or a row to close
// (-2 - row); row -1: nothing.
struct GridClick {
    int row = -1, head = -1;
};

// The row's name, its state under it, its details in a tooltip, and a menu.
void draw_row_name(UiContext& ui, const Layers::Row& row, int r, bool editing, ImVec2 o, const ModelGrid& g,
                   GridClick& clicked) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    ImGui::InvisibleButton("name", {g.name_w - g.gap, g.row_h - g.gap});
    const bool editable = r > 0 && !g.weights_only;
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::Text("%s: %s", row.name.c_str(), row.source.c_str());
        ImGui::Text("n = %d queries, %d keys, h = %d heads", row.n, row.keys, row.heads);
        if (!row.mechanisms.empty()) ImGui::Text("%s", row.mechanisms.c_str());
        for (const std::string& note : row.notes) ImGui::TextDisabled("%s", note.c_str());
        if (!row.error.empty()) ImGui::TextColored(ui.color_vec(Color::error_text), "%s", row.error.c_str());
        if (editable) ImGui::TextDisabled("Right-click: edit this layer, or close it");
        ImGui::EndTooltip();
    }
    if (editable && ImGui::BeginPopupContextItem("row menu")) {
        if (ImGui::MenuItem("Edit this layer")) {
            clicked.row = r;
            clicked.head = -1;
        }
        if (row.held && ImGui::MenuItem("Close")) clicked.row = -2 - r;  // removed after the loop
        ImGui::EndPopup();
    }
    ui.report_item("model row " + std::to_string(r));
    draw->AddText(o, editing || (r == 0 && !g.weights_only) ? ui.color(Color::ok_text) : g.text_col,
                  fitted_text(row.name, g.name_w - g.gap).c_str());
    const std::string state_line = row.computing() || (g.model && g.computing) ? "computing..."
                                   : !row.error.empty()                        ? "not computed"
                                   : editing                                   ? "being edited"
                                   : !row.mechanisms.empty()
                                       ? row.mechanisms
                                       : "n " + std::to_string(row.n) + ", h " + std::to_string(row.heads);
    // Fitted in the small font it is drawn in (the tooltip has it whole).
    ImGui::PushFont(g.small);
    const std::string shown = fitted_text(state_line, g.name_w - g.gap);
    ImGui::PopFont();
    draw->AddText(g.small, g.small_size, {o.x, o.y + ImGui::GetTextLineHeightWithSpacing()},
                  row.error.empty() ? g.dim_col : ui.color(Color::error_text), shown.c_str());
}

// Head h of row r at a: its thumbnail with its number and sort value under it, outlined among the
// top heads; a grey square while the layer has no weights.
void draw_head_cell(UiContext& ui, const ModelPanel& p, const Layers::Row& row, int r, int h, ImVec2 a,
                    const ModelGrid& g, GridClick& clicked) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float side = g.side, column = g.column;
    const core::LayerSummary* summary = row.summary.get();
    ImGui::SetCursorScreenPos(a);
    ImGui::PushID(h);
    ImGui::InvisibleButton("head", {column, side + g.caption_h});
    ui.report_item("model " + std::to_string(r) + ":" + std::to_string(h + 1));
    const bool hovered = ImGui::IsItemHovered();
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
        clicked.row = r;
        clicked.head = h;
    }
    if (summary) {
        // The norm-weighted picture where asked and known; the weights' otherwise.
        const bool norm = p.norm_weighted && summary->norm_thumbnails.size() == summary->thumbnails.size();
        const core::HeadThumbnail& t = (norm ? summary->norm_thumbnails : summary->thumbnails)[static_cast<size_t>(h)];
        const core::ColorRange range{0, p.one_scale || !(t.high > 0) ? 1.0 : t.high, false};
        const std::string name = "model " + std::to_string(r) + ":" + std::to_string(h + 1);
        draw_thumbnail(ui, ImGui::GetID(norm ? "norm-weighted" : "thumbnail"), t, g.transposed, a, side, range,
                       row.serial, name);
        const core::HeadSummary& s = summary->heads[static_cast<size_t>(h)];
        if (g.model || g.weights_only)  // a model's block or a layer read: its numbers for tests
            ui.report_value("model row " + std::to_string(r) + " head " + std::to_string(h) + " entropy",
                            s.mean_entropy);
        const core::Sink* sink = h < static_cast<int>(summary->sinks.size()) ? &summary->sinks[static_cast<size_t>(h)]
                                                                             : nullptr;
        if (sink) {
            ui.report_value(name + " sink share", sink->share);
            ui.report_value(name + " sink key", sink->key);
        }
        if (norm) ui.report_value(name + " norm-weighted", 1);
        // Under it: the head's number (dimmed) and a sink head's marker, and its value of the sort
        // key at the right, when both fit; else the number alone.
        const std::string number = std::to_string(h + 1), value = head_key_text(s, p.sort);
        const auto width = [&](const std::string& text) {
            return g.small->CalcTextSizeA(g.small_size, FLT_MAX, 0, text.c_str()).x;
        };
        const float caption_y = a.y + side + 1;
        draw->AddText(g.small, g.small_size, {a.x, caption_y}, g.dim_col, number.c_str());
        const bool flagged = sink && core::is_sink_head(*sink);
        const float marker_w = flagged ? g.small_size * 0.9f : 0;
        if (flagged) {
            draw_sink_marker(draw, {a.x + width(number) + g.small_size * 0.2f, caption_y}, g.small_size, g.text_col);
            ui.report_item("sink head " + std::to_string(r) + ":" + std::to_string(h + 1));
        }
        if (width(number) + marker_w + g.small_size * 0.4f + width(value) <= column)
            draw->AddText(g.small, g.small_size, {a.x + column - width(value), caption_y}, g.text_col, value.c_str());
        int rank = 0;
        for (size_t k = 0; k < g.top.size(); ++k)
            if (g.top[k].layer == r && g.top[k].head == h) rank = static_cast<int>(k) + 1;
        if (rank > 0)
            draw->AddRect({a.x - ui.px(2), a.y - ui.px(2)}, {a.x + side + ui.px(2), a.y + side + ui.px(2)},
                          ui.color(Color::highlighted_head), 0, 0, ui.px(2.5f));
        const char* click = g.weights_only ? "Click: this head alone in the head view"
                            : r == 0       ? "Click: show this head's weights in the matrix viewer"
                                           : "Click: edit this layer (undo brings your session back) and show this "
                                             "head's weights in the matrix viewer";
        const char* picture_of =
            norm              ? "the norm-weighted attention, each query row divided by its sum"
            : p.norm_weighted ? "the weights (norm-weighted needs the layer's V and W_O: not kept for these rows)"
                              : "the weights";
        if (hovered)
            head_tooltip(row, h, s, t, range, rank, p.sort, p.ascending, click, sink, g.keys_of(row), picture_of);
    } else {
        draw->AddRectFilled(a, {a.x + side, a.y + side}, ui.color(Color::hidden_cell));
        if (hovered) ImGui::SetTooltip("%s", row.computing() ? "Computing this layer's weights..." : row.error.c_str());
    }
    if (hovered) draw->AddRect(a, {a.x + side, a.y + side}, ui.color(Color::hovered_cell), 0, 0, ui.px(1.5f));
    ImGui::PopID();
}

// Row r of the grid: its name, then its heads in the chosen order.
void draw_grid_row(UiContext& ui, const ModelPanel& p, int r, const ModelGrid& g, GridClick& clicked) {
    const Layers::Row& row = g.layers[static_cast<size_t>(r)];
    const bool editing = g.editing[static_cast<size_t>(r)];
    ImGui::PushID(r);
    const ImVec2 o = ImGui::GetCursorScreenPos();
    draw_row_name(ui, row, r, editing, o, g, clicked);
    const core::LayerSummary* summary = row.summary.get();
    const int shown = summary ? static_cast<int>(summary->heads.size()) : row.heads;
    const std::vector<int> ordered = summary ? core::head_order(summary->heads, p.sort, p.ascending)
                                             : std::vector<int>{};
    for (int c = 0; c < shown; ++c) {
        const int h = summary ? ordered[static_cast<size_t>(c)] : c;
        draw_head_cell(ui, p, row, r, h, {o.x + g.name_w + static_cast<float>(c) * (g.column + g.gap), o.y}, g,
                       clicked);
    }
    if (shown == 0 && !row.computing())
        ImGui::GetWindowDrawList()->AddText({o.x + g.name_w, o.y}, ui.color(Color::error_text),
                                            row.error.empty() ? "no heads"
                                                              : fitted_text(row.error, g.avail.x - g.name_w).c_str());
    ImGui::SetCursorScreenPos(o);
    ImGui::Dummy({g.name_w + static_cast<float>(std::max(shown, 1)) * (g.column + g.gap), g.row_h});
    ImGui::PopID();
}

// A run of a sentence in flight (a model opening, a new sentence): its blocks done of all as a bar,
// and Cancel.
void draw_run_progress(AppState& state, UiContext& ui, ModelRun& run) {
    const std::optional<ModelRun::Progress> progress = run.progress();
    if (!progress) return;
    const std::string label = "block " + std::to_string(std::min(progress->done + 1, progress->total)) + " of " +
                              std::to_string(progress->total);
    const float cancel_w = ImGui::CalcTextSize("Cancel").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::ProgressBar(static_cast<float>(progress->done) / static_cast<float>(std::max(progress->total, 1)),
                       {-(cancel_w + ImGui::GetStyle().ItemSpacing.x), 0}, label.c_str());
    ui.report_item("model: progress");
    ui.report_value("model: blocks done", progress->done);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) run.cancel(state);
    ui.report_item("model: cancel");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Stop this run after the block it is running");
}

}  // namespace

void draw_model_panel(AppState& state, UiContext& ui, ModelPanel& p, const AttentionsMode* attentions) {
    Layers& layers = p.layers;
    layers.sync(state);
    const bool weights_only = attentions && attentions->on();
    if (weights_only) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("Weights only: no X and no weight to edit. Click a head to see it alone in the head view.");
        ImGui::PopStyleColor();
        ui.report_item("model: weights only");
    } else {
        if (!p.run.opening().empty())
            ImGui::TextDisabled("Opening the model %s...",
                                fitted_text(p.run.opening(), ImGui::GetFontSize() * 30).c_str());
        if (p.run.is_open()) draw_model_sentence(ui, p.run, p.sentence, p.typing);
        draw_run_progress(state, ui, p.run);
    }
    draw_model_controls(ui, p, weights_only);
    if (!p.run.is_open() || weights_only) draw_order_line(p, weights_only);  // a model's rows need the room

    // The grid, a row per layer.
    ImGui::BeginChild("model grid", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
    const ModelGrid g = model_grid(state, ui, p, attentions);
    GridClick clicked;
    ImGuiListClipper clipper;
    clipper.Begin(g.rows, g.row_h + ImGui::GetStyle().ItemSpacing.y);
    while (clipper.Step())
        for (int r = g.first + clipper.DisplayStart; r < g.first + clipper.DisplayEnd; ++r)
            draw_grid_row(ui, p, r, g, clicked);
    clipper.End();
    ImGui::EndChild();

    if (weights_only) {  // nothing to edit: the head alone in the head view
        if (clicked.row >= 0 && clicked.head >= 0) ui.request(command::ViewHead{clicked.row, clicked.head});
        return;
    }
    if (clicked.row >= 0) {
        layers.open_in_editor(state, clicked.row, clicked.head);
        // A model's block opened in the editor: its edits run through the later blocks.
        if (layers.model() && clicked.row >= 1 && layers.editing(state, clicked.row))
            p.run.begin_edit(state, clicked.row - 1);
    } else if (clicked.row <= -2)
        layers.remove(-2 - clicked.row);
}

}  // namespace attnviz::app
