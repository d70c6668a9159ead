#pragma once
#include <functional>
#include <memory>

#include <QObject>
#include <QString>

#include "core/session/project_session.h"
#include "core/session/session_options.h"

namespace nova::ui {

// How the studio opens a model's session and learns whether this machine has a GPU: by default the
// engine's ProjectSession (worker processes) and a probe of the CUDA driver; UI tests pass a session
// over a scripted worker runner and a GPU check of their own, so no test waits minutes for intake.
struct SessionBackend {
  using Factory = std::function<std::unique_ptr<ProjectSession>(SessionOptions)>;
  // Empty when a GPU is there; otherwise why there is none ("libcuda.so.1 not found").
  using GpuCheck = std::function<QString()>;

  Factory factory;  // unset: a ProjectSession with its own ChildProcessWorkerRunner
  GpuCheck gpu;     // unset: the CUDA driver is probed

  // This backend with every unset part filled by the engine's default.
  SessionBackend resolved() const;
};

}  // namespace nova::ui
