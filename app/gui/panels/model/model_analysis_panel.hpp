// Model analysis: what the model mode's run (model_run.hpp) shows besides each layer's attention,
// from core/model/analysis.hpp, one view at a time:
//  - Logit lens: for each stream (the embeddings, then the output of each block; rows) and position
//    (columns), the top token of final_norm(x_l[i]) · W_Uᵀ, its cell shaded by its probability
//    (causal LMs only);
//  - Attention rollout: R_l = Ã_l ⋯ Ã_0 after a chosen block (n × n, row i: how much of position i
//    comes from each input position), as a heatmap;
//  - Residual norms: ‖x_l[i]‖ per stream and position, as a heatmap.
// Every cell's number is in its tooltip.
#pragma once

#include "state/app_state.hpp"
#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

struct ModelAnalysisPanel {
    enum View { lens, rollout, norms };
    int view = lens;         // the view shown
    int rollout_layer = -1;  // the block whose rollout is shown; -1: the last
};

void draw_model_analysis_panel(AppState& state, UiContext& ui, ModelAnalysisPanel& panel, const ModelRun& run);

}  // namespace attnviz::app
