// The local Hugging Face hub cache, read as huggingface_hub lays it out (attnviz downloads nothing
// and writes nothing there):
//   CACHE/models--ORG--NAME/refs/main           the commit the main branch points at
//   CACHE/models--ORG--NAME/snapshots/COMMIT/   the files of that commit: symlinks into ../../blobs
//   CACHE/models--ORG--NAME/blobs/HASH          the contents
// CACHE is looked for in $HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub and
// ~/.cache/huggingface/hub, in that order (each that is set, once). A model named "gpt2" lives in
// models--gpt2, "EleutherAI/pythia-160m" in models--EleutherAI--pythia-160m.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/problem.hpp"

namespace attnviz::model {

// The variables that place the cache ("" where unset); from_process() reads them.
struct HubEnvironment {
    std::string hf_hub_cache, hf_home, xdg_cache_home, home;
    static HubEnvironment from_process();
};

// The cache folders looked in, in order, each once.
std::vector<std::string> hub_cache_folders(const HubEnvironment& env);

// Whether `text` reads as a hub model id: NAME or ORG/NAME of letters, digits, '-', '_' and '.',
// neither starting with '-' or '.', with no "--" or "..", at most 96 characters each.
bool is_hub_name(const std::string& text);

// "models--ORG--NAME" of "ORG/NAME".
std::string hub_repo_folder(const std::string& name);

// The snapshot folder of a model in the cache: the commit refs/main names, else the only snapshot
// there is. Problems (path: the name) name the folders looked in and the command that downloads it.
core::Result<std::string> find_cached_model(const std::string& name, const HubEnvironment& env);

// A model as the command line and File > Open model take it: a path that exists is itself; a hub
// name that is no path here (and no file name: session.json, model.safetensors) is its snapshot
// folder in the cache, or problems saying where it was looked for. Anything else is returned as it
// is, for the command to say what is wrong with it.
core::Result<std::string> resolve_model_argument(const std::string& argument, const HubEnvironment& env);

// One model of the cache, as File > Open model lists it.
struct CachedModel {
    std::string name;          // "EleutherAI/pythia-160m"
    std::string folder;        // its snapshot folder
    std::string model_type;    // config.json's model_type; "" where there is none or it is unreadable
    std::uintmax_t bytes = 0;  // the snapshot's files (their blobs), missing ones not counted
};

// Every model in the cache folders that has a snapshot, by name; a model in two caches once (the
// first). Unreadable folders are passed over.
std::vector<CachedModel> list_cached_models(const HubEnvironment& env);

}  // namespace attnviz::model
