// libFuzzer target for the window layout's filter (app/gui/shell/layout_file.hpp): whatever the file
// holds, what ImGui is handed is within the bounds, and filtering it again keeps all of it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "shell/layout_file.hpp"

using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const attnviz::app::FilteredLayout kept = attnviz::app::filter_layout(attnviz::fuzz::as_text(data, size));
    const std::string& text = kept.text;
    check(text.size() <= size + size / 2 + 64, "the filtered layout is larger than the file", text);
    int windows = 0, tables = 0, layouts = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t end = text.find('\n', at);
        check(end != std::string::npos, "a line without its end", text);
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        check(line.size() <= attnviz::app::layout_max_line, "a line longer than the bound", line);
        windows += line.rfind("[Window][", 0) == 0;
        tables += line.rfind("[Table][", 0) == 0;
        layouts += line == "[attnviz][Layout]";
        check(line.empty() || line[0] != '[' || line.rfind("[Window][", 0) == 0 || line.rfind("[Table][", 0) == 0 ||
                  line == "[attnviz][Layout]",
              "a section attnviz does not write", line);
    }
    check(windows <= attnviz::app::layout_max_windows && tables <= attnviz::app::layout_max_tables && layouts <= 1,
          "more sections than the bounds", text);
    const attnviz::app::FilteredLayout again = attnviz::app::filter_layout(text);
    check(again.dropped == 0 && again.text == text, "the filtered layout does not pass the filter unchanged", text);
    return 0;
}
