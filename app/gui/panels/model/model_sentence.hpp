// The model mode's sentence box, above the model view: the text the model runs (re-run as it is
// typed, once it rests a moment), its tokens as chips (the decoded text, the id under it; a tooltip
// with the id and the vocabulary piece), and why a text is not run (the previous run stays shown).
#pragma once

#include <string>

#include "state/model_run.hpp"
#include "ui/ui_context.hpp"

namespace attnviz::app {

// `buffer`: the box's text, kept between frames (update_model_panel sets it to the run's text while
// not being typed in); `typing` says, after the frame, whether it is.
void draw_model_sentence(UiContext& ui, ModelRun& run, std::string& buffer, bool& typing);

}  // namespace attnviz::app
