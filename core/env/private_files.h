#pragma once
// Files that hold the client's code (projects, graphs with functional sources, example inputs,
// candidates, logs) are created readable by the user only: nova and nova-studio set the process's
// file-creation mask at start, and the workers they start inherit it.

namespace nova {

// Sets the file-creation mask to 077 (new files 0600, new folders 0700); returns the previous mask.
unsigned make_new_files_private();

}  // namespace nova
