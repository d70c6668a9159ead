#pragma once
// Prints each running job's progress messages to stderr as they change (the worker's phases of a long
// intake, each group the generator writes, a package's build), at most one line a second per job.
// What the long `nova` commands hand to ProjectSession::set_listener.
#include "core/jobs/job_queue.h"

namespace nova {

JobQueue::Listener job_progress_printer();

}  // namespace nova
