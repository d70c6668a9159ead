#pragma once
// Where a model's project lives: one folder per model file under the user's data folder
// ($XDG_DATA_HOME/nova/projects or ~/.local/share/nova/projects; $NOVA_PROJECTS overrides), named
// after the model and a hash of its absolute path, so opening the same model again finds its
// versions and results, and nothing is ever written beside a client's files.
#include <filesystem>

#include "core/project/project_store.h"

namespace nova {

std::filesystem::path projects_root();
std::filesystem::path project_folder_for(const std::filesystem::path& model);
// Opens the model's project, creating it on first use. Throws ProjectError like ProjectStore.
ProjectStore open_project_for(const std::filesystem::path& model);

}  // namespace nova
