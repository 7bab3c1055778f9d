// The layout file's filter (layout_file.hpp): what attnviz writes passes whole; corrupt or hostile
// sections are left out and counted; what is left loads into ImGui at once, without a crash.
#include <gtest/gtest.h>

#include <imgui.h>

#include <chrono>
#include <string>

#include "core/base/file_io.hpp"
#include "headless.hpp"
#include "shell/layout_file.hpp"

using namespace attnviz;

namespace {

std::string corpus(const std::string& name) {
    const core::Result<std::string> text = core::read_file(ATTNVIZ_FUZZ_CORPUS_DIR "/layout/" + name);
    EXPECT_TRUE(text) << name;
    return text ? *text.value : "";
}

}  // namespace

TEST(LayoutFile, WhatAttnvizWritesPassesWhole) {
    const std::string written = corpus("written.ini");
    ASSERT_NE(written.find("[Table][0x6FF300F8,3]"), std::string::npos);
    const app::FilteredLayout kept = app::filter_layout(written);
    EXPECT_EQ(kept.dropped, 0);
    EXPECT_EQ(kept.text + "\n", written);  // all but the blank line at the end
}

// [Table][0x00000001,2147483647] crashed ImGui's loader at every start, [Table][0x1,100000000]
// allocated 1.3 GB, 10,000 tables took 16 s: left out or bounded, and ImGui loads the rest at once.
TEST(LayoutFile, HostileTablesAreLeftOutAndTheRestLoadsAtOnce) {
    for (const char* name : {"table-max-int-columns.ini", "table-huge-columns.ini"}) {
        const app::FilteredLayout kept = app::filter_layout(corpus(name));
        EXPECT_EQ(kept.text, "") << name;
        EXPECT_EQ(kept.dropped, 1) << name;  // the section, its lines with it
    }
    std::string many;
    for (int k = 1; k <= 10000; ++k) {
        char header[64];
        std::snprintf(header, sizeof header, "[Table][0x%08X,3]\nColumn 0  Weight=1.0000\n", k);
        many += header;
    }
    const app::FilteredLayout kept = app::filter_layout(many);
    EXPECT_EQ(kept.dropped, 10000 - app::layout_max_tables);
    test::HeadlessImGui imgui;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& text : {kept.text, app::filter_layout(corpus("table-max-int-columns.ini")).text})
        ImGui::LoadIniSettingsFromMemory(text.data(), text.size());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
}

TEST(LayoutFile, EachLineIsCheckedAgainstWhatItsSectionHolds) {
    const app::FilteredLayout kept = app::filter_layout(corpus("odd-lines.ini"));
    EXPECT_EQ(kept.text,
              "[Window][Dimensions]\nPos=1,2\n\n"
              "[attnviz][Layout]\nleft=2 left_top=0.5\ntabs=a|b\n\n"
              "[Table][0x00000002,3]\nColumn 1 UserID=0x12 Width=10 Visible=1 Order=1 Sort=0^\n");
    // The stray line, Pos, Size and Collapsed out of range, [Window][], [Docking], the bad table's
    // header, three bad columns, a control character and the last header.
    EXPECT_EQ(kept.dropped, 12);
    // A file larger than the bound is not read at all.
    EXPECT_EQ(app::filter_layout(std::string(app::layout_max_bytes + 1, '\n')).dropped, 1);
}
