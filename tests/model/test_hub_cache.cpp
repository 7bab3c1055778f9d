// The local Hugging Face hub cache (core/model/hub_cache.hpp) on fake cache trees laid out as the hub
// writes them (symlinked blobs, refs/main): where it is looked for, which snapshot a name gives, what
// a missing model's message says, and the models File > Open model lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model/hub_cache.hpp"
#include "core/model/model_folder.hpp"
#include "hub_cache_tree.hpp"
#include "model_test_support.hpp"

namespace {

using attnviz::model::CachedModel;
using attnviz::model::find_cached_model;
using attnviz::model::hub_cache_folders;
using attnviz::model::hub_repo_folder;
using attnviz::model::HubEnvironment;
using attnviz::model::is_hub_name;
using attnviz::model::list_cached_models;
using attnviz::model::ModelFolder;
using attnviz::model::resolve_model_argument;
using attnviz::test::add_to_hub_cache;
using attnviz::test::models_dir;
using attnviz::test::ScratchFolder;
namespace fs = std::filesystem;

::testing::AssertionResult has(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

const std::string commit_a = "0123456789abcdef0123456789abcdef01234567";
const std::string commit_b = "fedcba9876543210fedcba9876543210fedcba98";

std::uintmax_t folder_bytes(const fs::path& folder) {
    std::uintmax_t total = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(folder)) total += fs::file_size(fs::canonical(e.path()));
    return total;
}

TEST(HubCache, TheFoldersLookedInFollowHuggingFaceHubsVariablesInOrderEachOnce) {
    EXPECT_EQ(hub_cache_folders({"/data/hub", "/hf", "/xdg", "/home/u"}),
              (std::vector<std::string>{"/data/hub", "/hf/hub", "/xdg/huggingface/hub",
                                        "/home/u/.cache/huggingface/hub"}));
    EXPECT_EQ(hub_cache_folders({"", "", "", "/home/u"}), (std::vector<std::string>{"/home/u/.cache/huggingface/hub"}));
    // $HF_HUB_CACHE the same folder as $HF_HOME/hub (a trailing slash apart): looked in once.
    EXPECT_EQ(hub_cache_folders({"/hf/hub/", "/hf", "", ""}), (std::vector<std::string>{"/hf/hub"}));
    EXPECT_TRUE(hub_cache_folders({}).empty());
}

TEST(HubCache, HubNamesAreOrgSlashNameAndTheirFolderJoinsThemWithTwoDashes) {
    for (const char* name : {"gpt2", "EleutherAI/pythia-160m", "google/gemma-2-2b", "meta-llama/Llama-3.2-1B",
                             "Qwen/Qwen2.5-0.5B", "a_b/c.d"})
        EXPECT_TRUE(is_hub_name(name)) << name;
    for (const char* name : {"", "/abs/path", "./gpt2", "../gpt2", "a/b/c", "a--b", "-a", ".hidden", "a b", "org/",
                             "/name", "a/..", "x..y"})
        EXPECT_FALSE(is_hub_name(name)) << name;
    EXPECT_FALSE(is_hub_name(std::string(97, 'a')));
    EXPECT_EQ(hub_repo_folder("EleutherAI/pythia-160m"), "models--EleutherAI--pythia-160m");
    EXPECT_EQ(hub_repo_folder("gpt2"), "models--gpt2");
}

// A name found: the snapshot refs/main names, whose symlinked files open as a model folder.
TEST(HubCache, ANameGivesTheSnapshotRefsMainNamesAndItOpensAsAModel) {
    ScratchFolder s;
    const fs::path cache = s.path / "hub";
    add_to_hub_cache(cache, "models--acme--tiny-llama", models_dir / "llama", commit_a);
    const fs::path newer = add_to_hub_cache(cache, "models--acme--tiny-llama", models_dir / "llama", commit_b);
    std::ofstream(cache / "models--acme--tiny-llama/refs/main") << commit_b << "\n";  // a newline is read too
    const HubEnvironment env{cache.string(), "", "", ""};
    const attnviz::core::Result<std::string> found = find_cached_model("acme/tiny-llama", env);
    ASSERT_TRUE(found) << found.problems.front().str();
    EXPECT_EQ(*found.value, newer.string());
    EXPECT_TRUE(fs::is_symlink(newer / "config.json"));
    const attnviz::core::Result<ModelFolder> m = ModelFolder::open(*found.value);
    ASSERT_TRUE(m) << m.problems.front().str();
    EXPECT_EQ(m.value->config().architecture, attnviz::model::Architecture::llama);
    // The same through the command line's resolution, and a path that exists is itself.
    EXPECT_EQ(*resolve_model_argument("acme/tiny-llama", env).value, newer.string());
    EXPECT_EQ(*resolve_model_argument(newer.string(), env).value, newer.string());
}

TEST(HubCache, WithoutRefsMainTheOnlySnapshotIsTakenAndSeveralAreNamed) {
    ScratchFolder s;
    const fs::path cache = s.path / "hub";
    const fs::path only = add_to_hub_cache(cache, "models--gpt2", models_dir / "gpt2", commit_a, false);
    const HubEnvironment env{"", "", "", s.path.string()};  // not looked for in ~/.cache: in $HF_HUB_CACHE
    const HubEnvironment hub{cache.string(), "", "", ""};
    EXPECT_EQ(*find_cached_model("gpt2", hub).value, only.string());
    add_to_hub_cache(cache, "models--gpt2", models_dir / "gpt2", commit_b, false);
    const attnviz::core::Result<std::string> two = find_cached_model("gpt2", hub);
    ASSERT_FALSE(two);
    EXPECT_EQ(two.problems.front().path, "gpt2");
    EXPECT_TRUE(has(two.problems.front().message, "no refs/main, and 2 snapshots (" + commit_a + ", " + commit_b));
    // refs/main naming a commit that is not there: said so.
    fs::create_directories(cache / "models--gpt2/refs");
    std::ofstream(cache / "models--gpt2/refs/main") << "abc123";
    EXPECT_TRUE(
        has(find_cached_model("gpt2", hub).problems.front().message, "refs/main names abc123, which is not there"));
    // A repository folder without snapshots: an interrupted download.
    fs::create_directories(cache / "models--acme--empty/blobs");
    EXPECT_TRUE(has(find_cached_model("acme/empty", hub).problems.front().message, "no snapshot"));
    EXPECT_FALSE(find_cached_model("gpt2", env));
}

TEST(HubCache, AMissingModelNamesEveryFolderLookedInAndTheDownloadCommand) {
    ScratchFolder s;
    const HubEnvironment env{(s.path / "a").string(), (s.path / "b").string(), "", (s.path / "home").string()};
    const attnviz::core::Result<std::string> r = resolve_model_argument("google/gemma-2-2b", env);
    ASSERT_FALSE(r);
    const std::string& m = r.problems.front().message;
    EXPECT_EQ(r.problems.front().path, "google/gemma-2-2b");
    EXPECT_TRUE(has(m, (s.path / "a/models--google--gemma-2-2b").string()));
    EXPECT_TRUE(has(m, (s.path / "b/hub/models--google--gemma-2-2b").string()));
    EXPECT_TRUE(has(m, (s.path / "home/.cache/huggingface/hub/models--google--gemma-2-2b").string()));
    EXPECT_TRUE(has(m, "huggingface-cli download google/gemma-2-2b"));
    EXPECT_TRUE(has(resolve_model_argument("gpt2", {}).problems.front().message, "neither $HF_HUB_CACHE"));
    // What is no hub name, or names a file, is left for its command to refuse.
    for (const char* argument : {"/nonexistent/model", "./gpt2", "session.json", "model.safetensors"})
        EXPECT_EQ(*resolve_model_argument(argument, env).value, argument);
}

TEST(HubCache, TheListHasEachModelOnceWithItsTypeAndTheSizeOfItsBlobs) {
    ScratchFolder s;
    const fs::path first = s.path / "first", second = s.path / "home/.cache/huggingface/hub";
    add_to_hub_cache(first, "models--EleutherAI--pythia-tiny", models_dir / "pythia", commit_a);
    const fs::path gemma = add_to_hub_cache(first, "models--google--gemma-2-tiny", models_dir / "gemma2", commit_a);
    // The same model in the second cache: listed from the first. One without a snapshot: not listed.
    add_to_hub_cache(second, "models--EleutherAI--pythia-tiny", models_dir / "gpt2", commit_b);
    add_to_hub_cache(second, "models--gpt2", models_dir / "gpt2", commit_b);
    fs::create_directories(second / "models--acme--partial/blobs");
    fs::create_directories(second / "datasets--acme--text/snapshots" / commit_a);  // not a model
    // A link whose blob is missing (a download cut short) counts nothing.
    fs::create_symlink("../../blobs/missing", gemma / "extra.bin");
    const std::vector<CachedModel> list = list_cached_models({first.string(), "", "", (s.path / "home").string()});
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0].name, "EleutherAI/pythia-tiny");
    EXPECT_EQ(list[0].model_type, "gpt_neox");
    EXPECT_EQ(list[0].folder, (first / "models--EleutherAI--pythia-tiny/snapshots" / commit_a).string());
    EXPECT_EQ(list[0].bytes, folder_bytes(models_dir / "pythia"));
    EXPECT_EQ(list[1].name, "google/gemma-2-tiny");
    EXPECT_EQ(list[1].model_type, "gemma2");
    EXPECT_EQ(list[1].bytes, folder_bytes(models_dir / "gemma2"));
    EXPECT_EQ(list[2].name, "gpt2");
    EXPECT_EQ(list[2].model_type, "gpt2");
    EXPECT_GT(list[2].bytes, 0u);
    EXPECT_TRUE(list_cached_models({(s.path / "nowhere").string(), "", "", ""}).empty());
}

}  // namespace
