// Search by name: substring or regular expression, next / previous match.
#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QTimer;
class QToolButton;

namespace gpuscope::gui {

class SearchBar : public QWidget {
  Q_OBJECT
 public:
  explicit SearchBar(QWidget* parent = nullptr);
  QString pattern() const;
  bool regex() const;
  QLineEdit* edit() const { return edit_; }
  QCheckBox* regexBox() const { return regex_; }
  void setResult(const QString& text);  // "3 / 120", "no match", a regex error
  QString result() const;
  void focusSearch();

 signals:
  void searchChanged(const QString& pattern, bool regex);
  void nextRequested();
  void prevRequested();

 protected:
  bool eventFilter(QObject* o, QEvent* e) override;

 private:
  QLineEdit* edit_;
  QCheckBox* regex_;
  QToolButton* prev_;
  QToolButton* next_;
  QLabel* result_;
  QTimer* debounce_;
  QString searched_;
  bool searched_regex_ = false;
  void searchNow();
};

}  // namespace gpuscope::gui
