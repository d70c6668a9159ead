#include "ui/shell/warnings_panel.h"

#include <QLabel>
#include <QListWidget>
#include <QStyle>
#include <QVBoxLayout>

namespace nova::ui {

WarningsPanel::WarningsPanel(QWidget* parent)
    : QWidget(parent), message_(new QLabel(this)), list_(new QListWidget(this)) {
  message_->setWordWrap(true);
  list_->setWordWrap(true);
  list_->setAlternatingRowColors(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(message_);
  layout->addWidget(list_, 1);
  clear();
}

void WarningsPanel::clear() {
  list_->clear();
  list_->hide();
  message_->setText(tr("Intake's warnings about the open model (for example value-dependent control flow, "
                       "where the kernels follow one branch) are listed here and stay."));
  emit countChanged(0);
}

void WarningsPanel::setWarnings(const QString& source, const std::vector<std::string>& warnings) {
  list_->clear();
  const QIcon icon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
  for (const auto& w : warnings) list_->addItem(new QListWidgetItem(icon, QString::fromStdString(w)));
  list_->setVisible(!warnings.empty());
  message_->setText(warnings.empty() ? tr("No warnings from %1.").arg(source)
                                     : tr("%n warning(s) from %1:", nullptr, static_cast<int>(warnings.size()))
                                           .arg(source));
  emit countChanged(static_cast<int>(warnings.size()));
}

QStringList WarningsPanel::warnings() const {
  QStringList out;
  for (int i = 0; i < list_->count(); ++i) out << list_->item(i)->text();
  return out;
}

QString WarningsPanel::message() const { return message_->text(); }

}  // namespace nova::ui
