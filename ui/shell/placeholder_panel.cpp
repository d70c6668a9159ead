#include "ui/shell/placeholder_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace nova::ui {

PlaceholderPanel::PlaceholderPanel(const QString& title, const QString& message, QWidget* parent)
    : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* heading = new QLabel(title, this);
  QFont f = heading->font();
  f.setPointSizeF(f.pointSizeF() * 1.2);
  f.setBold(true);
  heading->setFont(f);
  heading->setAlignment(Qt::AlignCenter);
  message_ = new QLabel(message, this);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setForegroundRole(QPalette::PlaceholderText);
  layout->addStretch();
  layout->addWidget(heading);
  layout->addWidget(message_);
  layout->addStretch();
  setObjectName(title);
}

void PlaceholderPanel::setMessage(const QString& message) { message_->setText(message); }
QString PlaceholderPanel::message() const { return message_->text(); }

}  // namespace nova::ui
