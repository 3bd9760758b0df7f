#include "gui/view/screenshot.h"

#include <QApplication>
#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPixmap>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "gui/view/main_window.h"
#include "gui/view/timeline_view.h"

namespace gpuscope::gui {

int take_screenshot(const ScreenshotOptions& o, QString* error) {
  if (QFileInfo::exists(o.output) && !o.force) {
    *error = o.output + QStringLiteral(": exists; pass --force to overwrite");
    return 2;
  }
  if (!o.output.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) {
    *error = o.output + QStringLiteral(": the screenshot must be a .png file");
    return 2;
  }
  MainWindow w;
  QString reason;
  if (!w.openBlocking(o.input, &reason)) {
    *error = reason;
    return 2;
  }
  QImage image;
  if (o.timeline_only) {
    // The timeline alone at exactly the requested size: independent of how the
    // window's docks and fonts lay out on this machine (tests compare it).
    TimelineView view;
    view.setTimeline(w.timeline());
    view.resize(o.size);
    if (o.has_range)
      view.setRange(static_cast<double>(o.range_start), static_cast<double>(o.range_end));
    else if (o.whole || !w.timelineView()->hasHomeRange())
      view.fitAll();
    else
      view.setHomeRange(w.timelineView()->homeStart(), w.timelineView()->homeEnd());
    image = QImage(o.size, QImage::Format_ARGB32_Premultiplied);
    view.render(image);
  } else {
    w.resize(o.size);
    w.show();
    QApplication::processEvents();  // lay out at the final size
    TimelineView* view = w.timelineView();
    if (o.has_range)
      view->setRange(static_cast<double>(o.range_start), static_cast<double>(o.range_end));
    else if (o.whole)
      view->fitAll();
    else
      view->showHome();  // as the viewer opens: the analysed steps
    QApplication::processEvents();
    image = w.grab().toImage();
  }
  // Encoded in memory, then written through the one output-file kit: a
  // temporary file under a random name (O_EXCL|O_NOFOLLOW, no symlink
  // followed), renamed over the target, removed on every failure or signal.
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) {
    *error = o.output + QStringLiteral(": cannot encode the image");
    return 2;
  }
  try {
    AtomicFile file(o.output.toStdString(), AtomicFile::Kind::kPlain,
                    o.force ? AtomicFile::Existing::kReplace : AtomicFile::Existing::kRefuse);
    file.write(std::string_view(png.constData(), static_cast<size_t>(png.size())));
    file.commit();
  } catch (const Error& e) {
    *error = QString::fromStdString(e.what());
    return 2;
  }
  return 0;
}

}  // namespace gpuscope::gui
