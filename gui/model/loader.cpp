#include "gui/model/loader.h"

#include <QMetaObject>

#include <sys/resource.h>

#include <mutex>

#include "trace_formats/common/error.h"

namespace gpuscope::gui {

class Loader::Sink : public LoadSink {
 public:
  explicit Sink(Loader* l) : loader_(l) {}
  // Signals emitted here, off the GUI thread, reach GUI-thread receivers queued.
  void on_info(std::shared_ptr<const RecordingInfo> info) override { emit loader_->opened(info); }
  void on_batch(std::shared_ptr<const LoadBatch> batch) override { emit loader_->batchReady(batch); }
  void on_progress(int64_t done, int64_t total, const std::string& stage) override {
    emit loader_->progress(done, total, QString::fromStdString(stage));
  }
  void on_findings(std::shared_ptr<const FindingsResult> f) override { emit loader_->findingsReady(f); }

 private:
  Loader* loader_;
};

Loader::Loader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const RecordingInfo>>();
  qRegisterMetaType<std::shared_ptr<const LoadBatch>>();
  qRegisterMetaType<std::shared_ptr<const FindingsResult>>();
}

Loader::~Loader() { stop(); }

void Loader::stop() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
  running_ = false;
}

void Loader::start(const QString& path, bool findings) {
  stop();
  cancel_ = false;
  running_ = true;
  thread_ = std::thread([this, findings, p = path.toStdString()] {
    // Loading must not starve the GUI thread: on Linux the nice value is per
    // thread, and the threads this one starts inherit it.
    setpriority(PRIO_PROCESS, 0, 5);
    Sink sink(this);
    try {
      if (load_recording(p, sink, &cancel_, findings)) emit finished();
    } catch (const std::exception& e) {
      emit failed(QString::fromStdString(e.what()));
    }
    // running_ belongs to the GUI thread.
    QMetaObject::invokeMethod(this, [this] { running_ = false; }, Qt::QueuedConnection);
  });
}

namespace {

class BlockingSink : public LoadSink {
 public:
  BlockingSink(Timeline& t, FindingsResult* f) : tl_(t), findings_(f) {}
  void on_findings(std::shared_ptr<const FindingsResult> f) override {
    if (findings_) *findings_ = *f;
  }
  void on_info(std::shared_ptr<const RecordingInfo> info) override {
    std::lock_guard lock(mu_);
    tl_.reset(std::move(info));
  }
  void on_batch(std::shared_ptr<const LoadBatch> batch) override {
    std::lock_guard lock(mu_);
    tl_.add(std::move(batch));
  }
  void on_progress(int64_t, int64_t, const std::string&) override {}

 private:
  Timeline& tl_;
  FindingsResult* findings_;
  std::mutex mu_;
};

}  // namespace

void Loader::load_blocking(const std::string& path, Timeline& out, FindingsResult* findings) {
  BlockingSink sink(out, findings);
  load_recording(path, sink, nullptr, findings != nullptr);
}

}  // namespace gpuscope::gui
