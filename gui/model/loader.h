// Loads a recording on a worker thread and hands the results to the GUI
// thread as value types through queued signals.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

#include "gui/model/recording_loader.h"
#include "gui/model/timeline.h"

Q_DECLARE_METATYPE(std::shared_ptr<const gpuscope::gui::RecordingInfo>)
Q_DECLARE_METATYPE(std::shared_ptr<const gpuscope::gui::LoadBatch>)
Q_DECLARE_METATYPE(std::shared_ptr<const gpuscope::gui::FindingsResult>)

namespace gpuscope::gui {

class Loader : public QObject {
  Q_OBJECT
 public:
  explicit Loader(QObject* parent = nullptr);
  ~Loader() override;  // cancels a load in flight and waits for it

  // With `findings`, the analyzer runs after the tracks (findingsReady).
  void start(const QString& path, bool findings = true);
  bool running() const { return running_; }

  // The same load on the calling thread, for --screenshot, tests and the
  // benchmark. Throws gpuscope::Error.
  static void load_blocking(const std::string& path, Timeline& out,
                            FindingsResult* findings = nullptr);

 signals:
  void opened(std::shared_ptr<const gpuscope::gui::RecordingInfo> info);
  void batchReady(std::shared_ptr<const gpuscope::gui::LoadBatch> batch);
  void progress(qint64 done, qint64 total, QString stage);
  void findingsReady(std::shared_ptr<const gpuscope::gui::FindingsResult> findings);
  void finished();
  void failed(QString reason);

 private:
  class Sink;
  void stop();
  std::thread thread_;
  std::atomic<bool> cancel_{false};
  bool running_ = false;
};

}  // namespace gpuscope::gui
