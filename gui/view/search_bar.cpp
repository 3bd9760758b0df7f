#include "gui/view/search_bar.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTimer>
#include <QToolButton>

namespace gpuscope::gui {

SearchBar::SearchBar(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  edit_ = new QLineEdit(this);
  edit_->setPlaceholderText(QStringLiteral("Search events by name (Ctrl+F); Enter: next, Shift+Enter: previous"));
  edit_->setClearButtonEnabled(true);
  edit_->installEventFilter(this);
  regex_ = new QCheckBox(QStringLiteral("Regex"), this);
  prev_ = new QToolButton(this);
  prev_->setText(QStringLiteral("◀"));
  prev_->setToolTip(QStringLiteral("Previous match (Shift+Enter)"));
  next_ = new QToolButton(this);
  next_->setText(QStringLiteral("▶"));
  next_->setToolTip(QStringLiteral("Next match (Enter)"));
  result_ = new QLabel(this);
  result_->setMinimumWidth(110);
  layout->addWidget(edit_, 1);
  layout->addWidget(regex_);
  layout->addWidget(prev_);
  layout->addWidget(next_);
  layout->addWidget(result_);
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(300);
  connect(debounce_, &QTimer::timeout, this, &SearchBar::searchNow);
  connect(edit_, &QLineEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  connect(regex_, &QCheckBox::toggled, this, &SearchBar::searchNow);
  connect(next_, &QToolButton::clicked, this, [this] {
    searchNow();
    emit nextRequested();
  });
  connect(prev_, &QToolButton::clicked, this, [this] {
    searchNow();
    emit prevRequested();
  });
}

QString SearchBar::pattern() const { return edit_->text(); }
bool SearchBar::regex() const { return regex_->isChecked(); }
void SearchBar::setResult(const QString& text) { result_->setText(text); }
QString SearchBar::result() const { return result_->text(); }

void SearchBar::focusSearch() {
  edit_->setFocus(Qt::ShortcutFocusReason);
  edit_->selectAll();
}

void SearchBar::searchNow() {
  debounce_->stop();
  if (edit_->text() == searched_ && regex() == searched_regex_) return;
  searched_ = edit_->text();
  searched_regex_ = regex();
  emit searchChanged(searched_, searched_regex_);
}

bool SearchBar::eventFilter(QObject* o, QEvent* e) {
  if (o == edit_ && e->type() == QEvent::KeyPress) {
    auto* k = static_cast<QKeyEvent*>(e);
    if (k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter) {
      searchNow();
      if (k->modifiers() & Qt::ShiftModifier)
        emit prevRequested();
      else
        emit nextRequested();
      return true;
    }
  }
  return QWidget::eventFilter(o, e);
}

}  // namespace gpuscope::gui
