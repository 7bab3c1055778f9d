// Tests of core/file_io.hpp: read_file and write_file_atomic.
#include "core/file_io.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace attnviz::core {
namespace {

namespace fs = std::filesystem;
using namespace attnviz::test;

// A fresh directory, removed with its contents at the end of the test.
class FileIo : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(tmp.created()) << "mkdtemp failed"; }

    TempDir tmp{"attnviz_file_io"};
    const fs::path dir = tmp.path();
};

TEST_F(FileIo, WriteThenRead) {
    const fs::path p = dir / "a.json";
    const std::string text = std::string("first line\nsecond \xE2\x81\xBD line\n") + std::string(1, '\0') + "after nul";
    EXPECT_TRUE(write_file_atomic(p.string(), text).empty());
    EXPECT_EQ(slurp(p), text);
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, text);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));  // no temporary file left
}

TEST_F(FileIo, Replaces) {
    const fs::path p = dir / "a.json";
    {
        std::ofstream out(p, std::ios::binary);
        out << "an old and much longer content that must disappear entirely";
    }
    EXPECT_TRUE(write_file_atomic(p.string(), "new").empty());
    EXPECT_EQ(slurp(p), "new");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));
    EXPECT_TRUE(write_file_atomic(p.string(), "").empty());
    EXPECT_EQ(slurp(p), "");
    EXPECT_EQ(fs::file_size(p), 0u);
}

TEST_F(FileIo, LargeFile) {
    const fs::path p = dir / "big.txt";
    std::string text(3 * 1024 * 1024 + 7, 'x');
    for (size_t i = 0; i < text.size(); i += 4097) text[i] = static_cast<char>('a' + i % 26);
    EXPECT_TRUE(write_file_atomic(p.string(), text).empty());
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, text);
}

TEST_F(FileIo, MissingDirectoryFailsCleanly) {
    const fs::path p = dir / "no_such_dir" / "a.json";
    const Problems problems = write_file_atomic(p.string(), "text");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].path, p.string());
    EXPECT_FALSE(problems[0].message.empty());
    EXPECT_FALSE(fs::exists(p));
    EXPECT_FALSE(fs::exists(dir / "no_such_dir"));
    EXPECT_TRUE(entries(dir).empty());  // no temporary file anywhere
}

TEST_F(FileIo, DirectoryAsTargetFailsAndLeavesNothing) {
    fs::create_directory(dir / "target");
    const Problems problems = write_file_atomic((dir / "target").string(), "text");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].path, (dir / "target").string());
    EXPECT_TRUE(fs::is_directory(dir / "target"));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"target"}));
}

TEST_F(FileIo, ReadMissingFile) {
    const fs::path p = dir / "absent.json";
    const Result<std::string> r = read_file(p.string());
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].path, p.string());
    EXPECT_NE(r.problems[0].message.find("No such file"), std::string::npos) << r.problems[0].message;
}

TEST_F(FileIo, ReadDirectory) {
    const Result<std::string> r = read_file(dir.string());
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].path, dir.string());
}

TEST_F(FileIo, ReadEmptyFile) {
    const fs::path p = dir / "empty";
    { std::ofstream out(p); }
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, "");
}

TEST_F(FileIo, RelativePathInCurrentDirectory) {
    const fs::path old = fs::current_path();
    fs::current_path(dir);
    const Problems problems = write_file_atomic("rel.txt", "relative");
    fs::current_path(old);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(slurp(dir / "rel.txt"), "relative");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"rel.txt"}));
}

}  // namespace
}  // namespace attnviz::core

TEST(ReadFile, RefusesDevicesAndDirectories) {
    const auto dev = attnviz::core::read_file("/dev/zero");  // would never end
    ASSERT_FALSE(dev);
    EXPECT_EQ(dev.problems[0].path, "/dev/zero");
    EXPECT_NE(dev.problems[0].message.find("not a regular file"), std::string::npos);
    const auto dir = attnviz::core::read_file("/tmp");
    ASSERT_FALSE(dir);
    EXPECT_NE(dir.problems[0].message.find("directory"), std::string::npos);
}
