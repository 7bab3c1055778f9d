// Where the app's assets (lessons, example sessions) are: $ATTNVIZ_ASSETS when set, else
// share/attnviz beside the directory of the running executable — <prefix>/share/attnviz for
// <prefix>/bin/attnviz once installed, wherever the prefix was moved; the build tree mirrors that
// layout (build/app/attnviz finds build/share/attnviz, copied from assets/ at build time).
#pragma once

#include <string>

namespace attnviz::app {

std::string assets_dir();

}  // namespace attnviz::app
